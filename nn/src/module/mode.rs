//! Where a module without a `training: bool` field keeps its mode: on the handles it owns, or, when it owns
//! none, on the first handle below it.
//!
//! PyTorch gives every module a `training` flag. A derived struct may declare one; a derive cannot add a
//! field, but most modules already own per-instance storage that the library defines: their parameters'
//! handles ([`Param`]), their buffers' handles ([`Tensor`]) and their [`Hooks`](crate::Hooks). Each of
//! those carries eight marks ([`ModeMarks`]). Mark 0 is the mode of the module owning the handle, set on
//! every handle it owns while it is in eval mode. The marks belong to the handle, not to the data: two modules
//! tying one parameter hold two handles and keep two modes, and the marks move with the struct, as a field
//! would.
//!
//! A module is in eval mode when any handle it owns has mark 0 set: a handle replaced afterwards (a buffer
//! reassigned in the module's code) starts unmarked and cannot flip the module back to training while
//! another handle keeps the mark. The library's own replacements (casts, device moves, loads with
//! `assign`) carry the marks over to the new handle.
//!
//! A module owning no handle (a model whose members are all child modules) keeps its mode on its *anchor*:
//! the first handle found down its children, first child first (a child's hooks, else its first parameter or
//! buffer, else the same search in its children), `d` levels below it, in mark `d`. The anchor lies inside the
//! module's own subtree, so it moves with the module; no other module uses that mark of that handle (the module
//! `d` levels above a handle on the first-child path is unique). Only owned children are searched (a
//! [`Shared`](crate::Shared) one may sit in several places), up to seven levels down; a module with no anchor
//! reports whether all its children train. The anchor is where it was when the mode was set: a first child
//! replaced since, or a subtree moved into another model, gives a module the mode its new anchor holds (the
//! marks of a module built from a model's parts carry the old model's modes, as a clone's do).
//!
//! A clone of a handle carries its marks, so a cloned module keeps its mode (as `copy.deepcopy` keeps
//! `training`); a module built from handles cloned out of a module in eval mode starts in eval mode until
//! its own `train` / `eval`. Tensors that ops return, and `state_dict`'s, start unmarked.

use super::{Child, ChildMut, Module, Visitor, VisitorMut};
use crate::tensor::ModeMarks;
use crate::{Param, Tensor};

/// The mode kept for `module` (`Some(training)`): on the handles it owns, else on its anchor; `None` when it
/// owns no handle and has no anchor.
pub(crate) fn kept<M: Module + ?Sized>(module: &M) -> Option<bool> {
    own_mode(module).or_else(|| anchor(module, 0).map(|(marks, depth)| !marks.eval_at(depth)))
}

/// Keeps `training` as `module`'s mode: in mark 0 of every handle it owns, else in its anchor's mark (nowhere
/// when it has neither; its children keep their own).
pub(crate) fn mark<M: Module + ?Sized>(module: &mut M, training: bool) {
    struct Own {
        eval: bool,
        owns: bool,
    }
    impl VisitorMut<'_> for Own {
        fn param(&mut self, _: &str, param: &mut Param) {
            param.mode_marks_mut().set_eval_at(0, self.eval);
            self.owns = true;
        }
        fn buffer(&mut self, _: &str, buffer: &mut Tensor, _: bool) {
            buffer.mode_marks_mut().set_eval_at(0, self.eval);
            self.owns = true;
        }
    }
    let mut own = Own {
        eval: !training,
        owns: false,
    };
    if let Some(hooks) = module.hooks_mut() {
        hooks.mode_marks_mut().set_eval_at(0, !training);
        own.owns = true;
    }
    module.visit_mut(&mut own);
    if !own.owns {
        mark_anchor(module, 0, !training);
    }
}

/// The mode kept on `module`'s own handles (`Some(training)`: eval when any has mark 0), or `None` when it
/// owns none (no parameter, buffer or hooks).
fn own_mode<M: Module + ?Sized>(module: &M) -> Option<bool> {
    struct Own {
        owns: bool,
        eval: bool,
    }
    impl Visitor<'_> for Own {
        fn param(&mut self, _: &str, param: &Param) {
            self.owns = true;
            self.eval |= param.mode_marks().eval_at(0);
        }
        fn buffer(&mut self, _: &str, buffer: &Tensor, _: bool) {
            self.owns = true;
            self.eval |= buffer.mode_marks().eval_at(0);
        }
    }
    let mut own = match module.hooks() {
        Some(hooks) => Own {
            owns: true,
            eval: hooks.mode_marks().eval_at(0),
        },
        None => Own {
            owns: false,
            eval: false,
        },
    };
    module.visit(&mut own);
    own.owns.then_some(!own.eval)
}

/// The marks of the first handle of `module` (its hooks, else its first parameter or buffer, else the first
/// found in its owned children, in order) and how many levels below the module that started the search
/// (`depth` at `module`) it lies; `None` when there is none within [`ModeMarks::DEPTHS`] levels.
fn anchor<M: Module + ?Sized>(module: &M, depth: usize) -> Option<(ModeMarks, usize)> {
    struct First {
        depth: usize,
        found: Option<(ModeMarks, usize)>,
    }
    impl Visitor<'_> for First {
        fn param(&mut self, _: &str, param: &Param) {
            self.found = self.found.or(Some((param.mode_marks(), self.depth)));
        }
        fn buffer(&mut self, _: &str, buffer: &Tensor, _: bool) {
            self.found = self.found.or(Some((buffer.mode_marks(), self.depth)));
        }
        fn child(&mut self, _: &str, child: Child<'_>) {
            if let (None, Child::Owned(m)) = (self.found, child) {
                self.found = anchor(m, self.depth + 1);
            }
        }
    }
    if depth >= ModeMarks::DEPTHS {
        return None;
    }
    if let Some(hooks) = module.hooks() {
        return Some((hooks.mode_marks(), depth));
    }
    let mut first = First { depth, found: None };
    module.visit(&mut first);
    first.found
}

/// Sets or clears mark `depth + levels down` of the handle [`anchor`] finds from `module` (`depth` at
/// `module`); whether there was one.
fn mark_anchor<M: Module + ?Sized>(module: &mut M, depth: usize, eval: bool) -> bool {
    struct First {
        depth: usize,
        eval: bool,
        done: bool,
    }
    impl VisitorMut<'_> for First {
        fn param(&mut self, _: &str, param: &mut Param) {
            if !self.done {
                param.mode_marks_mut().set_eval_at(self.depth, self.eval);
                self.done = true;
            }
        }
        fn buffer(&mut self, _: &str, buffer: &mut Tensor, _: bool) {
            if !self.done {
                buffer.mode_marks_mut().set_eval_at(self.depth, self.eval);
                self.done = true;
            }
        }
        fn child(&mut self, _: &str, child: ChildMut<'_>) {
            if let (false, ChildMut::Owned(m)) = (self.done, child) {
                self.done = mark_anchor(m, self.depth + 1, self.eval);
            }
        }
    }
    if depth >= ModeMarks::DEPTHS {
        return false;
    }
    if let Some(hooks) = module.hooks_mut() {
        hooks.mode_marks_mut().set_eval_at(depth, eval);
        return true;
    }
    let mut first = First {
        depth,
        eval,
        done: false,
    };
    module.visit_mut(&mut first);
    first.done
}
