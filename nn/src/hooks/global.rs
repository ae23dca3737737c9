//! Global module hooks: PyTorch's `register_module_forward_pre_hook`, `register_module_forward_hook`,
//! `register_module_full_backward_pre_hook` and `register_module_full_backward_hook`.
//!
//! A global hook runs for every module call ([`Call::call`](super::Call::call)), before the module's own hooks
//! of the same kind, as PyTorch's `_call_impl` chains `_global_forward_hooks` before `self._forward_hooks`. It
//! sees the module as `&dyn Module` and its input and output as `dyn Any` (downcast them to the module's
//! types). While none is registered, a call tests one atomic counter and nothing else.
//!
//! ```
//! use nn::prelude::*;
//! use std::sync::{Arc, Mutex};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = seen.clone();
//! let handle = nn::hooks::register_module_forward_hook(
//!     move |module, _input, output| {
//!         let shape = output.and_then(|y| y.downcast_ref::<Tensor>()).map(|y| y.shape().clone());
//!         sink.lock().unwrap().push((module.type_name(), shape));
//!     },
//!     HookOptions::default(),
//! );
//! let fc = Linear::new(2, 3, true);
//! fc.call(Tensor::zeros([4, 2], DType::F32)).unwrap();
//! handle.remove();
//! fc.call(Tensor::zeros([4, 2], DType::F32)).unwrap();
//! assert_eq!(seen.lock().unwrap().len(), 1);
//! assert_eq!(seen.lock().unwrap()[0].0, "Linear");
//! ```

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use super::backward::Grads;
use super::call::HookResult;
use super::table::{HookHandle, HookKind, HookOptions, Hooks};
use crate::{Module, Result, Tensor};

/// A global forward pre-hook: sees the module and its input (which it may replace), or fails.
pub(crate) type GlobalPreHook = Box<dyn Fn(&dyn Module, &mut dyn Any) -> Result<()> + Send + Sync>;
/// A global forward hook: sees the module, its input and its output (`None` when the forward produced none),
/// which it may replace, or fails.
pub(crate) type GlobalPostHook = Box<dyn Fn(&dyn Module, &dyn Any, Option<&mut dyn Any>) -> Result<()> + Send + Sync>;
/// A global full backward hook: the module's type name, `grad_input`, `grad_output`; may replace `grad_input`.
pub(crate) type GlobalFullHook =
    Arc<dyn Fn(&'static str, &Grads, &Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;
/// A global full backward pre-hook: the module's type name and `grad_output`, which it may replace.
pub(crate) type GlobalBackwardPreHook =
    Arc<dyn Fn(&'static str, &Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;

/// Live global hooks: the one test a module call makes.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The global hooks, replaced as a whole on each registration, so that a call holds its own snapshot while
/// hooks run (a hook may register or remove others).
static TABLE: RwLock<Option<Arc<Hooks>>> = RwLock::new(None);

/// Whether any global hook is registered: one atomic load.
#[inline(always)]
pub(crate) fn any_live() -> bool {
    LIVE.load(Ordering::Acquire) != 0
}

/// The global hooks as they are now (`None` when there are none).
pub(crate) fn snapshot() -> Option<Arc<Hooks>> {
    match TABLE.read() {
        Ok(table) => table.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Called by a global hook's handle the first time it removes its hook.
pub(crate) fn removed() {
    LIVE.fetch_sub(1, Ordering::AcqRel);
}

/// Adds `f` to the global hooks of `kind`.
fn register(kind: HookKind, f: Arc<dyn Any + Send + Sync>, options: HookOptions) -> HookHandle {
    let mut table = match TABLE.write() {
        Ok(table) => table,
        Err(poisoned) => poisoned.into_inner(),
    };
    let mut hooks = table.as_deref().map(Hooks::share).unwrap_or_default();
    let handle = hooks.add(kind, f, options).global();
    *table = Some(Arc::new(hooks));
    LIVE.fetch_add(1, Ordering::AcqRel);
    handle
}

/// PyTorch's `register_module_forward_pre_hook`: `hook(module, &mut input)` runs before every module call's
/// own forward pre-hooks and may replace the input (downcast it to the module's input type); it returns `()`,
/// or a [`Result`] whose error fails the call.
///
/// ```
/// use nn::prelude::*;
/// let handle = nn::hooks::register_module_forward_pre_hook(|module, input| {
///     if module.type_name() == "ReLU" && let Some(x) = input.downcast_mut::<Tensor>() {
///         *x = x.neg()?;
///     }
///     Ok(())
/// });
/// let y = ReLU::new(false).call(Tensor::from_vec(vec![-2.0f32, 3.0], [2])?)?;
/// handle.remove();
/// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 0.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn register_module_forward_pre_hook<F, R>(hook: F) -> HookHandle
where
    F: Fn(&dyn Module, &mut dyn Any) -> R + Send + Sync + 'static,
    R: HookResult,
{
    let hook: GlobalPreHook = Box::new(move |module, input| hook(module, input).into_result());
    register(HookKind::ForwardPre, Arc::new(hook), HookOptions::default())
}

/// PyTorch's `register_module_forward_hook(hook, always_call=...)`: `hook(module, &input, output)` runs after
/// every module call's forward, before the module's own forward hooks, and may replace the output. With
/// `always_call`, it also runs when a pre-hook, the forward or a hook fails (then `output` is `None` if the
/// forward produced none). `options.prepend` is ignored, as PyTorch's global registration has none.
pub fn register_module_forward_hook<F, R>(hook: F, options: HookOptions) -> HookHandle
where
    F: Fn(&dyn Module, &dyn Any, Option<&mut dyn Any>) -> R + Send + Sync + 'static,
    R: HookResult,
{
    let hook: GlobalPostHook = Box::new(move |module, input, output| hook(module, input, output).into_result());
    let options = HookOptions {
        prepend: false,
        ..options
    };
    register(HookKind::Forward, Arc::new(hook), options)
}

/// PyTorch's `register_module_full_backward_hook`: in each backward pass through a call of any module whose
/// input and output are tensors ([`TensorArgs`](super::TensorArgs) of the common shapes: a tensor, an
/// `Option`, a `Vec`, an array or a tuple of up to four of them, nested once), `hook(type_name, grad_input,
/// grad_output)` runs before the module's own backward hooks and may replace `grad_input`.
///
/// ```
/// use nn::prelude::*;
/// use std::sync::{Arc, Mutex};
/// let names = Arc::new(Mutex::new(Vec::new()));
/// let sink = names.clone();
/// let handle = nn::hooks::register_module_full_backward_hook(move |name, _grad_input, _grad_output| {
///     sink.lock().unwrap().push(name);
///     Ok(None)
/// });
/// let fc = Linear::new(2, 2, true);
/// fc.call(Tensor::ones([1, 2], DType::F32))?.sum_all()?.backward()?;
/// handle.remove();
/// assert_eq!(*names.lock().unwrap(), vec!["Linear"]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn register_module_full_backward_hook<F>(hook: F) -> HookHandle
where
    F: Fn(&'static str, &Grads, &Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync + 'static,
{
    let hook: GlobalFullHook = Arc::new(hook);
    register(HookKind::Backward, Arc::new(hook), HookOptions::default())
}

/// PyTorch's `register_module_full_backward_pre_hook`: `hook(type_name, grad_output)` runs before every
/// module's own backward pre-hooks, in each backward pass through its call, and may replace `grad_output`.
pub fn register_module_full_backward_pre_hook<F>(hook: F) -> HookHandle
where
    F: Fn(&'static str, &Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync + 'static,
{
    let hook: GlobalBackwardPreHook = Arc::new(hook);
    register(HookKind::BackwardPre, Arc::new(hook), HookOptions::default())
}
