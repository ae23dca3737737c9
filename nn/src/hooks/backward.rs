//! Module backward hooks: PyTorch's `register_full_backward_hook` and `register_full_backward_pre_hook`.
//!
//! When a module with such hooks is called while autograd records, its tensor inputs that require a gradient
//! pass through one identity node and its tensor outputs through another (PyTorch's `BackwardHookFunction`).
//! In the backward pass the output node runs first: the pre-hooks see (and may replace) the gradients of the
//! outputs. The input node runs once the module's own backward is done: the hooks see the gradients of the
//! inputs and of the outputs, and may replace the inputs' (what flows on to the modules before it). A module
//! none of whose inputs requires a gradient calls its hooks from the output node, with no input gradients.

use std::any::Any;
use std::sync::Arc;

use parking_lot::Mutex;

use super::call::HookSource;
use super::global::{GlobalBackwardPreHook, GlobalFullHook};
use super::table::{Entry, HookKind};
use crate::tensor::autograd::record_identity;
use crate::{Error, Forward, Result, Tensor, is_grad_enabled};

/// Gradients of a module's tensor inputs or outputs, in order; `None` where a tensor takes no gradient.
pub type Grads = [Option<Tensor>];

/// `hook(grad_input, grad_output)`: may return replacements for `grad_input`.
pub(crate) type FullHookFn = dyn Fn(&Grads, &Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync;
/// `hook(grad_output)`: may return replacements for `grad_output`.
pub(crate) type PreHookFn = dyn Fn(&Grads) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync;

/// The tensors a module's input or output holds, in a fixed order: what backward hooks see the gradients of.
/// Implemented for [`Tensor`], `Option`, `Vec`, arrays and tuples of them.
pub trait TensorArgs {
    /// Every tensor, in order.
    fn tensors_mut(&mut self) -> Vec<&mut Tensor>;
}

impl TensorArgs for Tensor {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        vec![self]
    }
}

impl<T: TensorArgs> TensorArgs for Option<T> {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        self.as_mut().map_or_else(Vec::new, T::tensors_mut)
    }
}

impl<T: TensorArgs> TensorArgs for Vec<T> {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        self.iter_mut().flat_map(T::tensors_mut).collect()
    }
}

impl<T: TensorArgs, const N: usize> TensorArgs for [T; N] {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        self.iter_mut().flat_map(T::tensors_mut).collect()
    }
}

macro_rules! tuple_tensor_args {
    ($($name:ident $index:tt),+) => {
        impl<$($name: TensorArgs),+> TensorArgs for ($($name,)+) {
            fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
                let mut all = Vec::new();
                $(all.extend(self.$index.tensors_mut());)+
                all
            }
        }
    };
}

tuple_tensor_args!(A 0);
tuple_tensor_args!(A 0, B 1);
tuple_tensor_args!(A 0, B 1, C 2);
tuple_tensor_args!(A 0, B 1, C 2, D 3);

/// How to reach the tensors of a `T` (a module's input or output).
type TensorsOf<T> = fn(&mut T) -> Vec<&mut Tensor>;

/// Which hook an entry of [`HookKind::Backward`] / [`HookKind::BackwardPre`] holds.
pub(crate) enum BackwardFn {
    Full(Arc<FullHookFn>),
    Pre(Arc<PreHookFn>),
}

/// A backward hook of a module `M`, with the way to reach the tensors of `M`'s input and output.
pub(crate) struct BackwardEntry<M: Forward> {
    pub(crate) f: BackwardFn,
    pub(crate) inputs: TensorsOf<M::Input>,
    pub(crate) outputs: TensorsOf<M::Output>,
}

impl<M: Forward> BackwardEntry<M>
where
    M::Input: TensorArgs + 'static,
    M::Output: TensorArgs + 'static,
{
    /// The entry of hook `f`, reaching the module's input and output tensors through their `TensorArgs`.
    pub(crate) fn new(f: BackwardFn) -> BackwardEntry<M> {
        BackwardEntry {
            f,
            inputs: <M::Input as TensorArgs>::tensors_mut,
            outputs: <M::Output as TensorArgs>::tensors_mut,
        }
    }
}

/// The backward hooks of one call of a module, between its forward's start and its output.
pub(crate) struct BackwardCall<M: Forward> {
    full: Vec<Entry>,
    pre: Vec<Entry>,
    outputs: TensorsOf<M::Output>,
    /// The module's type name, for global hooks.
    name: &'static str,
    state: Arc<CallState>,
}

/// What the two identity nodes of one call share: the number of input tensors, whether any input was
/// wrapped, and the output gradients once the output node ran.
struct CallState {
    n_inputs: usize,
    inputs_wrapped: bool,
    grad_outputs: Mutex<Option<Vec<Option<Tensor>>>>,
}

impl<M: Forward + 'static> BackwardCall<M> {
    /// Wraps the input's tensors that require a gradient, when `hooks` has backward hooks and autograd records.
    pub(crate) fn setup<'h>(
        hooks: impl HookSource<'h>,
        name: &'static str,
        input: &mut M::Input,
    ) -> Option<BackwardCall<M>> {
        let live = |kind| hooks.of(kind).filter(|e| e.live()).cloned().collect::<Vec<_>>();
        let (full, pre) = (live(HookKind::Backward), live(HookKind::BackwardPre));
        if full.is_empty() && pre.is_empty() || !is_grad_enabled() {
            return None;
        }
        // The module's own hooks know its input and output types; global ones find the tensors of the common
        // argument shapes. Neither: the hooks are another type's (a box's call, whose module runs them).
        let typed = full
            .iter()
            .chain(&pre)
            .find_map(|e| e.f.downcast_ref::<BackwardEntry<M>>());
        let (inputs, outputs): (TensorsOf<M::Input>, TensorsOf<M::Output>) = match typed {
            Some(access) => (access.inputs, access.outputs),
            None if full.iter().chain(&pre).any(is_global) => (dyn_tensors::<M::Input>, dyn_tensors::<M::Output>),
            None => return None,
        };
        let tensors = inputs(input);
        let n_inputs = tensors.len();
        let wrapped: Vec<usize> = (0..n_inputs).filter(|&i| tensors[i].requires_grad()).collect();
        let state = Arc::new(CallState {
            n_inputs,
            inputs_wrapped: !wrapped.is_empty(),
            grad_outputs: Mutex::new(None),
        });
        if !wrapped.is_empty() {
            let (hooks, state_in, positions) = (full.clone(), state.clone(), wrapped.clone());
            let backward = move |grads: &[Tensor], _: &[bool]| -> Result<Vec<Option<Tensor>>> {
                let mut grad_input = spread(grads, &positions, state_in.n_inputs);
                let grad_output = state_in.grad_outputs.lock().clone().unwrap_or_default();
                for entry in hooks.iter().filter(|e| e.live()) {
                    if let Some(new) = run_full::<M>(entry, name, &grad_input, &grad_output)? {
                        grad_input = checked("register_full_backward_hook", "grad_input", new, &grad_input)?;
                    }
                }
                Ok(positions.iter().map(|&i| grad_input[i].take()).collect())
            };
            let mut chosen: Vec<&mut Tensor> = tensors
                .into_iter()
                .enumerate()
                .filter(|(i, _)| wrapped.contains(i))
                .map(|(_, t)| t)
                .collect();
            record_identity("BackwardHookFunction", &mut chosen, Box::new(backward));
        }
        Some(BackwardCall {
            full,
            pre,
            outputs,
            name,
            state,
        })
    }

    /// Wraps the output's tensors that require a gradient: their node runs the pre-hooks, and the hooks too
    /// when no input was wrapped.
    pub(crate) fn finish(self, mut output: M::Output) -> M::Output {
        let mut tensors = (self.outputs)(&mut output);
        let n_outputs = tensors.len();
        let wrapped: Vec<usize> = (0..n_outputs).filter(|&i| tensors[i].requires_grad()).collect();
        if wrapped.is_empty() {
            return output;
        }
        let BackwardCall {
            full, pre, state, name, ..
        } = self;
        let positions = wrapped.clone();
        let backward = move |grads: &[Tensor], _: &[bool]| -> Result<Vec<Option<Tensor>>> {
            let mut grad_output = spread(grads, &positions, n_outputs);
            for entry in pre.iter().filter(|e| e.live()) {
                if let Some(new) = run_pre::<M>(entry, name, &grad_output)? {
                    grad_output = checked("register_full_backward_pre_hook", "grad_output", new, &grad_output)?;
                }
            }
            if !state.inputs_wrapped {
                let grad_input = vec![None; state.n_inputs];
                for entry in full.iter().filter(|e| e.live()) {
                    if let Some(new) = run_full::<M>(entry, name, &grad_input, &grad_output)?
                        && new.iter().any(Option::is_some)
                    {
                        return Err(Error::autograd(
                            "register_full_backward_hook",
                            "Backward hook for Modules where no input requires gradient should always return None \
                             or None for all gradients.",
                        ));
                    }
                }
            }
            let out = positions.iter().map(|&i| grad_output[i].clone()).collect();
            *state.grad_outputs.lock() = Some(grad_output);
            Ok(out)
        };
        let mut chosen: Vec<&mut Tensor> = tensors
            .drain(..)
            .enumerate()
            .filter(|(i, _)| wrapped.contains(i))
            .map(|(_, t)| t)
            .collect();
        record_identity("BackwardHookFunction", &mut chosen, Box::new(backward));
        drop(chosen);
        output
    }
}

/// Replacement gradients a backward hook may return.
type Replacement = Result<Option<Vec<Option<Tensor>>>>;

/// Whether `entry` is a global backward hook.
fn is_global(entry: &Entry) -> bool {
    entry.f.is::<GlobalFullHook>() || entry.f.is::<GlobalBackwardPreHook>()
}

/// Runs the full backward hook of `entry` (one of `M`'s or a global one) on the gradients.
fn run_full<M: Forward + 'static>(
    entry: &Entry,
    name: &'static str,
    grad_input: &Grads,
    grad_output: &Grads,
) -> Replacement {
    if let Some(BackwardEntry {
        f: BackwardFn::Full(hook),
        ..
    }) = entry.f.downcast_ref::<BackwardEntry<M>>()
    {
        hook(grad_input, grad_output)
    } else if let Some(hook) = entry.f.downcast_ref::<GlobalFullHook>() {
        hook(name, grad_input, grad_output)
    } else {
        Ok(None)
    }
}

/// Runs the backward pre-hook of `entry` (one of `M`'s or a global one) on the output gradients.
fn run_pre<M: Forward + 'static>(entry: &Entry, name: &'static str, grad_output: &Grads) -> Replacement {
    if let Some(BackwardEntry {
        f: BackwardFn::Pre(hook),
        ..
    }) = entry.f.downcast_ref::<BackwardEntry<M>>()
    {
        hook(grad_output)
    } else if let Some(hook) = entry.f.downcast_ref::<GlobalBackwardPreHook>() {
        hook(name, grad_output)
    } else {
        Ok(None)
    }
}

/// The tensors of a value of one of the common argument types (a tensor, an `Option`, a `Vec`, an array or a
/// tuple of up to four of them, nested once): what a global backward hook sees of a module's input or output.
/// Another type holds none that a global hook can reach (PyTorch warns the same of a non-tensor output).
fn dyn_tensors<T: 'static>(value: &mut T) -> Vec<&mut Tensor> {
    let any: &mut dyn Any = value;
    macro_rules! known {
        ($($t:ty),* $(,)?) => {
            $(
                if any.is::<$t>() {
                    return any.downcast_mut::<$t>().map(TensorArgs::tensors_mut).unwrap_or_default();
                }
            )*
        };
    }
    known!(
        Tensor,
        Option<Tensor>,
        Vec<Tensor>,
        (Tensor,),
        (Tensor, Tensor),
        (Tensor, Tensor, Tensor),
        (Tensor, Tensor, Tensor, Tensor),
        [Tensor; 2],
        [Tensor; 3],
        (Tensor, Option<Tensor>),
        (Tensor, (Tensor, Tensor)),
        (Tensor, Option<(Tensor, Tensor)>),
        Option<(Tensor, Tensor)>,
        Vec<(Tensor, Tensor)>,
    );
    Vec::new()
}

/// `n` gradients with `grads[k]` at `positions[k]` and `None` elsewhere.
fn spread(grads: &[Tensor], positions: &[usize], n: usize) -> Vec<Option<Tensor>> {
    let mut all = vec![None; n];
    for (g, &i) in grads.iter().zip(positions) {
        all[i] = Some(g.clone());
    }
    all
}

/// A hook's replacement for `old`: as many entries, each of the shape, dtype and device of the one it replaces.
fn checked(
    hook: &'static str,
    what: &str,
    new: Vec<Option<Tensor>>,
    old: &[Option<Tensor>],
) -> Result<Vec<Option<Tensor>>> {
    if new.len() != old.len() {
        // PyTorch's sentence: "Backward hook" for grad_input, "Backward pre hook" for grad_output.
        let kind = if what == "grad_input" { "hook" } else { "pre hook" };
        return Err(Error::autograd(
            hook,
            format!(
                "Backward {kind} returned an invalid number of {what}, got {}, but expected {}",
                new.len(),
                old.len()
            ),
        ));
    }
    for (i, (n, o)) in new.iter().zip(old).enumerate() {
        if let (Some(n), Some(o)) = (n, o)
            && (n.shape() != o.shape() || n.dtype() != o.dtype() || n.device() != o.device())
        {
            return Err(Error::autograd(
                hook,
                format!(
                    "the hook returned {what}[{i}] of shape {} ({}, on {}) for one of shape {} ({}, on {})",
                    n.shape(),
                    n.dtype(),
                    n.device(),
                    o.shape(),
                    o.dtype(),
                    o.device()
                ),
            ));
        }
    }
    Ok(new.into_iter().map(|g| g.map(|g| g.detach())).collect())
}
