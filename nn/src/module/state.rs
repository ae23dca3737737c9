//! [`StateDict`]: PyTorch's `OrderedDict` of parameters and persistent buffers, keyed by dotted path.

use std::ops::{Deref, DerefMut};

use indexmap::IndexMap;

use super::Module;
use super::walk::{WalkOptions, Walker, walk_with};
use crate::hooks::HookKind;
use crate::hooks::state as hook_state;
use crate::{Param, Tensor};

/// Tensors keyed by dotted path, in PyTorch's order. The tensors share storage with the module they came
/// from (as PyTorch's `state_dict()` does); [`StateDict::deep_copy`] detaches them.
///
/// It dereferences to an [`IndexMap`], so `get`, `insert`, `shift_remove`, `keys` and `iter` are at hand.
///
/// ```
/// use nn::prelude::*;
/// let fc = Linear::new(3, 2, true);
/// let sd = fc.state_dict();
/// assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight", "bias"]);
/// assert_eq!(sd["weight"].shape(), &[2, 3]);
/// ```
#[derive(Clone, Default, Debug)]
pub struct StateDict(IndexMap<String, Tensor>);

impl StateDict {
    /// An empty state dict.
    pub fn new() -> StateDict {
        StateDict(IndexMap::new())
    }

    /// A copy whose tensors have storage of their own.
    pub fn deep_copy(&self) -> crate::Result<StateDict> {
        self.0.iter().map(|(k, t)| Ok((k.clone(), t.deep_copy()?))).collect()
    }

    /// The entries, consumed.
    pub fn into_inner(self) -> IndexMap<String, Tensor> {
        self.0
    }
}

impl Deref for StateDict {
    type Target = IndexMap<String, Tensor>;
    fn deref(&self) -> &IndexMap<String, Tensor> {
        &self.0
    }
}

impl DerefMut for StateDict {
    fn deref_mut(&mut self) -> &mut IndexMap<String, Tensor> {
        &mut self.0
    }
}

impl FromIterator<(String, Tensor)> for StateDict {
    fn from_iter<I: IntoIterator<Item = (String, Tensor)>>(iter: I) -> StateDict {
        StateDict(iter.into_iter().collect())
    }
}

impl IntoIterator for StateDict {
    type Item = (String, Tensor);
    type IntoIter = indexmap::map::IntoIter<String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a StateDict {
    type Item = (&'a String, &'a Tensor);
    type IntoIter = indexmap::map::Iter<'a, String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// PyTorch's `state_dict(prefix=...)`: every parameter and persistent buffer at every place (a shared module
/// appears under each of its paths), each module's extra state after its own tensors; keys are
/// `prefix + path`.
pub(crate) fn state_dict(root: &dyn Module, prefix: &str) -> StateDict {
    struct Collect<'p> {
        prefix: &'p str,
        out: StateDict,
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
        }
        fn module_end(&mut self, path: &str, module: &dyn Module) {
            let out = &mut self.out;
            hook_state::each::<hook_state::StateDictPostHook>(module, HookKind::StateDictPost, |hook| {
                hook(module, out, &hook_state::prefix_of(self.prefix, path))
            });
        }
        fn param(&mut self, path: &str, param: &Param) {
            let key = self.key(path);
            self.out.insert(key, param.data().detach());
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
        }
    }
    let mut collect = Collect {
        prefix,
        out: StateDict::new(),
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
