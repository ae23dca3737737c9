//! `state_dict()`: every parameter and persistent buffer of a tree, keyed by dotted path.

use super::Module;
use super::walk::{WalkOptions, Walker, walk_with};
use crate::hooks::HookKind;
use crate::hooks::state as hook_state;
use crate::io::StateDict;
use crate::{Param, Tensor};

/// `state_dict`'s keyword arguments by PyTorch's names, combinable
/// ([`ModuleExt::state_dict_opts`](super::ModuleExt::state_dict_opts)); the default is `state_dict()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateDictOptions<'p> {
    /// Put before every key (PyTorch's ends with its own `.`).
    pub prefix: &'p str,
    /// Parameters as their own tensors (they require grad) rather than detached handles.
    pub keep_vars: bool,
}

/// PyTorch's `state_dict(prefix=...)`: every parameter and persistent buffer at every place (a shared module
/// appears under each of its paths), each module's extra state after its own tensors; keys are
/// `prefix + path`.
pub(crate) fn state_dict(root: &dyn Module, prefix: &str) -> StateDict {
    state_dict_with(root, prefix, false)
}

/// [`state_dict`], with `keep_vars`: parameters as their own tensors rather than detached handles.
pub(crate) fn state_dict_with(root: &dyn Module, prefix: &str, keep_vars: bool) -> StateDict {
    struct Collect<'p> {
        prefix: &'p str,
        keep_vars: bool,
        out: StateDict,
        /// The current module's prefix, rebuilt in place for each module.
        module_prefix: String,
    }
    impl Collect<'_> {
        fn key(&self, path: &str) -> String {
            let mut key = String::with_capacity(self.prefix.len() + path.len());
            key.push_str(self.prefix);
            key.push_str(path);
            key
        }
    }
    impl Walker for Collect<'_> {
        fn module(&mut self, path: &str, module: &dyn Module) {
            hook_state::each::<hook_state::StateDictPreHook>(module, HookKind::StateDictPre, |hook| {
                hook(module, &hook_state::prefix_of(self.prefix, path))
            });
            let version = module.state_dict_version();
            if version != 1 {
                let prefix = hook_state::prefix_of(self.prefix, path);
                self.out
                    .set_version(prefix.strip_suffix('.').unwrap_or(&prefix), version);
            }
        }
        fn module_end(&mut self, path: &str, module: &dyn Module) {
            let out = &mut self.out;
            hook_state::each::<hook_state::StateDictPostHook>(module, HookKind::StateDictPost, |hook| {
                hook(module, out, &hook_state::prefix_of(self.prefix, path))
            });
        }
        fn param(&mut self, path: &str, param: &Param) {
            let key = self.key(path);
            let data = param.data();
            self.out.insert(key, if self.keep_vars { data } else { data.detach() });
        }
        fn buffer(&mut self, path: &str, buffer: &Tensor, persistent: bool) {
            if persistent {
                let key = self.key(path);
                self.out.insert(key, buffer.detach());
            }
        }
        fn after_own(&mut self, path: &str, module: &dyn Module) {
            if module.has_extra_state()
                && let Some(state) = module.get_extra_state()
            {
                let key = self.key(&extra_state_key(path));
                self.out.insert(key, state);
            }
            let prefix = &mut self.module_prefix;
            prefix.clear();
            prefix.push_str(self.prefix);
            prefix.push_str(path);
            if !path.is_empty() {
                prefix.push('.');
            }
            module.save_to_state_dict(&mut self.out, prefix);
        }
    }
    let mut out = StateDict::new();
    out.mark_versioned();
    let mut collect = Collect {
        prefix,
        keep_vars,
        out,
        module_prefix: String::new(),
    };
    walk_with(root, &mut collect, WalkOptions::all());
    collect.out
}

/// The key of the extra state of the module at `path`.
pub(crate) fn extra_state_key(path: &str) -> String {
    if path.is_empty() {
        "_extra_state".to_owned()
    } else {
        format!("{path}._extra_state")
    }
}
