//! Reverse-mode automatic differentiation: the backward pass over the graph the operations record.
//!
//! An operation whose input requires a gradient records a node (in `ops::run`, one place): its backward, the
//! tensors it saved, and where each input's gradient goes. [`Tensor::backward`] walks the nodes reachable from
//! the tensor in an order where every node runs after all the nodes that feed it gradients (a topological
//! order), sums the gradients arriving at each output, and accumulates the leaves' gradients into their
//! `.grad` (a [`Param`](crate::Param)'s too). [`grad`] returns them instead. Recording stops under
//! [`no_grad`]; the backward itself records nothing.
//!
//! ```
//! use nn::{DType, Tensor};
//! let mut x = Tensor::from_vec(vec![1.0f64, 2.0], [2]).unwrap();
//! x.set_requires_grad(true).unwrap();
//! let y = x.mul(&x).unwrap().sum_all().unwrap(); // Σ x²
//! y.backward().unwrap();
//! assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0, 4.0]);
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use crate::tensor::autograd::{Edge, GradMeta, Node};
use crate::tensor::grad_hooks::GradFn;
use crate::{Error, Result, Tensor, enable_grad, no_grad};

/// How [`Tensor::backward_opts`] runs.
#[derive(Clone, Debug, Default)]
pub struct BackwardOptions<'g> {
    /// The gradient of the tensor's own elements (`None`: one, for a tensor of one element).
    pub gradient: Option<&'g Tensor>,
    /// Keeps the graph's saved tensors, so a second backward can run through it (PyTorch's `retain_graph`;
    /// implied by `create_graph`, as PyTorch's default).
    pub retain_graph: bool,
    /// Records the pass itself, so the gradients it computes differentiate again (PyTorch's `create_graph`:
    /// gradient penalties, Hessian-vector products). Each node on the path must have a differentiable backward
    /// (`docs/autograd.md` lists the operations); one that has not fails the pass, naming its op.
    pub create_graph: bool,
}

impl Tensor {
    /// Computes the gradient of this one-element tensor with respect to every leaf that requires a gradient
    /// and adds it to the leaf's [`grad`](Tensor::grad) (PyTorch's `loss.backward()`). The graph is freed.
    pub fn backward(&self) -> Result<()> {
        self.backward_opts(BackwardOptions::default())
    }

    /// [`backward`](Self::backward) from `gradient`, the gradient of this tensor's elements (its shape).
    ///
    /// ```
    /// use nn::Tensor;
    /// let mut x = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap();
    /// x.set_requires_grad(true).unwrap();
    /// let y = x.mul_scalar(3.0).unwrap();
    /// y.backward_with(&Tensor::from_vec(vec![1.0f32, 10.0], [2]).unwrap()).unwrap();
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![3.0, 30.0]);
    /// ```
    pub fn backward_with(&self, gradient: &Tensor) -> Result<()> {
        self.backward_opts(BackwardOptions {
            gradient: Some(gradient),
            ..BackwardOptions::default()
        })
    }

    /// [`backward`](Self::backward) with PyTorch's options: a gradient, `retain_graph` and `create_graph`.
    pub fn backward_opts(&self, options: BackwardOptions<'_>) -> Result<()> {
        let root = root("backward", self, options.gradient, options.create_graph)?;
        let pass = PassOptions {
            retain_graph: options.retain_graph || options.create_graph,
            create_graph: options.create_graph,
        };
        backward_pass(vec![root], pass, None).map(|_| ())
    }
}

/// The gradients of `outputs` (weighted by `grad_outputs`, one each; `None`: ones for one-element outputs) with
/// respect to `inputs`, without touching any `.grad` (PyTorch's `torch.autograd.grad(..., allow_unused=True)`):
/// one entry per input, `None` for an input the outputs do not depend on.
///
/// ```
/// use nn::Tensor;
/// let mut x = Tensor::from_vec(vec![3.0f64], [1]).unwrap();
/// x.set_requires_grad(true).unwrap();
/// let y = x.mul(&x).unwrap().sum_all().unwrap();
/// let g = nn::autograd::grad(&[&y], &[&x], None, false).unwrap();
/// assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>().unwrap(), vec![6.0]);
/// assert!(x.grad().is_none());
/// ```
pub fn grad(
    outputs: &[&Tensor],
    inputs: &[&Tensor],
    grad_outputs: Option<&[&Tensor]>,
    retain_graph: bool,
) -> Result<Vec<Option<Tensor>>> {
    let options = GradOptions {
        grad_outputs,
        retain_graph,
        create_graph: false,
    };
    grad_opts(outputs, inputs, options)
}

/// [`grad`]'s options by PyTorch's names.
#[derive(Clone, Debug, Default)]
pub struct GradOptions<'g> {
    /// One gradient per output (`None`: ones, for outputs of one element).
    pub grad_outputs: Option<&'g [&'g Tensor]>,
    /// Keeps the graph's saved tensors (implied by `create_graph`).
    pub retain_graph: bool,
    /// Records the pass, so the gradients returned differentiate again (PyTorch's `create_graph`): a gradient
    /// penalty, a Hessian-vector product. See [`BackwardOptions::create_graph`].
    pub create_graph: bool,
}

/// [`grad`] with [`GradOptions`]: with `create_graph`, the gradients carry the history of their computation.
///
/// ```
/// use nn::Tensor;
/// use nn::autograd::{GradOptions, grad_opts};
/// let x = Tensor::from_vec(vec![3.0f64], [1])?.requires_grad_(true)?;
/// let y = x.mul(&x)?.mul(&x)?.sum_all()?;                               // x³
/// let options = GradOptions { create_graph: true, ..Default::default() };
/// let dy = grad_opts(&[&y], &[&x], options)?.remove(0).unwrap();       // 3x² = 27
/// dy.sum_all()?.backward()?;                                           // d(3x²)/dx = 6x
/// assert_eq!(dy.to_vec::<f64>()?, vec![27.0]);
/// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![18.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn grad_opts(outputs: &[&Tensor], inputs: &[&Tensor], options: GradOptions<'_>) -> Result<Vec<Option<Tensor>>> {
    let GradOptions {
        grad_outputs,
        retain_graph,
        create_graph,
    } = options;
    if let Some(g) = grad_outputs
        && g.len() != outputs.len()
    {
        return Err(Error::invalid(
            "grad",
            format!("{} outputs but {} gradients for them", outputs.len(), g.len()),
        ));
    }
    let roots = outputs
        .iter()
        .enumerate()
        .map(|(i, out)| root("grad", out, grad_outputs.map(|g| g[i]), create_graph))
        .collect::<Result<Vec<_>>>()?;
    let targets = inputs
        .iter()
        .map(|t| {
            t.history_edge()
                .ok_or_else(|| Error::autograd("grad", "an input does not require grad"))
        })
        .collect::<Result<Vec<_>>>()?;
    let pass = PassOptions {
        retain_graph: retain_graph || create_graph,
        create_graph,
    };
    backward_pass(roots, pass, Some(&targets))
}

/// Where `t`'s gradient enters the graph, and the gradient: `gradient` (checked against `t`; with its history
/// when the pass is recorded), or one.
fn root(op: &'static str, t: &Tensor, gradient: Option<&Tensor>, create_graph: bool) -> Result<(Edge, Tensor)> {
    t.refresh_view_history();
    let meta = t.grad_meta().filter(|m| m.requires_grad()).ok_or_else(|| {
        Error::autograd(
            op,
            "the tensor does not require grad and has no grad_fn (no input of its computation requires grad, or \
             it was computed under no_grad)",
        )
    })?;
    let gradient = match gradient {
        None if t.numel() == 1 => Tensor::ones(t.shape().clone(), t.dtype()).to_device(t.device())?,
        None => {
            return Err(Error::autograd(
                op,
                format!(
                    "a gradient can be implied only for a tensor of one element; this one has shape {}: pass its \
                     gradient",
                    t.shape()
                ),
            ));
        }
        Some(g) => {
            Error::check_shapes(op, t.shape(), g.shape(), "a gradient of the tensor's shape")?;
            if g.device() != t.device() {
                return Err(Error::DeviceMismatch {
                    op,
                    lhs: t.device(),
                    rhs: g.device(),
                });
            }
            if create_graph {
                g.to_dtype(t.dtype())?
            } else {
                g.detach().to_dtype(t.dtype())?
            }
        }
    };
    Ok((meta.edge(), gradient))
}

/// PyTorch's sentence for a pass that reaches a node whose saved tensors an earlier pass freed.
const FREED: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they \
                     have already been freed). Saved intermediate values of the graph are freed when you call \
                     .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the \
                     graph a second time or if you need to access saved tensors after calling backward.";

/// A node's identity, for the maps of one pass.
fn key(node: &Arc<Node>) -> usize {
    Arc::as_ptr(node) as usize
}

/// `slot + g`, or `g` for an empty slot.
fn add_into(slot: &mut Option<Tensor>, g: Tensor) -> Result<()> {
    *slot = Some(match slot.take() {
        None => g,
        Some(old) => old.add(&g)?,
    });
    Ok(())
}

/// Adds `g` to a leaf's (or a retaining tensor's) `.grad`: in place when there is one, as PyTorch does, and
/// never aliasing a tensor someone else holds. In a recorded pass (`create_graph`) `.grad` keeps the history:
/// the sum is a new tensor, as PyTorch's `AccumulateGrad` makes it under grad mode.
fn accumulate(meta: &GradMeta, g: Tensor) -> Result<()> {
    if crate::is_grad_enabled() {
        let sum = match meta.grad() {
            Some(old) => old.add(&g)?,
            None if g.storage_is_shared() => g.copy()?,
            None => g,
        };
        meta.set_grad(Some(sum));
        return Ok(());
    }
    match meta.grad() {
        Some(old) if old.shape() == g.shape() => old.add_(&g),
        Some(old) => Err(Error::shapes(
            "backward",
            old.shape(),
            g.shape(),
            "a gradient of the shape of the one already accumulated",
        )),
        None => {
            let own = if g.storage_is_shared() || !g.is_dense() {
                g.deep_copy()?
            } else {
                g
            };
            meta.set_grad(Some(own));
            Ok(())
        }
    }
}

/// Runs gradient hooks on `g` in order, each seeing the previous one's result; a replacement must match the
/// gradient's shape, dtype and device.
fn run_hooks<'h>(g: Tensor, hooks: impl IntoIterator<Item = &'h GradFn>) -> Result<Tensor> {
    let mut g = g;
    for hook in hooks {
        if let Some(new) = hook(&g)? {
            if new.shape() != g.shape() || new.dtype() != g.dtype() || new.device() != g.device() {
                return Err(Error::autograd(
                    "register_hook",
                    format!(
                        "a hook returned a gradient of shape {} ({}, on {}) for one of shape {} ({}, on {})",
                        new.shape(),
                        new.dtype(),
                        new.device(),
                        g.shape(),
                        g.dtype(),
                        g.device()
                    ),
                ));
            }
            g = if crate::is_grad_enabled() { new } else { new.detach() };
        }
    }
    Ok(g)
}

/// The backward pass from `roots`: every node reachable runs once, after all the nodes that feed it. With
/// `targets`, the gradients arriving at those edges are returned and no `.grad` changes; without, the
/// leaves' gradients accumulate into their `.grad`. Each leaf's gradients are summed before its hooks run and
/// it is accumulated (PyTorch's `AccumulateGrad` node), once every edge into it has delivered.
fn backward_pass(
    roots: Vec<(Edge, Tensor)>,
    options: PassOptions,
    targets: Option<&[Edge]>,
) -> Result<Vec<Option<Tensor>>> {
    // The pass records only with `create_graph`.
    let _mode = if options.create_graph { enable_grad() } else { no_grad() };
    // The nodes reachable from the roots, and how many edges from them reach each node and each leaf.
    let mut nodes: HashMap<usize, Arc<Node>> = HashMap::new();
    let mut pending: HashMap<usize, usize> = HashMap::new();
    let mut leaves: HashMap<usize, LeafSlot> = HashMap::new();
    let mut count_leaf = |meta: &Arc<GradMeta>| {
        leaves
            .entry(Arc::as_ptr(meta) as usize)
            .or_insert(LeafSlot { sum: None, pending: 0 })
            .pending += 1;
    };
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for (edge, _) in &roots {
        match edge {
            Edge::Node(node, _) => {
                if nodes.insert(key(node), node.clone()).is_none() {
                    stack.push(node.clone());
                }
            }
            Edge::Leaf(meta) => count_leaf(meta),
        }
    }
    while let Some(node) = stack.pop() {
        for edge in node.inputs.iter().flatten() {
            match edge {
                Edge::Node(next, _) => {
                    *pending.entry(key(next)).or_default() += 1;
                    if nodes.insert(key(next), next.clone()).is_none() {
                        stack.push(next.clone());
                    }
                }
                Edge::Leaf(meta) => count_leaf(meta),
            }
        }
    }

    let mut pass = Pass {
        arrived: HashMap::new(),
        leaves,
        captured: vec![None; targets.map_or(0, |t| t.len())],
        targets,
    };
    let mut ready: Vec<Arc<Node>> = nodes
        .values()
        .filter(|n| !pending.contains_key(&key(n)))
        .cloned()
        .collect();
    let mut ran: Vec<Arc<Node>> = Vec::with_capacity(nodes.len());
    let result = (|| -> Result<()> {
        for (edge, g) in roots {
            pass.deliver(&edge, Some(g))?;
        }
        while let Some(node) = ready.pop() {
            let slots = pass
                .arrived
                .remove(&key(&node))
                .unwrap_or_else(|| vec![None; node.outputs.len()]);
            let mut grads = slots
                .into_iter()
                .zip(&node.outputs)
                .map(|(g, meta)| match g {
                    Some(g) => Ok(g),
                    None => Tensor::zeros(meta.shape.clone(), meta.dtype).to_device(meta.device),
                })
                .collect::<Result<Vec<_>>>()?;
            if !node.hooks.is_empty() {
                for hook in node.hooks.live() {
                    let (index, f) = &*hook;
                    grads[*index] = run_hooks(grads[*index].clone(), [&**f])?;
                }
            }
            for (index, meta) in node.retained() {
                if targets.is_none() {
                    accumulate(&meta, grads[index].clone())?;
                }
            }
            if targets.is_some() {
                for (index, g) in grads.iter().enumerate() {
                    if let Some(t) = pass.target_of(&Edge::Node(node.clone(), index)) {
                        add_into(&mut pass.captured[t], g.clone())?;
                    }
                }
            }
            if options.create_graph && !node.differentiable() {
                return Err(Error::autograd(
                    node.name(),
                    "create_graph: the backward of this operation is not differentiable in nn (its gradient is \
                     computed outside the recorded operations); docs/autograd.md lists those that are",
                ));
            }
            let needs: Vec<bool> = node.inputs.iter().map(Option::is_some).collect();
            let input_grads = node
                .run_backward(&grads, &needs)
                .ok_or_else(|| Error::autograd(node.name(), FREED))??;
            if input_grads.len() != node.inputs.len() {
                return Err(Error::autograd(
                    node.name(),
                    format!(
                        "the backward returned {} gradients for {} inputs",
                        input_grads.len(),
                        node.inputs.len()
                    ),
                ));
            }
            ran.push(node.clone());
            for (edge, g) in node.inputs.iter().zip(input_grads) {
                let Some(edge) = edge else { continue };
                pass.deliver(edge, g)?;
                if let Edge::Node(next, _) = edge
                    && let Some(left) = pending.get_mut(&key(next))
                {
                    *left -= 1;
                    if *left == 0 {
                        ready.push(next.clone());
                    }
                }
            }
        }
        Ok(())
    })();
    if !options.retain_graph {
        for node in &ran {
            node.release();
        }
    }
    result.map(|()| pass.captured)
}

/// How a backward pass runs: whether it keeps the saved tensors, and whether it records itself.
#[derive(Clone, Copy)]
struct PassOptions {
    retain_graph: bool,
    create_graph: bool,
}

/// A leaf reached by the pass: the sum of the gradients arrived so far, and how many edges into it have not
/// delivered yet.
struct LeafSlot {
    sum: Option<Tensor>,
    pending: usize,
}

/// The state of one backward pass: the gradients arrived at each node's outputs and at each leaf (summed), and
/// with targets, the gradients captured for them.
struct Pass<'t> {
    arrived: HashMap<usize, Vec<Option<Tensor>>>,
    leaves: HashMap<usize, LeafSlot>,
    captured: Vec<Option<Tensor>>,
    targets: Option<&'t [Edge]>,
}

impl Pass<'_> {
    /// Which target `edge` is.
    fn target_of(&self, edge: &Edge) -> Option<usize> {
        self.targets?.iter().position(|t| match (t, edge) {
            (Edge::Node(a, i), Edge::Node(b, j)) => Arc::ptr_eq(a, b) && i == j,
            (Edge::Leaf(a), Edge::Leaf(b)) => Arc::ptr_eq(a, b),
            _ => false,
        })
    }

    /// Sends `g` along `edge` (`None`: the edge delivers nothing this time): to a node's output, or to a leaf,
    /// whose gradient is complete when every edge into it has delivered.
    fn deliver(&mut self, edge: &Edge, g: Option<Tensor>) -> Result<()> {
        match edge {
            Edge::Node(node, index) => {
                let Some(g) = g else { return Ok(()) };
                let want = &node.outputs[*index];
                if g.device() != want.device || g.shape() != &want.shape {
                    return Err(Error::autograd(
                        node.name(),
                        format!(
                            "a gradient of shape {} on {} arrived for an output of shape {} on {}",
                            g.shape(),
                            g.device(),
                            want.shape,
                            want.device
                        ),
                    ));
                }
                let slots = self
                    .arrived
                    .entry(key(node))
                    .or_insert_with(|| vec![None; node.outputs.len()]);
                add_into(&mut slots[*index], g)
            }
            Edge::Leaf(meta) => {
                let Some(slot) = self.leaves.get_mut(&(Arc::as_ptr(meta) as usize)) else {
                    return Ok(());
                };
                if let Some(g) = g {
                    add_into(&mut slot.sum, g)?;
                }
                slot.pending -= 1;
                if slot.pending > 0 {
                    return Ok(());
                }
                match slot.sum.take() {
                    Some(g) => self.leaf_done(edge, meta, g),
                    None => Ok(()),
                }
            }
        }
    }

    /// A leaf's summed gradient: its hooks run, then it is captured (with targets) or accumulated into its
    /// `.grad`, then its post-accumulate hooks run.
    fn leaf_done(&mut self, edge: &Edge, meta: &Arc<GradMeta>, g: Tensor) -> Result<()> {
        let g = if meta.hooks.is_empty() {
            g
        } else {
            run_hooks(g, meta.hooks.live().iter().map(|f| &**f))?
        };
        match (self.targets, self.target_of(edge)) {
            (Some(_), Some(t)) => add_into(&mut self.captured[t], g),
            (Some(_), None) => Ok(()),
            (None, _) => {
                accumulate(meta, g)?;
                if !meta.post_accumulate.is_empty() {
                    for hook in meta.post_accumulate.live() {
                        hook(meta)?;
                    }
                }
                Ok(())
            }
        }
    }
}
