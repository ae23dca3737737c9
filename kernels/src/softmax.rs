//! Softmax and LogSoftmax over one dimension, forward and backward.
//!
//! The tensor is seen as `[outer, size, inner]` around the reduced dimension (a [`Layout`] of `size` channels). Each unit owns one line (a
//! vector of `N` neighbouring `inner` positions) and walks its `size` elements: max, then the sum of
//! exponentials, then the outputs — in the compute type (`f32` for the half types), as PyTorch does. Lines
//! that are rows (the last dimension, `inner = 1`) of [`ROW_CUBE_FROM`] elements or more are each walked by a
//! whole cube instead, its units taking every `CUBE_SIZE`-th element (reads side by side) and combining their
//! maxima and sums in shared memory: one unit per row left most of a GPU idle (5 % of its copy rate on an H200
//! at rows of 1,024). Lines across an inner dimension of [`LINE_CUBE_FROM`] elements or more run on a cube each
//! too, each unit's loops staying far below the 65,535 iterations Mesa's lavapipe stops at; lines of more than
//! 4,194,304 elements on a cube per slice of the line, merged by a second kernel.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{CUBE_SIZE, arg, check_same, launch, vector_size};
use crate::math::{exp_reduced, is_nan};
use crate::reduce::{cube_max, cube_sum};
use crate::softmax_slices;
use crate::{FloatType, GpuBuffer, Result};

/// A tensor seen as `[outer, channels, inner]` around the softmax dimension (of length `channels`).
pub use crate::layout::Layout;

/// The lines a kernel walks: `count` lines of `size` elements, in vectors (`inner_vectors` is `inner / N`).
#[derive(CubeLaunch, CubeType)]
struct Lines {
    count: usize,
    size: usize,
    inner_vectors: usize,
}

/// Index of element `s` of line `line`, in vectors.
#[cube]
fn at(lines: &Lines, line: usize, s: usize) -> usize {
    let o = line / lines.inner_vectors;
    let i = line % lines.inner_vectors;
    (o * lines.size + s) * lines.inner_vectors + i
}

/// Terms summed into a partial sum before it joins the line's total: a two-level sum whose rounding error
/// grows with `BLOCK + size / BLOCK` rather than `size` (compensated sums do not survive the shader compilers'
/// algebraic simplification).
const BLOCK: usize = 16;

/// `output = softmax(input)` (or `log_softmax` when `log`) along each line.
#[cube(launch_unchecked)]
fn softmax_kernel<F: Float, C: Float, N: Size>(
    input: &[Vector<F, N>],
    output: &mut [Vector<F, N>],
    lines: Lines,
    #[comptime] log: bool,
) {
    let line = ABSOLUTE_POS;
    if line < lines.count {
        let mut max = Vector::<C, N>::cast_from(input[at(&lines, line, 0)]);
        for s in 1..lines.size {
            let x = Vector::<C, N>::cast_from(input[at(&lines, line, s)]);
            max = select_many(x.greater_than(&max).or(x.is_nan()), x, max);
        }
        let mut sum = Vector::<C, N>::new(C::new(0.0));
        let mut block = Vector::<C, N>::new(C::new(0.0));
        for s in 0..lines.size {
            block += exp_reduced::<C, N>(Vector::<C, N>::cast_from(input[at(&lines, line, s)]) - max);
            if (s + 1) % BLOCK == 0 {
                sum += block;
                block = Vector::<C, N>::new(C::new(0.0));
            }
        }
        sum += block;
        if log {
            // `(x - max) - ln(sum)`, as PyTorch: folding `max + ln(sum)` first would round at `max`'s scale.
            let log_sum = sum.ln();
            for s in 0..lines.size {
                let k = at(&lines, line, s);
                output[k] = Vector::<F, N>::cast_from((Vector::<C, N>::cast_from(input[k]) - max) - log_sum);
            }
        } else {
            let scale = Vector::<C, N>::new(C::new(1.0)) / sum;
            for s in 0..lines.size {
                let k = at(&lines, line, s);
                output[k] =
                    Vector::<F, N>::cast_from(exp_reduced::<C, N>(Vector::<C, N>::cast_from(input[k]) - max) * scale);
            }
        }
    }
}

/// Rows of at least this many elements are walked by a cube each, shorter ones by a unit each.
pub const ROW_CUBE_FROM: usize = 128;

/// Lines across an inner dimension (elements `inner` apart) of at least this many elements are walked by a cube
/// each too: a unit loops three times over its line, and Mesa's lavapipe ends a loop after 65,535 iterations
/// without an error (a softmax over 21,846 elements or more would be cut short).
pub const LINE_CUBE_FROM: usize = 4096;

/// The index of line `r`'s first element, for `rows` lines of `size` elements `inner` apart (`[outer, size,
/// inner]` with `rows = outer · inner`); cubes past the last line (the grid may be larger) take line 0.
#[cube]
pub(crate) fn line_start(r: usize, rows: usize, size: usize, inner: usize) -> usize {
    let line = select(r < rows, r, 0);
    (line / inner) * size * inner + line % inner
}

/// [`softmax_kernel`] for `rows` lines of `size` elements `inner` apart (rows of contiguous elements when
/// `inner` is 1), cube `r` on line `r`. `N` is one lane (for [`cube_max`]'s NaN test).
#[cube(launch_unchecked)]
fn softmax_rows_kernel<F: Float, C: Float, N: Size>(
    input: &[F],
    output: &mut [F],
    rows: usize,
    size: usize,
    inner: usize,
    #[comptime] log: bool,
) {
    let r = CUBE_POS;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    // Cubes past the last line join the reductions on line 0 and write nothing.
    let base = line_start(r, rows, size, inner);
    let unit = UNIT_POS as usize;
    let mut max = C::cast_from(input[base]);
    let mut s = unit;
    while s < size {
        let x = C::cast_from(input[base + s * inner]);
        if !is_nan::<C, N>(max) && (x > max || is_nan::<C, N>(x)) {
            max = x;
        }
        s += CUBE_SIZE as usize;
    }
    let max = cube_max::<C, N>(max, &mut partial);
    let mut sum = Vector::<C, N>::new(C::new(0.0));
    s = unit;
    while s < size {
        sum += exp_reduced::<C, N>(Vector::<C, N>::new(C::cast_from(input[base + s * inner]) - max));
        s += CUBE_SIZE as usize;
    }
    let sum = cube_sum::<C>(sum.extract(0usize), &mut partial);
    if r < rows {
        let log_sum = Vector::<C, N>::new(sum).ln().extract(0usize);
        let scale = C::new(1.0) / sum;
        s = unit;
        while s < size {
            let x = C::cast_from(input[base + s * inner]) - max;
            if log {
                output[base + s * inner] = F::cast_from(x - log_sum);
            } else {
                output[base + s * inner] =
                    F::cast_from(exp_reduced::<C, N>(Vector::<C, N>::new(x)).extract(0usize) * scale);
            }
            s += CUBE_SIZE as usize;
        }
    }
}

/// [`softmax_backward_kernel`] for `rows` lines of `size` elements `inner` apart, cube `r` on line `r`.
#[cube(launch_unchecked)]
fn softmax_rows_backward_kernel<F: Float, C: Float, N: Size>(
    y: &[F],
    dy: &[F],
    dx: &mut [F],
    rows: usize,
    size: usize,
    inner: usize,
    #[comptime] log: bool,
    #[comptime] round_sum: bool,
) {
    let r = CUBE_POS;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let base = line_start(r, rows, size, inner);
    let unit = UNIT_POS as usize;
    let mut sum = C::new(0.0);
    let mut s = unit;
    while s < size {
        let g = C::cast_from(dy[base + s * inner]);
        if log {
            sum += g;
        } else {
            sum += g * C::cast_from(y[base + s * inner]);
        }
        s += CUBE_SIZE as usize;
    }
    let mut sum = cube_sum::<C>(sum, &mut partial);
    if round_sum {
        sum = C::cast_from(F::cast_from(sum));
    }
    if r < rows {
        s = unit;
        while s < size {
            let out = C::cast_from(y[base + s * inner]);
            let g = C::cast_from(dy[base + s * inner]);
            if log {
                let e = exp_reduced::<C, N>(Vector::<C, N>::new(out)).extract(0usize);
                dx[base + s * inner] = F::cast_from(g - e * sum);
            } else {
                dx[base + s * inner] = F::cast_from(out * (g - sum));
            }
            s += CUBE_SIZE as usize;
        }
    }
}

/// Softmax's `dx = y·(dy - Σ dy·y)`, or LogSoftmax's `dx = dy - e^y·Σ dy`, from the output `y`.
#[cube(launch_unchecked)]
fn softmax_backward_kernel<F: Float, C: Float, N: Size>(
    y: &[Vector<F, N>],
    dy: &[Vector<F, N>],
    dx: &mut [Vector<F, N>],
    lines: Lines,
    #[comptime] log: bool,
    #[comptime] round_sum: bool,
) {
    let line = ABSOLUTE_POS;
    if line < lines.count {
        let mut sum = Vector::<C, N>::new(C::new(0.0));
        let mut block = Vector::<C, N>::new(C::new(0.0));
        for s in 0..lines.size {
            let k = at(&lines, line, s);
            let g = Vector::<C, N>::cast_from(dy[k]);
            if log {
                block += g;
            } else {
                block += g * Vector::<C, N>::cast_from(y[k]);
            }
            if (s + 1) % BLOCK == 0 {
                sum += block;
                block = Vector::<C, N>::new(C::new(0.0));
            }
        }
        sum += block;
        if round_sum {
            sum = Vector::<C, N>::cast_from(Vector::<F, N>::cast_from(sum));
        }
        for s in 0..lines.size {
            let k = at(&lines, line, s);
            let out = Vector::<C, N>::cast_from(y[k]);
            let g = Vector::<C, N>::cast_from(dy[k]);
            if log {
                dx[k] = Vector::<F, N>::cast_from(g - exp_reduced::<C, N>(out) * sum);
            } else {
                dx[k] = Vector::<F, N>::cast_from(out * (g - sum));
            }
        }
    }
}

/// `softmax(x)` (or `log_softmax(x)` when `log`) in a new buffer.
pub fn forward(dtype: FloatType, x: &GpuBuffer, layout: Layout, log: bool) -> Result<GpuBuffer> {
    let len = layout.check("softmax", dtype, x)?;
    x.device().check_math("softmax", dtype)?;
    let output = GpuBuffer::uninit(x.device(), x.len());
    if len > 0 {
        with_float_type!(dtype, F => launch::<F>(Buffers::Forward { x, output: &output }, layout, log));
    }
    Ok(output)
}

/// The input gradient of `softmax` (or `log_softmax` when `log`) from its output `y` and `dy`. With `round_sum`
/// each line's sum (`Σ dy·y`, or `Σ dy`) is rounded to the element type before it is used, as PyTorch's CPU
/// kernel along the last dimension rounds it for `f16` and `bf16` (for `f32` and `f64` it changes nothing).
pub fn backward(
    dtype: FloatType,
    y: &GpuBuffer,
    dy: &GpuBuffer,
    layout: Layout,
    log: bool,
    round_sum: bool,
) -> Result<GpuBuffer> {
    let len = layout.check("softmax backward", dtype, y)?;
    check_same("softmax backward", y, &[dy])?;
    y.device().check_math("softmax backward", dtype)?;
    let dx = GpuBuffer::uninit(y.device(), y.len());
    if len > 0 {
        with_float_type!(dtype, F => launch::<F>(Buffers::Backward { y, dy, dx: &dx, round_sum }, layout, log));
    }
    Ok(dx)
}

/// The buffers of one softmax launch: the forward's input and output, or the backward's `y`, `dy` and `dx`.
enum Buffers<'a> {
    Forward {
        x: &'a GpuBuffer,
        output: &'a GpuBuffer,
    },
    Backward {
        y: &'a GpuBuffer,
        dy: &'a GpuBuffer,
        dx: &'a GpuBuffer,
        round_sum: bool,
    },
}

/// Launches the forward or backward kernel over `layout`'s lines (one unit per vector of `inner` positions), or
/// one cube per line for rows (`inner` 1) of [`ROW_CUBE_FROM`] elements or more and for any line of
/// [`LINE_CUBE_FROM`] or more, or for lines of more than 4,194,304 elements one cube per slice of a line.
fn launch<F: Compute>(buffers: Buffers<'_>, layout: Layout, log: bool) {
    let len = layout.len();
    let size = layout.channels;
    if size > softmax_slices::SLICE {
        // SAFETY: every buffer holds `len ≥ 1` elements of `F` (`check`, and `check_same` for the backward's).
        unsafe {
            match buffers {
                Buffers::Forward { x, output } => softmax_slices::forward::<F>(x, output, layout, log),
                Buffers::Backward { y, dy, dx, round_sum } => {
                    softmax_slices::backward::<F>(y, dy, dx, layout, log, round_sum)
                }
            }
        }
        return;
    }
    if (layout.inner == 1 && size >= ROW_CUBE_FROM) || size >= LINE_CUBE_FROM {
        let (rows, inner) = (layout.outer * layout.inner, layout.inner);
        let cubes = rows * CUBE_SIZE as usize;
        // SAFETY: every buffer holds `len = outer·size·inner` elements of `F` (`check`, and `check_same` for the
        // backward's); cube `r` reads line `l = r` (or 0 when `r ≥ rows`)'s elements `(l / inner)·size·inner +
        // l % inner + s·inner` with `s < size`, below `len`, and writes only when `r < rows`, each unit its own
        // elements of that line.
        unsafe {
            match buffers {
                Buffers::Forward { x, output } => launch!(
                    softmax_rows_kernel::<F, F::C>,
                    x,
                    cubes,
                    1usize,
                    arg(x, len),
                    arg(output, len),
                    rows,
                    size,
                    inner,
                    log,
                ),
                Buffers::Backward { y, dy, dx, round_sum } => launch!(
                    softmax_rows_backward_kernel::<F, F::C>,
                    y,
                    cubes,
                    1usize,
                    arg(y, len),
                    arg(dy, len),
                    arg(dx, len),
                    rows,
                    size,
                    inner,
                    log,
                    round_sum,
                ),
            }
        }
        return;
    }
    let vector = vector_size(layout.inner, layout.inner);
    let lines = layout.outer * layout.inner / vector;
    let walk = || LinesLaunch::new(lines, layout.channels, layout.inner / vector);
    // SAFETY: every buffer holds `len` elements of `F` (`check`, and `check_same` for the backward's); a unit
    // touches only its own line's elements, at indices below `len` as `line < lines` and `s < size`.
    unsafe {
        match buffers {
            Buffers::Forward { x, output } => launch!(
                softmax_kernel::<F, F::C>,
                x,
                lines,
                vector,
                arg(x, len),
                arg(output, len),
                walk(),
                log,
            ),
            Buffers::Backward { y, dy, dx, round_sum } => launch!(
                softmax_backward_kernel::<F, F::C>,
                y,
                lines,
                vector,
                arg(y, len),
                arg(dy, len),
                arg(dx, len),
                walk(),
                log,
                round_sum,
            ),
        }
    }
}
