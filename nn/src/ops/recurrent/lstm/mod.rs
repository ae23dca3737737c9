//! The LSTM recurrence, PyTorch's gate order (i, f, g, o): on the CPU one matrix product for every step's input
//! projections, then per step one for the recurrent part and a vectorised pointwise cell update; on a device one
//! fused kernel per time step, or the step as separate operations where a cell is too wide for the fused kernel
//! (`kernels::lstm::fused_step_fits`).
//!
//! With a gradient wanted, the CPU runs the same recurrence keeping a trace and records it as one node whose
//! backward runs through time ([`backward`]); a device records the recurrence op by op ([`Lstm::run`]). An LSTM
//! with projections runs op by op everywhere.

use kernels::{GpuDevice, Real};

use super::{CellMode, Recurrence};
use crate::ops::float::{Float, with_float_type};
use crate::ops::gemm::Mat;
use crate::ops::map::multiversion;
use crate::ops::{Op, probe_tensor, run};
use crate::tensor::autograd::is_grad_enabled;
use crate::tensor::device::float_type;
use crate::{DType, Error, Result, Shape, Tensor};
use backward::DeviceTrace;

mod backward;

/// The weights of one layer and direction: `weight_ih`, `weight_hh`, the biases when the LSTM has them, and
/// `weight_hr` when it projects its hidden state.
pub(crate) type CellTensors = (Tensor, Tensor, Option<Tensor>, Option<Tensor>, Option<Tensor>);

/// A multi-layer LSTM over `x` `(seq, batch, input)` from `h0`, `c0` `(layers·dirs, batch, hidden)`; inputs
/// `[x, h0, c0]` then each cell's `w_ih`, `w_hh` (and `b_ih`, `b_hh` when `bias`), layer-major. Returns the
/// outputs `(seq, batch, dirs·hidden)`, `h_n` and `c_n`. `dropout` applies between layers (training), its masks
/// drawn from the global generator layer by layer.
#[derive(Clone, Copy)]
pub(crate) struct Lstm {
    pub(crate) layers: usize,
    pub(crate) dirs: usize,
    pub(crate) bias: bool,
    pub(crate) dropout: Option<f64>,
}

/// The sizes of one LSTM run, read from its inputs.
#[derive(Clone, Copy, Debug)]
struct LstmSizes {
    seq: usize,
    batch: usize,
    input_size: usize,
    hidden: usize,
    layers: usize,
    dirs: usize,
}

impl Lstm {
    /// Runs the LSTM on `x`, `h0`, `c0` and `cells` (checked by the caller).
    pub(crate) fn run(
        &self,
        x: &Tensor,
        h0: &Tensor,
        c0: &Tensor,
        cells: &[CellTensors],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        // The fused recurrences (CPU and device) have no projection: a projected LSTM runs op by op.
        if cells.iter().any(|cell| cell.4.is_some()) {
            return self.run_recorded([x, h0, c0], cells);
        }
        let mut inputs = vec![x, h0, c0];
        for (w_ih, w_hh, b_ih, b_hh, _) in cells {
            inputs.extend([w_ih, w_hh]);
            inputs.extend(b_ih.iter().chain(b_hh));
        }
        // When a gradient is wanted the fused recurrence keeps a trace for its fused backward (one node), on the
        // CPU and on a device. On a device the fused step cannot sum more than `fused_step_fits` allows per unit:
        // past that the recurrence runs, and is recorded, op by op.
        let wanted = inputs.iter().any(|t| t.requires_grad()) && is_grad_enabled();
        let (features, hidden) = (x.shape()[2], h0.shape()[2]);
        let widest = if self.layers > 1 {
            features.max(self.dirs * hidden)
        } else {
            features
        };
        let fused = x.device().is_cpu() || kernels::lstm::fused_step_fits(widest, hidden);
        if wanted && fused {
            let traced = run(&backward::LstmTrain(*self), &inputs)?;
            return Ok((traced.out, traced.h_n, traced.c_n));
        }
        if x.shape()[0] > 0 && !fused {
            return self.run_recorded([x, h0, c0], cells);
        }
        run(self, &inputs)
    }

    /// The same recurrence as recorded operations ([`Recurrence`]), for autograd: each step is differentiated by
    /// the graph, on any device those ops run on. Dropout between layers draws its mask from the global
    /// generator as the fused op does (the same masks for one seed).
    fn run_recorded(&self, [x, h0, c0]: [&Tensor; 3], cells: &[CellTensors]) -> Result<(Tensor, Tensor, Tensor)> {
        let recurrence = Recurrence {
            mode: CellMode::Lstm,
            layers: self.layers,
            dirs: self.dirs,
            dropout: self.dropout,
        };
        let (out, h_n, c_n) = recurrence.run(x, h0, Some(c0), cells)?;
        let c_n = c_n.ok_or_else(|| Error::invalid("LSTM", "the recurrence returned no cell state"))?;
        Ok((out, h_n, c_n))
    }

    /// The fused recurrence on the inputs' device, dropout between layers included; with `save`, also the trace
    /// of [`kernels::lstm::lstm_saving`], as tensors: per cell its activated gates `(seq, batch, 4·hidden)` and
    /// cell states `(seq, batch, hidden)`, per layer its output, and the dropout masks.
    fn on_device(&self, inputs: &[&Tensor], save: bool) -> Result<(Tensor, Tensor, Tensor, Option<DeviceTrace>)> {
        let op = "lstm";
        let (x, h0, c0) = (inputs[0], inputs[1], inputs[2]);
        crate::ops::same_dtype(op, x, &inputs[1..].iter().map(|t| Some(*t)).collect::<Vec<_>>())?;
        let sizes = self.sizes(inputs);
        // Dropout between layers: the masks drawn from the global generator, layer by layer, as the CPU's fused
        // recurrence draws them (the same masks for one seed).
        let out_shape = Shape::from([sizes.seq, sizes.batch, sizes.dirs * sizes.hidden]);
        let masks = match self.dropout {
            Some(p) => (1..sizes.layers)
                .map(|_| crate::ops::dropout::mask(&out_shape, p, x.dtype(), x.device()))
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let mask_buffers = masks.iter().map(|m| m.gpu_buffer(op)).collect::<Result<Vec<_>>>()?;
        let mut held = Vec::new();
        for [w_ih, w_hh, b_ih, b_hh] in self.cells(inputs) {
            let buffer = |t: Option<&Tensor>| t.map(|t| t.gpu_buffer(op)).transpose();
            let biases = match (buffer(b_ih)?, buffer(b_hh)?) {
                (Some(a), Some(b)) => Some((a, b)),
                _ => None,
            };
            held.push((buffer(w_ih)?, buffer(w_hh)?, biases));
        }
        let mut weights = Vec::with_capacity(held.len());
        for (w_ih, w_hh, biases) in &held {
            let (Some(w_ih), Some(w_hh)) = (w_ih, w_hh) else {
                return Err(Error::invalid(op, "a cell lacks its weights"));
            };
            weights.push(kernels::lstm::CellWeights {
                w_ih,
                w_hh,
                biases: biases.as_ref().map(|(a, b)| (a, b)),
            });
        }
        let spec = kernels::lstm::Lstm {
            seq: sizes.seq,
            batch: sizes.batch,
            input_size: sizes.input_size,
            hidden: sizes.hidden,
            layers: sizes.layers,
            bidirectional: sizes.dirs == 2,
            weights,
            dropout_masks: mask_buffers.iter().collect(),
        };
        let dtype = float_type(op, x.dtype())?;
        let (x_buf, h0_buf, c0_buf) = (x.gpu_buffer(op)?, h0.gpu_buffer(op)?, c0.gpu_buffer(op)?);
        let (out, h_n, c_n, trace) = if save {
            let (out, h_n, c_n, trace) = kernels::lstm::lstm_saving(dtype, &spec, &x_buf, &h0_buf, &c0_buf)
                .map_err(|e| x.kernel_error(op, e))?;
            (out, h_n, c_n, Some(trace))
        } else {
            let (out, h_n, c_n) =
                kernels::lstm::lstm(dtype, &spec, &x_buf, &h0_buf, &c0_buf).map_err(|e| x.kernel_error(op, e))?;
            (out, h_n, c_n, None)
        };
        let LstmSizes { seq, batch, hidden, .. } = sizes;
        let on = |b, shape: &Shape| x.with_gpu(b, shape.clone());
        let trace = trace.map(|t| DeviceTrace {
            acts: t
                .acts
                .into_iter()
                .map(|b| on(b, &Shape::from([seq, batch, 4 * hidden])))
                .collect(),
            cells: t
                .cells
                .into_iter()
                .map(|b| on(b, &Shape::from([seq, batch, hidden])))
                .collect(),
            outputs: t.outputs.into_iter().map(|b| on(b, &out_shape)).collect(),
            masks,
        });
        Ok((on(out, &out_shape), on(h_n, h0.shape()), on(c_n, c0.shape()), trace))
    }

    fn sizes(&self, inputs: &[&Tensor]) -> LstmSizes {
        let (x, h0) = (inputs[0], inputs[1]);
        LstmSizes {
            seq: x.shape()[0],
            batch: x.shape()[1],
            input_size: x.shape()[2],
            hidden: h0.shape()[2],
            layers: self.layers,
            dirs: self.dirs,
        }
    }

    /// Each cell's weights, layer-major, from the inputs.
    fn cells<'a>(&self, inputs: &[&'a Tensor]) -> Vec<[Option<&'a Tensor>; 4]> {
        let per = if self.bias { 4 } else { 2 };
        inputs[3..]
            .chunks(per)
            .map(|c| [Some(c[0]), Some(c[1]), c.get(2).copied(), c.get(3).copied()])
            .collect()
    }
}

impl Op for Lstm {
    type Output = (Tensor, Tensor, Tensor);
    const NAME: &'static str = "lstm";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Self::Output> {
        run_cpu(inputs, &self.cells(inputs), self.sizes(inputs), self.dropout)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Self::Output> {
        let (out, h_n, c_n, _) = self.on_device(inputs, false)?;
        Ok((out, h_n, c_n))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Two layers, both directions, biases: every path of the kernel.
        let case = Lstm {
            layers: 2,
            dirs: 2,
            bias: true,
            dropout: None,
        };
        let mut inputs = vec![
            probe_tensor(&[3, 2, 3], 0.0, dtype)?,
            probe_tensor(&[4, 2, 4], 1.0, dtype)?,
            probe_tensor(&[4, 2, 4], 2.0, dtype)?.mul_scalar(4.0)?,
        ];
        for cell in 0..4 {
            let features = if cell < 2 { 3 } else { 8 };
            let phase = 10.0 * cell as f64;
            inputs.extend([
                probe_tensor(&[16, features], phase + 3.0, dtype)?,
                probe_tensor(&[16, 4], phase + 4.0, dtype)?,
                probe_tensor(&[16], phase + 5.0, dtype)?,
                probe_tensor(&[16], phase + 6.0, dtype)?,
            ]);
        }
        Ok(vec![(case, inputs)])
    }
}

/// The LSTM on the CPU: inputs `[x, h0, c0, ..]`, `cells` layer-major; `dropout` between layers (training).
fn run_cpu(
    inputs: &[&Tensor],
    cells: &[[Option<&Tensor>; 4]],
    sizes: LstmSizes,
    dropout: Option<f64>,
) -> Result<(Tensor, Tensor, Tensor)> {
    let dtype = inputs[0].dtype();
    with_float_type!(dtype, T => {
        let (out, h_n, c_n) = run_cpu_typed::<T>(inputs, cells, sizes, dropout, None)?;
        outputs(out, h_n, c_n, sizes, dtype)
    })
}

/// The three outputs of an LSTM run, as tensors of `dtype`.
fn outputs<T: Float>(
    out: Vec<T>,
    h_n: Vec<T>,
    c_n: Vec<T>,
    sizes: LstmSizes,
    dtype: DType,
) -> Result<(Tensor, Tensor, Tensor)> {
    let LstmSizes {
        seq,
        batch,
        hidden,
        layers,
        dirs,
        ..
    } = sizes;
    let state_shape = Shape::from([layers * dirs, batch, hidden]);
    Ok((
        Tensor::from_computed(out, Shape::from([seq, batch, dirs * hidden]), dtype)?,
        Tensor::from_computed(h_n, state_shape.clone(), dtype)?,
        Tensor::from_computed(c_n, state_shape, dtype)?,
    ))
}

/// The LSTM on the CPU in `T`: the outputs `(seq, batch, dirs·hidden)`, `h_n` and `c_n`; with `trace`, it also
/// keeps what the backward needs ([`backward::Trace`]).
fn run_cpu_typed<T: Float>(
    inputs: &[&Tensor],
    cells: &[[Option<&Tensor>; 4]],
    sizes: LstmSizes,
    dropout: Option<f64>,
    mut trace: Option<&mut backward::Trace<T>>,
) -> Result<(Vec<T>, Vec<T>, Vec<T>)> {
    let (x, h0, c0) = (inputs[0], inputs[1], inputs[2]);
    let op = "LSTM";
    let missing = || Error::invalid(op, "a cell lacks its weights");
    let LstmSizes {
        seq,
        batch,
        hidden: hid,
        layers,
        dirs,
        ..
    } = sizes;
    let mut layer_in: Vec<T> = x.float_ref::<T>(op)?.to_vec();
    let h0 = h0.float_ref::<T>(op)?;
    let c0 = c0.float_ref::<T>(op)?;
    let mut h_n = vec![T::ZERO; layers * dirs * batch * hid];
    let mut c_n = h_n.clone();
    for layer in 0..layers {
        let in_size = layer_in.len() / (seq * batch).max(1);
        let mut out = vec![T::ZERO; seq * batch * dirs * hid];
        for d in 0..dirs {
            let [w_ih, w_hh, b_ih, b_hh] = cells[layer * dirs + d];
            let w_ih = w_ih.ok_or_else(missing)?.float_ref::<T>(op)?;
            let w_hh = w_hh.ok_or_else(missing)?.float_ref::<T>(op)?;
            let b_ih = b_ih.map(|b| b.float_ref::<T>(op)).transpose()?;
            let b_hh = b_hh.map(|b| b.float_ref::<T>(op)).transpose()?;
            let slot = (layer * dirs + d) * batch * hid;
            let cell = Cell {
                w_ih: &w_ih,
                w_hh: &w_hh,
                b_ih: b_ih.as_deref(),
                b_hh: b_hh.as_deref(),
                hid,
                in_size,
            };
            let state = (&h0[slot..slot + batch * hid], &c0[slot..slot + batch * hid]);
            let saved = trace.as_deref_mut().map(|t| t.cell(seq, batch, hid));
            let (h, c) = cell.run(&layer_in, (seq, batch), state, d == 1, (&mut out, d, dirs), saved);
            h_n[slot..slot + batch * hid].copy_from_slice(&h);
            c_n[slot..slot + batch * hid].copy_from_slice(&c);
        }
        if let Some(p) = dropout.filter(|_| layer + 1 < layers) {
            let scale = T::of(crate::ops::dropout::mask_scale(p, T::DTYPE));
            let mask: Vec<T> = crate::ops::dropout::kept(out.len(), p)
                .into_iter()
                .map(|keep| if keep { scale } else { T::of(0.0) })
                .collect();
            let dropped = out.iter().zip(&mask).map(|(&v, &m)| v * m).collect();
            if let Some(t) = trace.as_deref_mut() {
                t.layer(std::mem::replace(&mut out, dropped), Some(mask));
            } else {
                out = dropped;
            }
        } else if let Some(t) = trace.as_deref_mut()
            && layer + 1 < layers
        {
            t.layer(out.clone(), None);
        }
        layer_in = out;
    }
    if let Some(t) = trace {
        t.last_output(&layer_in);
    }
    Ok((layer_in, h_n, c_n))
}

/// One layer and direction of an LSTM.
struct Cell<'a, T> {
    w_ih: &'a [T],
    w_hh: &'a [T],
    b_ih: Option<&'a [T]>,
    b_hh: Option<&'a [T]>,
    hid: usize,
    in_size: usize,
}

impl<T: Float> Cell<'_, T> {
    /// Runs the sequence `x` (`(seq, batch, in)`) from `(h0, c0)`, writing each step's `h` into its slice of
    /// `out` (`(seq, batch, dirs * hid)`, this direction `d` of `dirs`); returns the last `(h, c)`. With `saved`,
    /// each step's activated gates `(batch, 4·hid)` and cell state `(batch, hid)` are kept there, in time order.
    #[allow(clippy::type_complexity)]
    fn run(
        &self,
        x: &[T],
        (seq, batch): (usize, usize),
        (h0, c0): (&[T], &[T]),
        reverse: bool,
        (out, d, dirs): (&mut [T], usize, usize),
        mut saved: Option<(&mut [T], &mut [T])>,
    ) -> (Vec<T>, Vec<T>) {
        let (hid, g4) = (self.hid, 4 * self.hid);
        // Input projections of every step at once: (seq * batch, 4H).
        let mut gx = vec![T::ZERO; seq * batch * g4];
        if let Some(b) = self.b_ih {
            for row in gx.chunks_mut(g4) {
                row.copy_from_slice(b);
            }
        }
        let beta = if self.b_ih.is_some() { T::ONE } else { T::ZERO };
        T::gemm(
            T::ONE,
            Mat::row_major(x, seq * batch, self.in_size),
            Mat::row_major(self.w_ih, g4, self.in_size).t(),
            beta,
            &mut gx,
        );
        let mut h = h0.to_vec();
        let mut c = c0.to_vec();
        let mut gates = vec![T::ZERO; batch * g4];
        for step in 0..seq {
            let t = if reverse { seq - 1 - step } else { step };
            gates.copy_from_slice(&gx[t * batch * g4..(t + 1) * batch * g4]);
            if let Some(b) = self.b_hh {
                for row in gates.chunks_mut(g4) {
                    for (g, &bv) in row.iter_mut().zip(b) {
                        *g = *g + bv;
                    }
                }
            }
            T::gemm(
                T::ONE,
                Mat::row_major(&h, batch, hid),
                Mat::row_major(self.w_hh, g4, hid).t(),
                T::ONE,
                &mut gates,
            );
            match saved.as_mut() {
                Some((acts, cells)) => {
                    let acts = &mut acts[t * batch * g4..(t + 1) * batch * g4];
                    lstm_cells_saving(&gates, &mut c, &mut h, hid, acts);
                    cells[t * batch * hid..(t + 1) * batch * hid].copy_from_slice(&c);
                }
                None => lstm_step(&gates, &mut c, &mut h, hid),
            }
            for bi in 0..batch {
                let dst = (t * batch + bi) * dirs * hid + d * hid;
                out[dst..dst + hid].copy_from_slice(&h[bi * hid..(bi + 1) * hid]);
            }
        }
        (h, c)
    }
}

multiversion! {
    fn lstm_cells<R: Real>(gates: &[R], c: &mut [R], h: &mut [R], hid: usize) {
        let sigmoid = |x: R| R::ONE / (R::ONE + (-x).exp());
        for ((g, c), h) in gates.chunks(4 * hid).zip(c.chunks_mut(hid)).zip(h.chunks_mut(hid)) {
            let [gi, gf, gg, go] = gate_parts(g, hid);
            for (((((c, h), &i), &f), &g), &o) in c.iter_mut().zip(h.iter_mut()).zip(gi).zip(gf).zip(gg).zip(go) {
                let cell = sigmoid(f) * *c + sigmoid(i) * g.tanh();
                *c = cell;
                *h = sigmoid(o) * cell.tanh();
            }
        }
    }
}

multiversion! {
    fn lstm_cells_saving<R: Real>(gates: &[R], c: &mut [R], h: &mut [R], hid: usize, acts: &mut [R]) {
        // `lstm_cells`' formulas, keeping the activated gates for the backward (slices zipped, not indexed, so
        // the loop vectorises).
        let sigmoid = |x: R| R::ONE / (R::ONE + (-x).exp());
        let rows = gates.chunks(4 * hid).zip(acts.chunks_mut(4 * hid));
        for ((g, a), (c, h)) in rows.zip(c.chunks_mut(hid).zip(h.chunks_mut(hid))) {
            let [gi, gf, gg, go] = gate_parts(g, hid);
            let (ai, rest) = a.split_at_mut(hid);
            let (af, rest) = rest.split_at_mut(hid);
            let (ag, ao) = rest.split_at_mut(hid);
            let pre = gi.iter().zip(gf).zip(gg).zip(go);
            let kept = ai.iter_mut().zip(af.iter_mut()).zip(ag.iter_mut()).zip(ao.iter_mut());
            for (((c, h), (((&i, &f), &g), &o)), (((ai, af), ag), ao)) in c.iter_mut().zip(h.iter_mut()).zip(pre).zip(kept) {
                let (i, f, g, o) = (sigmoid(i), sigmoid(f), g.tanh(), sigmoid(o));
                let cell = f * *c + i * g;
                *c = cell;
                *h = o * cell.tanh();
                (*ai, *af, *ag, *ao) = (i, f, g, o);
            }
        }
    }
}

/// A row of `4·hid` gate values split into its `i, f, g, o` parts.
fn gate_parts<R>(row: &[R], hid: usize) -> [&[R]; 4] {
    let (i, rest) = row.split_at(hid);
    let (f, rest) = rest.split_at(hid);
    let (g, o) = rest.split_at(hid);
    [i, f, g, o]
}

/// The pointwise part of an LSTM step, PyTorch's gate order: `gates` is `(batch, 4·hid)` pre-activations
/// `i, f, g, o`; `c` and `h` (`(batch, hid)`) are updated in place.
pub(crate) fn lstm_step<R: Real>(gates: &[R], c: &mut [R], h: &mut [R], hid: usize) {
    lstm_cells(gates, c, h, hid);
}
