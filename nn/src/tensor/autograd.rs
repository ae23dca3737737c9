//! The autograd state a tensor carries, and the graph it points into.
//!
//! A tensor that takes part in autograd points to a [`GradMeta`]: whether gradients are wanted, the slot a
//! leaf's gradient accumulates into, and for a tensor an operation computed, the graph [`Node`] that computed
//! it. Tensors no gradient flows through carry `None` and pay nothing. The operations record nodes (in
//! `ops::run`, one place); the backward pass that walks them sits above the operations (`crate::autograd`).
//! Here is only the data: the graph, and whether recording is on (`no_grad`).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use smallvec::SmallVec;

use super::Tensor;
use super::grad_hooks::{AccumulatedFn, GradFn, HookList};
use crate::{DType, Device, Error, Result, Shape};

/// Whether a tensor wants gradients, its accumulated gradient (PyTorch's `.requires_grad`, `.grad`), and for a
/// computed tensor the node that computed it (PyTorch's `.grad_fn`).
#[derive(Debug, Default)]
pub struct GradMeta {
    requires_grad: AtomicBool,
    grad: Mutex<Option<Tensor>>,
    grad_fn: Mutex<Option<(Arc<Node>, usize)>>,
    /// A leaf's gradient hooks, run on its gradient before it is accumulated.
    pub(crate) hooks: HookList<GradFn>,
    /// A leaf's hooks run after its gradient was accumulated.
    pub(crate) post_accumulate: HookList<AccumulatedFn>,
}

impl GradMeta {
    /// A leaf's state with no gradient yet.
    pub fn new(requires_grad: bool) -> GradMeta {
        GradMeta {
            requires_grad: AtomicBool::new(requires_grad),
            ..GradMeta::default()
        }
    }

    /// The state of output `index` of `node`: it requires gradients, and is not a leaf.
    pub(crate) fn computed(node: Arc<Node>, index: usize) -> GradMeta {
        GradMeta {
            requires_grad: AtomicBool::new(true),
            grad_fn: Mutex::new(Some((node, index))),
            ..GradMeta::default()
        }
    }

    /// Whether gradients are wanted.
    pub fn requires_grad(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }

    /// Sets whether gradients are wanted.
    pub fn set_requires_grad(&self, on: bool) {
        self.requires_grad.store(on, Ordering::Relaxed)
    }

    /// The accumulated gradient (a handle sharing its data).
    pub fn grad(&self) -> Option<Tensor> {
        self.grad.lock().clone()
    }

    /// Replaces the gradient.
    pub fn set_grad(&self, grad: Option<Tensor>) {
        *self.grad.lock() = grad;
    }

    /// Whether this state belongs to a leaf: no operation recorded it.
    pub fn is_leaf(&self) -> bool {
        self.grad_fn.lock().is_none()
    }

    /// The node that computed the tensor and which of its outputs the tensor is.
    pub(crate) fn grad_fn(&self) -> Option<(Arc<Node>, usize)> {
        self.grad_fn.lock().clone()
    }

    /// Points this state to output `index` of `node`: the tensor was changed in place by a recorded operation.
    pub(crate) fn set_grad_fn(&self, node: Arc<Node>, index: usize) {
        *self.grad_fn.lock() = Some((node, index));
    }

    /// Where a gradient for this tensor goes: its node's output, or its own slot for a leaf.
    pub(crate) fn edge(self: &Arc<Self>) -> Edge {
        match self.grad_fn() {
            Some((node, index)) => Edge::Node(node, index),
            None => Edge::Leaf(self.clone()),
        }
    }
}

/// Where the gradient of an operation's input goes: output `usize` of the node that computed the input, or the
/// gradient slot of a leaf.
#[derive(Clone, Debug)]
pub(crate) enum Edge {
    Node(Arc<Node>, usize),
    Leaf(Arc<GradMeta>),
}

/// The backward of one recorded operation: the gradients of its inputs from those of its outputs.
pub(crate) trait Backward: Send + Sync {
    /// One gradient per input (`None` for an input that gets none) from one gradient per output (zeros for an
    /// output no gradient reached). `needs[i]` says whether input `i` needs its gradient.
    fn backward(&self, grads: &[Tensor], needs: &[bool]) -> Result<Vec<Option<Tensor>>>;

    /// Whether the backward holds tensors of the forward (PyTorch's saved variables), which a pass that does not
    /// retain the graph frees; one that holds none (only sizes, dimensions, scalars) runs again in a later pass.
    fn saves_tensors(&self) -> bool {
        true
    }

    /// Whether a pass with `create_graph` may run it: run while recording, it computes its gradients with
    /// recorded operations only, from the incoming gradients and its [`Saved`] tensors (which then carry their
    /// history), so its results differentiate again. A pass that reaches a backward that is not refuses,
    /// naming the operation (never a second derivative that silently misses a term).
    fn differentiable(&self) -> bool {
        false
    }
}

impl<F> Backward for F
where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync,
{
    fn backward(&self, grads: &[Tensor], needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        self(grads, needs)
    }
}

/// A backward closure with what the pass needs to know of it ([`Backward::saves_tensors`],
/// [`Backward::differentiable`]); a plain closure saves tensors and is not differentiable.
pub(crate) struct Formula<F> {
    f: F,
    saves_tensors: bool,
    differentiable: bool,
}

impl<F> Formula<F>
where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
{
    /// `f`, which saved tensors and is not differentiable.
    pub(crate) fn new(f: F) -> Formula<F> {
        Formula {
            f,
            saves_tensors: true,
            differentiable: false,
        }
    }

    /// `f` holds no tensor of the forward, only sizes, dimensions or scalars (PyTorch's nodes without saved
    /// variables: `AddBackward0`, the views', `SumBackward0`, `CatBackward0`...): a pass keeps it, so a second
    /// backward through it works without `retain_graph`, as in PyTorch.
    pub(crate) fn saving_nothing(self) -> Formula<F> {
        Formula {
            saves_tensors: false,
            ..self
        }
    }

    /// `f` is built of recorded operations only: `create_graph` may run it ([`Backward::differentiable`]).
    pub(crate) fn differentiable(self) -> Formula<F> {
        Formula {
            differentiable: true,
            ..self
        }
    }

    /// Boxed, for a node.
    pub(crate) fn boxed(self) -> Box<dyn Backward> {
        Box::new(self)
    }
}

impl<F> Backward for Formula<F>
where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync,
{
    fn backward(&self, grads: &[Tensor], needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        (self.f)(grads, needs)
    }

    fn saves_tensors(&self) -> bool {
        self.saves_tensors
    }

    fn differentiable(&self) -> bool {
        self.differentiable
    }
}

/// What a node knows of one of its outputs: enough to make a zero gradient for it.
#[derive(Clone, Debug)]
pub(crate) struct OutputMeta {
    pub(crate) shape: Shape,
    pub(crate) dtype: DType,
    pub(crate) device: Device,
}

impl OutputMeta {
    pub(crate) fn of(t: &Tensor) -> OutputMeta {
        OutputMeta {
            shape: t.shape().clone(),
            dtype: t.dtype(),
            device: t.device(),
        }
    }
}

/// An output whose tensor retains its gradient, and that tensor's state (while it lives).
type Retained = (usize, Weak<GradMeta>);

/// One recorded operation of the graph: its backward (with the tensors it saved), and where each input's
/// gradient goes. A backward that saved tensors is dropped, and the tensors with it, after a backward pass that
/// does not retain the graph; one that saved none stays ([`Backward::saves_tensors`]).
pub struct Node {
    pub(crate) name: &'static str,
    backward: Mutex<Option<Box<dyn Backward>>>,
    pub(crate) inputs: SmallVec<[Option<Edge>; 3]>,
    pub(crate) outputs: SmallVec<[OutputMeta; 1]>,
    /// The outputs whose tensors retain their gradient ([`Tensor::retain_grad`]).
    retained: Mutex<SmallVec<[Retained; 1]>>,
    /// The gradient hooks of the outputs' tensors (PyTorch's tensor pre-hooks of `grad_fn`): output index, hook.
    pub(crate) hooks: HookList<(usize, Arc<GradFn>)>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}Backward", self.name)
    }
}

impl Node {
    /// A node for operation `name` whose inputs' gradients go along `inputs` (`None`: the input needs none).
    pub(crate) fn new(
        name: &'static str,
        backward: Box<dyn Backward>,
        inputs: SmallVec<[Option<Edge>; 3]>,
        outputs: SmallVec<[OutputMeta; 1]>,
    ) -> Node {
        Node {
            name,
            backward: Mutex::new(Some(backward)),
            inputs,
            outputs,
            retained: Mutex::new(SmallVec::new()),
            hooks: HookList::default(),
        }
    }

    /// Keeps the gradient of output `index` in `meta`'s slot after each backward pass.
    pub(crate) fn retain(&self, index: usize, meta: &Arc<GradMeta>) {
        let mut retained = self.retained.lock();
        if !retained
            .iter()
            .any(|(_, m)| std::ptr::eq(m.as_ptr(), Arc::as_ptr(meta)))
        {
            retained.push((index, Arc::downgrade(meta)));
        }
    }

    /// Stops keeping a gradient in `meta`'s slot; whether it was kept (the tensor changed in place: PyTorch
    /// moves `retain_grad` to the node of its new version).
    pub(crate) fn take_retained(&self, meta: &Arc<GradMeta>) -> bool {
        let mut retained = self.retained.lock();
        let before = retained.len();
        retained.retain(|(_, m)| !std::ptr::eq(m.as_ptr(), Arc::as_ptr(meta)));
        retained.len() != before
    }

    /// The live tensors' states that retain an output's gradient, with the output.
    pub(crate) fn retained(&self) -> SmallVec<[(usize, Arc<GradMeta>); 1]> {
        self.retained
            .lock()
            .iter()
            .filter_map(|(i, m)| m.upgrade().map(|m| (*i, m)))
            .collect()
    }

    /// The operation's name, as PyTorch's `grad_fn` prints it (`"mul"` for `MulBackward`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Runs the backward; `None` when it was freed by an earlier backward pass.
    pub(crate) fn run_backward(&self, grads: &[Tensor], needs: &[bool]) -> Option<Result<Vec<Option<Tensor>>>> {
        self.backward.lock().as_ref().map(|b| b.backward(grads, needs))
    }

    /// Whether its backward may run in a recorded pass ([`Backward::differentiable`]); a freed one says yes (running
    /// it then fails, saying it was freed).
    pub(crate) fn differentiable(&self) -> bool {
        self.backward.lock().as_ref().is_none_or(|b| b.differentiable())
    }

    /// Drops the backward and what it saved, if it saved tensors.
    pub(crate) fn release(&self) {
        let mut backward = self.backward.lock();
        if backward.as_ref().is_some_and(|b| b.saves_tensors()) {
            backward.take();
        }
    }
}

/// A tensor a backward saved, with its version then: reading it after an in-place change is an error naming
/// the operation with PyTorch's sentence ("modified by an inplace operation"), never a wrong gradient.
pub(crate) struct Saved {
    tensor: Tensor,
    /// The tensor with its autograd state, for a tensor that required a gradient: what a backward reads while
    /// recording (`create_graph`), so its result differentiates through it too.
    tracked: Option<Tensor>,
    version: u64,
    /// The node that computed it and which of its outputs it is, for the message.
    producer: Option<(&'static str, usize)>,
}

impl Saved {
    /// Saves `t`, an input of the operation being recorded (its autograd state points to earlier nodes only, so
    /// the graph holds no cycle).
    pub(crate) fn new(t: &Tensor) -> Saved {
        Saved {
            tensor: t.detach(),
            tracked: t.requires_grad().then(|| t.clone()),
            version: t.version(),
            producer: t
                .grad_meta()
                .and_then(|m| m.grad_fn())
                .map(|(node, index)| (node.name(), index)),
        }
    }

    /// Saves `y`, output 0 of the operation `op` being recorded (or the tensor an in-place `op` changed), without
    /// its autograd state, which points to the node that holds this (a cycle otherwise).
    pub(crate) fn result(y: &Tensor, op: &'static str) -> Saved {
        Saved {
            tensor: y.detach(),
            tracked: None,
            version: y.version(),
            producer: Some((op, 0)),
        }
    }

    /// The tensor, if unchanged since it was saved by `op`; while recording, with its autograd state.
    pub(crate) fn get(&self, op: &'static str) -> Result<&Tensor> {
        let now = self.tensor.version();
        if now != self.version {
            let t = &self.tensor;
            let producer = self.producer.map_or(String::new(), |(name, index)| {
                format!(", which is output {index} of {},", super::fmt::backward_node_name(name))
            });
            return Err(Error::autograd(
                op,
                format!(
                    "one of the variables needed for gradient computation has been modified by an inplace \
                     operation: [{} {}]{producer} is at version {now}; expected version {} instead. Hint: \
                     change a copy instead, or change it after the backward",
                    super::torch_typename(t.dtype(), t.device()),
                    t.shape(),
                    self.version
                ),
            ));
        }
        match &self.tracked {
            Some(tracked) if is_grad_enabled() => Ok(tracked),
            _ => Ok(&self.tensor),
        }
    }
}

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether operations record the graph on this thread (PyTorch's `torch.is_grad_enabled()`).
///
/// ```
/// assert!(nn::is_grad_enabled());
/// let _guard = nn::no_grad();
/// assert!(!nn::is_grad_enabled());
/// ```
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// Restores the previous grad mode when dropped: the guard of [`no_grad`] and [`enable_grad`].
#[must_use = "the mode holds while the guard lives"]
pub struct GradMode {
    previous: bool,
}

impl Drop for GradMode {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|g| g.set(self.previous));
    }
}

fn set_grad_enabled(on: bool) -> GradMode {
    GradMode {
        previous: GRAD_ENABLED.with(|g| g.replace(on)),
    }
}

/// Stops recording on this thread until the guard drops (PyTorch's `with torch.no_grad():`): results of
/// operations then require no gradient.
///
/// ```
/// use nn::{DType, Tensor};
/// let mut w = Tensor::ones([2], DType::F32);
/// w.set_requires_grad(true).unwrap();
/// {
///     let _guard = nn::no_grad();
///     assert!(!w.mul_scalar(2.0).unwrap().requires_grad());
/// }
/// assert!(w.mul_scalar(2.0).unwrap().requires_grad());
/// ```
pub fn no_grad() -> GradMode {
    set_grad_enabled(false)
}

/// Records again inside a [`no_grad`] scope until the guard drops (PyTorch's `torch.enable_grad()`).
pub fn enable_grad() -> GradMode {
    set_grad_enabled(true)
}

/// Records `y`, made from `x` by the tensor itself (a cast, a move between devices), whose input gradient is
/// `backward(dy)`, made of recorded operations (so differentiable): when `x` requires a gradient and recording is on, `y` points to a new node for `name`.
pub(crate) fn record_unary(
    name: &'static str,
    x: &Tensor,
    y: &mut Tensor,
    backward: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
) {
    let backward = move |grads: &[Tensor], _: &[bool]| Ok(vec![Some(backward(&grads[0])?)]);
    record_node(
        name,
        &[x],
        y,
        Formula::new(backward).saving_nothing().differentiable().boxed(),
    );
}

/// Records `y`, computed from `inputs` outside the graph (a formula whose gradients are written by hand), whose
/// inputs' gradients are `backward(dy, needs)` (one per input; `needs[i]` says whether input `i` needs one):
/// when any input requires a gradient and recording is on, `y` points to a new node for `name`.
pub(crate) fn record_function(
    name: &'static str,
    inputs: &[&Tensor],
    y: &mut Tensor,
    backward: impl Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
) {
    let backward = move |grads: &[Tensor], needs: &[bool]| backward(&grads[0], needs);
    record_node(name, inputs, y, Box::new(backward));
}

/// Records `y`, computed from `inputs` outside the graph, with `backward` (one gradient per input): when any input
/// requires a gradient and recording is on, `y` points to a new node for `name`.
fn record_node(name: &'static str, inputs: &[&Tensor], y: &mut Tensor, backward: Box<dyn Backward>) {
    let edges: SmallVec<_> = inputs.iter().map(|x| x.history_edge()).collect();
    if edges.iter().all(Option::is_none) || !is_grad_enabled() || !y.is_floating_point() {
        return;
    }
    let mut outputs = SmallVec::new();
    outputs.push(OutputMeta::of(y));
    let node = Arc::new(Node::new(name, backward, edges, outputs));
    y.attach(&node, 0);
}

/// Records an identity over `tensors` (each requiring a gradient) as one node named `name`, whose backward is
/// `backward`: each tensor is replaced by a handle to the same data computed by that node. Module backward
/// hooks are such nodes around a module's inputs and outputs (PyTorch's `BackwardHookFunction`).
pub(crate) fn record_identity(name: &'static str, tensors: &mut [&mut Tensor], backward: Box<dyn Backward>) {
    let inputs = tensors.iter().map(|t| t.history_edge()).collect();
    let outputs = tensors.iter().map(|t| OutputMeta::of(t)).collect();
    let node = Arc::new(Node::new(name, backward, inputs, outputs));
    for (index, t) in tensors.iter_mut().enumerate() {
        let mut out = t.detach();
        out.attach(&node, index);
        **t = out;
    }
}
