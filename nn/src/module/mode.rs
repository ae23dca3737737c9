//! Where a module without a `training: bool` field keeps its mode: on the handles it owns.
//!
//! PyTorch gives every module a `training` flag. A derived struct may declare one; a derive cannot add a
//! field, but most modules already own per-instance storage that the library defines: their parameters'
//! handles ([`Param`]), their buffers' handles ([`Tensor`]) and their [`Hooks`](crate::Hooks). Each of
//! those carries a mark, set while its module is in eval mode. The mark belongs to the handle, not to the
//! data: two modules tying one parameter hold two handles and keep two modes, and the mark moves with the
//! struct, as a field would.
//!
//! A module is in eval mode when any handle it owns is marked: a handle replaced afterwards (a buffer
//! reassigned in the module's code) starts unmarked and cannot flip the module back to training while
//! another handle keeps the mark. The library's own replacements (casts, device moves, loads with
//! `assign`) carry the mark over to the new handle.
//!
//! A clone of a handle carries its mark, so a cloned module keeps its mode (as `copy.deepcopy` keeps
//! `training`); a module built from handles cloned out of a module in eval mode starts in eval mode until
//! its own `train` / `eval`. Tensors that ops return, and `state_dict`'s, start unmarked.

use super::{Module, Visitor, VisitorMut};
use crate::{Param, Tensor};

/// The mode kept on `module`'s own handles (`Some(training)`), or `None` when it owns none of them
/// (no parameter, buffer or hooks present).
pub(crate) fn marked<M: Module + ?Sized>(module: &M) -> Option<bool> {
    struct Marks {
        owns: bool,
        eval: bool,
    }
    impl Visitor<'_> for Marks {
        fn param(&mut self, _: &str, param: &Param) {
            self.owns = true;
            self.eval |= param.held_in_eval();
        }
        fn buffer(&mut self, _: &str, buffer: &Tensor, _: bool) {
            self.owns = true;
            self.eval |= buffer.held_in_eval();
        }
    }
    let mut marks = match module.hooks() {
        Some(hooks) => Marks {
            owns: true,
            eval: hooks.held_in_eval(),
        },
        None => Marks {
            owns: false,
            eval: false,
        },
    };
    module.visit(&mut marks);
    marks.owns.then_some(!marks.eval)
}

/// Marks every handle `module` owns with `training` (its children keep their own).
pub(crate) fn mark<M: Module + ?Sized>(module: &mut M, training: bool) {
    struct Mark(bool);
    impl VisitorMut<'_> for Mark {
        fn param(&mut self, _: &str, param: &mut Param) {
            param.set_held_in_eval(self.0);
        }
        fn buffer(&mut self, _: &str, buffer: &mut Tensor, _: bool) {
            buffer.set_held_in_eval(self.0);
        }
    }
    if let Some(hooks) = module.hooks_mut() {
        hooks.set_held_in_eval(!training);
    }
    module.visit_mut(&mut Mark(!training));
}
