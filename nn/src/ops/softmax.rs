//! Softmax and log-softmax along one dimension, and their backward from the forward's output: on the CPU
//! vectorised row and column loops split over nn's threads (the backward's sums in `f64`), on a device the
//! softmax kernels.

use half::{bf16, f16};
use kernels::{GpuDevice, Real};

use super::elementwise::widened;
use super::map::{self, CHUNK, multiversion};
use super::{GRADIENT, Op, check_like, run};
use crate::tensor::autograd::{Backward, Saved};
use crate::tensor::cast::cast_data;
use crate::tensor::device::probe;
use crate::tensor::storage::CpuData;
use crate::threads;
use crate::{DType, Error, Result, Tensor};

/// Softmax (or log-softmax) along `dim`; inputs `[x]`.
#[derive(Clone, Copy)]
struct Softmax {
    dim: usize,
    log: bool,
}

/// Softmax's (or log-softmax's) input gradient from its output `y` and `dy` along `dim`; inputs `[y, dy]`.
#[derive(Clone, Copy)]
struct SoftmaxBackward(Softmax);

fn forward_name(log: bool) -> &'static str {
    if log { "log_softmax" } else { "softmax" }
}

fn backward_name(log: bool) -> &'static str {
    if log {
        "log_softmax_backward"
    } else {
        "softmax_backward"
    }
}

/// The kernels' layout of `x` along `dim`.
fn layout(x: &Tensor, dim: usize) -> kernels::softmax::Layout {
    kernels::softmax::Layout::around(x.shape(), dim)
}

/// The probe's input: the probe sweep along the middle of `(1, n, 1)`.
fn probe_input(dtype: DType) -> Result<Tensor> {
    let xs = probe::inputs();
    let n = xs.len();
    Tensor::from_vec(xs, [1, n, 1])?.to_dtype(dtype)
}

impl Op for Softmax {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        forward_name(self.log)
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let op = self.name();
        let (_, size, inner) = x.split_at_dim(self.dim);
        let (n, log) = (x.numel(), self.log);
        x.map_float_data(op, |data| match data {
            CpuData::F32(v) => Some(map::filled(n, |out| softmax(v, out, size, inner, log))),
            CpuData::F64(v) => Some(map::filled(n, |out| softmax(v, out, size, inner, log))),
            CpuData::F16(_) | CpuData::BF16(_) => Some(widened(data, |v| {
                map::filled(n, |out| softmax(v, out, size, inner, log))
            })),
            _ => None,
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let x = inputs[0];
        x.map_gpu(self.name(), |dtype, xb| {
            kernels::softmax::forward(dtype, xb, layout(x, self.dim), self.log)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let case = Softmax { dim: 1, log: self.log };
        Ok(vec![(case, vec![probe_input(dtype)?])])
    }

    fn gradient(&self, _: &[&Tensor], y: &Tensor) -> Option<Box<dyn Backward>> {
        let (op, y) = (*self, Saved::result(y, self.name()));
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(run(&SoftmaxBackward(op), &[y.get(op.name())?, &g[0]])?)])
        }))
    }
}

impl Op for SoftmaxBackward {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        backward_name(self.0.log)
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (y, op) = (inputs[0], self.name());
        let dy = if inputs[1].dtype() == y.dtype() {
            inputs[1].clone()
        } else {
            inputs[1].to_dtype(y.dtype())?
        };
        let (_, size, inner) = y.split_at_dim(self.0.dim);
        let (n, log) = (y.numel(), self.0.log);
        // PyTorch's kernel along the last dimension rounds each row's sum to the dtype (for f16 and bf16).
        let last = self.0.dim + 1 == y.rank();
        let round_sum: fn(f64) -> f64 = match y.dtype() {
            DType::F16 if last => |s| f16::from_f64(s).to_f64(),
            DType::BF16 if last => |s| bf16::from_f64(s).to_f64(),
            _ => |s| s,
        };
        let data = y.read_cpu(op, |yd| {
            dy.read_cpu(op, |gd| match (yd, gd) {
                (CpuData::F32(y), CpuData::F32(g)) => Ok(map::filled(n, |dx| {
                    host_backward(y, g, dx, size, inner, log, round_sum)
                })),
                (CpuData::F64(y), CpuData::F64(g)) => Ok(map::filled(n, |dx| {
                    host_backward(y, g, dx, size, inner, log, round_sum)
                })),
                (CpuData::F16(_) | CpuData::BF16(_), _) => Ok(widened(yd, |y| {
                    let CpuData::F32(g) = cast_data(gd, DType::F32) else {
                        unreachable!("cast to f32")
                    };
                    map::filled(n, |dx| host_backward(y, &g, dx, size, inner, log, round_sum))
                })),
                _ => Err(Error::float_only(op, yd.dtype())),
            })
        })???;
        Ok(Tensor::from_cpu(data, y.shape().clone()))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (y, op) = (inputs[0], self.name());
        let dy = inputs[1].gpu_buffer(op)?;
        y.map_gpu(op, |dtype, yb| {
            let last = self.0.dim + 1 == y.rank();
            kernels::softmax::backward(dtype, yb, &dy, layout(y, self.0.dim), self.0.log, last)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let forward = Softmax {
            dim: 1,
            log: self.0.log,
        };
        let y = forward.cpu(&[&probe_input(dtype)?])?;
        let n = y.numel();
        let dy = Tensor::from_vec(probe::gradients(n), [1, n, 1])?.to_dtype(dtype)?;
        Ok(vec![(SoftmaxBackward(forward), vec![y, dy])])
    }
}

impl Tensor {
    /// Softmax along `dim`: `exp(x - max) / sum(exp(x - max))`.
    ///
    /// ```
    /// let t = nn::Tensor::from_vec(vec![0.0f64, 0.0], [2]).unwrap();
    /// assert_eq!(t.softmax(-1).unwrap().to_vec::<f64>().unwrap(), vec![0.5, 0.5]);
    /// ```
    pub fn softmax(&self, dim: isize) -> Result<Tensor> {
        let dim = self.dim_index("softmax", dim)?;
        run(&Softmax { dim, log: false }, &[self])
    }

    /// Log-softmax along `dim`: `x - max - log(sum(exp(x - max)))`.
    pub fn log_softmax(&self, dim: isize) -> Result<Tensor> {
        let dim = self.dim_index("log_softmax", dim)?;
        run(&Softmax { dim, log: true }, &[self])
    }

    /// The shape read as `(outer, size of dim, inner)`.
    pub(crate) fn split_at_dim(&self, d: usize) -> (usize, usize, usize) {
        let layout = kernels::layout::Layout::around(self.shape(), d);
        (layout.outer, layout.channels, layout.inner)
    }
}

/// Softmax's backward from its output `y`: `dx = y · (dy - Σ dy·y)` along `dim` (PyTorch's
/// `_softmax_backward_data`).
///
/// ```
/// use nn::{Tensor, functional::softmax_backward};
/// let y = Tensor::from_vec(vec![0.5f64, 0.5], [2]).unwrap();
/// let dy = Tensor::from_vec(vec![1.0f64, 0.0], [2]).unwrap();
/// assert_eq!(softmax_backward(&y, &dy, -1).unwrap().to_vec::<f64>().unwrap(), vec![0.25, -0.25]);
/// ```
pub fn softmax_backward(y: &Tensor, dy: &Tensor, dim: isize) -> Result<Tensor> {
    backward(y, dy, dim, false)
}

/// Log-softmax's backward from its output `y`: `dx = dy - e^y · Σ dy` along `dim` (PyTorch's
/// `_log_softmax_backward_data`).
pub fn log_softmax_backward(y: &Tensor, dy: &Tensor, dim: isize) -> Result<Tensor> {
    backward(y, dy, dim, true)
}

fn backward(y: &Tensor, dy: &Tensor, dim: isize, log: bool) -> Result<Tensor> {
    let op = backward_name(log);
    check_like(op, y, dy, GRADIENT)?;
    let dim = y.dim_index(op, dim)?;
    run(&SoftmaxBackward(Softmax { dim, log }), &[y, dy])
}

/// Lanes of the reductions: partial results kept in a fixed array vectorise.
const LANES: usize = 16;

multiversion! {
    fn softmax_rows<R: Real>(x: &[R], out: &mut [R], size: usize, log: bool) {
        for (row, dst) in x.chunks(size).zip(out.chunks_mut(size)) {
            softmax_row(row, dst, log);
        }
    }
}

/// Softmax (or log-softmax) of one contiguous row: max, sum of `e^(x - max)`, then scale (or subtract the log).
#[inline(always)]
fn softmax_row<R: Real>(row: &[R], dst: &mut [R], log: bool) {
    // The max skips NaNs (one `max` instruction per vector): a NaN in the row still makes every output NaN,
    // through its `e^(x - max)` in the sum below.
    let larger = |m: R, v: R| if v > m { v } else { m };
    let mut m = [R::of(f64::NEG_INFINITY); LANES];
    let mut blocks = row.chunks_exact(LANES);
    for b in &mut blocks {
        for (m, &v) in m.iter_mut().zip(b) {
            *m = larger(*m, v);
        }
    }
    let mut max = m.iter().fold(R::of(f64::NEG_INFINITY), |a, &b| larger(a, b));
    for &v in blocks.remainder() {
        max = larger(max, v);
    }
    if max == R::of(f64::NEG_INFINITY) || max == R::of(f64::INFINITY) {
        // A row of -inf, or one with +inf: PyTorch's result (NaN, or 1 at the +inf) comes from x - max as is.
        max = if max == R::of(f64::INFINITY) { max } else { R::ZERO };
    }
    // `x - max <= 0` (or NaN, which the exp passes on): the exp needs no overflow handling. The exps go to
    // `dst` for log-softmax too (which overwrites them below): the output's lines are then fetched while the
    // exps are computed, instead of in the last, memory-bound pass.
    let mut acc = [R::ZERO; LANES];
    let mut blocks = row.chunks_exact(LANES);
    let mut outs = dst.chunks_exact_mut(LANES);
    for (b, o) in (&mut blocks).zip(&mut outs) {
        for ((a, &v), o) in acc.iter_mut().zip(b).zip(o.iter_mut()) {
            let e = (v - max).exp_nonpositive();
            *o = e;
            *a = *a + e;
        }
    }
    let mut sum = acc.iter().fold(R::ZERO, |a, &b| a + b);
    for (&v, o) in blocks.remainder().iter().zip(outs.into_remainder()) {
        let e = (v - max).exp_nonpositive();
        *o = e;
        sum = sum + e;
    }
    if log {
        // `(x - max) - ln(sum)`, as PyTorch: folding `max + ln(sum)` first would round at `max`'s scale.
        let log_sum = sum.ln();
        for (o, &v) in dst.iter_mut().zip(row) {
            *o = (v - max) - log_sum;
        }
    } else {
        let scale = R::ONE / sum;
        for o in dst.iter_mut() {
            *o = *o * scale;
        }
    }
}

multiversion! {
    fn softmax_columns<R: Real>(x: &[R], out: &mut [R], size: usize, inner: usize, log: bool) {
        // One block of `size` rows of `inner` contiguous lanes: reduce down the rows, lane by lane.
        let mut max = vec![R::of(f64::NEG_INFINITY); inner];
        for k in 0..size {
            for (m, &v) in max.iter_mut().zip(&x[k * inner..(k + 1) * inner]) {
                *m = m.max_nan(v);
            }
        }
        for m in max.iter_mut() {
            if *m == R::of(f64::NEG_INFINITY) {
                *m = R::ZERO;
            }
        }
        let mut sum = vec![R::ZERO; inner];
        for k in 0..size {
            let (src, dst) = (&x[k * inner..(k + 1) * inner], &mut out[k * inner..(k + 1) * inner]);
            for (((o, &v), &m), s) in dst.iter_mut().zip(src).zip(&max).zip(sum.iter_mut()) {
                let e = (v - m).exp();
                *o = e;
                *s = *s + e;
            }
        }
        if log {
            // Each lane's `ln(sum)` once, then `(x - max) - ln(sum)` as PyTorch.
            for s in sum.iter_mut() {
                *s = s.ln();
            }
        }
        for k in 0..size {
            let (src, dst) = (&x[k * inner..(k + 1) * inner], &mut out[k * inner..(k + 1) * inner]);
            for (((o, &v), &m), &s) in dst.iter_mut().zip(src).zip(&max).zip(&sum) {
                *o = if log { (v - m) - s } else { *o / s };
            }
        }
    }
}

/// Softmax (or log-softmax) of `x` read as `(outer, size, inner)` along the middle dimension, into `out`.
fn softmax<R: Real>(x: &[R], out: &mut [R], size: usize, inner: usize, log: bool) {
    if size == 0 || x.is_empty() {
        return;
    }
    let block = size * inner;
    let run = move |x: &[R], out: &mut [R]| {
        if inner == 1 {
            softmax_rows(x, out, size, log);
        } else {
            for (x, out) in x.chunks(block).zip(out.chunks_mut(block)) {
                softmax_columns(x, out, size, inner, log);
            }
        }
    };
    in_blocks(out, block, |at, out| run(&x[at..at + out.len()], out));
}

/// Runs `f(first element, piece)` on pieces of `out` of whole `block`-element blocks, about a chunk's worth of
/// elements each, split over the threads when `out` is large enough.
fn in_blocks<R: Send>(out: &mut [R], block: usize, f: impl Fn(usize, &mut [R]) + Sync) {
    let per_task = (CHUNK / block).max(1) * block;
    let parts = threads::parts_for(out.len(), CHUNK);
    threads::for_each_piece(out, per_task, parts, f);
}

/// Softmax's (or log-softmax's) input gradient `dx` from its output `y` and `dy`, read as `(outer, size,
/// inner)` along the middle dimension: `y · (dy - Σ dy·y)` (or `dy - e^y · Σ dy`), each sum in `f64`, passed
/// through `round_sum` for rows (`inner` 1).
fn host_backward<R: Real>(
    y: &[R],
    dy: &[R],
    dx: &mut [R],
    size: usize,
    inner: usize,
    log: bool,
    round_sum: fn(f64) -> f64,
) {
    if size == 0 || y.is_empty() {
        return;
    }
    let block = size * inner;
    in_blocks(dx, block, |at, dx| {
        let (y, dy) = (&y[at..at + dx.len()], &dy[at..at + dx.len()]);
        if inner == 1 {
            backward_rows(y, dy, dx, size, log, round_sum);
        } else {
            for ((y, dy), dx) in y.chunks(block).zip(dy.chunks(block)).zip(dx.chunks_mut(block)) {
                backward_columns(y, dy, dx, size, inner, log);
            }
        }
    });
}

multiversion! {
    fn backward_rows<R: Real>(y: &[R], dy: &[R], dx: &mut [R], size: usize, log: bool, round_sum: fn(f64) -> f64) {
        for ((y, dy), dx) in y.chunks(size).zip(dy.chunks(size)).zip(dx.chunks_mut(size)) {
            let mut acc = [0.0f64; LANES];
            let (mut ys, mut gs) = (y.chunks_exact(LANES), dy.chunks_exact(LANES));
            for (y, g) in (&mut ys).zip(&mut gs) {
                for ((a, &y), &g) in acc.iter_mut().zip(y).zip(g) {
                    *a += if log { g.f64() } else { g.f64() * y.f64() };
                }
            }
            let mut sum = acc.iter().sum::<f64>();
            for (&y, &g) in ys.remainder().iter().zip(gs.remainder()) {
                sum += if log { g.f64() } else { g.f64() * y.f64() };
            }
            let sum = R::of(round_sum(sum));
            for ((d, &y), &g) in dx.iter_mut().zip(y).zip(dy) {
                *d = if log { g - y.exp() * sum } else { y * (g - sum) };
            }
        }
    }
}

multiversion! {
    fn backward_columns<R: Real>(y: &[R], dy: &[R], dx: &mut [R], size: usize, inner: usize, log: bool) {
        // One block of `size` rows of `inner` contiguous lanes: each lane's sum down the rows, then the rows.
        let mut sum = vec![0.0f64; inner];
        for k in 0..size {
            let (y, g) = (&y[k * inner..(k + 1) * inner], &dy[k * inner..(k + 1) * inner]);
            for ((s, &y), &g) in sum.iter_mut().zip(y).zip(g) {
                *s += if log { g.f64() } else { g.f64() * y.f64() };
            }
        }
        let sum: Vec<R> = sum.into_iter().map(R::of).collect();
        for k in 0..size {
            let rows = k * inner..(k + 1) * inner;
            let (y, g, d) = (&y[rows.clone()], &dy[rows.clone()], &mut dx[rows]);
            for (((d, &y), &g), &s) in d.iter_mut().zip(y).zip(g).zip(&sum) {
                *d = if log { g - y.exp() * s } else { y * (g - s) };
            }
        }
    }
}
