//! [`Flatten`] merges a range of dimensions; [`Unflatten`] splits one.

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

/// PyTorch's `nn.Unflatten(dim, unflattened_size)`: [`Tensor::unflatten`](crate::Tensor::unflatten) of `dim`
/// into `unflattened_size` (one size may be `-1`, inferred). Its `repr` prints the sizes as a tuple, as
/// PyTorch's does for one.
///
/// ```
/// use nn::prelude::*;
/// let layer = Unflatten::new(1, &[2, -1]);
/// assert_eq!(layer.to_string(), "Unflatten(dim=1, unflattened_size=(2, -1))");
/// assert_eq!(layer.forward(Tensor::zeros([3, 8], DType::F32)).unwrap().shape(), &[3, 2, 4]);
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct Unflatten {
    /// The dimension split (negative counts from the end).
    pub dim: isize,
    /// Its sizes once split.
    pub unflattened_size: Vec<isize>,
    training: bool,
    hooks: crate::Hooks,
}

impl Unflatten {
    /// Splits `dim` into `unflattened_size`; the sizes are checked against the input in `forward`, as PyTorch
    /// checks them.
    pub fn new(dim: isize, unflattened_size: &[isize]) -> Unflatten {
        Unflatten {
            dim,
            unflattened_size: unflattened_size.to_vec(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for Unflatten {
    fn extra_repr(&self) -> String {
        let sizes: Vec<String> = self.unflattened_size.iter().map(isize::to_string).collect();
        let tuple = match sizes.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", sizes.join(", ")),
        };
        format!("dim={}, unflattened_size={tuple}", self.dim)
    }
}

reads_input!(Unflatten, |layer, x| x.unflatten(layer.dim, &layer.unflattened_size));
