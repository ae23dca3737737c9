//! [`Layer`]: a module from tensor to tensor, the item type of a `Sequential`.

use crate::module::{Module, ModuleField};
use crate::{Forward, Result, Shared, Tensor};

/// A module (or shared module) that maps a tensor to a tensor: what a [`Sequential`](super::Sequential) holds.
///
/// Implemented for every `Module + Forward<Input = Tensor, Output = Tensor>` and for `Shared` of one.
pub trait Layer: ModuleField {
    /// The module's forward.
    fn forward_layer(&self, input: Tensor) -> Result<Tensor>;
}

impl<M: Module + Forward<Input = Tensor, Output = Tensor>> Layer for M {
    fn forward_layer(&self, input: Tensor) -> Result<Tensor> {
        self.forward(input)
    }
}

impl<M: Module + Forward<Input = Tensor, Output = Tensor>> Layer for Shared<M> {
    fn forward_layer(&self, input: Tensor) -> Result<Tensor> {
        self.read().forward(input)
    }
}
