//! The LSTM's backward on the CPU as one recorded node, PyTorch's formulas: the fused forward keeps each step's
//! activated gates and cell state ([`Trace`]), and backpropagation through time runs over them with one matrix
//! product per step for the recurrent part, then one per cell for each weight's gradient and for the input's.
//!
//! Per step, with `i, f, g, o` the activated gates and `c` the new cell state:
//! `dc += dh·o·(1 − tanh²c)`, then the gates' pre-activations get `dc·g·i(1−i)`, `dc·c₋₁·f(1−f)`,
//! `dc·i·(1−g²)`, `dh·tanh(c)·o(1−o)`, the previous cell state `dc·f` and the previous hidden state
//! `d(gates)·W_hh`.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use kernels::{GpuDevice, Real};
use smallvec::SmallVec;

use super::{Lstm, LstmSizes, gate_parts, outputs, run_cpu_typed};
use crate::ops::float::{Float, with_float_type};
use crate::ops::gemm::Mat;
use crate::ops::map::multiversion;
use crate::ops::{DevicePath, Op, Outputs, probe_tensor, run};
use crate::tensor::autograd::{Backward, Saved};
use crate::tensor::device::float_type;
use crate::{DType, Error, Result, Shape, Tensor};

/// What the fused forward keeps for the backward, computed in `T`.
pub(crate) struct Trace<T> {
    /// Per cell (layer-major, then direction): each step's activated gates `(seq, batch, 4·hid)`, time order.
    gates: Vec<Vec<T>>,
    /// Per cell: each step's cell state `(seq, batch, hid)`, time order.
    cells: Vec<Vec<T>>,
    /// Per layer but the last: its output `(seq, batch, dirs·hid)` before dropout, and the dropout mask.
    between: Vec<(Vec<T>, Option<Vec<T>>)>,
    /// The last layer's output.
    last: Vec<T>,
}

impl<T: Float> Trace<T> {
    fn new() -> Trace<T> {
        Trace {
            gates: Vec::new(),
            cells: Vec::new(),
            between: Vec::new(),
            last: Vec::new(),
        }
    }

    /// Room for the next cell's gates and cell states, for the forward to fill.
    pub(super) fn cell(&mut self, seq: usize, batch: usize, hid: usize) -> (&mut [T], &mut [T]) {
        let n = self.gates.len();
        self.gates.push(vec![T::ZERO; seq * batch * 4 * hid]);
        self.cells.push(vec![T::ZERO; seq * batch * hid]);
        (&mut self.gates[n], &mut self.cells[n])
    }

    /// A layer below the last one: its output before dropout, and the mask dropout multiplied it by.
    pub(super) fn layer(&mut self, output: Vec<T>, mask: Option<Vec<T>>) {
        self.between.push((output, mask));
    }

    /// The last layer's output.
    pub(super) fn last_output(&mut self, output: &[T]) {
        self.last = output.to_vec();
    }
}

/// What the fused forward on a device keeps for the backward: [`kernels::lstm::LstmTrace`] as tensors on that
/// device, in the input's dtype.
pub(super) struct DeviceTrace {
    /// Per cell (layer-major, then direction): each step's activated gates `(seq, batch, 4·hid)`, time order.
    pub(super) acts: Vec<Tensor>,
    /// Per cell: each step's cell state `(seq, batch, hid)`, time order.
    pub(super) cells: Vec<Tensor>,
    /// Per layer: its output `(seq, batch, dirs·hid)` before dropout (the last one a copy, unchanged by in-place
    /// changes to the returned output).
    pub(super) outputs: Vec<Tensor>,
    /// Dropout between layers: none, or the mask each layer but the last was multiplied by.
    pub(super) masks: Vec<Tensor>,
}

/// [`Lstm`] when a gradient is wanted: the fused recurrence, keeping its [`Trace`] (on the CPU) or
/// [`DeviceTrace`] (on a device) for a backward that runs as one node (instead of the recorded recurrence's dozen
/// nodes per step).
pub(super) struct LstmTrain(pub(super) Lstm);

/// [`LstmTrain`]'s outputs: [`Lstm`]'s three tensors, and the trace the backward reads.
pub(super) struct Traced {
    pub(super) out: Tensor,
    pub(super) h_n: Tensor,
    pub(super) c_n: Tensor,
    trace: Arc<dyn Any + Send + Sync>,
}

impl Outputs for Traced {
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        SmallVec::from_slice(&[&self.out, &self.h_n, &self.c_n])
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        SmallVec::from_iter([&mut self.out, &mut self.h_n, &mut self.c_n])
    }
}

impl Op for LstmTrain {
    type Output = Traced;
    const NAME: &'static str = "lstm";
    /// The same kernel as [`Lstm`]'s, writing its trace too: [`Lstm`]'s probe and verdict.
    const DEVICE: DevicePath = DevicePath::Probed;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Traced> {
        let (sizes, dtype) = (self.0.sizes(inputs), inputs[0].dtype());
        with_float_type!(dtype, T => {
            let mut trace = Trace::<T>::new();
            let cells = self.0.cells(inputs);
            let (out, h_n, c_n) = run_cpu_typed(inputs, &cells, sizes, self.0.dropout, Some(&mut trace))?;
            let (out, h_n, c_n) = outputs(out, h_n, c_n, sizes, dtype)?;
            Ok(Traced { out, h_n, c_n, trace: Arc::new(trace) })
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Traced> {
        let (out, h_n, c_n, trace) = self.0.on_device(inputs, true)?;
        let trace = trace.ok_or_else(|| Error::invalid("lstm", "the fused forward kept no trace"))?;
        Ok(Traced {
            out,
            h_n,
            c_n,
            trace: Arc::new(trace),
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let cases = self.0.probe(dtype)?;
        Ok(cases
            .into_iter()
            .map(|(case, inputs)| (LstmTrain(case), inputs))
            .collect())
    }

    fn gradient(&self, inputs: &[&Tensor], output: &Traced) -> Option<Box<dyn Backward>> {
        let saved: Vec<Saved> = inputs.iter().map(|t| Saved::new(t)).collect();
        let (lstm, sizes, dtype) = (self.0, self.0.sizes(inputs), inputs[0].dtype());
        let trace = output.trace.clone();
        Some(Box::new(move |grads: &[Tensor], needs: &[bool]| {
            let inputs = saved.iter().map(|s| s.get("lstm")).collect::<Result<Vec<_>>>()?;
            if let Some(trace) = trace.downcast_ref::<DeviceTrace>() {
                return on_device(&lstm, sizes, trace, &inputs, grads, needs);
            }
            with_float_type!(dtype, T => {
                let trace = trace
                    .downcast_ref::<Trace<T>>()
                    .ok_or_else(|| Error::autograd("lstm", "the forward kept its trace in another float type"))?;
                through_layers(&lstm, sizes, trace, &inputs, grads, needs)
            })
        }))
    }
}

/// The gradients of every input (`[x, h0, c0, ..cells' weights]`, those `needs` asks for) from those of the
/// outputs `(out, h_n, c_n)`, layer by layer from the last.
fn through_layers<T: Float>(
    lstm: &Lstm,
    sizes: LstmSizes,
    trace: &Trace<T>,
    inputs: &[&Tensor],
    grads: &[Tensor],
    needs: &[bool],
) -> Result<Vec<Option<Tensor>>> {
    let op = "lstm";
    let LstmSizes {
        seq,
        batch,
        input_size,
        hidden: hid,
        layers,
        dirs,
    } = sizes;
    let (rows, g4, state) = (seq * batch, 4 * hid, batch * hid);
    let x = inputs[0].float_ref::<T>(op)?;
    let (h0, c0) = (inputs[1].float_ref::<T>(op)?, inputs[2].float_ref::<T>(op)?);
    let (dh_n, dc_n) = (grads[1].float_ref::<T>(op)?, grads[2].float_ref::<T>(op)?);
    let mut d_out: Vec<T> = grads[0].float_ref::<T>(op)?.to_vec();
    let (mut dh0, mut dc0) = (
        vec![T::ZERO; layers * dirs * state],
        vec![T::ZERO; layers * dirs * state],
    );
    let mut result: Vec<Option<Tensor>> = vec![None; inputs.len()];
    let as_input =
        |values: Vec<T>, i: usize| Tensor::from_computed(values, inputs[i].shape().clone(), inputs[i].dtype());
    let cells = lstm.cells(inputs);
    let per_cell = if lstm.bias { 4 } else { 2 };
    let missing = || Error::invalid(op, "a cell lacks its weights");
    for layer in (0..layers).rev() {
        let in_size = if layer == 0 { input_size } else { dirs * hid };
        let layer_in: Cow<[T]> = match layer.checked_sub(1).map(|below| &trace.between[below]) {
            None => Cow::Borrowed(&x),
            Some((out, None)) => Cow::Borrowed(out),
            Some((out, Some(mask))) => Cow::Owned(out.iter().zip(mask).map(|(&v, &m)| v * m).collect()),
        };
        let layer_out: &[T] = if layer + 1 == layers {
            &trace.last
        } else {
            &trace.between[layer].0
        };
        let wants_in = layer > 0 || needs[0];
        let mut d_in = vec![T::ZERO; if wants_in { rows * in_size } else { 0 }];
        for d in 0..dirs {
            let cell = layer * dirs + d;
            let [w_ih, w_hh, ..] = cells[cell];
            let w_ih = w_ih.ok_or_else(missing)?.float_ref::<T>(op)?;
            let w_hh = w_hh.ok_or_else(missing)?.float_ref::<T>(op)?;
            let at = cell * state..(cell + 1) * state;
            let path = Path {
                batch,
                hid,
                reverse: d == 1,
            };
            let (da, dh, dc) = path.through_time(
                (&trace.gates[cell], &trace.cells[cell], &c0[at.clone()]),
                (&d_out, d, dirs),
                (&dh_n[at.clone()], &dc_n[at.clone()]),
                &w_hh,
            );
            dh0[at.clone()].copy_from_slice(&dh);
            dc0[at.clone()].copy_from_slice(&dc);
            let first = 3 + cell * per_cell;
            let d_gates = Mat::row_major(&da, rows, g4);
            if needs[first] {
                let mut dw = vec![T::ZERO; g4 * in_size];
                T::gemm(
                    T::ONE,
                    d_gates.t(),
                    Mat::row_major(&layer_in, rows, in_size),
                    T::ZERO,
                    &mut dw,
                );
                result[first] = Some(as_input(dw, first)?);
            }
            if needs[first + 1] {
                let h_prev = path.previous_states(layer_out, (d, dirs), &h0[at.clone()]);
                let mut dw = vec![T::ZERO; g4 * hid];
                T::gemm(
                    T::ONE,
                    d_gates.t(),
                    Mat::row_major(&h_prev, rows, hid),
                    T::ZERO,
                    &mut dw,
                );
                result[first + 1] = Some(as_input(dw, first + 1)?);
            }
            if lstm.bias && (needs[first + 2] || needs[first + 3]) {
                let mut db = vec![T::ZERO; g4];
                for row in da.chunks(g4) {
                    for (s, &v) in db.iter_mut().zip(row) {
                        *s = *s + v;
                    }
                }
                result[first + 3] = needs[first + 3].then(|| as_input(db.clone(), first + 3)).transpose()?;
                result[first + 2] = needs[first + 2].then(|| as_input(db, first + 2)).transpose()?;
            }
            if wants_in {
                T::gemm(T::ONE, d_gates, Mat::row_major(&w_ih, g4, in_size), T::ONE, &mut d_in);
            }
        }
        match layer.checked_sub(1).map(|below| &trace.between[below].1) {
            Some(Some(mask)) => d_out = d_in.iter().zip(mask).map(|(&g, &m)| g * m).collect(),
            Some(None) => d_out = d_in,
            None if needs[0] => result[0] = Some(as_input(d_in, 0)?),
            None => {}
        }
    }
    result[1] = needs[1].then(|| as_input(dh0, 1)).transpose()?;
    result[2] = needs[2].then(|| as_input(dc0, 2)).transpose()?;
    Ok(result)
}

/// [`through_layers`] on a device: per cell one [`ThroughTime`] (two launches per step), then each weight's
/// gradient and the layer input's as matrix products over all the steps at once.
fn on_device(
    lstm: &Lstm,
    sizes: LstmSizes,
    trace: &DeviceTrace,
    inputs: &[&Tensor],
    grads: &[Tensor],
    needs: &[bool],
) -> Result<Vec<Option<Tensor>>> {
    let op = "lstm";
    let (seq, batch, hid, layers, dirs) = (sizes.seq, sizes.batch, sizes.hidden, sizes.layers, sizes.dirs);
    let (rows, g4) = (seq * batch, 4 * hid);
    let (h0, c0) = (inputs[1], inputs[2]);
    let slot = |t: &Tensor, cell: usize| t.narrow(0, cell, 1)?.reshape([batch, hid]);
    let mut d_out = grads[0].clone();
    let (mut dh0, mut dc0) = (vec![None; layers * dirs], vec![None; layers * dirs]);
    let mut result: Vec<Option<Tensor>> = vec![None; inputs.len()];
    let cells = lstm.cells(inputs);
    let per_cell = if lstm.bias { 4 } else { 2 };
    let missing = || Error::invalid(op, "a cell lacks its weights");
    for layer in (0..layers).rev() {
        let in_size = if layer == 0 { sizes.input_size } else { dirs * hid };
        let layer_in = match (layer, trace.masks.get(layer.wrapping_sub(1))) {
            (0, _) => inputs[0].clone(),
            (_, Some(mask)) => trace.outputs[layer - 1].mul(mask)?,
            (_, None) => trace.outputs[layer - 1].clone(),
        }
        .reshape([rows, in_size])?;
        let layer_out = &trace.outputs[layer];
        let wants_in = layer > 0 || needs[0];
        let mut d_in: Option<Tensor> = None;
        for d in 0..dirs {
            let cell = layer * dirs + d;
            let [w_ih, w_hh, ..] = cells[cell];
            let (w_ih, w_hh) = (w_ih.ok_or_else(missing)?, w_hh.ok_or_else(missing)?);
            let step = ThroughTime { d, dirs };
            let cell_inputs = [
                &trace.acts[cell],
                &trace.cells[cell],
                &slot(c0, cell)?,
                &d_out,
                &slot(&grads[1], cell)?,
                &slot(&grads[2], cell)?,
                w_hh,
            ];
            let (da, dh, dc) = run(&step, &cell_inputs)?;
            dh0[cell] = Some(dh.unsqueeze(0)?);
            dc0[cell] = Some(dc.unsqueeze(0)?);
            let first = 3 + cell * per_cell;
            let d_gates = da.reshape([rows, g4])?;
            let d_gates_t = (needs[first] || needs[first + 1])
                .then(|| d_gates.transpose(0, 1))
                .transpose()?;
            if let (true, Some(dt)) = (needs[first], &d_gates_t) {
                result[first] = Some(dt.matmul(&layer_in)?);
            }
            if let (true, Some(dt)) = (needs[first + 1], &d_gates_t) {
                // The hidden state each step started from: `h0` for the first step the forward ran, else the
                // previous step's output.
                let own = layer_out.narrow(2, d * hid, hid)?;
                let h0 = slot(h0, cell)?.unsqueeze(0)?;
                let h_prev = match (seq, d) {
                    (1, _) => h0,
                    (_, 0) => Tensor::cat(&[&h0, &own.narrow(0, 0, seq - 1)?], 0)?,
                    _ => Tensor::cat(&[&own.narrow(0, 1, seq - 1)?, &h0], 0)?,
                };
                result[first + 1] = Some(dt.matmul(&h_prev.reshape([rows, hid])?)?);
            }
            if lstm.bias && (needs[first + 2] || needs[first + 3]) {
                let db = d_gates.sum_dims(&[0], false)?;
                result[first + 3] = needs[first + 3].then(|| db.clone());
                result[first + 2] = needs[first + 2].then_some(db);
            }
            if wants_in {
                let part = d_gates.matmul(w_ih)?;
                d_in = Some(match d_in {
                    Some(sum) => sum.add(&part)?,
                    None => part,
                });
            }
        }
        let d_in = d_in.map(|d| d.reshape([seq, batch, in_size])).transpose()?;
        match (layer, d_in) {
            (0, d_in) => result[0] = d_in.filter(|_| needs[0]),
            (_, Some(d_in)) => {
                d_out = match trace.masks.get(layer - 1) {
                    Some(mask) => d_in.mul(mask)?,
                    None => d_in,
                }
            }
            (_, None) => return Err(Error::autograd(op, "a layer's input gradient was not computed")),
        }
    }
    let joined = |v: Vec<Option<Tensor>>| -> Result<Tensor> {
        let parts = v.into_iter().collect::<Option<Vec<_>>>().ok_or_else(missing)?;
        Tensor::cat(&parts.iter().collect::<Vec<_>>(), 0)
    };
    result[1] = needs[1].then(|| joined(dh0)).transpose()?;
    result[2] = needs[2].then(|| joined(dc0)).transpose()?;
    Ok(result)
}

/// One cell's backward through time ([`Path::through_time`]) as an op, so that it runs where its operands are
/// and its device kernel ([`kernels::lstm::through_time`]) is probed against the host's: inputs `[activated
/// gates (seq, batch, 4·hid), cell states (seq, batch, hid), c0 (batch, hid), the layer output's gradient (seq,
/// batch, dirs·hid), dh_n, dc_n (batch, hid), w_hh (4·hid, hid)]`, outputs `(the gates' pre-activation
/// gradients (seq, batch, 4·hid), dh0, dc0)`.
#[derive(Clone, Copy)]
struct ThroughTime {
    /// This cell's direction, of `dirs` (1: backwards in time).
    d: usize,
    dirs: usize,
}

impl ThroughTime {
    /// `(seq, batch, hid)` of its inputs.
    fn sizes(inputs: &[&Tensor]) -> (usize, usize, usize) {
        let cells = inputs[1].shape();
        (cells[0], cells[1], cells[2])
    }
}

impl Op for ThroughTime {
    type Output = (Tensor, Tensor, Tensor);
    const NAME: &'static str = "lstm_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Self::Output> {
        let op = Self::NAME;
        let (seq, batch, hid) = Self::sizes(inputs);
        let path = Path {
            batch,
            hid,
            reverse: self.d == 1,
        };
        let dtype = inputs[0].dtype();
        with_float_type!(dtype, T => {
            let [acts, cells, c0, d_out, dh_n, dc_n, w_hh] = [0, 1, 2, 3, 4, 5, 6].map(|i| inputs[i].float_ref::<T>(op));
            let (da, dh, dc) = path.through_time(
                (&acts?, &cells?, &c0?),
                (&d_out?, self.d, self.dirs),
                (&dh_n?, &dc_n?),
                &w_hh?,
            );
            Ok((
                Tensor::from_computed(da, Shape::from([seq, batch, 4 * hid]), dtype)?,
                Tensor::from_computed(dh, Shape::from([batch, hid]), dtype)?,
                Tensor::from_computed(dc, Shape::from([batch, hid]), dtype)?,
            ))
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Self::Output> {
        let op = Self::NAME;
        let (seq, batch, hid) = Self::sizes(inputs);
        let like = inputs[3];
        let buffers = inputs.iter().map(|t| t.gpu_buffer(op)).collect::<Result<Vec<_>>>()?;
        let spec = kernels::lstm::ThroughTime {
            seq,
            batch,
            hidden: hid,
            dirs: self.dirs,
            direction: self.d,
        };
        let (da, dh, dc) = kernels::lstm::through_time(
            float_type(op, like.dtype())?,
            &spec,
            &buffers[0],
            &buffers[1],
            &buffers[2],
            &buffers[3],
            [&buffers[4], &buffers[5]],
            &buffers[6],
        )
        .map_err(|e| like.kernel_error(op, e))?;
        Ok((
            like.with_gpu(da, [seq, batch, 4 * hid].into()),
            like.with_gpu(dh, [batch, hid].into()),
            like.with_gpu(dc, [batch, hid].into()),
        ))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Three steps of two sequences, four units, the second of two directions (backwards in time); gates in
        // (0, 1) and (-1, 1) as the forward leaves them.
        let (seq, batch, hid, dirs) = (3, 2, 4, 2);
        let gates = probe_tensor(&[seq, batch, 4 * hid], 0.0, dtype)?.mul_scalar(0.6)?;
        let inputs = vec![
            gates,
            probe_tensor(&[seq, batch, hid], 1.0, dtype)?,
            probe_tensor(&[batch, hid], 2.0, dtype)?,
            probe_tensor(&[seq, batch, dirs * hid], 3.0, dtype)?,
            probe_tensor(&[batch, hid], 4.0, dtype)?,
            probe_tensor(&[batch, hid], 5.0, dtype)?,
            probe_tensor(&[4 * hid, hid], 6.0, dtype)?,
        ];
        let case = |d| ThroughTime { d, dirs };
        Ok(vec![(case(1), inputs.clone()), (case(0), inputs)])
    }
}

/// One cell's walk through time: `batch` rows of `hid` units, backwards in time when `reverse`.
#[derive(Clone, Copy)]
struct Path {
    batch: usize,
    hid: usize,
    reverse: bool,
}

impl Path {
    /// The time step the forward ran `step`-th.
    fn time(&self, seq: usize, step: usize) -> usize {
        if self.reverse { seq - 1 - step } else { step }
    }

    /// Backpropagation through time for one cell, from its trace (`gates`, `cells`, and `c0`), its part of the
    /// layer output's gradient (`d_out` `(seq, batch, dirs·hid)`, direction `d`), and the gradients of its last
    /// state. Returns the gradient of every step's gate pre-activations `(seq, batch, 4·hid)` (time order), and
    /// those of `h0` and `c0`.
    #[allow(clippy::type_complexity)]
    fn through_time<T: Float>(
        &self,
        (gates, cells, c0): (&[T], &[T], &[T]),
        (d_out, d, dirs): (&[T], usize, usize),
        (dh_n, dc_n): (&[T], &[T]),
        w_hh: &[T],
    ) -> (Vec<T>, Vec<T>, Vec<T>) {
        let Path { batch, hid, .. } = *self;
        let (g4, state) = (4 * hid, batch * hid);
        let seq = cells.len() / state.max(1);
        let (mut dh, mut dc) = (dh_n.to_vec(), dc_n.to_vec());
        let mut da = vec![T::ZERO; seq * batch * g4];
        for step in (0..seq).rev() {
            let t = self.time(seq, step);
            for (bi, dh) in dh.chunks_mut(hid).enumerate() {
                let from = (t * batch + bi) * dirs * hid + d * hid;
                for (s, &g) in dh.iter_mut().zip(&d_out[from..from + hid]) {
                    *s = *s + g;
                }
            }
            let c_prev = match step {
                0 => c0,
                _ => {
                    let before = self.time(seq, step - 1);
                    &cells[before * state..(before + 1) * state]
                }
            };
            let da_t = &mut da[t * batch * g4..(t + 1) * batch * g4];
            cell_backward(
                &gates[t * batch * g4..(t + 1) * batch * g4],
                &cells[t * state..(t + 1) * state],
                c_prev,
                &dh,
                &mut dc,
                da_t,
                hid,
            );
            T::gemm(
                T::ONE,
                Mat::row_major(da_t, batch, g4),
                Mat::row_major(w_hh, g4, hid),
                T::ZERO,
                &mut dh,
            );
        }
        (da, dh, dc)
    }

    /// The hidden state each step started from, `(seq, batch, hid)` in time order: `h0` for the first step the
    /// forward ran, else the previous step's output (read from `layer_out`, direction `d` of `dirs`).
    fn previous_states<T: Float>(&self, layer_out: &[T], (d, dirs): (usize, usize), h0: &[T]) -> Vec<T> {
        let Path { batch, hid, .. } = *self;
        let seq = layer_out.len() / (batch * dirs * hid).max(1);
        let mut h_prev = vec![T::ZERO; seq * batch * hid];
        for step in 0..seq {
            let t = self.time(seq, step);
            let rows = h_prev[t * batch * hid..(t + 1) * batch * hid].chunks_mut(hid);
            for (bi, row) in rows.enumerate() {
                if step == 0 {
                    row.copy_from_slice(&h0[bi * hid..(bi + 1) * hid]);
                } else {
                    let from = (self.time(seq, step - 1) * batch + bi) * dirs * hid + d * hid;
                    row.copy_from_slice(&layer_out[from..from + hid]);
                }
            }
        }
        h_prev
    }
}

multiversion! {
    fn cell_backward<R: Real>(acts: &[R], cells: &[R], c_prev: &[R], dh: &[R], dc: &mut [R], da: &mut [R], hid: usize) {
        // Slices zipped, not indexed, so the loop vectorises.
        let rows = acts.chunks(4 * hid).zip(cells.chunks(hid)).zip(c_prev.chunks(hid));
        let grads = dh.chunks(hid).zip(dc.chunks_mut(hid)).zip(da.chunks_mut(4 * hid));
        for (((a, c), cp), ((dh, dc), da)) in rows.zip(grads) {
            let [ai, af, ag, ao] = gate_parts(a, hid);
            let (di, rest) = da.split_at_mut(hid);
            let (df, rest) = rest.split_at_mut(hid);
            let (dg, d_o) = rest.split_at_mut(hid);
            let gates = ai.iter().zip(af).zip(ag).zip(ao);
            let state = c.iter().zip(cp).zip(dh).zip(dc.iter_mut());
            let out = di.iter_mut().zip(df.iter_mut()).zip(dg.iter_mut()).zip(d_o.iter_mut());
            for (((((&i, &f), &g), &o), (((&c, &cp), &dh), dc)), (((di, df), dg), d_o)) in gates.zip(state).zip(out) {
                let tc = c.tanh();
                let dcv = *dc + dh * o * (R::ONE - tc * tc);
                *di = dcv * g * i * (R::ONE - i);
                *df = dcv * cp * f * (R::ONE - f);
                *dg = dcv * i * (R::ONE - g * g);
                *d_o = dh * tc * o * (R::ONE - o);
                *dc = dcv * f;
            }
        }
    }
}
