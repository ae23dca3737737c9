//! [`Param`]: a trainable tensor, PyTorch's `nn.Parameter`.

use std::fmt;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::tensor::{GradHookHandle, GradMeta, ModeMarks};
use crate::{DType, Device, Error, Result, Shape, Tensor};

/// A trainable tensor: its data, whether it requires gradients, and its gradient slot.
///
/// A `Param` is a handle, like a Python reference to an `nn.Parameter`: clones are the same parameter, so one
/// `Param` placed in two modules ties their weights, and a cast or a load through either is seen by both.
///
/// ```
/// use nn::{Param, Tensor, DType};
/// let p = Param::new(Tensor::zeros([2, 3], DType::F32));
/// let tied = p.clone();
/// p.set_data(Tensor::ones([2, 3], DType::F16));
/// assert_eq!(tied.dtype(), DType::F16);
/// assert!(p.requires_grad());
/// assert!(p.ptr_eq(&tied));
/// ```
#[derive(Clone)]
pub struct Param {
    inner: Arc<ParamInner>,
    /// The modes of the module keeping this handle, if it has no `training` field, and of handle-less modules
    /// above it (see [`crate::module::mode`]): marks of the handle, not of the parameter, so tied modules keep
    /// their own.
    mode_marks: ModeMarks,
}

struct ParamInner {
    data: RwLock<Tensor>,
    meta: Arc<GradMeta>,
}

impl Param {
    /// A new parameter holding `data`; floating-point parameters require gradients, as in PyTorch.
    pub fn new(data: Tensor) -> Param {
        let requires_grad = data.is_floating_point();
        Param::with_requires_grad(data, requires_grad)
    }

    /// A new parameter holding `data`, with `requires_grad` as given.
    pub fn with_requires_grad(data: Tensor, requires_grad: bool) -> Param {
        let meta = Arc::new(GradMeta::new(requires_grad));
        let data = data.detach().with_grad_meta(Some(meta.clone()));
        Param {
            inner: Arc::new(ParamInner {
                data: RwLock::new(data),
                meta,
            }),
            mode_marks: ModeMarks::NONE,
        }
    }

    /// The data: a handle sharing the parameter's storage and its autograd state.
    pub fn data(&self) -> Tensor {
        self.inner.data.read().clone()
    }

    /// Replaces the data (PyTorch's `param.data = t`); the parameter, its ties and its gradient slot stay.
    pub fn set_data(&self, data: Tensor) {
        let data = data.detach().with_grad_meta(Some(self.inner.meta.clone()));
        *self.inner.data.write() = data;
    }

    /// The shape of the data.
    pub fn shape(&self) -> Shape {
        self.inner.data.read().shape().clone()
    }

    /// The dtype of the data.
    pub fn dtype(&self) -> DType {
        self.inner.data.read().dtype()
    }

    /// The device of the data.
    pub fn device(&self) -> Device {
        self.inner.data.read().device()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.inner.data.read().numel()
    }

    /// Whether gradients flow into this parameter.
    pub fn requires_grad(&self) -> bool {
        self.inner.meta.requires_grad()
    }

    /// Sets whether gradients flow into this parameter; only floating-point parameters can require them.
    pub fn set_requires_grad(&self, on: bool) -> Result<()> {
        if on && !self.dtype().is_floating_point() {
            return Err(Error::UnsupportedDType {
                op: "requires_grad_",
                dtype: self.dtype(),
                hint: "; only floating-point parameters can require gradients",
            });
        }
        self.inner.meta.set_requires_grad(on);
        Ok(())
    }

    /// The accumulated gradient, if any.
    pub fn grad(&self) -> Option<Tensor> {
        self.inner.meta.grad()
    }

    /// Replaces the gradient; it must have the parameter's shape.
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        if let Some(g) = &grad
            && g.shape() != &self.shape()
        {
            return Err(Error::shapes(
                "set_grad",
                &self.shape(),
                g.shape(),
                "a gradient of the parameter's shape",
            ));
        }
        self.inner.meta.set_grad(grad);
        Ok(())
    }

    /// Registers `hook(grad)` on this parameter's gradient, run before each backward pass accumulates it; it
    /// may return a replacement (PyTorch's `param.register_hook`). See [`Tensor::register_hook`].
    ///
    /// ```
    /// use nn::prelude::*;
    /// let fc = Linear::new(2, 1, true);
    /// fc.weight.register_hook(|g| Ok(Some(g.mul_scalar(0.0)?)))?;
    /// fc.forward(Tensor::ones([3, 2], DType::F32))?.sum_all()?.backward()?;
    /// assert_eq!(fc.weight.grad().unwrap().to_vec::<f32>()?, vec![0.0, 0.0]);
    /// assert_eq!(fc.bias.as_ref().unwrap().grad().unwrap().to_vec::<f32>()?, vec![3.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn register_hook<F>(&self, hook: F) -> Result<GradHookHandle>
    where
        F: Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    {
        self.data().register_hook(hook)
    }

    /// Registers `hook(param)`, run after a backward pass accumulated this parameter's gradient (PyTorch's
    /// `register_post_accumulate_grad_hook`, e.g. to step an optimizer inside the backward).
    pub fn register_post_accumulate_grad_hook<F>(&self, hook: F) -> Result<GradHookHandle>
    where
        F: Fn(&Param) -> Result<()> + Send + Sync + 'static,
    {
        if !self.requires_grad() {
            return Err(Error::autograd(
                "register_post_accumulate_grad_hook",
                "the parameter does not require grad",
            ));
        }
        // A weak handle: the parameter's autograd state holds the hook, which must not keep it alive.
        let weak = Arc::downgrade(&self.inner);
        let hook = move |_: &Arc<GradMeta>| match weak.upgrade() {
            Some(inner) => hook(&Param {
                inner,
                mode_marks: ModeMarks::NONE,
            }),
            None => Ok(()),
        };
        Ok(self.inner.meta.post_accumulate.add(Arc::new(hook)))
    }

    /// Whether `self` and `other` are the same parameter.
    pub fn ptr_eq(&self, other: &Param) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// An address identifying this parameter (equal for clones).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// The marks of the modes kept here (see [`crate::module::mode`]).
    pub(crate) fn mode_marks(&self) -> ModeMarks {
        self.mode_marks
    }

    /// The marks of the modes kept here, to change (see [`crate::module::mode`]).
    pub(crate) fn mode_marks_mut(&mut self) -> &mut ModeMarks {
        &mut self.mode_marks
    }

    /// Whether another handle to this parameter exists (so it may be reached twice in a traversal).
    #[inline]
    pub(crate) fn is_aliased(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }
}

impl From<Tensor> for Param {
    fn from(t: Tensor) -> Param {
        Param::new(t)
    }
}

/// PyTorch's `repr(parameter)`: `Parameter containing:` and the tensor's `repr` on the next line.
///
/// ```
/// use nn::{Param, Tensor};
/// let p = Param::new(Tensor::from_vec(vec![0.5f32, -1.0], [2])?);
/// assert_eq!(p.to_string(), "Parameter containing:\ntensor([ 0.5000, -1.0000], requires_grad=True)");
/// # Ok::<(), nn::Error>(())
/// ```
impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parameter containing:\n{}", self.data())
    }
}

impl fmt::Debug for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parameter containing: {:?}", self.data())
    }
}
