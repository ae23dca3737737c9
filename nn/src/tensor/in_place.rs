//! In-place changes recorded as PyTorch records them: the tensor changed keeps its handles and takes a new
//! node as its history. Below the ops, so that the tensor's own writes (`copy_`, `fill_`) record themselves too.

use std::sync::Arc;

use smallvec::SmallVec;

use super::Tensor;
use super::autograd::{Backward, GradMeta, Node, OutputMeta};
use super::view_history::settle_write;
use crate::{Error, Result};

/// An in-place change `x = f(x)` of a tensor that requires a gradient, as PyTorch records it: `f` runs on a copy
/// of `x` that carries `x`'s history (and is recorded, saving what its backward needs), then `x` takes the
/// result's contents and history, seen through every handle to `x`. A leaf that requires a gradient is refused,
/// as in PyTorch, and so is a view of one. A change through a view of a tensor that requires a gradient records
/// PyTorch's `CopySlices` for that tensor (`view_history`). For a change whose backward needs nothing of `x`'s
/// old value, [`in_place_recorded_without_copy`] copies nothing.
pub(crate) fn in_place_recorded(op: &'static str, x: &Tensor, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<()> {
    let (meta, old) = in_place_history(op, x)?;
    let mut original = x.deep_copy()?;
    if let Some((node, index)) = old {
        original.attach(&node, index);
    }
    let y = f(&original)?;
    let Some((new_node, new_index)) = y.grad_meta().and_then(|m| m.grad_fn()) else {
        return Err(Error::autograd(op, "the in-place change was not recorded"));
    };
    let contents = y.detach();
    drop(y);
    let _old = x.replace_contents(contents);
    settle_write(x, meta, new_node, new_index);
    Ok(())
}

/// An in-place change of `x` by `write` whose backward needs nothing of `x`'s old value (`add_`; `relu_`, whose
/// gradient reads its result), recorded as PyTorch records it: `write` runs in `x`'s storage, then `backward`
/// is made (it may save `x` as it is then: a backward after another change of `x` is refused, naming the op)
/// and `x` points to a node with an edge per tensor of `sources` (`x` first; what the backward returns a
/// gradient for), named `op` without its in-place `_` as PyTorch's `grad_fn` is (`add_` records `add`). Nothing
/// is copied. A leaf that requires a gradient is refused, naming `op`, as in PyTorch.
pub(crate) fn in_place_recorded_without_copy(
    op: &'static str,
    sources: &[&Tensor],
    write: impl FnOnce() -> Result<()>,
    backward: impl FnOnce() -> Box<dyn Backward>,
) -> Result<()> {
    let x = sources[0];
    // Before `in_place_history`, which may give `x` its first autograd state: it has no history to point to.
    let edges = sources.iter().map(|t| t.history_edge()).collect();
    let (meta, _) = in_place_history(op, x)?;
    write()?;
    let name = op.strip_suffix('_').unwrap_or(op);
    let node = Node::new(name, backward(), edges, SmallVec::from_iter([OutputMeta::of(x)]));
    settle_write(x, meta, Arc::new(node), 0);
    Ok(())
}

/// The node that computed a tensor, and which of its outputs the tensor is.
type Producer = (Arc<Node>, usize);

/// The autograd state of a tensor an in-place change under autograd changes, with the node that computed it
/// (`None`: it required no gradient). A leaf that requires a gradient is refused, with PyTorch's sentence. A
/// tensor that requires none takes a state here, as PyTorch's `a += b` makes `a` require one when `b` does: when
/// it is no view and no other handle shares its storage (no handle could be left without the new history).
fn in_place_history<'a>(op: &'static str, x: &'a Tensor) -> Result<(&'a Arc<GradMeta>, Option<Producer>)> {
    x.check_writable(op)?;
    x.check_view_write(op)?;
    x.refresh_view_history();
    if let Some(meta) = x.grad_meta().filter(|m| m.requires_grad()) {
        return match meta.grad_fn() {
            Some(producer) => Ok((meta, Some(producer))),
            None => Err(Error::autograd(
                op,
                "a leaf Variable that requires grad is being used in an in-place operation. (Change it under \
                 nn::no_grad(), or use the out-of-place form.)",
            )),
        };
    }
    if x.is_view() || x.storage_is_shared() {
        return Err(Error::autograd(
            op,
            "a tensor that requires no grad can take in place a result that does only when it is no view and no \
             other handle shares its storage (those would not see its new history); use the out-of-place form",
        ));
    }
    match x.grad_meta() {
        Some(meta) => meta.set_requires_grad(true),
        None => {
            x.adopt_grad_meta(Arc::new(GradMeta::new(true)));
        }
    }
    let meta = x.grad_meta().expect("the state was just set");
    Ok((meta, None))
}
