//! The op layer: every tensor operation defined once.
//!
//! An operation is a type implementing [`Op`]: its host path ([`Op::cpu`]) and its device path ([`Op::device`])
//! sit side by side in one file, and [`run`] is the one place that chooses between them. `run` also does what
//! every device operation needs, so no operation writes it again: it checks that the operands share one
//! device, that the device stores and computes their float dtype, and that the operation passed its parity
//! probe in that dtype there ([`Op::probe`]: run once per process on the device and on the CPU, and
//! compared) before it launches anything.
//!
//! The public face of an operation is a method on [`Tensor`](crate::Tensor) or a function of
//! [`functional`](crate::functional) defined next to it: it checks the arguments (shapes, dtypes, ranks), builds
//! the op and calls [`run`]. `run` is also where autograd records, in one place: when an input requires a
//! gradient and recording is on (no [`no_grad`](crate::no_grad) in force), it asks the op for its backward
//! ([`Op::gradient`]) and attaches a graph node to the outputs. An op that writes into an input is refused
//! where it would need recording; the in-place forms autograd records are in `tensor/in_place.rs`.

pub(crate) mod activation;
pub(crate) mod arith;
mod compare;
pub(crate) mod conv;
pub(crate) mod cumulative;
pub(crate) mod dropout;
pub(crate) mod einsum;
pub(crate) mod elementwise;
mod embedding;
pub(crate) mod float;
pub(crate) mod gather;
pub(crate) mod gemm;
pub(crate) mod index;
pub(crate) mod indexing;
mod integer;
mod layout;
mod linalg;
pub(crate) mod map;
pub(crate) mod norm;
mod operators;
pub(crate) mod optimizer_step;
pub(crate) mod pooling;
pub(crate) mod prelu;
pub(crate) mod rearrange;
pub(crate) mod recurrent;
mod reduce;
mod select;
pub(crate) mod softmax;
pub(crate) mod sort;
mod split;
mod triangular;
mod unary;
pub(crate) mod view;

pub use dropout::{alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout};
pub use embedding::{EmbeddingOptions, embedding, embedding_padded, embedding_with};

use kernels::GpuDevice;
use smallvec::SmallVec;

use std::sync::Arc;

use crate::tensor::autograd::{Backward, Node, OutputMeta, is_grad_enabled};
use crate::tensor::device::{self, probe};
pub(crate) use crate::tensor::in_place::{in_place_recorded, in_place_recorded_without_copy};
use crate::{DType, Device, Error, Result, Tensor};

/// One tensor operation: what it computes on the host and on a device.
///
/// Its fields are the operation's arguments other than tensors (a dimension, a slope, flags); its tensors are
/// the `inputs` of both paths, in an order the operation documents (optional operands, such as a bias, are
/// recorded in its fields and then present or absent in `inputs`). Sizes are read from the inputs, never kept
/// in fields, so the parity probe can run the same op on inputs of its own.
pub(crate) trait Op {
    /// What the operation returns: one tensor, several, or nothing (it writes into one of its inputs).
    type Output: Outputs;

    /// PyTorch's name of the operation: errors name it and probe verdicts are kept under it.
    const NAME: &'static str = "";

    /// The name of this op, for operations whose name depends on their arguments; the default: [`NAME`].
    ///
    /// [`NAME`]: Self::NAME
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// For an op that writes into one of its inputs (returns `()`): which. Its version is bumped after the write.
    const WRITES: usize = 0;

    /// Whether the op takes views as they are (it reads their strides: the view operations). Any other op gets
    /// its inputs' elements in row-major order from [`run`], which copies a view's out once and writes the
    /// input an op writes into back where its elements lie.
    const STRIDED: bool = false;

    /// Whether and how the operation runs on a device; the default: a kernel that computes, checked by the
    /// parity probe ([`DevicePath::Probed`]), so an op with no device kernel says [`DevicePath::None`].
    const DEVICE: DevicePath = DevicePath::Probed;

    /// The operation on host memory; every input is on the CPU.
    fn cpu(&self, inputs: &[&Tensor]) -> Result<Self::Output>;

    /// The operation on `device`'s memory; every input is there, and [`run`] admitted their float dtype. Only
    /// called when [`DEVICE`](Self::DEVICE) is not [`DevicePath::None`].
    fn device(&self, inputs: &[&Tensor], device: &GpuDevice) -> Result<Self::Output> {
        let _ = device;
        Err(cpu_only(self.name(), inputs[0]))
    }

    /// The parity probe's cases, for [`DevicePath::Probed`]: ops of this kind (this one, or ones whose arguments
    /// cover every path of the device kernel) with their inputs, on the CPU, in `dtype`. [`run`] runs them on the
    /// CPU and on the device once per process, and refuses the operation in that dtype there if a result
    /// (outputs, and the inputs an op writes into) differs beyond the dtype's tolerance. The inputs cover large
    /// magnitudes, where a wrong device function shows.
    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>>
    where
        Self: Sized,
    {
        let _ = dtype;
        Err(Error::invalid(self.name(), "this operation has no parity probe"))
    }

    /// The backward autograd records for this op, made after its forward when an input requires a gradient
    /// and recording is on: it captures what it needs (inputs, outputs, arguments) and returns one gradient per
    /// input. `None`: the op has no gradient, and a backward pass that reaches it fails naming it (never a
    /// wrong or silently missing gradient).
    fn gradient(&self, inputs: &[&Tensor], output: &Self::Output) -> Option<Box<dyn Backward>> {
        let _ = (inputs, output);
        None
    }
}

/// Whether and how an [`Op`] runs on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DevicePath {
    /// No device kernel: a device operand is refused with [`Error::UnsupportedOnDevice`] (never a hidden copy
    /// through the host).
    None,
    /// The host path serves device tensors too: it reads only their shapes (a view).
    Anywhere,
    /// A kernel that only moves elements, or computes on integers: exact by construction for every dtype it
    /// takes, not probed.
    Exact,
    /// A kernel that computes: run only in a float dtype the device computes, and probed against the CPU before
    /// its first use in that dtype on that device.
    Probed,
}

/// What an [`Op`] returns: its tensors, for the parity probe and for autograd.
pub(crate) trait Outputs {
    /// Whether the op writes into its inputs instead (`()`).
    const IN_PLACE: bool = false;
    /// The output tensors, in order.
    fn tensors(&self) -> SmallVec<[&Tensor; 3]>;
    /// The output tensors, to attach to the graph.
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]>;
}

impl Outputs for Tensor {
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        SmallVec::from_slice(&[self])
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        let mut v = SmallVec::new();
        v.push(self);
        v
    }
}

impl Outputs for () {
    const IN_PLACE: bool = true;
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        SmallVec::new()
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        SmallVec::new()
    }
}

impl Outputs for (Tensor, Tensor) {
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        SmallVec::from_slice(&[&self.0, &self.1])
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        SmallVec::from_iter([&mut self.0, &mut self.1])
    }
}

impl Outputs for Vec<Tensor> {
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        self.iter().collect()
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        self.iter_mut().collect()
    }
}

impl Outputs for (Tensor, Tensor, Tensor) {
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        SmallVec::from_slice(&[&self.0, &self.1, &self.2])
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        SmallVec::from_iter([&mut self.0, &mut self.1, &mut self.2])
    }
}

/// Runs `op` on `inputs` where they are: on the CPU, or on their device after the checks every device
/// operation needs (one device for all operands; a float dtype the device stores and computes; the
/// operation's parity probe passed in that dtype there). The one place where the CPU-or-device choice is made.
#[inline]
pub(crate) fn run<O: Op>(op: &O, inputs: &[&Tensor]) -> Result<O::Output> {
    if !inputs.iter().any(|t| t.requires_grad()) || !is_grad_enabled() {
        return dispatch(op, inputs);
    }
    if <O::Output as Outputs>::IN_PLACE {
        return Err(Error::autograd(
            op.name(),
            "this in-place operation on a tensor that requires grad is not recorded; use its out-of-place form \
             (or run it under nn::no_grad())",
        ));
    }
    let mut output = dispatch(op, inputs)?;
    record(op, inputs, &mut output);
    Ok(output)
}

/// Records `op` onto the graph: a node with its backward and an edge per input that requires a gradient,
/// and its float outputs pointing to it.
#[cold]
fn record<O: Op>(op: &O, inputs: &[&Tensor], output: &mut O::Output) {
    let name = op.name();
    let backward = op.gradient(inputs, output).unwrap_or_else(|| {
        Box::new(move |_: &[Tensor], _: &[bool]| -> Result<Vec<Option<Tensor>>> {
            Err(Error::autograd(name, "this operation has no gradient"))
        })
    });
    let edges = inputs.iter().map(|t| t.history_edge()).collect();
    let metas = output.tensors().iter().map(|t| OutputMeta::of(t)).collect();
    let node = Arc::new(Node::new(name, backward, edges, metas));
    for (index, t) in output.tensors_mut().into_iter().enumerate() {
        if t.is_floating_point() {
            t.attach(&node, index);
        }
    }
}

/// [`run`] without recording; an op that writes into an input bumps its version once, as PyTorch's in-place
/// ops do (a host write already bumped it; a device kernel's did not).
#[inline]
fn dispatch<O: Op>(op: &O, inputs: &[&Tensor]) -> Result<O::Output> {
    let written = <O::Output as Outputs>::IN_PLACE.then(|| (inputs[O::WRITES], inputs[O::WRITES].version()));
    let output = compute(op, inputs)?;
    if let Some((target, before)) = written
        && target.version() == before
    {
        target.bump_version();
    }
    Ok(output)
}

/// The op on its inputs' elements in row-major order: views whose elements lie elsewhere in their storage are
/// read into buffers of their own (one copy for a view passed twice), and the input an op writes into is then
/// written back into its view.
#[inline]
fn compute<O: Op>(op: &O, inputs: &[&Tensor]) -> Result<O::Output> {
    if O::STRIDED || inputs.iter().all(|t| t.is_dense()) {
        return compute_dense(op, inputs);
    }
    let writes = <O::Output as Outputs>::IN_PLACE.then(|| inputs[O::WRITES]);
    if let Some(target) = writes {
        target.check_writable(op.name())?;
    }
    let mut dense: SmallVec<[Tensor; 4]> = SmallVec::new();
    for (i, t) in inputs.iter().enumerate() {
        let earlier = inputs[..i].iter().position(|u| same_view(t, u));
        dense.push(match earlier {
            Some(j) => dense[j].clone(),
            None => t.dense()?,
        });
    }
    let refs: SmallVec<[&Tensor; 4]> = dense.iter().collect();
    let output = compute_dense(op, &refs)?;
    if let Some(target) = writes.filter(|t| !t.is_dense()) {
        target.write_back(&dense[O::WRITES])?;
    }
    Ok(output)
}

/// Whether two handles see the same elements of one storage in the same order.
fn same_view(a: &Tensor, b: &Tensor) -> bool {
    a.shares_storage(b)
        && a.shape() == b.shape()
        && a.strides() == b.strides()
        && a.storage_offset() == b.storage_offset()
}

/// [`compute`] on inputs whose elements the op reads as they lie: the CPU-or-device choice.
#[inline]
fn compute_dense<O: Op>(op: &O, inputs: &[&Tensor]) -> Result<O::Output> {
    let on = same_device(op.name(), inputs)?;
    if on.is_cpu() {
        return op.cpu(inputs);
    }
    match O::DEVICE {
        DevicePath::None => Err(cpu_only(op.name(), inputs[0])),
        DevicePath::Anywhere => op.cpu(inputs),
        DevicePath::Exact => op.device(inputs, &device::open(on)?),
        DevicePath::Probed => {
            let gpu = device::open(on)?;
            let mut probe_dtype = None;
            for t in inputs.iter().filter(|t| t.is_floating_point()) {
                let dtype = device::float_type(op.name(), t.dtype())?;
                gpu.check_dtype(op.name(), dtype)
                    .map_err(|e| t.kernel_error(op.name(), e))?;
                probe_dtype.get_or_insert(t.dtype());
            }
            if let Some(dtype) = probe_dtype {
                verify(op, on, &gpu, dtype)?;
            }
            op.device(inputs, &gpu)
        }
    }
}

/// The refusal of an operation that has no device kernel, for its operand `x` on a device.
pub(crate) fn cpu_only(op: &'static str, x: &Tensor) -> Error {
    Error::UnsupportedOnDevice {
        op,
        dtype: x.dtype(),
        device: x.device(),
        reason: "this operation runs on the CPU only; move the tensor with .cpu() first".into(),
    }
}

/// The device every input is on, or an error naming the first two that differ.
#[inline]
fn same_device(op: &'static str, inputs: &[&Tensor]) -> Result<Device> {
    let Some(first) = inputs.first() else {
        return Ok(Device::Cpu);
    };
    let on = first.device();
    match inputs.iter().find(|t| t.device() != on) {
        Some(other) => Err(Error::DeviceMismatch {
            op,
            lhs: on,
            rhs: other.device(),
        }),
        None => Ok(on),
    }
}

/// Fails unless `op` in `dtype` passed its parity probe on `on` (run now on first use): its probe case through
/// both paths, outputs and written inputs compared.
fn verify<O: Op>(op: &O, on: Device, gpu: &GpuDevice, dtype: DType) -> Result<()> {
    probe::ensure(on, op.name(), dtype, || {
        let mut pairs: Vec<(Tensor, Tensor)> = Vec::new();
        for (case, host) in op.probe(dtype)? {
            let moved = host.iter().map(|t| t.to_device(on)).collect::<Result<Vec<_>>>()?;
            let want = case.cpu(&host.iter().collect::<Vec<_>>())?;
            let got = case.device(&moved.iter().collect::<Vec<_>>(), gpu)?;
            pairs.extend(
                got.tensors()
                    .into_iter()
                    .zip(want.tensors())
                    .map(|(g, w)| (g.clone(), w.clone())),
            );
            pairs.extend(moved.into_iter().zip(host));
        }
        probe::measure(&pairs)
    })
}

/// Checks that every tensor of `tensors` has `like`'s dtype, naming `op` and the first that differs.
pub(crate) fn same_dtype(op: &'static str, like: &Tensor, tensors: &[Option<&Tensor>]) -> Result<()> {
    match tensors.iter().flatten().find(|t| t.dtype() != like.dtype()) {
        Some(t) => Err(Error::DTypeMismatch {
            op,
            expected: like.dtype(),
            got: t.dtype(),
        }),
        None => Ok(()),
    }
}

/// Checks that `other` has `x`'s shape and dtype: an output written into, or a backward's incoming gradient
/// (`what` says which, for the error).
pub(crate) fn check_like(op: &'static str, x: &Tensor, other: &Tensor, what: &'static str) -> Result<()> {
    Error::check_shapes(op, x.shape(), other.shape(), what)?;
    same_dtype(op, x, &[Some(other)])
}

/// What [`check_like`] says of a backward's incoming gradient.
pub(crate) const GRADIENT: &str = "a gradient of the input's shape";
/// What [`check_like`] says of an output written into.
pub(crate) const OUTPUT: &str = "an output of the input's shape";

/// A CPU tensor of `shape` in `dtype` holding deterministic values in `[-1.5, 1.5]` (`phase` makes different
/// operands): a probe operand.
pub(crate) fn probe_tensor(shape: &[usize], phase: f64, dtype: DType) -> Result<Tensor> {
    Tensor::from_vec(probe::wave(shape.iter().product(), phase), shape.to_vec())?.to_dtype(dtype)
}

/// `inputs` with the tensors of `optional` that are present appended: the input list of an op whose last
/// operands are optional (a bias).
pub(crate) fn with_optional<'a>(inputs: &[&'a Tensor], optional: &[Option<&'a Tensor>]) -> SmallVec<[&'a Tensor; 6]> {
    inputs
        .iter()
        .copied()
        .chain(optional.iter().flatten().copied())
        .collect()
}
