//! [`Softmax`] and [`LogSoftmax`] over one dimension.

use crate::module::ExtraRepr;
use crate::{Forward, Module, Result, Tensor};

/// PyTorch's implicit dimension when `dim=None`: 0 for tensors of rank 0, 1 or 3, else 1.
fn implicit_dim(rank: usize) -> isize {
    if matches!(rank, 0 | 1 | 3) { 0 } else { 1 }
}

fn dim_repr(dim: Option<isize>) -> String {
    match dim {
        Some(d) => format!("dim={d}"),
        None => "dim=None".into(),
    }
}

/// PyTorch's `nn.Softmax(dim=None)`.
///
/// ```
/// use nn::prelude::*;
/// let sm = Softmax::new(-1);
/// assert_eq!(sm.to_string(), "Softmax(dim=-1)");
/// let y = sm.forward(Tensor::zeros([2, 4], DType::F32)).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.25; 8]);
/// ```
#[derive(Module, Clone, Debug)]
#[module(name = "Softmax", extra_repr)]
pub struct Softmax {
    /// The dimension normalised (`None`: PyTorch's legacy implicit choice).
    pub dim: Option<isize>,
    training: bool,
    hooks: crate::Hooks,
}

impl Softmax {
    /// Softmax along `dim` (`None` for PyTorch's implicit choice).
    pub fn new(dim: impl Into<Option<isize>>) -> Softmax {
        Softmax {
            dim: dim.into(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for Softmax {
    fn extra_repr(&self) -> String {
        dim_repr(self.dim)
    }
}

impl Forward for Softmax {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.forward_ref(&x)
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        x.softmax(self.dim.unwrap_or_else(|| implicit_dim(x.rank())))
    }
}

/// PyTorch's `nn.LogSoftmax(dim=None)`.
#[derive(Module, Clone, Debug)]
#[module(name = "LogSoftmax", extra_repr)]
pub struct LogSoftmax {
    /// The dimension normalised (`None`: PyTorch's legacy implicit choice).
    pub dim: Option<isize>,
    training: bool,
    hooks: crate::Hooks,
}

impl LogSoftmax {
    /// Log-softmax along `dim` (`None` for PyTorch's implicit choice).
    pub fn new(dim: impl Into<Option<isize>>) -> LogSoftmax {
        LogSoftmax {
            dim: dim.into(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for LogSoftmax {
    fn extra_repr(&self) -> String {
        dim_repr(self.dim)
    }
}

impl Forward for LogSoftmax {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.forward_ref(&x)
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        x.log_softmax(self.dim.unwrap_or_else(|| implicit_dim(x.rank())))
    }
}
