//! PyTorch's multi-layer LSTM (gate order i, f, g, o), one fused kernel per time step: unit `(b, j)` computes
//! its four gate pre-activations `x_t·W_ihᵀ + b_ih + h_{t-1}·W_hhᵀ + b_hh` for hidden unit `j`, then
//! `c = f·c + i·g` and `h = o·tanh(c)`. The state `h` is double-buffered (every unit reads all of
//! `h_{t-1}`); `h` and `c` are kept in the compute type (`f32` for the half types) between steps.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::activation::sigmoid::sigmoid1;
use crate::activation::tanh::tanh1;
use crate::binary::{BinaryOp, Operand, binary};
use crate::cast::convert_kernel;
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// The weights of one layer and direction (PyTorch's `weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`,
/// `bias_hh_l{k}`, with `_reverse` for the second direction).
#[derive(Clone, Copy, Debug)]
pub struct CellWeights<'a> {
    /// `(4·hidden, input)`.
    pub w_ih: &'a GpuBuffer,
    /// `(4·hidden, hidden)`.
    pub w_hh: &'a GpuBuffer,
    /// Both biases `(4·hidden)`, or none.
    pub biases: Option<(&'a GpuBuffer, &'a GpuBuffer)>,
}

/// The sizes of an LSTM run and its weights, layer by layer, direction by direction.
#[derive(Clone, Debug)]
pub struct Lstm<'a> {
    /// Time steps.
    pub seq: usize,
    /// Sequences run side by side.
    pub batch: usize,
    /// Features of the input.
    pub input_size: usize,
    /// Features of `h` and `c`.
    pub hidden: usize,
    /// Layers.
    pub layers: usize,
    /// Whether each layer also runs backwards in time.
    pub bidirectional: bool,
    /// `layers · directions` cells, layer-major.
    pub weights: Vec<CellWeights<'a>>,
    /// Dropout between layers (PyTorch's in training, masks drawn by the caller): none, or one mask per layer
    /// but the last, `(seq, batch, dirs·hidden)`, multiplied into that layer's output before the next reads it.
    pub dropout_masks: Vec<&'a GpuBuffer>,
}

/// One time step `t` of one layer and direction, for every `(b, j)`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn step_kernel<F: Float, C: Float>(
    x: &[F],
    w_ih: &[F],
    w_hh: &[F],
    b_ih: &[F],
    b_hh: &[F],
    h_prev: &[C],
    h_next: &mut [C],
    c: &mut [C],
    out: &mut [F],
    acts: &mut [F],
    cells: &mut [F],
    t: usize,
    batch: usize,
    inputs: usize,
    hidden: usize,
    out_stride: usize,
    out_col: usize,
    #[comptime] has_bias: bool,
    #[comptime] save: bool,
) {
    if ABSOLUTE_POS < batch * hidden {
        let b = ABSOLUTE_POS / hidden;
        let j = ABSOLUTE_POS % hidden;
        let x_row = (t * batch + b) * inputs;
        let h_row = b * hidden;
        let mut pre = Array::<C>::new(4usize);
        #[unroll]
        for q in 0..4usize {
            // The pre-activation of gate row `row`: PyTorch's `b_ih + x·w_ih + b_hh + h·w_hh`, in that order.
            let row = q * hidden + j;
            let mut acc = C::new(0.0);
            if has_bias {
                acc = C::cast_from(b_ih[row]);
            }
            for k in 0..inputs {
                acc += C::cast_from(x[x_row + k]) * C::cast_from(w_ih[row * inputs + k]);
            }
            if has_bias {
                acc += C::cast_from(b_hh[row]);
            }
            for k in 0..hidden {
                acc += h_prev[h_row + k] * C::cast_from(w_hh[row * hidden + k]);
            }
            pre[q] = acc;
        }
        let i = sigmoid1::<C>(pre[0]);
        let f = sigmoid1::<C>(pre[1]);
        let g = tanh1::<C>(pre[2]);
        let o = sigmoid1::<C>(pre[3]);
        let c_new = f * c[ABSOLUTE_POS] + i * g;
        let h_new = o * tanh1::<C>(c_new);
        c[ABSOLUTE_POS] = c_new;
        h_next[ABSOLUTE_POS] = h_new;
        out[(t * batch + b) * out_stride + out_col + j] = F::cast_from(h_new);
        if save {
            // The trace the backward reads: the activated gates `(seq, batch, 4·hidden)` and the cell state.
            let a = (t * batch + b) * hidden * 4usize + j;
            acts[a] = F::cast_from(i);
            acts[a + hidden] = F::cast_from(f);
            acts[a + hidden * 2usize] = F::cast_from(g);
            acts[a + hidden * 3usize] = F::cast_from(o);
            cells[(t * batch + b) * hidden + j] = F::cast_from(c_new);
        }
    }
}

/// One time step `t` of the backward through time, for every `(b, j)`: PyTorch's LSTM cell gradient from the
/// trace (`acts`, `cells`) and the cell state the step started from (`c0` for the `first` step the forward ran,
/// else the cell state of step `t_prev`). The hidden state's gradient is `dh` (from the later step) plus the
/// layer output's (`d_out`); `dc` is carried, in place. Writes the gates' pre-activation gradients into `da` at
/// the trace's index.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn cell_grad_kernel<F: Float, C: Float>(
    acts: &[F],
    cells: &[F],
    c0: &[F],
    d_out: &[F],
    dh: &[C],
    dc: &mut [C],
    da: &mut [F],
    t: usize,
    t_prev: usize,
    first: u32,
    batch: usize,
    hidden: usize,
    out_stride: usize,
    out_col: usize,
) {
    if ABSOLUTE_POS < batch * hidden {
        let b = ABSOLUTE_POS / hidden;
        let j = ABSOLUTE_POS % hidden;
        let row = t * batch + b;
        let a = row * hidden * 4usize + j;
        let i = C::cast_from(acts[a]);
        let f = C::cast_from(acts[a + hidden]);
        let g = C::cast_from(acts[a + hidden * 2usize]);
        let o = C::cast_from(acts[a + hidden * 3usize]);
        let c = C::cast_from(cells[row * hidden + j]);
        let mut cp = C::cast_from(c0[ABSOLUTE_POS]);
        if first == 0 {
            cp = C::cast_from(cells[t_prev * batch * hidden + ABSOLUTE_POS]);
        }
        let dh_t = dh[ABSOLUTE_POS] + C::cast_from(d_out[row * out_stride + out_col + j]);
        let one = C::new(1.0);
        let tc = tanh1::<C>(c);
        let dcv = dc[ABSOLUTE_POS] + dh_t * o * (one - tc * tc);
        da[a] = F::cast_from(dcv * g * i * (one - i));
        da[a + hidden] = F::cast_from(dcv * cp * f * (one - f));
        da[a + hidden * 2usize] = F::cast_from(dcv * i * (one - g * g));
        da[a + hidden * 3usize] = F::cast_from(dh_t * tc * o * (one - o));
        dc[ABSOLUTE_POS] = dcv * f;
    }
}

/// The previous hidden state's gradient at step `t`, `d(gates)_t · W_hh`, for every `(b, k)`: a sum of
/// `4·hidden` terms.
#[cube(launch_unchecked)]
fn hidden_grad_kernel<F: Float, C: Float>(da: &[F], w_hh: &[F], dh: &mut [C], t: usize, batch: usize, hidden: usize) {
    if ABSOLUTE_POS < batch * hidden {
        let b = ABSOLUTE_POS / hidden;
        let k = ABSOLUTE_POS % hidden;
        let row = (t * batch + b) * hidden * 4usize;
        let mut acc = C::new(0.0);
        for r in 0..hidden * 4usize {
            acc += C::cast_from(da[row + r]) * C::cast_from(w_hh[r * hidden + k]);
        }
        dh[ABSOLUTE_POS] = acc;
    }
}

/// Whether the fused step can run a cell with `inputs` features in and `hidden` out: its unit sums four gates of
/// `inputs + hidden` terms each, in eight loops, and Mesa's lavapipe ends a unit's loops after 65,535 iterations
/// in all, counting a little more than the terms (16,380 + 3 features were cut short there). So at most
/// [`FUSED_STEP_FEATURES`] features in all; past that, run the step as separate operations (`linear` sums in
/// slices).
///
/// ```
/// assert!(kernels::lstm::fused_step_fits(16_317, 3));
/// assert!(!kernels::lstm::fused_step_fits(16_318, 3));
/// ```
pub fn fused_step_fits(inputs: usize, hidden: usize) -> bool {
    inputs.saturating_add(hidden) <= FUSED_STEP_FEATURES
}

/// The most `inputs + hidden` features the fused step runs: lavapipe's 65,535 iterations over four gates, less a
/// margin for the loops' own counting.
pub const FUSED_STEP_FEATURES: usize = 16_320;

impl Lstm<'_> {
    fn directions(&self) -> usize {
        if self.bidirectional { 2 } else { 1 }
    }

    /// Checks every buffer against the sizes, in `dtype`.
    fn check(&self, dtype: FloatType, x: &GpuBuffer, h0: &GpuBuffer, c0: &GpuBuffer) -> Result<()> {
        let op = "lstm";
        let dirs = self.directions();
        let h = self.hidden;
        let state = self.layers * dirs * self.batch * h;
        let mut expected = vec![
            (x, self.seq * self.batch * self.input_size, "input".to_string()),
            (h0, state, "h0".to_string()),
            (c0, state, "c0".to_string()),
        ];
        if self.weights.len() != self.layers * dirs {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!(
                    "{} cells of weights for {} layers of {dirs} directions",
                    self.weights.len(),
                    self.layers
                ),
            });
        }
        for (cell, w) in self.weights.iter().enumerate() {
            let inputs = if cell < dirs { self.input_size } else { dirs * h };
            if !fused_step_fits(inputs, h) {
                return Err(KernelError::InvalidArgument {
                    op,
                    message: format!(
                        "cell {cell} has {inputs} inputs and {h} hidden features: the fused step sums at most \
                         {FUSED_STEP_FEATURES} in all per gate; run its operations separately"
                    ),
                });
            }
            expected.push((w.w_ih, 4 * h * inputs, format!("weight_ih of cell {cell}")));
            expected.push((w.w_hh, 4 * h * h, format!("weight_hh of cell {cell}")));
            if let Some((b_ih, b_hh)) = w.biases {
                expected.push((b_ih, 4 * h, format!("bias_ih of cell {cell}")));
                expected.push((b_hh, 4 * h, format!("bias_hh of cell {cell}")));
            }
        }
        if !self.dropout_masks.is_empty() {
            if self.dropout_masks.len() + 1 != self.layers {
                return Err(KernelError::InvalidArgument {
                    op,
                    message: format!(
                        "{} dropout masks for {} layers: one per layer but the last, or none",
                        self.dropout_masks.len(),
                        self.layers
                    ),
                });
            }
            let out = self.seq * self.batch * dirs * h;
            for (layer, mask) in self.dropout_masks.iter().enumerate() {
                expected.push((mask, out, format!("the dropout mask after layer {layer}")));
            }
        }
        check_operands(op, dtype, x, &expected)
    }
}

/// Runs the LSTM over `x` `(seq, batch, input_size)` from the state `h0`, `c0` `(layers·dirs, batch,
/// hidden)`; returns the last layer's outputs `(seq, batch, dirs·hidden)` and the final `h_n`, `c_n`.
pub fn lstm(
    dtype: FloatType,
    spec: &Lstm<'_>,
    x: &GpuBuffer,
    h0: &GpuBuffer,
    c0: &GpuBuffer,
) -> Result<(GpuBuffer, GpuBuffer, GpuBuffer)> {
    run_lstm(dtype, spec, x, h0, c0, None)
}

/// What [`lstm_saving`] keeps for the backward ([`through_time`]), in the element type.
#[derive(Clone, Debug, Default)]
pub struct LstmTrace {
    /// Per cell (layer-major, then direction): each step's activated gates `i, f, g, o` `(seq, batch,
    /// 4·hidden)`, in time order.
    pub acts: Vec<GpuBuffer>,
    /// Per cell: each step's new cell state `(seq, batch, hidden)`, in time order.
    pub cells: Vec<GpuBuffer>,
    /// Per layer: its output `(seq, batch, dirs·hidden)`, before dropout (the last one is a copy of the returned
    /// output).
    pub outputs: Vec<GpuBuffer>,
}

/// [`lstm`], also keeping each step's activated gates and cell state and each layer's output, for the
/// backward through time.
pub fn lstm_saving(
    dtype: FloatType,
    spec: &Lstm<'_>,
    x: &GpuBuffer,
    h0: &GpuBuffer,
    c0: &GpuBuffer,
) -> Result<(GpuBuffer, GpuBuffer, GpuBuffer, LstmTrace)> {
    let mut trace = LstmTrace::default();
    let (out, h_n, c_n) = run_lstm(dtype, spec, x, h0, c0, Some(&mut trace))?;
    if let Some(last) = trace.outputs.last_mut() {
        *last = last.deep_copy();
    }
    Ok((out, h_n, c_n, trace))
}

fn run_lstm(
    dtype: FloatType,
    spec: &Lstm<'_>,
    x: &GpuBuffer,
    h0: &GpuBuffer,
    c0: &GpuBuffer,
    mut trace: Option<&mut LstmTrace>,
) -> Result<(GpuBuffer, GpuBuffer, GpuBuffer)> {
    x.device().check_dtype("lstm", dtype)?;
    x.device().check_math("lstm", dtype)?;
    spec.check(dtype, x, h0, c0)?;
    let size = dtype.size_in_bytes();
    let dirs = spec.directions();
    let state = spec.layers * dirs * spec.batch * spec.hidden;
    let h_n = GpuBuffer::uninit(x.device(), state * size);
    let c_n = GpuBuffer::uninit(x.device(), state * size);
    let out_len = spec.seq * spec.batch * dirs * spec.hidden;
    if spec.layers == 0 {
        return Ok((x.deep_copy(), h_n, c_n));
    }
    let mut layer_in = x.clone();
    for layer in 0..spec.layers {
        let layer_out = GpuBuffer::uninit(x.device(), out_len * size);
        for d in 0..dirs {
            let inputs = if layer == 0 {
                spec.input_size
            } else {
                dirs * spec.hidden
            };
            let cell = Cell {
                weights: spec.weights[layer * dirs + d],
                slot: (layer * dirs + d) * spec.batch * spec.hidden,
                inputs,
                reverse: d == 1,
                out_col: d * spec.hidden,
            };
            let steps = spec.seq * spec.batch * spec.hidden;
            let save = trace.as_deref_mut().map(|trace| {
                trace.acts.push(GpuBuffer::uninit(x.device(), 4 * steps * size));
                trace.cells.push(GpuBuffer::uninit(x.device(), steps * size));
                (
                    trace.acts[trace.acts.len() - 1].clone(),
                    trace.cells[trace.cells.len() - 1].clone(),
                )
            });
            let save = save.as_ref().map(|(a, c)| (a, c));
            with_float_type!(dtype, F => run_cell::<F>(spec, &cell, &layer_in, [h0, c0], &layer_out, [&h_n, &c_n], save));
        }
        if let Some(trace) = trace.as_deref_mut() {
            trace.outputs.push(layer_out.clone());
        }
        layer_in = match spec.dropout_masks.get(layer) {
            Some(mask) => {
                let shape = [out_len];
                let (out, mask) = (
                    Operand {
                        buffer: &layer_out,
                        shape: &shape,
                    },
                    Operand {
                        buffer: mask,
                        shape: &shape,
                    },
                );
                binary(BinaryOp::Mul, dtype, out, mask, &shape)?
            }
            None => layer_out,
        };
    }
    Ok((layer_in, h_n, c_n))
}

/// One layer and direction.
struct Cell<'a> {
    weights: CellWeights<'a>,
    /// Offset of its state in `h0`, `c0`, `h_n`, `c_n`.
    slot: usize,
    inputs: usize,
    reverse: bool,
    out_col: usize,
}

fn run_cell<F: Compute>(
    spec: &Lstm<'_>,
    cell: &Cell<'_>,
    x: &GpuBuffer,
    [h0, c0]: [&GpuBuffer; 2],
    out: &GpuBuffer,
    [h_n, c_n]: [&GpuBuffer; 2],
    save: Option<(&GpuBuffer, &GpuBuffer)>,
) {
    let dirs = spec.directions();
    let units = spec.batch * spec.hidden;
    let state = spec.layers * dirs * units;
    let c_size = size_of::<F::C>();
    let mut h_prev = GpuBuffer::uninit(x.device(), units * c_size);
    let mut h_next = GpuBuffer::uninit(x.device(), units * c_size);
    let c = GpuBuffer::uninit(x.device(), units * c_size);
    let w = cell.weights;
    let (b_ih, b_hh) = w.biases.unwrap_or((w.w_hh, w.w_hh));
    let b_len = if w.biases.is_some() { 4 * spec.hidden } else { 1 };
    let out_len = spec.seq * spec.batch * dirs * spec.hidden;
    if units == 0 {
        return;
    }
    // Without a trace the kernel writes none (`save` is false at compile time): one element stands in for each
    // (two buffers: no buffer is bound twice).
    let unused = [0; 2].map(|_| GpuBuffer::uninit(x.device(), size_of::<F>()));
    let (acts, cells) = save.unwrap_or((&unused[0], &unused[1]));
    let (acts_len, cells_len) = match save {
        Some(_) => (4 * spec.seq * units, spec.seq * units),
        None => (1, 1),
    };
    // SAFETY (every launch): `Lstm::check` verified the element counts of `x` (`seq·batch·inputs`), the
    // weights, the biases (read only when present) and the states (`state`); `h_prev`, `h_next` and `c` are
    // allocated here with `units` elements of `F::C`. The step kernel's unit `(b, j) < units` reads row
    // `t·batch + b` of `x`, gate rows `q·hidden + j < 4·hidden` of the weights, row `b` of `h_prev`, and
    // writes `h_next`, `c` at its own index and `out` at `(t·batch + b)·dirs·hidden + out_col + j < out_len`;
    // with a trace (allocated by `run_lstm` with `4·seq·units` and `seq·units` elements) it writes
    // `acts` at `(t·batch + b)·4·hidden + q·hidden + j < 4·seq·units` and `cells` at `(t·batch + b)·hidden + j <
    // seq·units`; without one it writes neither (`save` is false at compile time).
    // The conversions copy `units` elements at `slot`, with `slot + units <= state`.
    unsafe {
        for (src, dst) in [(h0, &h_prev), (c0, &c)] {
            launch!(
                convert_kernel::<F, F::C>,
                x,
                units,
                arg(src, state),
                arg(dst, units),
                cell.slot,
                0,
                units,
            );
        }
        for step in 0..spec.seq {
            let t = if cell.reverse { spec.seq - 1 - step } else { step };
            launch!(
                step_kernel::<F, F::C>,
                x,
                units,
                arg(x, spec.seq * spec.batch * cell.inputs),
                arg(w.w_ih, 4 * spec.hidden * cell.inputs),
                arg(w.w_hh, 4 * spec.hidden * spec.hidden),
                arg(b_ih, b_len),
                arg(b_hh, b_len),
                arg(&h_prev, units),
                arg(&h_next, units),
                arg(&c, units),
                arg(out, out_len),
                arg(acts, acts_len),
                arg(cells, cells_len),
                t,
                spec.batch,
                cell.inputs,
                spec.hidden,
                dirs * spec.hidden,
                cell.out_col,
                w.biases.is_some(),
                save.is_some(),
            );
            std::mem::swap(&mut h_prev, &mut h_next);
        }
        for (src, dst) in [(&h_prev, h_n), (&c, c_n)] {
            launch!(
                convert_kernel::<F::C, F>,
                x,
                units,
                arg(src, units),
                arg(dst, state),
                0,
                cell.slot,
                units,
            );
        }
    }
}

/// The sizes of one cell's backward through time ([`through_time`]).
#[derive(Clone, Copy, Debug)]
pub struct ThroughTime {
    /// Time steps.
    pub seq: usize,
    /// Sequences run side by side.
    pub batch: usize,
    /// Features of `h` and `c`.
    pub hidden: usize,
    /// Directions of the layer (1 or 2): the layer output's gradient has `dirs·hidden` features.
    pub dirs: usize,
    /// This cell's direction: 1 ran backwards in time.
    pub direction: usize,
}

impl ThroughTime {
    /// The time step the forward ran `step`-th.
    fn time(&self, step: usize) -> usize {
        if self.direction == 1 { self.seq - 1 - step } else { step }
    }
}

/// Backpropagation through time for one cell (layer and direction) of [`lstm_saving`]: from its trace (`acts`,
/// `cells`), its initial cell state `c0` `(batch, hidden)`, the layer output's gradient `d_out` `(seq, batch,
/// dirs·hidden)` (this cell's features at `direction·hidden`), the gradients of its final state `dh_n`, `dc_n`
/// `(batch, hidden)`, and `w_hh` `(4·hidden, hidden)`. Returns the gradient of every step's gate
/// pre-activations `(seq, batch, 4·hidden)` in time order, and those of the cell's `h0` and `c0`. Two launches
/// per step: the cell's gradient, then `d(gates)·W_hh` (the state between steps in the compute type).
#[allow(clippy::too_many_arguments)]
pub fn through_time(
    dtype: FloatType,
    spec: &ThroughTime,
    acts: &GpuBuffer,
    cells: &GpuBuffer,
    c0: &GpuBuffer,
    d_out: &GpuBuffer,
    [dh_n, dc_n]: [&GpuBuffer; 2],
    w_hh: &GpuBuffer,
) -> Result<(GpuBuffer, GpuBuffer, GpuBuffer)> {
    let op = "lstm_backward";
    d_out.device().check_dtype(op, dtype)?;
    d_out.device().check_math(op, dtype)?;
    let ThroughTime {
        seq,
        batch,
        hidden,
        dirs,
        direction,
    } = *spec;
    if direction >= dirs || dirs > 2 || !fused_step_fits(hidden, 0) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!(
                "direction {direction} of {dirs} with {hidden} hidden features: one or two directions, and at most \
                 {FUSED_STEP_FEATURES} hidden features (each unit sums 4·hidden terms)"
            ),
        });
    }
    let units = batch * hidden;
    let expected = [
        (acts, 4 * seq * units, "the activated gates"),
        (cells, seq * units, "the cell states"),
        (c0, units, "c0"),
        (d_out, seq * dirs * units, "the output's gradient"),
        (dh_n, units, "h_n's gradient"),
        (dc_n, units, "c_n's gradient"),
        (w_hh, 4 * hidden * hidden, "weight_hh"),
    ];
    check_operands(op, dtype, d_out, &expected)?;
    let da = GpuBuffer::uninit(d_out.device(), 4 * seq * units * dtype.size_in_bytes());
    if seq == 0 || units == 0 {
        return Ok((da, dh_n.deep_copy(), dc_n.deep_copy()));
    }
    let (dh0, dc0) =
        with_float_type!(dtype, F => through_time_typed::<F>(spec, [acts, cells, c0, d_out], [dh_n, dc_n], w_hh, &da));
    Ok((da, dh0, dc0))
}

fn through_time_typed<F: Compute>(
    spec: &ThroughTime,
    [acts, cells, c0, d_out]: [&GpuBuffer; 4],
    [dh_n, dc_n]: [&GpuBuffer; 2],
    w_hh: &GpuBuffer,
    da: &GpuBuffer,
) -> (GpuBuffer, GpuBuffer) {
    let (seq, batch, hidden, dirs) = (spec.seq, spec.batch, spec.hidden, spec.dirs);
    let units = batch * hidden;
    let on = d_out.device();
    let c_size = size_of::<F::C>();
    let (mut dh, mut dh_next) = (
        GpuBuffer::uninit(on, units * c_size),
        GpuBuffer::uninit(on, units * c_size),
    );
    let dc = GpuBuffer::uninit(on, units * c_size);
    let (dh0, dc0) = (
        GpuBuffer::uninit(on, units * size_of::<F>()),
        GpuBuffer::uninit(on, units * size_of::<F>()),
    );
    // SAFETY (every launch): `through_time` checked the element counts of every operand (`acts` 4·seq·units,
    // `cells` seq·units, `d_out` seq·dirs·units, `c0`, `dh_n`, `dc_n` units, `w_hh` 4·hidden·hidden); `dh`,
    // `dh_next`, `dc`, `dh0` and `dc0` are allocated here with `units` elements, `da` by `through_time` with
    // 4·seq·units. A unit `(b, j) < units` of the cell kernel reads `acts` and writes `da` at `(t·batch +
    // b)·4·hidden + q·hidden + j`, reads `cells` at `(t·batch + b)·hidden + j` and at `t_prev·units + (b, j)`
    // (`t, t_prev < seq`), `d_out` at `(t·batch + b)·dirs·hidden + direction·hidden + j` (`direction < dirs`),
    // and `c0`, `dh`, `dc` at its own index; one of the hidden kernel reads row `(t·batch + b)` of `da` (4·hidden
    // elements) and column `k < hidden` of `w_hh`. The conversions copy `units` elements from offset 0.
    unsafe {
        for (src, dst) in [(dh_n, &dh), (dc_n, &dc)] {
            launch!(
                convert_kernel::<F, F::C>,
                d_out,
                units,
                arg(src, units),
                arg(dst, units),
                0,
                0,
                units
            );
        }
        for step in (0..seq).rev() {
            let t = spec.time(step);
            let t_prev = if step == 0 { t } else { spec.time(step - 1) };
            launch!(
                cell_grad_kernel::<F, F::C>,
                d_out,
                units,
                arg(acts, 4 * seq * units),
                arg(cells, seq * units),
                arg(c0, units),
                arg(d_out, seq * dirs * units),
                arg(&dh, units),
                arg(&dc, units),
                arg(da, 4 * seq * units),
                t,
                t_prev,
                u32::from(step == 0),
                batch,
                hidden,
                dirs * hidden,
                spec.direction * hidden,
            );
            launch!(
                hidden_grad_kernel::<F, F::C>,
                d_out,
                units,
                arg(da, 4 * seq * units),
                arg(w_hh, 4 * hidden * hidden),
                arg(&dh_next, units),
                t,
                batch,
                hidden,
            );
            std::mem::swap(&mut dh, &mut dh_next);
        }
        for (src, dst) in [(&dh, &dh0), (&dc, &dc0)] {
            launch!(
                convert_kernel::<F::C, F>,
                d_out,
                units,
                arg(src, units),
                arg(dst, units),
                0,
                0,
                units
            );
        }
    }
    (dh0, dc0)
}
