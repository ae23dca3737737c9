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

/// An item of a [`Sequential`](crate::Sequential): a module, owned or [`Shared`]. A [`TensorModule`] becomes
/// one with `into()`; a module whose input or output is not a tensor (an LSTM, a user's module taking a tuple)
/// with [`Layer::any`], its input checked against the previous layer's output when the sequential runs.
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
    run: fn(&dyn Any, Flow) -> Result<Flow>,
    share: fn(Layer) -> Result<(Layer, Layer)>,
}

/// What passes from one layer of a sequential to the next: a tensor, or a value of another type (with its
/// type's name, for errors).
pub(crate) enum Flow {
    Tensor(Tensor),
    Other(Box<dyn Any + Send>, &'static str),
}

impl Flow {
    /// A layer's output.
    pub(crate) fn of<T: Send + 'static>(value: T) -> Flow {
        let boxed: Box<dyn Any + Send> = Box::new(value);
        match boxed.downcast::<Tensor>() {
            Ok(tensor) => Flow::Tensor(*tensor),
            Err(other) => Flow::Other(other, std::any::type_name::<T>()),
        }
    }

    /// The value as the `T` that `taker` takes, or a typed error naming both types.
    pub(crate) fn into_value<T: 'static>(self, taker: &str) -> Result<T> {
        let (boxed, given): (Box<dyn Any + Send>, &str) = match self {
            Flow::Tensor(tensor) => (Box::new(tensor), std::any::type_name::<Tensor>()),
            Flow::Other(other, name) => (other, name),
        };
        boxed.downcast::<T>().map(|value| *value).map_err(|_| {
            Error::invalid(
                "Sequential",
                format!("{taker} takes `{}` but is given `{given}`", std::any::type_name::<T>()),
            )
        })
    }

    /// The tensor, without a box when it is one.
    fn into_tensor(self, taker: &str) -> Result<Tensor> {
        match self {
            Flow::Tensor(tensor) => Ok(tensor),
            other => other.into_value(taker),
        }
    }
}

impl Layer {
    /// A module whose input or output is not a tensor, as a layer: in a sequential it takes the previous
    /// layer's output (or the sequential's input) when that is its input type, else the run fails with a typed
    /// error naming both types.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::module::Layer;
    ///
    /// /// Keeps the LSTM's output sequence, drops its state.
    /// #[derive(Module)]
    /// struct TakeOutput;
    /// impl Forward for TakeOutput {
    ///     type Input = (Tensor, (Tensor, Tensor));
    ///     type Output = Tensor;
    ///     fn forward(&self, (output, _state): Self::Input) -> nn::Result<Tensor> {
    ///         Ok(output)
    ///     }
    /// }
    ///
    /// let lstm = LSTM::new(3, 4);
    /// let seq = Sequential::new().append(Layer::any(lstm)).append(Layer::any(TakeOutput)).append(Linear::new(4, 2, true));
    /// let x = Tensor::zeros([5, 1, 3], DType::F32);
    /// let y: Tensor = seq.forward_as((x, None::<(Tensor, Tensor)>)).unwrap();
    /// assert_eq!(y.shape(), &[5, 1, 2]);
    /// // `forward` takes a tensor: the LSTM takes a tuple, so that run is refused with both types named.
    /// assert!(seq.forward(Tensor::zeros([5, 1, 3], DType::F32)).is_err());
    /// ```
    pub fn any<M: AnyForward>(module: M) -> Layer {
        Layer {
            slot: Box::new(module),
            run: |slot, flow| run_any(slot_as::<M>(slot)?, flow),
            share: |layer| share_owned::<M>(layer, Layer::any_shared),
        }
    }

    /// [`Layer::any`] for a module held in several places.
    pub fn any_shared<M: AnyForward>(module: Shared<M>) -> Layer {
        Layer {
            slot: Box::new(module),
            run: |slot, flow| run_any(&*slot_as::<Shared<M>>(slot)?.read(), flow),
            share: |layer| share_handle::<M>(layer, Layer::any_shared),
        }
    }

    /// Calls the module, with its hooks.
    pub fn call(&self, input: Tensor) -> Result<Tensor> {
        self.run(Flow::Tensor(input))?.into_tensor("the caller of Layer::call")
    }

    /// Runs the module on what the previous layer gave.
    pub(crate) fn run(&self, input: Flow) -> Result<Flow> {
        (self.run)(&*self.slot as &dyn Any, input)
    }

    /// The layer as a module held in two places (PyTorch's slices and `*` of a sequential hold the same
    /// modules): an owned module becomes [`Shared`]; the first layer returned takes this one's place, the
    /// second is the new handle.
    pub fn share(self) -> Result<(Layer, Layer)> {
        (self.share)(self)
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

/// A layer's slot as the `T` it holds.
fn slot_as<T: 'static>(slot: &dyn Any) -> Result<&T> {
    slot.downcast_ref::<T>()
        .ok_or_else(|| Error::invalid("Sequential", "a layer's slot does not hold its module"))
}

/// An owned `M`'s layer, turned into two layers of one [`Shared`] module made by `make`.
fn share_owned<M: Module>(layer: Layer, make: fn(Shared<M>) -> Layer) -> Result<(Layer, Layer)> {
    let slot: Box<dyn Any> = layer.slot;
    let module = slot
        .downcast::<M>()
        .map_err(|_| Error::invalid("Sequential", "a layer's slot does not hold its module"))?;
    let shared = Shared::new(*module);
    Ok((make(shared.clone()), make(shared)))
}

/// A shared `M`'s layer and a second handle to it, made by `make`.
fn share_handle<M: Module>(layer: Layer, make: fn(Shared<M>) -> Layer) -> Result<(Layer, Layer)> {
    let handle = slot_as::<Shared<M>>(&*layer.slot as &dyn Any)?.clone();
    Ok((layer, make(handle)))
}

/// A module whose input and output a sequential can pass on: what [`Layer::any`] takes.
pub trait AnyForward: Module + Forward<Input: Clone + Send + 'static, Output: Send + 'static> {}

impl<M> AnyForward for M
where
    M: Module + Forward,
    M::Input: Clone + Send + 'static,
    M::Output: Send + 'static,
{
}

/// Calls `module` on the flow's value, if it is the module's input type.
fn run_any<M: AnyForward>(module: &M, flow: Flow) -> Result<Flow> {
    module.call(flow.into_value(module.type_name())?).map(Flow::of)
}

/// Calls a tensor module on the flow's tensor.
fn run_tensor<M: TensorModule>(module: &M, flow: Flow) -> Result<Flow> {
    module
        .call_tensor(flow.into_tensor(module.type_name())?)
        .map(Flow::Tensor)
}

impl<M: TensorModule> From<M> for Layer {
    fn from(module: M) -> Layer {
        Layer {
            slot: Box::new(module),
            run: |slot, flow| run_tensor(slot_as::<M>(slot)?, flow),
            share: |layer| share_owned::<M>(layer, Layer::from),
        }
    }
}

impl<M: TensorModule> From<Shared<M>> for Layer {
    fn from(module: Shared<M>) -> Layer {
        Layer {
            slot: Box::new(module),
            run: |slot, flow| run_tensor(&*slot_as::<Shared<M>>(slot)?.read(), flow),
            share: |layer| share_handle::<M>(layer, Layer::from),
        }
    }
}
