//! `load_state_dict`: check everything first, then change the module, so a load that fails changes nothing.
//!
//! Phase one walks every place of the tree (a shared module under each of its paths) in PyTorch's order and
//! prepares one action per parameter, persistent buffer and extra state: the incoming tensor cast to the
//! target's dtype and device (or taken as it is, with `assign`). Shape mismatches, missing and unexpected keys
//! are gathered there, all of them. Phase two walks the tree again in the same order and applies the actions;
//! while a later step could still refuse the load (an extra state, or a strict check of the keys load
//! post-hooks edit), what it replaces is kept so that the load can be rolled back; otherwise the incoming
//! elements are copied into the module's own memory.

use std::collections::HashMap;

use super::Module;
use super::state::extra_state_key;
use super::walk::{WalkOptions, Walker, WalkerMut, walk, walk_mut};
use crate::error::{LoadError, ShapeMismatch};
use crate::hooks::HookKind;
use crate::hooks::state as hook_state;
use crate::io::StateDict;
use crate::{Error, Param, Result, Tensor};

/// The keys a non-strict load could not match (PyTorch's `_IncompatibleKeys`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleKeys {
    /// Keys the module expects that the state dict lacks.
    pub missing_keys: Vec<String>,
    /// Keys of the state dict that the module does not expect.
    pub unexpected_keys: Vec<String>,
}

impl IncompatibleKeys {
    /// Whether every key matched.
    pub fn is_empty(&self) -> bool {
        self.missing_keys.is_empty() && self.unexpected_keys.is_empty()
    }
}

/// `load_state_dict`'s keyword arguments by PyTorch's names
/// ([`ModuleExt::load_state_dict_opts`](super::ModuleExt::load_state_dict_opts)); the default is PyTorch's,
/// `strict=True, assign=False`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Missing and unexpected keys are errors.
    pub strict: bool,
    /// The module takes the state dict's tensors as they are (their dtype and device) instead of copying them
    /// into its own.
    pub assign: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            strict: true,
            assign: false,
        }
    }
}

/// What phase two does at one tensor place.
enum Action {
    /// Nothing (the key is missing).
    Skip,
    /// Copy this tensor (already of the target's dtype, device and shape) into the target's storage.
    Copy(Tensor),
    /// Make this tensor the target (`assign=true`).
    Assign(Tensor),
}

/// The actions of a load, in walk order.
struct Plan {
    tensors: Vec<Action>,
    extra: Vec<Option<Tensor>>,
}

/// What phase one found: the plan, the keys, the mismatches, and whether any module has load post-hooks.
struct Prepared {
    plan: Plan,
    keys: IncompatibleKeys,
    mismatched: Vec<ShapeMismatch>,
    post_hooks: bool,
}

/// Phase one, in PyTorch's order: each module's load pre-hooks and its
/// [`load_from_state_dict`](Module::load_from_state_dict) run on its view of the dict before it reads its
/// entries; unexpected keys are each reported by the deepest module its path reaches, in load order.
///
/// A view is the dict given to the load (the root's), or the copy of its ancestor's entries under its prefix
/// that a module with load pre-hooks gets (PyTorch's `local_state_dict`), which its hooks may edit without
/// touching what other modules see. An entry a module reads is replaced by the load's `taken` marker, so that
/// what is left unread is known whatever hooks later do to the dict.
fn prepare(root: &dyn Module, sd: StateDict, assign: bool) -> Result<Prepared> {
    struct Prepare {
        views: Vec<StateDict>,
        /// The view of each module whose members are being walked, innermost last.
        open: Vec<usize>,
        /// The current module's prefix, rebuilt in place.
        prefix: String,
        /// What a read entry is replaced with.
        taken: Tensor,
        post_hooks: bool,
        assign: bool,
        plan: Plan,
        missing: Vec<String>,
        mismatched: Vec<ShapeMismatch>,
        error: Option<Error>,
    }
    impl Prepare {
        /// The entry `key` of the current module's view, taken out of it (`None`: missing).
        fn take(&mut self, key: &str) -> Option<Tensor> {
            let view = self.open.last().copied().unwrap_or(0);
            let slot = self.views[view].get_mut(key)?;
            Some(std::mem::replace(slot, self.taken.clone()))
        }
        fn tensor(&mut self, key: &str, target: &Tensor) {
            let Some(input) = self.take(key) else {
                self.missing.push(key.to_owned());
                self.plan.tensors.push(Action::Skip);
                return;
            };
            if input.shape() != target.shape() {
                self.mismatched.push(ShapeMismatch {
                    key: key.to_owned(),
                    checkpoint: input.shape().clone(),
                    model: target.shape().clone(),
                });
                self.plan.tensors.push(Action::Skip);
                return;
            }
            let action = if self.assign {
                Ok(Action::Assign(input.detach()))
            } else {
                target
                    .check_writable("load_state_dict")
                    .and_then(|()| input.to_dtype(target.dtype()))
                    .and_then(|t| t.to_device(target.device()))
                    .and_then(|t| t.dense())
                    .map(Action::Copy)
            };
            match action {
                Ok(a) => self.plan.tensors.push(a),
                Err(e) => {
                    self.error.get_or_insert(e);
                    self.plan.tensors.push(Action::Skip);
                }
            }
        }
    }
    impl Walker for Prepare {
        fn module(&mut self, path: &str, module: &dyn Module) {
            let parent_view = self.open.last().copied().unwrap_or(0);
            let hooks = module.hooks();
            self.post_hooks |= hooks.is_some_and(|h| h.has(HookKind::LoadStateDictPost));
            let pre_hooks = hooks.is_some_and(|h| h.has(HookKind::LoadStateDictPre));
            let prefix = &mut self.prefix;
            prefix.clear();
            prefix.push_str(path);
            if !path.is_empty() {
                prefix.push('.');
            }
            let view = if pre_hooks && !self.open.is_empty() {
                let dict = self.views[parent_view]
                    .iter()
                    .filter(|(k, _)| k.starts_with(prefix.as_str()))
                    .map(|(k, t)| (k.clone(), t.clone()))
                    .collect();
                self.views.push(dict);
                self.views.len() - 1
            } else {
                parent_view
            };
            self.open.push(view);
            let version = self.views[0].version(path);
            let dict = &mut self.views[view];
            if pre_hooks {
                hook_state::each::<hook_state::LoadPreHook>(module, HookKind::LoadStateDictPre, |hook| {
                    hook(module, dict, prefix)
                });
            }
            if let Err(e) = module.load_from_state_dict(dict, prefix, version) {
                self.error.get_or_insert(e);
            }
        }
        fn module_end(&mut self, _: &str, _: &dyn Module) {
            self.open.pop();
        }
        fn param(&mut self, path: &str, param: &Param) {
            self.tensor(path, &param.data());
        }
        fn buffer(&mut self, path: &str, buffer: &Tensor, persistent: bool) {
            if persistent {
                self.tensor(path, buffer);
            }
        }
        fn after_own(&mut self, path: &str, module: &dyn Module) {
            if !module.has_extra_state() {
                return;
            }
            let key = extra_state_key(path);
            match self.take(&key) {
                Some(state) => self.plan.extra.push(Some(state)),
                None => {
                    self.missing.push(key);
                    self.plan.extra.push(None);
                }
            }
        }
    }
    let mut prepare = Prepare {
        views: vec![sd],
        open: Vec::new(),
        prefix: String::new(),
        taken: Tensor::zeros([0], crate::DType::U8),
        post_hooks: false,
        assign,
        plan: Plan {
            tensors: Vec::new(),
            extra: Vec::new(),
        },
        missing: Vec::new(),
        mismatched: Vec::new(),
        error: None,
    };
    walk(root, &mut prepare, WalkOptions::all());
    if let Some(e) = prepare.error {
        return Err(e);
    }
    let taken = &prepare.taken;
    let unread = |view: &StateDict| view.values().any(|t| !t.shares_storage(taken));
    let unexpected_keys = if prepare.views.iter().any(unread) {
        unexpected_keys(root, &prepare.views, taken)
    } else {
        Vec::new()
    };
    Ok(Prepared {
        keys: IncompatibleKeys {
            missing_keys: prepare.missing,
            unexpected_keys,
        },
        plan: prepare.plan,
        mismatched: prepare.mismatched,
        post_hooks: prepare.post_hooks,
    })
}

/// PyTorch's unexpected keys (`_load_from_state_dict`): a key no module read is reported by the deepest module
/// its path reaches in the view it sits in: there a dotted rest whose first name is no child, or an undotted
/// one that is none of the module's own entries, is unexpected (so `weight.x` under a module with a `weight`
/// is, and so is a key naming a child module itself). Every own entry of a module was looked up in its view
/// under exactly its key, so an undotted key left unread there is none of them. Keys under a child with a view
/// of its own are that view's to report, and keys outside a view's prefix (added by a hook) are ignored. In
/// load order, then in the view's order. Runs only when some key is left unread: a second walk finds the
/// places and which of them own the views, in the order the first walk made them.
fn unexpected_keys(root: &dyn Module, views: &[StateDict], taken: &Tensor) -> Vec<String> {
    /// Each place's path and whether it owns a view (it has load pre-hooks and is not the root).
    struct Places(Vec<(String, bool)>);
    impl Walker for Places {
        fn module(&mut self, path: &str, module: &dyn Module) {
            let owns = !self.0.is_empty() && module.hooks().is_some_and(|h| h.has(HookKind::LoadStateDictPre));
            self.0.push((path.to_owned(), owns));
        }
    }
    let mut places = Places(Vec::new());
    walk(root, &mut places, WalkOptions::all());
    let places = places.0;
    let by_path: HashMap<&str, usize> = places.iter().enumerate().map(|(i, (p, _))| (p.as_str(), i)).collect();
    // View 0 is the root's; view k is owned by the k-th place that owns one.
    let owners = std::iter::once(0).chain(places.iter().enumerate().filter(|(_, (_, owns))| *owns).map(|(i, _)| i));
    let mut found: Vec<(usize, usize, &str)> = Vec::new();
    for (view, owner) in views.iter().zip(owners) {
        let prefix = hook_state::prefix_of("", &places[owner].0);
        for (position, (key, tensor)) in view.iter().enumerate() {
            if tensor.shares_storage(taken) {
                continue;
            }
            let Some(mut rest) = key.strip_prefix(&prefix) else {
                continue;
            };
            let mut at = owner;
            let reporter = loop {
                let Some((first, tail)) = rest.split_once('.') else {
                    break Some(at);
                };
                let child_path = hook_state::prefix_of("", &places[at].0) + first;
                match by_path.get(child_path.as_str()) {
                    None => break Some(at),
                    Some(&child) if places[child].1 => break None,
                    Some(&child) => {
                        at = child;
                        rest = tail;
                    }
                }
            };
            if let Some(at) = reporter {
                found.push((at, position, key));
            }
        }
    }
    found.sort_by_key(|&(at, position, _)| (at, position));
    found.into_iter().map(|(_, _, key)| key.to_owned()).collect()
}

/// Phase two: applies `plan` and returns the plan that undoes it. Extra states are set on each module before
/// its tensors; a refused extra state stops the load, with its key and reason.
///
/// Without `keep_old` (no later step can refuse the load), replaced tensors are not kept: incoming host
/// elements are copied into the module's own memory instead of new memory taking its place (a load from a
/// mapped file reads the page cache straight into the parameters), and the undo plan is empty.
fn apply(root: &mut dyn Module, plan: Plan, keep_old: bool) -> (Plan, Option<(String, String)>) {
    struct Apply {
        tensors: std::vec::IntoIter<Action>,
        extra: std::vec::IntoIter<Option<Tensor>>,
        undo: Plan,
        refused: Option<(String, String)>,
        keep_old: bool,
    }
    impl Apply {
        fn next(&mut self) -> Action {
            self.tensors.next().unwrap_or(Action::Skip)
        }
    }
    impl WalkerMut for Apply {
        fn module(&mut self, path: &str, module: &mut dyn Module) {
            if !module.has_extra_state() {
                return;
            }
            let state = self.extra.next().flatten();
            let Some(state) = state else {
                self.undo.extra.push(None);
                return;
            };
            if self.refused.is_some() {
                self.undo.extra.push(None);
                return;
            }
            let old = module.get_extra_state();
            match module.set_extra_state(state) {
                Ok(()) => self.undo.extra.push(old),
                Err(e) => {
                    self.refused = Some((extra_state_key(path), e.to_string()));
                    self.undo.extra.push(None);
                }
            }
        }
        fn param(&mut self, _: &str, param: &mut Param) {
            let undo = match self.next() {
                Action::Skip => Action::Skip,
                Action::Copy(src) => param
                    .data()
                    .load_contents(src, self.keep_old)
                    .map_or(Action::Skip, Action::Copy),
                Action::Assign(src) => {
                    let old = param.data().detach();
                    param.set_data(src);
                    Action::Assign(old)
                }
            };
            self.undo.tensors.push(undo);
        }
        fn buffer(&mut self, _: &str, buffer: &mut Tensor, persistent: bool) {
            if !persistent {
                return;
            }
            let undo = match self.next() {
                Action::Skip => Action::Skip,
                Action::Copy(src) => buffer
                    .load_contents(src, self.keep_old)
                    .map_or(Action::Skip, Action::Copy),
                Action::Assign(mut src) => {
                    *src.mode_marks_mut() = buffer.mode_marks();
                    Action::Assign(std::mem::replace(buffer, src))
                }
            };
            self.undo.tensors.push(undo);
        }
    }
    let mut applier = Apply {
        tensors: plan.tensors.into_iter(),
        extra: plan.extra.into_iter(),
        undo: Plan {
            tensors: Vec::new(),
            extra: Vec::new(),
        },
        refused: None,
        keep_old,
    };
    walk_mut(root, &mut applier, "", false);
    (applier.undo, applier.refused)
}

/// Runs every module's load post-hooks, children before parents (PyTorch calls them as each module's
/// subtree finishes loading), on the shared key lists.
fn run_post_hooks(root: &dyn Module, keys: &mut IncompatibleKeys) {
    struct Post<'k>(&'k mut IncompatibleKeys);
    impl Walker for Post<'_> {
        fn module_end(&mut self, _: &str, module: &dyn Module) {
            let keys = &mut *self.0;
            hook_state::each::<hook_state::LoadPostHook>(module, HookKind::LoadStateDictPost, |hook| {
                hook(module, keys)
            });
        }
    }
    walk(root, &mut Post(keys), WalkOptions::all());
}

/// `load_state_dict(state_dict, strict, assign)` on `root`. Load pre-hooks may edit the state dict before each
/// module reads it; load post-hooks see the keys after the tensors are in place and may edit them; `strict`
/// judges the edited lists, and a refused load is rolled back.
pub(crate) fn load_state_dict(
    root: &mut dyn Module,
    sd: StateDict,
    strict: bool,
    assign: bool,
) -> Result<IncompatibleKeys> {
    let module = root.type_name().to_owned();
    let error = |keys: &IncompatibleKeys, mismatched: Vec<ShapeMismatch>, extra_state: Vec<(String, String)>| {
        Error::from(LoadError {
            module: module.clone(),
            missing_keys: keys.missing_keys.clone(),
            unexpected_keys: keys.unexpected_keys.clone(),
            mismatched,
            extra_state,
            strict,
        })
    };
    let Prepared {
        plan,
        mut keys,
        mismatched,
        post_hooks,
    } = prepare(root, sd, assign)?;
    if !mismatched.is_empty() || (strict && !keys.is_empty() && !post_hooks) {
        return Err(error(&keys, mismatched, Vec::new()));
    }
    // Only a refused extra state, or a strict check after post-hooks edit the keys, can undo the load.
    let keep_old = plan.extra.iter().any(Option::is_some) || (strict && post_hooks);
    let (undo, refused) = apply(root, plan, keep_old);
    if let Some(refused) = refused {
        apply(root, undo, true);
        return Err(error(&keys, Vec::new(), vec![refused]));
    }
    if post_hooks {
        run_post_hooks(root, &mut keys);
    }
    if strict && !keys.is_empty() {
        apply(root, undo, true);
        return Err(error(&keys, Vec::new(), Vec::new()));
    }
    Ok(keys)
}
