//! `load_state_dict`: check everything first, then change the module, so a load that fails changes nothing.
//!
//! Phase one walks every place of the tree (a shared module under each of its paths) in PyTorch's order and
//! prepares one action per parameter, persistent buffer and extra state: the incoming tensor cast to the
//! target's dtype and device (or taken as it is, with `assign`). Shape mismatches, missing and unexpected keys
//! are gathered there, all of them. Phase two walks the tree again in the same order and applies the actions;
//! what it replaces is kept, so that the load can be rolled back if a later step refuses it.

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

/// Phase one: what to do everywhere, and what is wrong.
/// What phase one found: the plan, the keys, the mismatches, and whether any module has load post-hooks.
struct Prepared {
    plan: Plan,
    keys: IncompatibleKeys,
    mismatched: Vec<ShapeMismatch>,
    post_hooks: bool,
}

/// Phase one: runs each module's load pre-hooks (which may edit `sd`) before reading its entries.
fn prepare(root: &dyn Module, sd: &mut StateDict, assign: bool) -> Result<Prepared> {
    struct Prepare<'s> {
        sd: &'s mut StateDict,
        post_hooks: bool,
        assign: bool,
        used: Vec<bool>,
        plan: Plan,
        missing: Vec<String>,
        mismatched: Vec<ShapeMismatch>,
        error: Option<Error>,
    }
    impl Prepare<'_> {
        fn tensor(&mut self, key: &str, target: &Tensor) {
            let Some((index, _, input)) = self.sd.get_full(key) else {
                self.missing.push(key.to_owned());
                self.plan.tensors.push(Action::Skip);
                return;
            };
            self.used[index] = true;
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
                input
                    .to_dtype(target.dtype())
                    .and_then(|t| t.to_device(target.device()))
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
    impl Walker for Prepare<'_> {
        fn module(&mut self, path: &str, module: &dyn Module) {
            let Some(hooks) = module.hooks() else { return };
            self.post_hooks |= hooks.has(HookKind::LoadStateDictPost);
            if !hooks.has(HookKind::LoadStateDictPre) {
                return;
            }
            // A hook may add, remove or rename entries: remember the used ones by key across it.
            let used: Vec<String> = self
                .sd
                .keys()
                .zip(&self.used)
                .filter(|(_, u)| **u)
                .map(|(k, _)| k.clone())
                .collect();
            let prefix = hook_state::prefix_of("", path);
            let sd = &mut *self.sd;
            hook_state::each::<hook_state::LoadPreHook>(module, HookKind::LoadStateDictPre, |hook| {
                hook(module, sd, &prefix)
            });
            self.used = vec![false; self.sd.len()];
            for key in used {
                if let Some(i) = self.sd.get_index_of(&key) {
                    self.used[i] = true;
                }
            }
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
            match self.sd.get_full(&key) {
                Some((index, _, state)) => {
                    self.used[index] = true;
                    self.plan.extra.push(Some(state.clone()));
                }
                None => {
                    self.missing.push(key);
                    self.plan.extra.push(None);
                }
            }
        }
    }
    let used = vec![false; sd.len()];
    let mut prepare = Prepare {
        sd,
        post_hooks: false,
        assign,
        used,
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
    let unexpected: Vec<String> = prepare
        .sd
        .keys()
        .zip(&prepare.used)
        .filter(|(_, used)| !**used)
        .map(|(k, _)| k.clone())
        .collect();
    let unexpected = if unexpected.is_empty() {
        unexpected
    } else {
        in_reporting_order(root, unexpected)
    };
    Ok(Prepared {
        plan: prepare.plan,
        keys: IncompatibleKeys {
            missing_keys: prepare.missing,
            unexpected_keys: unexpected,
        },
        mismatched: prepare.mismatched,
        post_hooks: prepare.post_hooks,
    })
}

/// Unexpected keys in PyTorch's order: each is reported by the deepest module its path reaches (modules in
/// load order), and within one module in state-dict order.
fn in_reporting_order(root: &dyn Module, keys: Vec<String>) -> Vec<String> {
    struct Modules(std::collections::HashMap<String, usize>);
    impl Walker for Modules {
        fn module(&mut self, path: &str, _: &dyn Module) {
            let n = self.0.len();
            self.0.entry(path.to_owned()).or_insert(n);
        }
    }
    let mut modules = Modules(std::collections::HashMap::new());
    walk(root, &mut modules, WalkOptions::all());
    let reporter = |key: &str| -> usize {
        let mut prefix = key;
        while let Some((head, _)) = prefix.rsplit_once('.') {
            if let Some(&i) = modules.0.get(head) {
                return i;
            }
            prefix = head;
        }
        0
    };
    let mut keyed: Vec<(usize, String)> = keys.into_iter().map(|k| (reporter(&k), k)).collect();
    keyed.sort_by_key(|(i, _)| *i);
    keyed.into_iter().map(|(_, k)| k).collect()
}

/// Phase two: applies `plan` and returns the plan that undoes it. Extra states are set on each module before
/// its tensors; a refused extra state stops the load, with its key and reason.
fn apply(root: &mut dyn Module, plan: Plan) -> (Plan, Option<(String, String)>) {
    struct Apply {
        tensors: std::vec::IntoIter<Action>,
        extra: std::vec::IntoIter<Option<Tensor>>,
        undo: Plan,
        refused: Option<(String, String)>,
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
                Action::Copy(src) => Action::Copy(param.data().replace_contents(src)),
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
                Action::Copy(src) => Action::Copy(buffer.replace_contents(src)),
                Action::Assign(src) => Action::Assign(std::mem::replace(buffer, src)),
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
    mut sd: StateDict,
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
    } = prepare(root, &mut sd, assign)?;
    // The plan holds what it needs; tensors only it holds now can be moved into the module rather than copied.
    drop(sd);
    if !mismatched.is_empty() || (strict && !keys.is_empty() && !post_hooks) {
        return Err(error(&keys, mismatched, Vec::new()));
    }
    let (undo, refused) = apply(root, plan);
    if let Some(refused) = refused {
        apply(root, undo);
        return Err(error(&keys, Vec::new(), vec![refused]));
    }
    if post_hooks {
        run_post_hooks(root, &mut keys);
    }
    if strict && !keys.is_empty() {
        apply(root, undo);
        return Err(error(&keys, Vec::new(), Vec::new()));
    }
    Ok(keys)
}
