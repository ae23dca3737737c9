//! [`Flatten`]: merges a range of dimensions.

use crate::Module;
use crate::module::ExtraRepr;

/// PyTorch's `nn.Flatten(start_dim=1, end_dim=-1)`.
///
/// ```
/// use nn::prelude::*;
/// let y = Flatten::default().forward(Tensor::zeros([2, 3, 4], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[2, 12]);
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct Flatten {
    /// First dimension merged.
    pub start_dim: isize,
    /// Last dimension merged.
    pub end_dim: isize,
    training: bool,
    hooks: crate::Hooks,
}

impl Flatten {
    /// Merges dimensions `start_dim..=end_dim` (negative counts from the end).
    pub fn new(start_dim: isize, end_dim: isize) -> Flatten {
        Flatten {
            start_dim,
            end_dim,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(Flatten => Flatten::new(1, -1));

impl ExtraRepr for Flatten {
    fn extra_repr(&self) -> String {
        format!("start_dim={}, end_dim={}", self.start_dim, self.end_dim)
    }
}

reads_input!(Flatten, |layer, x| x.flatten(layer.start_dim, layer.end_dim));
