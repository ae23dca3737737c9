//! [`TensorModule`]: the one trait of a module that maps a tensor to a tensor; [`Layer`]: such a module, owned
//! or [`Shared`], as an item of a `Sequential`.

use std::any::Any;
use std::fmt;

use super::ModuleField;
use crate::hooks::Call;
use crate::{Error, Forward, Module, Result, Shared, Tensor};

/// A module that maps a tensor to a tensor: every `Module + Forward<Input = Tensor, Output = Tensor>`.
///
/// Hold one whose type is chosen at run time as `Box<dyn TensorModule>` (a module, and a tensor module, itself;
/// `Shared<Box<dyn TensorModule>>` shares one); a [`Sequential`](crate::Sequential) holds them as [`Layer`]s.
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

impl fmt::Display for dyn TensorModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

/// An item of a [`Sequential`](crate::Sequential): a [`TensorModule`], owned or [`Shared`] (made with `into()`
/// from either).
///
/// ```
/// use nn::prelude::*;
/// use nn::module::Layer;
/// let shared = Shared::new(PReLU::new(1, 0.25));
/// let layers: Vec<Layer> = vec![Linear::new(2, 2, true).into(), shared.clone().into(), shared.into()];
/// let x = Tensor::ones([1, 2], DType::F32);
/// let y = layers.iter().try_fold(x, |x, layer| layer.call(x)).unwrap();
/// assert_eq!(y.shape(), &[1, 2]);
/// ```
pub struct Layer {
    slot: Box<dyn ModuleField>,
    call: fn(&dyn Any, Tensor) -> Result<Tensor>,
}

impl Layer {
    /// Calls the module, with its hooks.
    pub fn call(&self, input: Tensor) -> Result<Tensor> {
        (self.call)(&*self.slot as &dyn Any, input)
    }

    /// The module's slot, as a traversal sees it.
    pub fn slot(&self) -> &dyn ModuleField {
        &*self.slot
    }

    /// The module's slot, for change.
    pub fn slot_mut(&mut self) -> &mut dyn ModuleField {
        &mut *self.slot
    }
}

/// The call of a `T` behind `&dyn Any` (a layer's slot holds a `T`: the downcast cannot fail).
fn call_as<T: 'static>(
    slot: &dyn Any,
    input: Tensor,
    call: impl FnOnce(&T, Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    match slot.downcast_ref::<T>() {
        Some(module) => call(module, input),
        None => Err(Error::invalid("Sequential", "a layer's slot does not hold its module")),
    }
}

impl<M: TensorModule> From<M> for Layer {
    fn from(module: M) -> Layer {
        Layer {
            slot: Box::new(module),
            call: |slot, input| call_as::<M>(slot, input, M::call_tensor),
        }
    }
}

impl<M: TensorModule> From<Shared<M>> for Layer {
    fn from(module: Shared<M>) -> Layer {
        Layer {
            slot: Box::new(module),
            call: |slot, input| call_as::<Shared<M>>(slot, input, |m, x| m.read().call_tensor(x)),
        }
    }
}
