//! [`Call`]: running a module with its hooks; [`RegisterHooks`]: its typed forward hooks.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use super::backward::{BackwardCall, BackwardEntry, BackwardFn, Grads, TensorArgs};
use super::global::{self, GlobalPostHook, GlobalPreHook};
use super::table::{Entry, HookHandle, HookKind, HookOptions};
use super::{HasHooks, Hooks};
use crate::{Forward, Module, Result, Tensor};

/// A forward pre-hook of a module `M`: sees the input and may replace it, or fail.
pub(crate) type PreHook<M> = Box<dyn Fn(&M, &mut <M as Forward>::Input) -> Result<()> + Send + Sync>;
/// A forward hook of a module `M`: sees the input and the output (`None` when the forward did not produce one)
/// and may replace the output, or fail.
pub(crate) type PostHook<M> =
    Box<dyn Fn(&M, &<M as Forward>::Input, Option<&mut <M as Forward>::Output>) -> Result<()> + Send + Sync>;

/// What a forward hook returns: nothing (it cannot fail) or a [`Result`] (an error fails the call, as an
/// exception raised in a PyTorch hook does).
pub trait HookResult {
    /// The hook's outcome.
    fn into_result(self) -> Result<()>;
}

impl HookResult for () {
    #[inline(always)]
    fn into_result(self) -> Result<()> {
        Ok(())
    }
}

impl HookResult for Result<()> {
    #[inline(always)]
    fn into_result(self) -> Result<()> {
        self
    }
}

/// Names `!` on stable Rust (as a function type's output), so that a hook that only panics type-checks.
pub trait FnOutput {
    type Output;
}

impl<R> FnOutput for fn() -> R {
    type Output = R;
}

/// The type of a closure that never returns (`|_, _| panic!(...)`).
type Never = <fn() -> ! as FnOutput>::Output;

impl HookResult for Never {
    fn into_result(self) -> Result<()> {
        self
    }
}

/// Calling a module: its forward, with its hooks around it (PyTorch's `module(x)`).
///
/// Global pre-hooks then the module's forward pre-hooks run first and may replace the input; then `forward`;
/// then global forward hooks and the module's, which may replace the output. If any of them fails (returns an
/// error or panics), the `always_call` forward hooks that have not run yet run (with the output if the forward
/// produced one), then the first error is returned or the panic resumes; a failure of an `always_call` hook
/// during that is dropped, as PyTorch drops it with a warning. Calling `forward` directly skips every hook.
pub trait Call: Module + Forward + Sized {
    /// Runs the module with its hooks.
    #[inline]
    fn call(&self, input: Self::Input) -> Result<Self::Output>
    where
        Self::Input: Clone,
    {
        if self.calls_through() {
            return self.forward(input);
        }
        match self.hooks() {
            _ if global::any_live() => call_with_global(self, input),
            Some(hooks) if hooks.has_call_hooks() => call_with_hooks(self, hooks, input),
            _ => self.forward(input),
        }
    }
}

impl<M: Module + Forward> Call for M {}

/// Where a call's hooks come from: the module's own ([`Hooks`], while no global hook is registered: a call
/// then tests nothing for global hooks), or the global ones and then the module's ([`CallHooks`]).
pub(crate) trait HookSource<'h>: Copy {
    /// Whether global hooks may be among the entries.
    const GLOBAL: bool;
    /// The hooks of `kind` in running order, global first (removed ones included: test [`Entry::live`]).
    fn of(self, kind: HookKind) -> impl Iterator<Item = &'h Entry> + Clone;
}

impl<'h> HookSource<'h> for &'h Hooks {
    const GLOBAL: bool = false;
    #[inline(always)]
    fn of(self, kind: HookKind) -> impl Iterator<Item = &'h Entry> + Clone {
        Hooks::of(self, kind).iter()
    }
}

/// The hooks of one call while global hooks are registered: the global ones (run first), then the module's.
#[derive(Clone, Copy)]
pub(crate) struct CallHooks<'h> {
    global: Option<&'h Hooks>,
    local: Option<&'h Hooks>,
}

impl<'h> HookSource<'h> for CallHooks<'h> {
    const GLOBAL: bool = true;
    fn of(self, kind: HookKind) -> impl Iterator<Item = &'h Entry> + Clone {
        let of = move |hooks: Option<&'h Hooks>| hooks.map_or(&[][..], |h| h.of(kind));
        of(self.global).iter().chain(of(self.local))
    }
}

/// [`Call::call`] while global hooks are registered: the global table's snapshot and the module's own hooks.
#[cold]
#[inline(never)]
fn call_with_global<M: Module + Forward>(module: &M, input: M::Input) -> Result<M::Output>
where
    M::Input: Clone,
{
    let global = global::snapshot();
    let hooks = CallHooks {
        global: global.as_deref(),
        local: module.hooks(),
    };
    call_with_hooks(module, hooks, input)
}

/// The slow path of [`Call::call`]: at least one forward or backward hook is registered. Forward pre-hooks,
/// then the backward hooks' wrapping of the inputs, the forward and the forward hooks, then the wrapping of
/// the outputs (PyTorch's order).
#[inline(never)]
fn call_with_hooks<'h, H: HookSource<'h>, M: Module + Forward>(
    module: &M,
    hooks: H,
    input: M::Input,
) -> Result<M::Output>
where
    M::Input: Clone,
{
    Hooked { module, hooks }.call(input)
}

/// A module and the hooks of its call.
struct Hooked<'m, H, M> {
    module: &'m M,
    hooks: H,
}

impl<H: Copy, M> Clone for Hooked<'_, H, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<H: Copy, M> Copy for Hooked<'_, H, M> {}

impl<'h, H: HookSource<'h>, M: Module + Forward> Hooked<'_, H, M>
where
    M::Input: Clone,
{
    /// [`call_with_hooks`].
    #[inline(always)]
    fn call(self, mut input: M::Input) -> Result<M::Output> {
        let Hooked { module, hooks } = self;
        let post = hooks.of(HookKind::Forward);
        if post.clone().any(|e| e.always_call && e.live()) {
            return self.call_guarded(input);
        }
        self.pre_hooks(&mut input)?;
        let backward = BackwardCall::<M>::setup(hooks, module.type_name(), &mut input);
        let output = if post.clone().any(Entry::live) {
            // The hooks are shown the input after `forward`: `forward_ref` borrows it (the built-in layers need no
            // copy; the default clones the handle). With no `always_call` hook, nothing has to run when the
            // forward or a hook fails: an error returns and a panic goes on by itself.
            let mut output = module.forward_ref(&input)?;
            for entry in post {
                if entry.live() {
                    self.post_hook(entry, &input, Some(&mut output))?;
                }
            }
            output
        } else {
            module.forward(input)?
        };
        Ok(match backward {
            Some(backward) => backward.finish(output),
            None => output,
        })
    }

    /// Runs the live forward pre-hooks in order; the first error stops them.
    #[inline(always)]
    fn pre_hooks(self, input: &mut M::Input) -> Result<()> {
        let Hooked { module, hooks } = self;
        for entry in hooks.of(HookKind::ForwardPre) {
            if !entry.live() {
                continue;
            }
            if let Some(hook) = entry.f.downcast_ref::<PreHook<M>>() {
                hook(module, input)?;
            } else if H::GLOBAL
                && let Some(hook) = entry.f.downcast_ref::<GlobalPreHook>()
            {
                hook(module, input)?;
            }
        }
        Ok(())
    }

    /// Runs the forward hook of `entry`: one of `M`'s or a global one.
    #[inline(always)]
    fn post_hook(self, entry: &Entry, input: &M::Input, output: Option<&mut M::Output>) -> Result<()> {
        let module = self.module;
        if let Some(hook) = entry.f.downcast_ref::<PostHook<M>>() {
            hook(module, input, output)
        } else if H::GLOBAL
            && let Some(hook) = entry.f.downcast_ref::<GlobalPostHook>()
        {
            hook(module, input, output.map(|o| o as &mut dyn Any))
        } else {
            Ok(())
        }
    }

    /// [`Hooked::call`] when an `always_call` forward hook is registered (PyTorch's `try`/`except` in
    /// `_call_impl`): a failure of a pre-hook, the forward or a forward hook runs the `always_call` hooks not yet
    /// run (global ones first), with the output if there is one, then the failure goes on.
    #[cold]
    #[inline(never)]
    fn call_guarded(self, mut input: M::Input) -> Result<M::Output> {
        let Hooked { module, hooks } = self;
        let post = hooks.of(HookKind::Forward);
        // The always-call hooks from `from` on; a failure of one of them is dropped, so that the original failure
        // is the one reported.
        let always_from = |from: usize, input: &M::Input, mut output: Option<&mut M::Output>| {
            for entry in post.clone().skip(from).filter(|e| e.always_call && e.live()) {
                let _ = guarded(|| self.post_hook(entry, input, output.as_deref_mut()));
            }
        };
        let resume = |failure: Failure| -> Result<M::Output> {
            match failure {
                Failure::Error(error) => Err(error),
                Failure::Panic(panic) => resume_unwind(panic),
            }
        };
        if let Err(failure) = guarded(|| self.pre_hooks(&mut input)) {
            always_from(0, &input, None);
            return resume(failure);
        }
        let backward = BackwardCall::<M>::setup(hooks, module.type_name(), &mut input);
        let mut output = match guarded(|| module.forward_ref(&input)) {
            Ok(output) => output,
            Err(failure) => {
                always_from(0, &input, None);
                return resume(failure);
            }
        };
        for (i, entry) in post.clone().enumerate() {
            if entry.live()
                && let Err(failure) = guarded(|| self.post_hook(entry, &input, Some(&mut output)))
            {
                always_from(i + 1, &input, Some(&mut output));
                return resume(failure);
            }
        }
        Ok(match backward {
            Some(backward) => backward.finish(output),
            None => output,
        })
    }
}

/// What failed in a guarded call: an error to return, or a panic to resume.
enum Failure {
    Error(crate::Error),
    Panic(Box<dyn Any + Send>),
}

/// Runs `f`, turning an error or a panic into a [`Failure`].
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> std::result::Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(Failure::Error(error)),
        Err(panic) => Err(Failure::Panic(panic)),
    }
}

/// Registering a module's forward hooks, typed by its input and output.
pub trait RegisterHooks: HasHooks + Module + Forward + Sized {
    /// PyTorch's `register_forward_pre_hook(hook, prepend=...)`: `hook(module, &mut input)` runs before
    /// `forward` and may replace the input; it returns `()`, or a [`Result`] whose error fails the call.
    fn register_forward_pre_hook<F, R>(&mut self, hook: F, prepend: bool) -> HookHandle
    where
        F: Fn(&Self, &mut Self::Input) -> R + Send + Sync + 'static,
        R: HookResult,
        Self::Input: 'static,
    {
        let hook: PreHook<Self> = Box::new(move |module, input| hook(module, input).into_result());
        let options = HookOptions {
            prepend,
            always_call: false,
        };
        self.hook_storage_mut()
            .add(HookKind::ForwardPre, Arc::new(hook), options)
    }

    /// PyTorch's `register_forward_hook(hook, prepend=..., always_call=...)`: `hook(module, &input, output)`
    /// runs after `forward` and may replace the output; it returns `()`, or a [`Result`] whose error fails the
    /// call. `output` is `None` only for an `always_call` hook run after a pre-hook or the forward failed.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use std::sync::{Arc, Mutex};
    /// let mut fc = Linear::new(2, 2, true);
    /// fc.register_forward_pre_hook(|_, x: &mut Tensor| {
    ///     if x.shape()[1] != 2 {
    ///         return Err(nn::Error::invalid("pre-hook", "two features expected"));
    ///     }
    ///     Ok(())
    /// }, false);
    /// let closed = Arc::new(Mutex::new(false));
    /// let c = closed.clone();
    /// let always = HookOptions { always_call: true, ..Default::default() };
    /// fc.register_forward_hook(move |_, _, _| *c.lock().unwrap() = true, always);
    /// assert!(fc.call(Tensor::zeros([1, 3], DType::F32)).is_err());
    /// assert!(*closed.lock().unwrap(), "the always_call hook ran after the pre-hook failed");
    /// ```
    fn register_forward_hook<F, R>(&mut self, hook: F, options: HookOptions) -> HookHandle
    where
        F: Fn(&Self, &Self::Input, Option<&mut Self::Output>) -> R + Send + Sync + 'static,
        R: HookResult,
        Self::Input: 'static,
        Self::Output: 'static,
    {
        let hook: PostHook<Self> = Box::new(move |module, input, output| hook(module, input, output).into_result());
        self.hook_storage_mut().add(HookKind::Forward, Arc::new(hook), options)
    }

    /// PyTorch's `register_full_backward_hook`: in each backward pass through a call of this module,
    /// `hook(grad_input, grad_output)` sees the gradients of the module's input tensors (`None` for one that
    /// requires no gradient) and of its output tensors, once the module's own backward has run, and may return
    /// replacements for `grad_input` (what flows on to the modules before it). The module is not passed (it is
    /// not borrowed during the backward): capture what the hook needs. A replacement of another count, shape,
    /// dtype or device fails the backward with a typed error.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut fc = Linear::new(2, 2, true);
    /// fc.register_full_backward_hook(|grad_input, _grad_output| {
    ///     Ok(Some(grad_input.iter().map(|g| g.as_ref().map(|g| g.mul_scalar(2.0).unwrap())).collect()))
    /// });
    /// let x = Tensor::ones([1, 2], DType::F32).requires_grad_(true)?;
    /// fc.call(x.clone())?.sum_all()?.backward()?;
    /// let plain = fc.weight.data().sum_dims(&[0], false)?.to_vec::<f32>()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>()?, plain.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    /// # Ok::<(), nn::Error>(())
    /// ```
    fn register_full_backward_hook<F>(&mut self, hook: F) -> HookHandle
    where
        F: Fn(&Grads, &Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync + 'static,
        Self::Input: TensorArgs + 'static,
        Self::Output: TensorArgs + 'static,
    {
        let entry = BackwardEntry::<Self>::new(BackwardFn::Full(Arc::new(hook)));
        self.hook_storage_mut()
            .add(HookKind::Backward, Arc::new(entry), HookOptions::default())
    }

    /// PyTorch's `register_full_backward_pre_hook(hook, prepend=...)`: in each backward pass through a call of
    /// this module, `hook(grad_output)` sees the gradients of the module's output tensors before the module's
    /// own backward runs, and may return replacements for them.
    fn register_full_backward_pre_hook<F>(&mut self, hook: F, prepend: bool) -> HookHandle
    where
        F: Fn(&Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync + 'static,
        Self::Input: TensorArgs + 'static,
        Self::Output: TensorArgs + 'static,
    {
        let entry = BackwardEntry::<Self>::new(BackwardFn::Pre(Arc::new(hook)));
        let options = HookOptions {
            prepend,
            always_call: false,
        };
        self.hook_storage_mut()
            .add(HookKind::BackwardPre, Arc::new(entry), options)
    }
}

impl<M: HasHooks + Module + Forward> RegisterHooks for M {}
