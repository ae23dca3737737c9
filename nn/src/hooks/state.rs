//! State-dict and load hooks: untyped, registered on any module with a [`Hooks`](super::Hooks) field.

use std::sync::Arc;

use super::table::{HookHandle, HookKind, HookOptions};
use crate::module::{IncompatibleKeys, Module, StateDict};
use crate::{Error, Result};

/// `hook(module, prefix)` before a module's entries are written.
pub(crate) type StateDictPreHook = Box<dyn Fn(&dyn Module, &str) + Send + Sync>;
/// `hook(module, state_dict, prefix)` after a module's entries and its children's are written.
pub(crate) type StateDictPostHook = Box<dyn Fn(&dyn Module, &mut StateDict, &str) + Send + Sync>;
/// `hook(module, state_dict, prefix)` before a module's entries are read.
pub(crate) type LoadPreHook = Box<dyn Fn(&dyn Module, &mut StateDict, &str) + Send + Sync>;
/// `hook(module, incompatible_keys)` after a module's entries and its children's are loaded.
pub(crate) type LoadPostHook = Box<dyn Fn(&dyn Module, &mut IncompatibleKeys) + Send + Sync>;

/// Registers `hook` of `kind` on `module`, or explains that the module keeps no hooks.
pub(crate) fn register(
    module: &mut dyn Module,
    op: &'static str,
    kind: HookKind,
    hook: Arc<dyn std::any::Any + Send + Sync>,
) -> Result<HookHandle> {
    let name = module.type_name();
    match module.hooks_mut() {
        Some(hooks) => Ok(hooks.add(kind, hook, HookOptions::default())),
        None => Err(Error::invalid(
            op,
            format!("{name} keeps no hooks: add a field `hooks: nn::Hooks` to it"),
        )),
    }
}

/// Runs `module`'s hooks of `kind`, each as `T`.
pub(crate) fn each<T: 'static>(module: &dyn Module, kind: HookKind, mut run: impl FnMut(&T)) {
    let Some(hooks) = module.hooks() else { return };
    for entry in hooks.of(kind).iter().filter(|e| e.live()) {
        if let Some(hook) = entry.f.downcast_ref::<T>() {
            run(hook);
        }
    }
}

/// The prefix PyTorch passes to a module's state hooks: its path and a dot (`blocks.0.`), or `""` for the root.
pub(crate) fn prefix_of(base: &str, path: &str) -> String {
    if path.is_empty() {
        base.to_owned()
    } else {
        format!("{base}{path}.")
    }
}
