//! The activations as functions: [`Activation`] (every element-wise one, forward and backward, on any device),
//! PReLU and (log-)softmax with their backward passes.

pub use crate::ops::activation::Activation;
pub use crate::ops::prelu::{
    prelu, prelu_backward, prelu_input_backward, prelu_into, rrelu, rrelu_with_noise, rrelu_with_noise_backward,
};
pub use crate::ops::softmax::{log_softmax_backward, softmax_backward};
pub use kernels::activation::{SELU_ALPHA, SELU_SCALE};

use crate::{Result, Tensor};

/// Softmax along `dim`.
pub fn softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    x.softmax(dim)
}

/// Log-softmax along `dim`.
pub fn log_softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    x.log_softmax(dim)
}
