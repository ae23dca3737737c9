//! Hooks: code that runs around a module's forward, its backward, its `state_dict` and its `load_state_dict`.
//!
//! A module keeps its hooks in a field of type [`Hooks`] (every built-in layer and container has one; a derived
//! struct gets them by declaring `hooks: nn::Hooks`). Forward hooks are typed by the module's own input and
//! output; they run when the module is called through [`Call::call`] — calling `forward` directly skips them,
//! as in PyTorch. With no hook registered, `call` costs one null test more than `forward`.
//!
//! ```
//! use nn::prelude::*;
//! use std::sync::{Arc, Mutex};
//!
//! let mut fc = Linear::new(2, 3, true);
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = seen.clone();
//! let handle = fc.register_forward_hook(
//!     move |_fc, _input, output| {
//!         if let Some(y) = output {
//!             sink.lock().unwrap().push(y.shape().clone());
//!         }
//!     },
//!     HookOptions::default(),
//! );
//! fc.call(Tensor::zeros([4, 2], DType::F32)).unwrap();
//! handle.remove();
//! fc.call(Tensor::zeros([4, 2], DType::F32)).unwrap();
//! assert_eq!(seen.lock().unwrap().len(), 1);
//! ```

pub(crate) mod backward;
mod call;
mod global;
pub(crate) mod state;
mod table;

pub use backward::{Grads, TensorArgs};
pub use call::{Call, HookResult, RegisterHooks};
pub use global::{
    register_module_forward_hook, register_module_forward_pre_hook, register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
};
pub use table::{HookHandle, HookKind, HookOptions, Hooks};

/// A module that keeps hooks: what `#[derive(Module)]` implements for a struct with a [`Hooks`] field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` keeps no hooks",
    label = "this module has no `Hooks` field",
    note = "add a field `hooks: nn::Hooks` to the struct (every built-in layer and container has one)"
)]
pub trait HasHooks {
    /// The module's hook storage.
    fn hook_storage(&self) -> &Hooks;
    /// The module's hook storage, to register hooks in.
    fn hook_storage_mut(&mut self) -> &mut Hooks;
}
