//! PyTorch's `torch.nn.functional`: the functions behind the layers, each an operation of the op layer
//! (`crate::ops`), so it runs on the tensor's device.

pub mod activation;
pub(crate) mod attention;
mod bilinear;
mod distance;
mod group_norm;
mod likelihood_loss;
pub mod loss;
mod margin_loss;
mod norms;
mod pad;
pub(crate) mod pooling;
mod pooling1d;

pub use crate::ops::conv::{
    Conv1dOptions, Conv2dOptions, ConvTranspose1dOptions, ConvTranspose2dOptions, Padding1d, Padding2d,
    conv_transpose1d, conv_transpose2d, conv1d, conv2d,
};
pub use crate::ops::gather::one_hot;
pub use crate::ops::norm::{RunningStats, batch_norm, layer_norm};
pub use crate::ops::{
    EmbeddingOptions, alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, embedding, embedding_padded,
    embedding_with, feature_alpha_dropout,
};
pub use activation::*;
pub use attention::scaled_dot_product_attention;
pub use bilinear::bilinear;
pub use distance::{cosine_similarity, pairwise_distance};
pub use group_norm::group_norm;
pub use likelihood_loss::{gaussian_nll_loss, poisson_nll_loss};
pub use loss::{
    ClassLossOptions, KlReduction, Reduction, binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
    huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss,
};
pub use margin_loss::{
    Distance, cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
    multilabel_margin_loss, multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss,
};
pub use norms::{instance_norm, local_response_norm, rms_norm};
pub use pad::{PadMode, channel_shuffle, pad, pixel_shuffle, pixel_unshuffle};
pub use pooling::{
    AvgPool2dOptions, MaxPool2dOptions, OutputSize2d, Size2d, adaptive_avg_pool2d, avg_pool2d, max_pool2d,
    max_pool2d_with_indices,
};
pub use pooling1d::{
    AvgPool1dOptions, MaxPool1dOptions, adaptive_avg_pool1d, avg_pool1d, max_pool1d, max_pool1d_with_indices,
};

use crate::{DType, Result, Tensor};

/// `x` in `f32` when it is half precision (PyTorch's compute type), else `x`.
fn widened(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::F16 | DType::BF16 => x.to_dtype(DType::F32),
        _ => Ok(x.clone()),
    }
}
