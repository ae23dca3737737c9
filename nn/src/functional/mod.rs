//! PyTorch's `torch.nn.functional`: the functions behind the layers, each an operation of the op layer
//! (`crate::ops`), so it runs on the tensor's device.

pub mod activation;

pub use crate::ops::conv::{Conv2dOptions, Padding2d, conv2d};
pub use crate::ops::norm::{RunningStats, batch_norm, layer_norm};
pub use crate::ops::{embedding, embedding_padded};
pub use activation::*;
