//! Where a module without a `training: bool` field keeps its mode: on the handles of its subtree.
//!
//! The rule, as PyTorch's: a module is in the mode last set on it or on an ancestor (`train` / `eval` set it
//! and recurse). PyTorch keeps it in a `training` attribute; a derive cannot add a field, so a module without
//! one keeps its mode on the per-instance storage the library defines below it: every parameter handle
//! ([`Param`]), buffer handle ([`Tensor`]) and [`Hooks`](crate::Hooks) of its subtree. Each handle carries one
//! eval mark per level above it ([`ModeMarks`]): mark `d` is the mode of the module `d` levels up (mark 0, the
//! module owning the handle). Setting a module's mode writes its mark on every handle of its subtree; reading
//! it finds eval when any of them holds that mark, so a handle replaced since (a buffer reassigned in a
//! forward) starts unmarked and does not flip the module back to training.
//!
//! The marks belong to the handle, not to the data, and a clone carries them: the mode moves with the struct
//! (into a `Box`, out of its parent) as a field would, a cloned module keeps it (as `copy.deepcopy` keeps
//! `training`), and two modules tying one parameter hold two handles with their own marks. The library's own
//! handle replacements (casts, device moves, loads with `assign`) carry the marks to the new handle. Only
//! owned children are marked (a [`Shared`](crate::Shared) one may sit at several depths), down to
//! [`ModeMarks::DEPTHS`] levels; a module with no handle that deep reports whether all its children train.

use super::{Child, ChildMut, Module, Visitor, VisitorMut};
use crate::tensor::ModeMarks;
use crate::{Param, Tensor};

/// The mode kept for `module` on the handles of its subtree (`Some(training)`): eval when any holds its mark;
/// `None` when there is no handle within [`ModeMarks::DEPTHS`] levels.
pub(crate) fn kept<M: Module + ?Sized>(module: &M) -> Option<bool> {
    let mut read = Read {
        depth: 0,
        found: false,
        eval: false,
    };
    read.module(module);
    read.found.then_some(!read.eval)
}

/// Keeps `training` as `module`'s mode: its mark on every handle of its subtree.
pub(crate) fn mark<M: Module + ?Sized>(module: &mut M, training: bool) {
    Write {
        depth: 0,
        eval: !training,
    }
    .module(module);
}

/// Reads mark `depth + levels down` of every handle below the module where it started, `depth` at the one it
/// visits; stops looking once a mark says eval.
struct Read {
    depth: usize,
    found: bool,
    eval: bool,
}

impl Read {
    fn marks(&mut self, marks: ModeMarks) {
        self.found = true;
        self.eval |= marks.eval_at(self.depth);
    }

    fn module<M: Module + ?Sized>(&mut self, module: &M) {
        if self.eval || self.depth >= ModeMarks::DEPTHS {
            return;
        }
        if let Some(hooks) = module.hooks() {
            self.marks(hooks.mode_marks());
        }
        module.visit(self);
    }
}

impl Visitor<'_> for Read {
    fn param(&mut self, _: &str, param: &Param) {
        self.marks(param.mode_marks());
    }
    fn buffer(&mut self, _: &str, buffer: &Tensor, _: bool) {
        self.marks(buffer.mode_marks());
    }
    fn child(&mut self, _: &str, child: Child<'_>) {
        if let Child::Owned(m) = child {
            self.depth += 1;
            self.module(m);
            self.depth -= 1;
        }
    }
}

/// Sets (eval) or clears (training) mark `depth + levels down` of every handle below the module where it
/// started, `depth` at the one it visits.
struct Write {
    depth: usize,
    eval: bool,
}

impl Write {
    fn module<M: Module + ?Sized>(&mut self, module: &mut M) {
        if self.depth >= ModeMarks::DEPTHS {
            return;
        }
        if let Some(hooks) = module.hooks_mut() {
            hooks.mode_marks_mut().set_eval_at(self.depth, self.eval);
        }
        module.visit_mut(self);
    }
}

impl VisitorMut<'_> for Write {
    fn param(&mut self, _: &str, param: &mut Param) {
        param.mode_marks_mut().set_eval_at(self.depth, self.eval);
    }
    fn buffer(&mut self, _: &str, buffer: &mut Tensor, _: bool) {
        buffer.mode_marks_mut().set_eval_at(self.depth, self.eval);
    }
    fn child(&mut self, _: &str, child: ChildMut<'_>) {
        if let ChildMut::Owned(m) = child {
            self.depth += 1;
            self.module(m);
            self.depth -= 1;
        }
    }
}
