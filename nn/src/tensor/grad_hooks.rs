//! The gradient hooks a tensor's autograd state keeps: PyTorch's `Tensor.register_hook` (on a leaf, in its
//! [`GradMeta`](super::GradMeta); on a computed tensor, on the node output that computed it) and
//! `register_post_accumulate_grad_hook` (leaves only). The backward pass (`crate::autograd`) runs them; the
//! registration API is there too. Here is only the data, and the handle that removes a hook.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use super::{GradMeta, Tensor};
use crate::Result;

/// `hook(grad)`: sees a gradient and may replace it (`Some`), or fail.
pub(crate) type GradFn = dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync;
/// `hook(state)` after a leaf's gradient was accumulated (the closure knows the tensor or parameter).
pub(crate) type AccumulatedFn = dyn Fn(&Arc<GradMeta>) -> Result<()> + Send + Sync;

/// One registered hook and the flag its handle sets.
pub(crate) struct HookEntry<F: ?Sized> {
    pub(crate) f: Arc<F>,
    removed: Arc<AtomicBool>,
}

impl<F: ?Sized> Clone for HookEntry<F> {
    fn clone(&self) -> Self {
        HookEntry {
            f: self.f.clone(),
            removed: self.removed.clone(),
        }
    }
}

impl<F: ?Sized> HookEntry<F> {
    pub(crate) fn live(&self) -> bool {
        !self.removed.load(Ordering::Acquire)
    }
}

/// A list of hooks, empty (no allocation) until the first registration; removed entries are dropped at the
/// next registration.
pub(crate) struct HookList<F: ?Sized> {
    entries: Mutex<Vec<HookEntry<F>>>,
}

impl<F: ?Sized> Default for HookList<F> {
    fn default() -> Self {
        HookList {
            entries: Mutex::new(Vec::new()),
        }
    }
}

impl<F: ?Sized> std::fmt::Debug for HookList<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} hooks", self.live().len())
    }
}

impl<F: ?Sized> HookList<F> {
    /// Registers `f` last and returns its handle.
    pub(crate) fn add(&self, f: Arc<F>) -> GradHookHandle {
        let removed = Arc::new(AtomicBool::new(false));
        let mut entries = self.entries.lock();
        entries.retain(HookEntry::live);
        entries.push(HookEntry {
            f,
            removed: removed.clone(),
        });
        GradHookHandle { removed }
    }

    /// The live hooks, in registration order (a copy: a hook may register or remove hooks while it runs).
    pub(crate) fn live(&self) -> Vec<Arc<F>> {
        let entries = self.entries.lock();
        entries.iter().filter(|e| e.live()).map(|e| e.f.clone()).collect()
    }

    /// Whether no hook is registered (a lock and a length test: the backward's cost without hooks).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.lock().iter().all(|e| !e.live())
    }
}

/// Removes one gradient hook (PyTorch's `RemovableHandle` of `register_hook`); dropping the handle leaves the
/// hook registered.
#[derive(Clone, Debug)]
pub struct GradHookHandle {
    removed: Arc<AtomicBool>,
}

impl GradHookHandle {
    /// Removes exactly this hook, at once (even from inside a hook); a no-op the second time.
    pub fn remove(&self) {
        self.removed.store(true, Ordering::Release);
    }
}

impl Tensor {
    /// Registers `hook(grad)`, run on this tensor's gradient during each backward pass; it may return a
    /// replacement (of the same shape, dtype and device) or fail (PyTorch's `Tensor.register_hook`). On a leaf
    /// it runs on the summed gradient before it is accumulated into [`grad`](Tensor::grad); on a computed tensor,
    /// on the gradient arriving there before it flows on (and before [`retain_grad`](Tensor::retain_grad) keeps
    /// it). Hooks run in registration order. A tensor that requires no gradient is refused.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::ones([2], DType::F64).requires_grad_(true)?;
    /// let y = x.mul_scalar(3.0)?;
    /// let handle = y.register_hook(|g| Ok(Some(g.mul_scalar(10.0)?)))?;
    /// y.sum_all()?.backward()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![30.0, 30.0]);
    /// handle.remove();
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn register_hook<F>(&self, hook: F) -> Result<GradHookHandle>
    where
        F: Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    {
        let meta = self.meta_requiring_grad("register_hook")?;
        let hook: Arc<GradFn> = Arc::new(hook);
        Ok(match meta.grad_fn() {
            Some((node, index)) => node.hooks.add(Arc::new((index, hook))),
            None => meta.hooks.add(hook),
        })
    }

    /// Registers `hook(tensor)`, run after a backward pass accumulated this leaf's gradient into its
    /// [`grad`](Tensor::grad) (PyTorch's `register_post_accumulate_grad_hook`). Only leaves that require a
    /// gradient have one.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// use std::sync::{Arc, Mutex};
    /// let w = Tensor::ones([2], DType::F32).requires_grad_(true)?;
    /// let seen = Arc::new(Mutex::new(None));
    /// let sink = seen.clone();
    /// w.register_post_accumulate_grad_hook(move |t| {
    ///     *sink.lock().unwrap() = t.grad().map(|g| g.to_vec::<f32>().unwrap());
    ///     Ok(())
    /// })?;
    /// w.mul_scalar(2.0)?.sum_all()?.backward()?;
    /// assert_eq!(*seen.lock().unwrap(), Some(vec![2.0, 2.0]));
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn register_post_accumulate_grad_hook<F>(&self, hook: F) -> Result<GradHookHandle>
    where
        F: Fn(&Tensor) -> Result<()> + Send + Sync + 'static,
    {
        let meta = self.meta_requiring_grad("register_post_accumulate_grad_hook")?;
        if !meta.is_leaf() {
            return Err(crate::Error::autograd(
                "register_post_accumulate_grad_hook",
                "post accumulate grad hooks cannot be registered on non-leaf tensors (only a leaf accumulates a \
                 gradient; register_hook sees a computed tensor's)",
            ));
        }
        // The hook holds the data, not the autograd state (which holds the hook): no cycle.
        let data = self.detach();
        let hook = move |meta: &Arc<GradMeta>| hook(&data.clone().with_grad_meta(Some(meta.clone())));
        Ok(meta.post_accumulate.add(Arc::new(hook)))
    }

    /// The autograd state, if this tensor requires a gradient; else an error for `op`.
    fn meta_requiring_grad(&self, op: &'static str) -> Result<&Arc<GradMeta>> {
        self.grad_meta()
            .filter(|m| m.requires_grad())
            .ok_or_else(|| crate::Error::autograd(op, "the tensor does not require grad"))
    }
}
