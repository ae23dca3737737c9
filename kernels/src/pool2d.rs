//! 2-d pooling over the last two dimensions of `[planes, H, W]`: the largest element of each window with its
//! position (max pooling), or the window's mean (average and adaptive average pooling), and their gradients.
//!
//! Which input positions each output reads is given per axis by a [`Windows`] table, so one kernel serves
//! strided windows (size, stride, padding, dilation, ceil mode) and adaptive ones alike. The forward kernels
//! run one unit per output, walking its window in row-major order as PyTorch's CPU kernels do (the first
//! largest wins, a NaN wins and a later NaN replaces it; sums in the compute type). The backward kernels run
//! one unit per input element and gather the outputs whose windows may hold it (the table's readers), in
//! output order: the sums PyTorch's CPU kernels add into the input's gradient, in their order, with no
//! atomics. A unit loops over at most 16,384 taps or readers per launch (lavapipe stops a unit's loops past
//! 65,535 iterations): a longer walk runs in launches of some rows each, which go on from where the launch
//! before stopped, so the result is the same; [`fits`] tells whether one row is within that bound.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::math::is_nan;
use crate::{FloatType, GpuBuffer, KernelError, Result, slices};

/// Which input positions each output of one pooled axis reads, and the mean's divisor along it: output `o`
/// reads the `count[o]` positions `first[o] + j·step` (`j < count[o]`) of `input`.
///
/// ```
/// use kernels::pool2d::Windows;
/// // Windows of 2 with stride 2 over 5 positions, padding 1: [-1, 0] [1, 2] [3, 4].
/// let w = Windows { input: 5, step: 1, first: vec![0, 1, 3], count: vec![1, 2, 2], divisor: vec![2, 2, 2] };
/// assert_eq!(w.readers(), (vec![0, 1, 1, 2, 2], vec![1, 2, 2, 3, 3]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Windows {
    /// Positions along the input axis.
    pub input: usize,
    /// Distance between a window's taps (the dilation; 1 for the means).
    pub step: usize,
    /// Each output's first position read.
    pub first: Vec<usize>,
    /// Each output's number of taps read.
    pub count: Vec<usize>,
    /// Each output's factor of the mean's divisor along this axis.
    pub divisor: Vec<usize>,
}

impl Windows {
    /// Outputs along the axis.
    pub fn output(&self) -> usize {
        self.first.len()
    }

    /// For each input position `i`, the outputs `lo[i]..hi[i]` whose windows may hold it (every output whose
    /// window spans it; one of a dilated window may step over it); `lo == hi` where none does.
    pub fn readers(&self) -> (Vec<usize>, Vec<usize>) {
        let (mut lo, mut hi) = (vec![usize::MAX; self.input], vec![0; self.input]);
        for o in 0..self.output() {
            if self.count[o] == 0 {
                continue;
            }
            let last = (self.first[o] + (self.count[o] - 1) * self.step).min(self.input.saturating_sub(1));
            for i in self.first[o]..=last {
                lo[i] = lo[i].min(o);
                hi[i] = hi[i].max(o + 1);
            }
        }
        for (l, h) in lo.iter_mut().zip(&hi) {
            *l = (*l).min(*h);
        }
        (lo, hi)
    }

    /// The most taps one window reads.
    pub fn widest(&self) -> usize {
        self.count.iter().copied().max().unwrap_or(0)
    }

    /// The most windows that may hold one input position.
    pub fn most_readers(&self) -> usize {
        let (lo, hi) = self.readers();
        lo.iter().zip(&hi).map(|(l, h)| h - l).max().unwrap_or(0)
    }

    /// Whether the table is consistent: one entry per output in each list, every tap inside the input, a
    /// positive step, divisors that fit 32 bits and are positive, and positions that fit 31.
    fn check(&self, op: &'static str, name: &str) -> Result<()> {
        let n = self.output();
        let consistent = self.count.len() == n
            && self.divisor.len() == n
            && self.step > 0
            && self.input < i32::MAX as usize
            && (0..n).all(|o| self.count[o] == 0 || self.first[o] + (self.count[o] - 1) * self.step < self.input)
            && self.divisor.iter().all(|&d| d > 0 && d <= u32::MAX as usize);
        if consistent {
            return Ok(());
        }
        Err(KernelError::InvalidArgument {
            op,
            message: format!("an inconsistent table of the {name}' windows: {self:?}"),
        })
    }

    /// The table as the kernels read it: `first`, `count`, `divisor` (one per output), then the readers' `lo`
    /// and `hi` (one per input position).
    fn table(&self, device: &crate::GpuDevice) -> GpuBuffer {
        let (lo, hi) = self.readers();
        let words: Vec<u32> = [&self.first, &self.count, &self.divisor, &lo, &hi]
            .into_iter()
            .flatten()
            .map(|&v| v as u32)
            .collect();
        GpuBuffer::from_bytes(device, bytemuck::cast_slice(&words))
    }
}

/// A pooling of `[planes, rows.input, cols.input]` into `[planes, rows.output(), cols.output()]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pooling {
    /// Planes pooled independently (`N·C`).
    pub planes: usize,
    /// The windows along the height.
    pub rows: Windows,
    /// The windows along the width.
    pub cols: Windows,
}

impl Pooling {
    /// Elements of the input.
    pub fn input_len(&self) -> usize {
        self.planes * self.rows.input * self.cols.input
    }

    /// Elements of the output.
    pub fn output_len(&self) -> usize {
        self.planes * self.rows.output() * self.cols.output()
    }

    /// The scalar sizes the kernels take.
    fn sizes(&self) -> SizesLaunch {
        SizesLaunch::new(
            self.rows.input,
            self.cols.input,
            self.rows.output(),
            self.cols.output(),
            self.rows.step,
            self.cols.step,
        )
    }
}

/// How a mean divides a window's sum by its row's and column's divisors `dh` and `dw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Divisor {
    /// By their product, `sum / (dh·dw)` (PyTorch's `avg_pool2d`).
    Product,
    /// By each in turn, `sum / dh / dw` (PyTorch's `adaptive_avg_pool2d`).
    PerAxis,
}

/// Whether these kernels take `pooling`: a window's row of taps, and the readers of an input position along
/// the width, within the loop iterations one unit may take in one launch (the kernels launch again for more
/// rows), and its positions within 32 bits.
///
/// ```
/// use kernels::pool2d::{Pooling, Windows, fits};
/// let axis = Windows { input: 4, step: 1, first: vec![0, 2], count: vec![2, 2], divisor: vec![2, 2] };
/// assert!(fits(&Pooling { planes: 3, rows: axis.clone(), cols: axis }));
/// ```
pub fn fits(pooling: &Pooling) -> bool {
    let limit = slices::ITERATIONS;
    let c = &pooling.cols;
    c.widest() <= limit
        && c.most_readers() <= limit
        && pooling.input_len().max(pooling.output_len()) < i32::MAX as usize
}

#[derive(CubeType, CubeLaunch)]
struct Sizes {
    height: usize,
    width: usize,
    out_h: usize,
    out_w: usize,
    step_h: usize,
    step_w: usize,
}

/// Output `u`'s plane, row and column.
#[cube]
fn output_at(u: usize, s: &Sizes) -> (usize, usize, usize) {
    (u / (s.out_h * s.out_w), (u / s.out_w) % s.out_h, u % s.out_w)
}

/// The part of the rows `lo..hi` (a window's, or an input element's readers') that a launch for rows
/// `begin..end` (counted from `lo`) takes.
#[cube]
fn launch_rows(lo: usize, hi: usize, begin: usize, end: usize) -> (usize, usize) {
    let mut from = lo + begin;
    if from > hi {
        from = hi;
    }
    let mut to = lo + end;
    if to > hi {
        to = hi;
    }
    (from, to)
}

/// `out[u]`: the largest of output `u`'s window (the first of equals; NaN wins, and a later NaN replaces it),
/// `at[u]` its position in the plane as an `int64` (low word, zero high word), over the window's rows
/// `begin..end`: a launch with `begin > 0` goes on from what the launch before left in `out` and `at`. `N` is
/// one lane.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn max_kernel<F: Float, N: Size>(
    x: &[F],
    rows: &[u32],
    cols: &[u32],
    out: &mut [F],
    at: &mut [u32],
    s: Sizes,
    begin: usize,
    end: usize,
) {
    let u = ABSOLUTE_POS;
    if u < out.len() {
        let (plane, oh, ow) = output_at(u, &s);
        let (h0, hc) = (rows[oh] as usize, rows[s.out_h + oh] as usize);
        let (w0, wc) = (cols[ow] as usize, cols[s.out_w + ow] as usize);
        let base = plane * s.height * s.width;
        let mut best_at = h0 * s.width + w0;
        let mut best = x[base + best_at];
        if begin > 0 {
            best_at = at[2 * u] as usize;
            best = out[u];
        }
        let (from, to) = launch_rows(0, hc, begin, end);
        for i in from..to {
            let row = (h0 + i * s.step_h) * s.width + w0;
            for j in 0..wc {
                let p = row + j * s.step_w;
                let v = x[base + p];
                if v > best || is_nan::<F, N>(v) {
                    best = v;
                    best_at = p;
                }
            }
        }
        out[u] = best;
        at[2 * u] = best_at as u32;
        at[2 * u + 1] = 0u32;
    }
}

/// The mean's divisor of output `(oh, ow)`: one product, or (`twice`) the axes' factors divided in turn.
#[cube]
fn divide<C: Float>(sum: C, rows: &[u32], cols: &[u32], oh: usize, ow: usize, s: &Sizes, #[comptime] twice: bool) -> C {
    let (dh, dw) = (rows[2 * s.out_h + oh], cols[2 * s.out_w + ow]);
    if twice {
        sum / C::cast_from(dh) / C::cast_from(dw)
    } else {
        sum / C::cast_from(dh * dw)
    }
}

/// `out[u]`: the sum of output `u`'s window in row-major order, divided ([`divide`]), over the window's rows
/// `begin..end`, the sum so far kept in `partial[u]` for the next launch.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn mean_kernel<F: Float, C: Float>(
    x: &[F],
    rows: &[u32],
    cols: &[u32],
    out: &mut [F],
    partial: &mut [C],
    s: Sizes,
    begin: usize,
    end: usize,
    #[comptime] twice: bool,
) {
    let u = ABSOLUTE_POS;
    if u < out.len() {
        let (plane, oh, ow) = output_at(u, &s);
        let (h0, hc) = (rows[oh] as usize, rows[s.out_h + oh] as usize);
        let (w0, wc) = (cols[ow] as usize, cols[s.out_w + ow] as usize);
        let base = plane * s.height * s.width;
        let mut sum = C::new(0.0);
        if begin > 0 {
            sum = partial[u];
        }
        let (from, to) = launch_rows(0, hc, begin, end);
        for i in from..to {
            let row = base + (h0 + i) * s.width + w0;
            for j in 0..wc {
                sum += C::cast_from(x[row + j]);
            }
        }
        partial[u] = sum;
        out[u] = F::cast_from(divide::<C>(sum, rows, cols, oh, ow, &s, twice));
    }
}

/// Input element `u`'s plane, row and column, and the outputs `(lo_h..hi_h, lo_w..hi_w)` that may read it.
#[cube]
fn readers_of(u: usize, rows: &[u32], cols: &[u32], s: &Sizes) -> (usize, usize, usize, usize, usize, usize, usize) {
    let plane = u / (s.height * s.width);
    let (ih, iw) = ((u / s.width) % s.height, u % s.width);
    let (rh, rw) = (3 * s.out_h, 3 * s.out_w);
    (
        plane,
        ih,
        iw,
        rows[rh + ih] as usize,
        rows[rh + s.height + ih] as usize,
        cols[rw + iw] as usize,
        cols[rw + s.width + iw] as usize,
    )
}

/// `dx[u]`: the sum, in output order, of the gradients `g` of the outputs whose maximum was input element `u`
/// (`at` as [`max_kernel`] wrote it), over its reader rows `begin..end`, the sum so far kept in `partial[u]`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn max_backward_kernel<F: Float, C: Float>(
    g: &[F],
    at: &[u32],
    rows: &[u32],
    cols: &[u32],
    dx: &mut [F],
    partial: &mut [C],
    s: Sizes,
    begin: usize,
    end: usize,
) {
    let u = ABSOLUTE_POS;
    if u < dx.len() {
        let (plane, ih, iw, lo_h, hi_h, lo_w, hi_w) = readers_of(u, rows, cols, &s);
        let p = ih * s.width + iw;
        let base = plane * s.out_h * s.out_w;
        let mut acc = C::new(0.0);
        if begin > 0 {
            acc = partial[u];
        }
        let (from, to) = launch_rows(lo_h, hi_h, begin, end);
        for oh in from..to {
            for ow in lo_w..hi_w {
                let o = base + oh * s.out_w + ow;
                if at[2 * o] as usize == p {
                    acc += C::cast_from(g[o]);
                }
            }
        }
        partial[u] = acc;
        dx[u] = F::cast_from(acc);
    }
}

/// `dx[u]`: the sum, in output order, of `g / divisor` ([`divide`]) over the outputs whose windows hold input
/// element `u` (windows of step 1), over its reader rows `begin..end`, the sum so far kept in `partial[u]`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn mean_backward_kernel<F: Float, C: Float>(
    g: &[F],
    rows: &[u32],
    cols: &[u32],
    dx: &mut [F],
    partial: &mut [C],
    s: Sizes,
    begin: usize,
    end: usize,
    #[comptime] twice: bool,
) {
    let u = ABSOLUTE_POS;
    if u < dx.len() {
        let (plane, ih, iw, lo_h, hi_h, lo_w, hi_w) = readers_of(u, rows, cols, &s);
        let base = plane * s.out_h * s.out_w;
        let mut acc = C::new(0.0);
        if begin > 0 {
            acc = partial[u];
        }
        let (from, to) = launch_rows(lo_h, hi_h, begin, end);
        for oh in from..to {
            let h0 = rows[oh] as usize;
            if h0 <= ih && ih < h0 + rows[s.out_h + oh] as usize {
                for ow in lo_w..hi_w {
                    let w0 = cols[ow] as usize;
                    if w0 <= iw && iw < w0 + cols[s.out_w + ow] as usize {
                        let grad = C::cast_from(g[base + oh * s.out_w + ow]);
                        acc += divide::<C>(grad, rows, cols, oh, ow, &s, twice);
                    }
                }
            }
        }
        partial[u] = acc;
        dx[u] = F::cast_from(acc);
    }
}

/// Checks `pooling` for `op` ([`Windows`]' consistency, [`fits`]; a mean reads windows of step 1 and a max
/// never an empty one) and `x` against its `len` elements of `dtype`.
fn check(op: &'static str, dtype: FloatType, x: &GpuBuffer, len: usize, pooling: &Pooling, max: bool) -> Result<()> {
    pooling.rows.check(op, "rows")?;
    pooling.cols.check(op, "columns")?;
    let refuse = |message: String| Err(KernelError::InvalidArgument { op, message });
    if !fits(pooling) {
        return refuse(format!(
            "windows of up to {} columns, or an input column read by up to {} windows, pass the {} loop iterations \
             a unit may take",
            pooling.cols.widest(),
            pooling.cols.most_readers(),
            slices::ITERATIONS
        ));
    }
    let steps = pooling.rows.step == 1 && pooling.cols.step == 1;
    let filled = pooling.rows.count.iter().chain(&pooling.cols.count).all(|&c| c > 0);
    if (max && !filled) || (!max && !steps) {
        return refuse("a max over an empty window, or a mean over a dilated one".into());
    }
    check_operands(op, dtype, x, &[(x, len, "input")])
}

/// The launches that cover `rows` rows of at most `per_row` iterations each: `(begin, end)` row ranges of at
/// most [`slices::ITERATIONS`] iterations (one range for an empty loop).
fn launches(rows: usize, per_row: usize) -> Vec<(usize, usize)> {
    let per_launch = (slices::ITERATIONS / per_row.max(1)).max(1);
    (0..slices::count(rows, per_launch))
        .map(|k| (k * per_launch, ((k + 1) * per_launch).min(rows.max(1))))
        .collect()
}

/// Max pooling of `x` (`pooling.input_len()` elements of `dtype`): the largest element of every window and
/// its position in its plane (`int64`s), as PyTorch's `max_pool2d_with_indices`.
///
/// ```no_run
/// use kernels::pool2d::{Pooling, Windows, max_forward};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 4.0, 3.0, 2.0]));
/// let axis = Windows { input: 2, step: 1, first: vec![0], count: vec![2], divisor: vec![2] };
/// let pooling = Pooling { planes: 1, rows: axis.clone(), cols: axis };
/// let (y, at) = max_forward(FloatType::F32, &x, &pooling)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[4.0]));
/// assert_eq!(at.to_bytes()?, bytemuck::cast_slice::<i64, u8>(&[1]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn max_forward(dtype: FloatType, x: &GpuBuffer, pooling: &Pooling) -> Result<(GpuBuffer, GpuBuffer)> {
    let op = "max_pool2d";
    check(op, dtype, x, pooling.input_len(), pooling, true)?;
    let n = pooling.output_len();
    let (out, at) = (
        GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes()),
        GpuBuffer::uninit(x.device(), n * 8),
    );
    if n == 0 {
        return Ok((out, at));
    }
    let (rows, cols) = (pooling.rows.table(x.device()), pooling.cols.table(x.device()));
    let (r, c) = (table_len(&pooling.rows), table_len(&pooling.cols));
    with_float_type!(dtype, F => {
        for (begin, end) in launches(pooling.rows.widest(), pooling.cols.widest()) {
            // SAFETY: unit `u < n` reads the tables' `first`, `count` at its output's row and column (inside
            // their `r` and `c` words), then `x[plane · H · W + p]` for `p` a tap of its window, inside the
            // plane (the tables were checked to keep every tap inside the input, and every window non-empty);
            // it reads (after the first launch, which wrote them) and writes `out[u]` and `at[2u]`, `at[2u + 1]`
            // (`n` elements, `2n` words). The launches run in order.
            unsafe {
                launch!(
                    max_kernel::<F>,
                    x,
                    n,
                    1usize,
                    arg(x, pooling.input_len()),
                    arg(&rows, r),
                    arg(&cols, c),
                    arg(&out, n),
                    arg(&at, 2 * n),
                    pooling.sizes(),
                    begin,
                    end,
                )
            }
        }
    });
    Ok((out, at))
}

/// Average pooling of `x` (`pooling.input_len()` elements of `dtype`): each window's sum over its divisor
/// (windows of step 1).
pub fn mean_forward(dtype: FloatType, x: &GpuBuffer, pooling: &Pooling, divisor: Divisor) -> Result<GpuBuffer> {
    let op = "avg_pool2d";
    check(op, dtype, x, pooling.input_len(), pooling, false)?;
    let twice = divisor == Divisor::PerAxis;
    let n = pooling.output_len();
    let out = GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let (rows, cols) = (pooling.rows.table(x.device()), pooling.cols.table(x.device()));
    let (r, c) = (table_len(&pooling.rows), table_len(&pooling.cols));
    with_float_type!(dtype, F => {
        let partial = slices::partials::<F>(x.device(), n, 1);
        for (begin, end) in launches(pooling.rows.widest(), pooling.cols.widest()) {
            // SAFETY: unit `u < n` reads its output's `first`, `count` and `divisor` words (inside the `r` and
            // `c` words of the tables) and the taps of its window, inside its plane of `x` (checked tables); it
            // reads (after the first launch, which wrote it) and writes `partial[u]`, and writes `out[u]`, of
            // `n` each. The launches run in order.
            unsafe {
                launch!(
                    mean_kernel::<F, <F as Compute>::C>,
                    x,
                    n,
                    arg(x, pooling.input_len()),
                    arg(&rows, r),
                    arg(&cols, c),
                    arg(&out, n),
                    arg(&partial, n),
                    pooling.sizes(),
                    begin,
                    end,
                    twice,
                )
            }
        }
    });
    Ok(out)
}

/// The input gradient of [`max_forward`]: each input element's sum of the output gradients `g` whose window
/// chose it (`at` as [`max_forward`] gave it), zeros elsewhere.
pub fn max_backward(dtype: FloatType, g: &GpuBuffer, at: &GpuBuffer, pooling: &Pooling) -> Result<GpuBuffer> {
    let op = "max_pool2d_backward";
    let n = pooling.output_len();
    check(op, dtype, g, n, pooling, true)?;
    if at.len() != 8 * n || !at.device().same(g.device()) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!(
                "the indices hold {} bytes on {}, expected {} on {}",
                at.len(),
                at.device(),
                8 * n,
                g.device()
            ),
        });
    }
    backward(dtype, g, Some(at), pooling, false)
}

/// The input gradient of [`mean_forward`]: each input element's sum of `g / divisor` over the windows that
/// hold it.
pub fn mean_backward(dtype: FloatType, g: &GpuBuffer, pooling: &Pooling, divisor: Divisor) -> Result<GpuBuffer> {
    let op = "avg_pool2d_backward";
    check(op, dtype, g, pooling.output_len(), pooling, false)?;
    backward(dtype, g, None, pooling, divisor == Divisor::PerAxis)
}

/// The gradient kernels' launches: [`max_backward_kernel`] with `at`, else [`mean_backward_kernel`].
fn backward(
    dtype: FloatType,
    g: &GpuBuffer,
    at: Option<&GpuBuffer>,
    pooling: &Pooling,
    twice: bool,
) -> Result<GpuBuffer> {
    let (n, len) = (pooling.output_len(), pooling.input_len());
    let dx = GpuBuffer::uninit(g.device(), len * dtype.size_in_bytes());
    if len == 0 {
        return Ok(dx);
    }
    let (rows, cols) = (pooling.rows.table(g.device()), pooling.cols.table(g.device()));
    let (r, c) = (table_len(&pooling.rows), table_len(&pooling.cols));
    with_float_type!(dtype, F => {
        let partial = slices::partials::<F>(g.device(), len, 1);
        for (begin, end) in launches(pooling.rows.most_readers(), pooling.cols.most_readers()) {
            // SAFETY: unit `u < len` reads its row's and column's readers `lo`, `hi` (words `3·out + i` and
            // `3·out + input + i` of tables of `r` and `c` words), and for outputs `o` of its plane in those
            // ranges (each below the output size, as `readers` makes them) `g[o]` of `n`, `at[2o]` of `2n` words,
            // and their `first`, `count`, `divisor` words; it reads (after the first launch, which wrote it) and
            // writes `partial[u]`, and writes `dx[u]`, of `len` each. The launches run in order.
            unsafe {
                match at {
                    Some(at) => launch!(
                        max_backward_kernel::<F, <F as Compute>::C>,
                        g,
                        len,
                        arg(g, n),
                        arg(at, 2 * n),
                        arg(&rows, r),
                        arg(&cols, c),
                        arg(&dx, len),
                        arg(&partial, len),
                        pooling.sizes(),
                        begin,
                        end,
                    ),
                    None => launch!(
                        mean_backward_kernel::<F, <F as Compute>::C>,
                        g,
                        len,
                        arg(g, n),
                        arg(&rows, r),
                        arg(&cols, c),
                        arg(&dx, len),
                        arg(&partial, len),
                        pooling.sizes(),
                        begin,
                        end,
                        twice,
                    ),
                }
            }
        }
    });
    Ok(dx)
}

/// Words of a [`Windows::table`].
fn table_len(w: &Windows) -> usize {
    3 * w.output() + 2 * w.input
}
