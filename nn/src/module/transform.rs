//! Whole-tree changes: casts and device moves (PyTorch's `_apply`), modes, gradient flags, `apply`.
//!
//! A cast or move computes every new tensor first and only then swaps them in, so one that fails half way
//! (a device that refuses a dtype, memory) leaves the module as it was.

use super::walk::{WalkOptions, Walker, WalkerMut, walk, walk_mut};
use super::{ChildMut, Module, VisitorMut};
use crate::{Param, Result, Tensor};

/// A tensor transformation: `Ok(None)` leaves the tensor as it is.
pub(crate) type TensorFn<'f> = &'f dyn Fn(&Tensor) -> Result<Option<Tensor>>;

/// PyTorch's `Module._apply(fn)`: `fn` on every parameter (and its gradient) and every buffer, at every place.
pub(crate) fn apply_to_tensors(root: &mut dyn Module, f: TensorFn<'_>) -> Result<()> {
    struct Compute<'f> {
        f: TensorFn<'f>,
        out: Vec<(Option<Tensor>, Option<Tensor>)>,
        error: Option<crate::Error>,
    }
    impl Compute<'_> {
        fn run(&mut self, t: &Tensor) -> Option<Tensor> {
            if self.error.is_some() {
                return None;
            }
            match (self.f)(t) {
                Ok(v) => v,
                Err(e) => {
                    self.error = Some(e);
                    None
                }
            }
        }
    }
    impl Walker for Compute<'_> {
        fn param(&mut self, _: &str, param: &Param) {
            let data = self.run(&param.data());
            let grad = param.grad().and_then(|g| self.run(&g));
            self.out.push((data, grad));
        }
        fn buffer(&mut self, _: &str, buffer: &Tensor, _: bool) {
            let data = self.run(buffer);
            self.out.push((data, None));
        }
    }
    let mut compute = Compute {
        f,
        out: Vec::new(),
        error: None,
    };
    walk(root, &mut compute, WalkOptions::all());
    if let Some(e) = compute.error {
        return Err(e);
    }

    struct Swap(std::vec::IntoIter<(Option<Tensor>, Option<Tensor>)>);
    impl WalkerMut for Swap {
        fn param(&mut self, _: &str, param: &mut Param) {
            if let Some((data, grad)) = self.0.next() {
                if let Some(d) = data {
                    param.set_data(d);
                }
                if let Some(g) = grad {
                    // Same shape as the gradient it replaces: cannot fail.
                    let _ = param.set_grad(Some(g));
                }
            }
        }
        fn buffer(&mut self, _: &str, buffer: &mut Tensor, _: bool) {
            if let Some((Some(mut data), _)) = self.0.next() {
                *data.mode_marks_mut() = buffer.mode_marks();
                *buffer = data;
            }
        }
    }
    walk_mut(root, &mut Swap(compute.out.into_iter()), "", false);
    Ok(())
}

/// `train(mode)`: the flag of every module at every place.
pub(crate) fn set_training(root: &mut dyn Module, mode: bool) {
    struct Train(bool);
    impl WalkerMut for Train {
        fn module(&mut self, _: &str, module: &mut dyn Module) {
            module.set_training(self.0);
        }
    }
    walk_mut(root, &mut Train(mode), "", true);
}

/// `apply(fn)`: `fn` on every child (each once per parent, recursively, children first), then on `root`.
pub(crate) fn apply_fn(root: &mut dyn Module, f: &mut dyn FnMut(&mut dyn Module)) {
    struct Children<'f> {
        f: &'f mut dyn FnMut(&mut dyn Module),
        seen: Vec<usize>,
    }
    impl<'a> VisitorMut<'a> for Children<'_> {
        fn child(&mut self, _: &str, child: ChildMut<'a>) {
            match child {
                ChildMut::Owned(m) => apply_fn(m, self.f),
                ChildMut::Shared(s) => {
                    if !self.seen.contains(&s.id()) {
                        self.seen.push(s.id());
                        s.with_mut(&mut |m| apply_fn(m, self.f));
                    }
                }
            }
        }
    }
    root.visit_mut(&mut Children { f, seen: Vec::new() });
    f(root);
}
