//! [`Identity`]: returns its input.

use crate::{Forward, Module, Result, Tensor};

/// PyTorch's `nn.Identity()`: a placeholder that returns its input.
///
/// ```
/// use nn::prelude::*;
/// let x = Tensor::ones([2], DType::F32);
/// assert!(Identity::new().forward(x.clone()).unwrap().shares_storage(&x));
/// ```
#[derive(Module, Clone, Debug)]
pub struct Identity {
    training: bool,
    hooks: crate::Hooks,
}

impl Identity {
    /// A new identity.
    pub fn new() -> Identity {
        Identity {
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(Identity => Identity::new());

impl Forward for Identity {
    type Input = Tensor;
    type Output = Tensor;
    #[inline]
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        Ok(x)
    }
    #[inline]
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.clone())
    }
}
