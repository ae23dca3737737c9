//! PyTorch's `torch.nn.functional`: the functions behind the layers, each an operation of the op layer
//! (`crate::ops`), so it runs on the tensor's device.

pub mod activation;
pub mod loss;
mod pooling;

pub use crate::ops::conv::{Conv2dOptions, Padding2d, conv2d};
pub use crate::ops::norm::{RunningStats, batch_norm, layer_norm};
pub use crate::ops::{EmbeddingOptions, dropout, embedding, embedding_padded, embedding_with};
pub use activation::*;
pub use loss::{
    ClassLossOptions, KlReduction, Reduction, binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
    huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss,
};
pub use pooling::{
    AvgPool2dOptions, MaxPool2dOptions, OutputSize2d, Size2d, adaptive_avg_pool2d, avg_pool2d, max_pool2d,
    max_pool2d_with_indices,
};
