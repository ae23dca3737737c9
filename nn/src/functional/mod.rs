//! Functions on tensors behind the layers (PyTorch's `torch.nn.functional`).

pub mod activation;
pub(crate) mod conv;
pub mod derivative;
mod embedding;
pub(crate) mod norm;

pub use activation::{Activation, log_softmax, prelu, prelu_into, softmax};
pub use conv::{Conv2dOptions, Padding2d, conv2d};
pub use derivative::{Derivative, PreluLayout, log_softmax_backward, prelu_backward, softmax_backward};
pub use embedding::embedding;
pub use norm::{RunningStats, batch_norm, layer_norm};
