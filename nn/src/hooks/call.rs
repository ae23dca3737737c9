//! [`Call`]: running a module with its hooks; [`RegisterHooks`]: its typed forward hooks.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use super::backward::{BackwardCall, BackwardEntry, BackwardFn, Grads, TensorArgs};
use super::table::{Entry, HookHandle, HookKind, HookOptions};
use super::{HasHooks, Hooks};
use crate::{Forward, Module, Result, Tensor};

/// A forward pre-hook of a module `M`: sees the input and may replace it.
pub(crate) type PreHook<M> = Box<dyn Fn(&M, &mut <M as Forward>::Input) + Send + Sync>;
/// A forward hook of a module `M`: sees the input and the output (`None` after a failed forward) and may
/// replace the output.
pub(crate) type PostHook<M> =
    Box<dyn Fn(&M, &<M as Forward>::Input, Option<&mut <M as Forward>::Output>) + Send + Sync>;

/// Calling a module: its forward, with its hooks around it (PyTorch's `module(x)`).
///
/// Forward pre-hooks run first and may replace the input; then `forward`; then forward hooks, which may
/// replace the output. If `forward` fails (returns an error or panics), the `always_call` hooks run (with no
/// output) and the error is returned or the panic resumes. Calling `forward` directly skips every hook.
pub trait Call: Module + Forward + Sized {
    /// Runs the module with its hooks.
    #[inline]
    fn call(&self, input: Self::Input) -> Result<Self::Output>
    where
        Self::Input: Clone,
    {
        match self.hooks() {
            Some(hooks) if hooks.has_call_hooks() => call_with_hooks(self, hooks, input),
            _ => self.forward(input),
        }
    }
}

impl<M: Module + Forward> Call for M {}

/// The slow path of [`Call::call`]: at least one forward or backward hook is registered. Forward pre-hooks,
/// then the backward hooks' wrapping of the inputs, the forward and the forward hooks, then the wrapping of
/// the outputs (PyTorch's order).
#[inline(never)]
fn call_with_hooks<M: Module + Forward>(module: &M, hooks: &Hooks, mut input: M::Input) -> Result<M::Output>
where
    M::Input: Clone,
{
    for entry in hooks.of(HookKind::ForwardPre) {
        if entry.live()
            && let Some(hook) = entry.f.downcast_ref::<PreHook<M>>()
        {
            hook(module, &mut input);
        }
    }
    match BackwardCall::<M>::setup(hooks, &mut input) {
        Some(backward) => Ok(backward.finish(forward_with_hooks(module, hooks, input)?)),
        None => forward_with_hooks(module, hooks, input),
    }
}

/// The forward and the forward hooks.
fn forward_with_hooks<M: Module + Forward>(module: &M, hooks: &Hooks, input: M::Input) -> Result<M::Output>
where
    M::Input: Clone,
{
    let post = hooks.of(HookKind::Forward);
    let mut any_live = false;
    for entry in post.iter().filter(|e| e.live()) {
        if entry.always_call {
            return call_guarded(module, post, input);
        }
        any_live = true;
    }
    if !any_live {
        return module.forward(input);
    }
    // The hooks are shown the input after `forward`: `forward_ref` borrows it (the built-in layers need no
    // copy; the default clones the handle). With no `always_call` hook, nothing has to run when the forward or
    // a hook fails: an error returns and a panic goes on by itself.
    let mut output = module.forward_ref(&input)?;
    for entry in post {
        if entry.live()
            && let Some(hook) = post_hook::<M>(entry)
        {
            hook(module, &input, Some(&mut output));
        }
    }
    Ok(output)
}

/// The forward hook of `entry`, if it is one of `M`'s.
#[inline(always)]
fn post_hook<M: Module + Forward>(entry: &Entry) -> Option<&PostHook<M>> {
    entry.f.downcast_ref::<PostHook<M>>()
}

/// The forward and the forward hooks when an `always_call` hook is registered: a failure (an error, or a panic
/// of the forward or of a hook) runs the `always_call` hooks not yet run, with no output, then the error is
/// returned or the panic goes on.
#[cold]
#[inline(never)]
fn call_guarded<M: Module + Forward>(module: &M, post: &[Entry], input: M::Input) -> Result<M::Output>
where
    M::Input: Clone,
{
    // Runs the always-call hooks from `from` on, with no output; a panic in one of them is dropped (PyTorch
    // warns and goes on), so that the original failure is the one reported.
    let always_from = |from: usize| {
        for entry in post.iter().skip(from).filter(|e| e.always_call && e.live()) {
            if let Some(hook) = post_hook::<M>(entry) {
                let _ = catch_unwind(AssertUnwindSafe(|| hook(module, &input, None)));
            }
        }
    };
    match catch_unwind(AssertUnwindSafe(|| module.forward_ref(&input))) {
        Ok(Ok(mut output)) => {
            for (i, entry) in post.iter().enumerate() {
                if entry.live()
                    && let Some(hook) = post_hook::<M>(entry)
                    && let Err(panic) = catch_unwind(AssertUnwindSafe(|| hook(module, &input, Some(&mut output))))
                {
                    always_from(i + 1);
                    resume_unwind(panic);
                }
            }
            Ok(output)
        }
        Ok(Err(error)) => {
            always_from(0);
            Err(error)
        }
        Err(panic) => {
            always_from(0);
            resume_unwind(panic)
        }
    }
}

/// Registering a module's forward hooks, typed by its input and output.
pub trait RegisterHooks: HasHooks + Module + Forward + Sized {
    /// PyTorch's `register_forward_pre_hook(hook, prepend=...)`: `hook(module, &mut input)` runs before
    /// `forward` and may replace the input.
    fn register_forward_pre_hook<F>(&mut self, hook: F, prepend: bool) -> HookHandle
    where
        F: Fn(&Self, &mut Self::Input) + Send + Sync + 'static,
        Self::Input: 'static,
    {
        let hook: PreHook<Self> = Box::new(hook);
        let options = HookOptions {
            prepend,
            always_call: false,
        };
        self.hook_storage_mut()
            .add(HookKind::ForwardPre, Arc::new(hook), options)
    }

    /// PyTorch's `register_forward_hook(hook, prepend=..., always_call=...)`: `hook(module, &input, output)`
    /// runs after `forward` and may replace the output; `output` is `None` only for an `always_call` hook after
    /// a failed forward.
    fn register_forward_hook<F>(&mut self, hook: F, options: HookOptions) -> HookHandle
    where
        F: Fn(&Self, &Self::Input, Option<&mut Self::Output>) + Send + Sync + 'static,
        Self::Input: 'static,
        Self::Output: 'static,
    {
        let hook: PostHook<Self> = Box::new(hook);
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
        let entry: BackwardEntry<Self> = BackwardEntry {
            f: BackwardFn::Full(Arc::new(hook)),
            inputs: <Self::Input as TensorArgs>::tensors_mut,
            outputs: <Self::Output as TensorArgs>::tensors_mut,
        };
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
        let entry: BackwardEntry<Self> = BackwardEntry {
            f: BackwardFn::Pre(Arc::new(hook)),
            inputs: <Self::Input as TensorArgs>::tensors_mut,
            outputs: <Self::Output as TensorArgs>::tensors_mut,
        };
        let options = HookOptions {
            prepend,
            always_call: false,
        };
        self.hook_storage_mut()
            .add(HookKind::BackwardPre, Arc::new(entry), options)
    }
}

impl<M: HasHooks + Module + Forward> RegisterHooks for M {}
