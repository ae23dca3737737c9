//! [`Layer`]: a module from tensor to tensor, the item type of a `Sequential`.

use crate::hooks::Call;
use crate::module::{Module, ModuleField};
use crate::{Forward, Result, Shared, Tensor};

/// A module (or shared module) that maps a tensor to a tensor: what a [`Sequential`](super::Sequential) holds.
///
/// Implemented for every `Module + Forward<Input = Tensor, Output = Tensor>` and for `Shared` of one.
pub trait Layer: ModuleField {
    /// Calls the module, with its hooks.
    fn call_layer(&self, input: Tensor) -> Result<Tensor>;
}

impl<M: Module + Forward<Input = Tensor, Output = Tensor>> Layer for M {
    fn call_layer(&self, input: Tensor) -> Result<Tensor> {
        self.call(input)
    }
}

impl<M: Module + Forward<Input = Tensor, Output = Tensor>> Layer for Shared<M> {
    fn call_layer(&self, input: Tensor) -> Result<Tensor> {
        self.read().call(input)
    }
}

/// A module from tensor to tensor whose type is chosen at run time: hold it as `Box<dyn TensorModule>` (a
/// module, and a layer, itself).
///
/// ```
/// use nn::prelude::*;
/// let act: Box<dyn TensorModule> = if true { Box::new(ReLU::new(false)) } else { Box::new(Tanh::new()) };
/// assert_eq!(act.to_string(), "ReLU()");
/// let y = act.forward(Tensor::from_vec(vec![-1.0f32, 1.0], [2]).unwrap()).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 1.0]);
/// ```
pub trait TensorModule: Module + Forward<Input = Tensor, Output = Tensor> {
    /// Calls the module, with its hooks (what `call` does on the concrete type).
    fn call_tensor(&self, input: Tensor) -> Result<Tensor>;
}

impl<M: Module + Forward<Input = Tensor, Output = Tensor>> TensorModule for M {
    fn call_tensor(&self, input: Tensor) -> Result<Tensor> {
        self.call(input)
    }
}

/// The boxed module's call: its own hooks run (a box adds none).
impl Forward for Box<dyn TensorModule> {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, input: Tensor) -> Result<Tensor> {
        (**self).call_tensor(input)
    }
}

impl std::fmt::Display for dyn TensorModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}
