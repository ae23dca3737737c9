//! [`Dropout`]: zeroes random elements in training.

use crate::module::{ExtraRepr, py_bool, py_float};
use crate::ops::dropout::{check_p, mask};
use crate::{Forward, Module, Result, Tensor};

/// PyTorch's `nn.Dropout(p=0.5, inplace=False)`: in training, each element is zeroed with probability `p`
/// and the others scaled by `1 / (1 - p)`; in evaluation, the input passes unchanged. Draws from the global
/// generator ([`crate::manual_seed`]), on the CPU or a device (see [`crate::functional::dropout`]).
///
/// ```
/// use nn::prelude::*;
/// let mut drop = Dropout::new(0.5, false).unwrap();
/// assert_eq!(drop.to_string(), "Dropout(p=0.5, inplace=False)");
/// drop.eval();
/// let x = Tensor::ones([4], DType::F32);
/// assert_eq!(drop.forward(x).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 4]);
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct Dropout {
    /// Probability of zeroing an element.
    pub p: f64,
    /// Whether to change the input in place.
    pub inplace: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl Dropout {
    /// A dropout layer; `p` must lie in `[0, 1]`.
    pub fn new(p: f64, inplace: bool) -> Result<Dropout> {
        check_p(p)?;
        Ok(Dropout {
            p,
            inplace,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for Dropout {
    fn extra_repr(&self) -> String {
        format!("p={}, inplace={}", py_float(self.p), py_bool(self.inplace))
    }
}

impl Forward for Dropout {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        if !self.training || self.p == 0.0 {
            return Ok(x);
        }
        self.forward_ref(&x)
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        if !self.training || self.p == 0.0 {
            return Ok(x.clone());
        }
        let mask = mask(x.shape(), self.p, x.dtype(), x.device())?;
        if self.inplace {
            x.mul_(&mask)?;
            Ok(x.clone())
        } else {
            x.mul(&mask)
        }
    }
}
