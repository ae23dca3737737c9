//! The autograd history of views, as PyTorch keeps it: a recorded write through a view changes its base, so the
//! base's history becomes PyTorch's `CopySlices` (the old base outside the view, the write's result inside it)
//! and the view's that of its base now; a view whose storage was written since its history was set is seen, when
//! an operation uses it, as the view of its base now (PyTorch's regenerated `AsStridedBackward0`).

use std::sync::Arc;

use smallvec::SmallVec;

use super::Tensor;
use super::autograd::{Backward, Edge, GradMeta, Node, OutputMeta};
use super::view::Geometry;
use crate::{Error, Result};

/// PyTorch's sentence for a write through a view of a leaf that requires a gradient.
const VIEW_OF_LEAF: &str = "a view of a leaf Variable that requires grad is being used in an in-place operation.";

impl Tensor {
    /// Where a gradient for this tensor goes, for an operation recording it as an input: `None` when it needs
    /// none. A view whose storage was written since its history was set first takes its base's history now.
    pub(crate) fn history_edge(&self) -> Option<Edge> {
        self.refresh_view_history();
        self.grad_meta().filter(|m| m.requires_grad()).map(|m| m.edge())
    }

    /// For a view that requires a gradient and whose storage was written since its history was set: its history
    /// becomes that of a view of its base as it is now.
    pub(crate) fn refresh_view_history(&self) {
        let Some(view) = self.view_info() else { return };
        let Some(meta) = self.grad_meta().filter(|m| m.requires_grad()) else {
            return;
        };
        if view.history_version() == self.version() {
            return;
        }
        let Some(base_meta) = self
            .view_base()
            .and_then(|b| b.grad_meta())
            .filter(|m| m.requires_grad())
        else {
            return;
        };
        let node = view_of_base(self, base_meta.edge());
        if let Some((old, _)) = meta.grad_fn()
            && old.take_retained(meta)
        {
            node.retain(0, meta);
        }
        meta.set_grad_fn(node, 0);
        view.set_history_version(self.version());
    }

    /// Refuses a recorded write through a view that requires a gradient and whose base is a leaf (no operation
    /// computed it), with PyTorch's sentence.
    pub(crate) fn check_view_write(&self, op: &'static str) -> Result<()> {
        if self.requires_grad() && self.view_base().is_some_and(Tensor::is_leaf) {
            return Err(Error::autograd(op, VIEW_OF_LEAF));
        }
        Ok(())
    }
}

/// After a recorded write into `x` whose new value is output `index` of `node`: `x`'s history moves there, or,
/// for a view of a base that requires a gradient, the base's history becomes `CopySlices` of its old history
/// and `node`, and `x`'s that of a view of the base.
pub(crate) fn settle_write(x: &Tensor, meta: &Arc<GradMeta>, node: Arc<Node>, index: usize) {
    let base = x.view_base().filter(|b| b.requires_grad());
    let Some((base, base_meta)) = base.and_then(|b| Some((b, b.grad_meta()?))) else {
        move_history(meta, node, index);
        return;
    };
    let at = Geometry::of(x);
    let whole = x.is_dense();
    let copy_slices: Box<dyn Backward> = Box::new(move |g: &[Tensor], needs: &[bool]| {
        let g = g[0].dense()?;
        let outside = needs[0]
            .then(|| -> Result<Tensor> {
                if whole {
                    return g.zeros_like();
                }
                let rest = g.deep_copy()?;
                rest.as_view(at.shape.clone(), at.strides.clone(), at.offset)
                    .fill_(0.0)?;
                Ok(rest)
            })
            .transpose()?;
        let inside = needs[1]
            .then(|| g.as_view(at.shape.clone(), at.strides.clone(), at.offset).dense())
            .transpose()?;
        Ok(vec![outside, inside])
    });
    let edges = SmallVec::from_iter([Some(base_meta.edge()), Some(Edge::Node(node, index))]);
    let copy_slices = Arc::new(Node::new(
        "CopySlices",
        copy_slices,
        edges,
        SmallVec::from_iter([OutputMeta::of(base)]),
    ));
    move_history(base_meta, copy_slices.clone(), 0);
    move_history(meta, view_of_base(x, Edge::Node(copy_slices, 0)), 0);
    if let Some(view) = x.view_info() {
        view.set_history_version(x.version());
    }
}

/// The node of view `x` taken of its base, whose gradient goes along `base`: PyTorch's `AsStridedBackward0`,
/// which places the view's gradient where its elements lie in zeros of the base.
fn view_of_base(x: &Tensor, base: Edge) -> Arc<Node> {
    let base_shape = x.view_base().expect("a view").shape().clone();
    let at = Geometry::of(x);
    let backward: Box<dyn Backward> =
        Box::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].place_in(&base_shape, &at)?)]));
    Arc::new(Node::new(
        "as_strided",
        backward,
        SmallVec::from_iter([Some(base)]),
        SmallVec::from_iter([OutputMeta::of(x)]),
    ))
}

/// Points a tensor changed in place to output `index` of `node`, its new version's producer; a gradient it
/// retains ([`Tensor::retain_grad`]) moves there too, so its `.grad` is the new version's, as PyTorch's.
pub(crate) fn move_history(meta: &Arc<GradMeta>, node: Arc<Node>, index: usize) {
    if let Some((old, _)) = meta.grad_fn()
        && old.take_retained(meta)
    {
        node.retain(index, meta);
    }
    meta.set_grad_fn(node, index);
}
