//! PyTorch's multi-layer LSTM (gate order i, f, g, o), one fused kernel per time step: unit `(b, j)` computes
//! its four gate pre-activations `x_t·W_ihᵀ + b_ih + h_{t-1}·W_hhᵀ + b_hh` for hidden unit `j`, then
//! `c = f·c + i·g` and `h = o·tanh(c)`. The state `h` is double-buffered (every unit reads all of
//! `h_{t-1}`); `h` and `c` are kept in the compute type (`f32` for the half types) between steps.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::activation::sigmoid::sigmoid;
use crate::activation::tanh::tanh;
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
}

/// The sigmoid of a scalar.
#[cube]
fn sigmoid1<C: Float>(x: C) -> C {
    sigmoid::<C, Const<1>>(Vector::new(x)).extract(0usize)
}

/// The tanh of a scalar.
#[cube]
fn tanh1<C: Float>(x: C) -> C {
    tanh::<C, Const<1>>(Vector::new(x)).extract(0usize)
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
    t: usize,
    batch: usize,
    inputs: usize,
    hidden: usize,
    out_stride: usize,
    out_col: usize,
    #[comptime] has_bias: bool,
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
            with_float_type!(dtype, F => run_cell::<F>(spec, &cell, &layer_in, [h0, c0], &layer_out, [&h_n, &c_n]));
        }
        layer_in = layer_out;
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
    // SAFETY (every launch): `Lstm::check` verified the element counts of `x` (`seq·batch·inputs`), the
    // weights, the biases (read only when present) and the states (`state`); `h_prev`, `h_next` and `c` are
    // allocated here with `units` elements of `F::C`. The step kernel's unit `(b, j) < units` reads row
    // `t·batch + b` of `x`, gate rows `q·hidden + j < 4·hidden` of the weights, row `b` of `h_prev`, and
    // writes `h_next`, `c` at its own index and `out` at `(t·batch + b)·dirs·hidden + out_col + j < out_len`.
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
                t,
                spec.batch,
                cell.inputs,
                spec.hidden,
                dirs * spec.hidden,
                cell.out_col,
                w.biases.is_some(),
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
