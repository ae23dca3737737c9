//! [`PReLU`]: a leaky ReLU with a learned slope.

use crate::module::ExtraRepr;
use crate::{DType, Module, Param, Tensor, functional};

/// PyTorch's `nn.PReLU(num_parameters=1, init=0.25)`: `x` if `x > 0` else `weight * x`, with one weight, or
/// one per channel (dimension 1 of the input).
///
/// ```
/// use nn::prelude::*;
/// let prelu = PReLU::new(3, 0.25);
/// assert_eq!(prelu.to_string(), "PReLU(num_parameters=3)");
/// assert_eq!(prelu.state_dict()["weight"].shape(), &[3]);
/// ```
#[derive(Module)]
#[module(name = "PReLU", extra_repr)]
pub struct PReLU {
    /// The slopes, `(num_parameters)`.
    pub weight: Param,
    /// Number of slopes: 1, or the number of input channels.
    pub num_parameters: usize,
    training: bool,
    hooks: crate::Hooks,
}

impl PReLU {
    /// `num_parameters` slopes, each `init`, in `f32`.
    pub fn new(num_parameters: usize, init: f64) -> PReLU {
        PReLU {
            weight: Param::new(Tensor::full([num_parameters], init, DType::F32)),
            num_parameters,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(PReLU => PReLU::new(1, 0.25));

impl ExtraRepr for PReLU {
    fn extra_repr(&self) -> String {
        format!("num_parameters={}", self.num_parameters)
    }
}

reads_input!(PReLU, |prelu, x| functional::prelu(x, &prelu.weight.data()));
