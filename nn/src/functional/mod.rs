//! Functions on tensors behind the layers (PyTorch's `torch.nn.functional`).

pub mod activation;

pub use activation::{Activation, log_softmax, prelu, softmax};
