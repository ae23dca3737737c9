//! Softmax and LogSoftmax over lines longer than [`SLICE`] elements, forward and backward, in slices: one cube
//! per slice of a line reduces it (the forward its maximum `m_s` and `Σ e^(x - m_s)`, the backward its share of
//! `Σ dy·y` or `Σ dy`), one unit per line merges the slices (the forward's sum as `Σ_s sum_s · e^(m_s - M)` with
//! `M` the line's maximum), and one unit per element writes the result. Mesa's lavapipe ends a unit's loops
//! after 65,535 iterations without an error, and one cube walking a line three times (the forward) passes that
//! from 5.6 million elements on.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::launch::{CUBE_SIZE, arg, launch};
use crate::math::{exp_reduced, is_nan};
use crate::reduce::{cube_max, cube_sum};
use crate::slices;
use crate::softmax::line_start;
use crate::{GpuBuffer, layout::Layout};

/// Elements of a line one cube takes: two passes of 16,384 iterations per unit.
pub(crate) const SLICE: usize = CUBE_SIZE as usize * 16_384;

/// `[outer, size, inner]`'s lines: `rows = outer · inner` lines of `size` elements `inner` apart, in `slices`
/// slices of `per_slice`.
#[derive(CubeLaunch, CubeType, Clone, Copy)]
struct Lines {
    rows: usize,
    size: usize,
    inner: usize,
    slices: usize,
    per_slice: usize,
}

/// The line of element `i`.
#[cube]
fn line_of(lines: &Lines, i: usize) -> usize {
    (i / (lines.size * lines.inner)) * lines.inner + i % lines.inner
}

/// Slice `s` of line `r` (cube `r · slices + s`): its maximum (NaN if any element is) and `Σ e^(x - max)`, at
/// `2 · cube` and the next element of `parts`. An element equal to the maximum adds exactly 1, so a slice of
/// `-∞` sums to its length (rather than `e^(-∞ + ∞)`, NaN) and adds nothing once merged with a finite maximum.
#[cube(launch_unchecked)]
fn slice_stats_kernel<F: Float, C: Float, N: Size>(input: &[F], parts: &mut [C], lines: Lines) {
    let cube = CUBE_POS;
    let (r, s) = (cube / lines.slices, cube % lines.slices);
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let base = line_start(r, lines.rows, lines.size, lines.inner);
    let (begin, end) = slices::range(s, lines.size, lines.per_slice);
    let mut max = C::cast_from(input[base + begin * lines.inner]);
    let mut k = begin + UNIT_POS as usize;
    while k < end {
        let x = C::cast_from(input[base + k * lines.inner]);
        if !is_nan::<C, N>(max) && (x > max || is_nan::<C, N>(x)) {
            max = x;
        }
        k += CUBE_SIZE as usize;
    }
    let max = cube_max::<C, N>(max, &mut partial);
    let mut sum = C::new(0.0);
    k = begin + UNIT_POS as usize;
    while k < end {
        let x = C::cast_from(input[base + k * lines.inner]);
        let e = exp_reduced::<C, N>(Vector::<C, N>::new(x - max)).extract(0usize);
        sum += select(x == max, C::new(1.0), e);
        k += CUBE_SIZE as usize;
    }
    let sum = cube_sum::<C>(sum, &mut partial);
    if UNIT_POS == 0 && r < lines.rows {
        parts[2 * cube] = max;
        parts[2 * cube + 1] = sum;
    }
}

/// Line `r`'s maximum `M` and `Σ e^(x - M)` from its slices' (unit `r`), at `2 · r` and the next element of
/// `stats`.
#[cube(launch_unchecked)]
fn merge_stats_kernel<C: Float, N: Size>(parts: &[C], stats: &mut [C], lines: Lines) {
    let r = ABSOLUTE_POS;
    if r < lines.rows {
        let first = r * lines.slices;
        let mut max = parts[2 * first];
        for s in 1..lines.slices {
            let m = parts[2 * (first + s)];
            if !is_nan::<C, N>(max) && (m > max || is_nan::<C, N>(m)) {
                max = m;
            }
        }
        let mut sum = C::new(0.0);
        for s in 0..lines.slices {
            let (m, part) = (parts[2 * (first + s)], parts[2 * (first + s) + 1]);
            sum += part * exp_reduced::<C, N>(Vector::<C, N>::new(m - max)).extract(0usize);
        }
        stats[2 * r] = max;
        stats[2 * r + 1] = sum;
    }
}

/// `e^(x - M) / Σ` (or `(x - M) - ln Σ` when `log`) for each element, from its line's `stats`.
#[cube(launch_unchecked)]
fn apply_kernel<F: Float, C: Float, N: Size>(
    input: &[F],
    stats: &[C],
    output: &mut [F],
    lines: Lines,
    #[comptime] log: bool,
) {
    let i = ABSOLUTE_POS;
    if i < output.len() {
        let r = line_of(&lines, i);
        let (max, sum) = (stats[2 * r], stats[2 * r + 1]);
        let x = C::cast_from(input[i]) - max;
        if log {
            let log_sum = Vector::<C, N>::new(sum).ln().extract(0usize);
            output[i] = F::cast_from(x - log_sum);
        } else {
            output[i] = F::cast_from(exp_reduced::<C, N>(Vector::<C, N>::new(x)).extract(0usize) / sum);
        }
    }
}

/// Slice `s` of line `r`'s share of `Σ dy·y` (or `Σ dy` when `log`), at element `r · slices + s` of `parts`.
#[cube(launch_unchecked)]
fn slice_dot_kernel<F: Float, C: Float>(y: &[F], dy: &[F], parts: &mut [C], lines: Lines, #[comptime] log: bool) {
    let cube = CUBE_POS;
    let (r, s) = (cube / lines.slices, cube % lines.slices);
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let base = line_start(r, lines.rows, lines.size, lines.inner);
    let (begin, end) = slices::range(s, lines.size, lines.per_slice);
    let mut sum = C::new(0.0);
    let mut k = begin + UNIT_POS as usize;
    while k < end {
        let g = C::cast_from(dy[base + k * lines.inner]);
        if log {
            sum += g;
        } else {
            sum += g * C::cast_from(y[base + k * lines.inner]);
        }
        k += CUBE_SIZE as usize;
    }
    let sum = cube_sum::<C>(sum, &mut partial);
    if UNIT_POS == 0 && r < lines.rows {
        parts[cube] = sum;
    }
}

/// Line `r`'s sum from its slices' (unit `r`).
#[cube(launch_unchecked)]
fn merge_dot_kernel<C: Float>(parts: &[C], sums: &mut [C], lines: Lines) {
    let r = ABSOLUTE_POS;
    if r < lines.rows {
        let mut sum = C::new(0.0);
        for s in 0..lines.slices {
            sum += parts[r * lines.slices + s];
        }
        sums[r] = sum;
    }
}

/// Softmax's `dx = y·(dy - Σ)` (LogSoftmax's `dy - e^y·Σ`) for each element, from its line's sum.
#[cube(launch_unchecked)]
fn backward_apply_kernel<F: Float, C: Float, N: Size>(
    y: &[F],
    dy: &[F],
    sums: &[C],
    dx: &mut [F],
    lines: Lines,
    #[comptime] log: bool,
    #[comptime] round_sum: bool,
) {
    let i = ABSOLUTE_POS;
    if i < dx.len() {
        let mut sum = sums[line_of(&lines, i)];
        if round_sum {
            sum = C::cast_from(F::cast_from(sum));
        }
        let (out, g) = (C::cast_from(y[i]), C::cast_from(dy[i]));
        if log {
            let e = exp_reduced::<C, N>(Vector::<C, N>::new(out)).extract(0usize);
            dx[i] = F::cast_from(g - e * sum);
        } else {
            dx[i] = F::cast_from(out * (g - sum));
        }
    }
}

/// `layout`'s lines (`rows`) and their slices of [`SLICE`].
fn sizes(layout: Layout) -> (usize, usize) {
    (layout.outer * layout.inner, slices::count(layout.channels, SLICE))
}

/// `softmax(x)` (or `log_softmax(x)` when `log`) into `output`, for `layout`'s lines.
///
/// # Safety
/// `x` and `output` hold `layout.len() ≥ 1` elements of `F`.
pub(crate) unsafe fn forward<F: Compute>(x: &GpuBuffer, output: &GpuBuffer, layout: Layout, log: bool) {
    let len = layout.len();
    let (rows, slices) = sizes(layout);
    let c_size = size_of::<F::C>();
    let parts = GpuBuffer::uninit(x.device(), 2 * rows * slices * c_size);
    let stats = GpuBuffer::uninit(x.device(), 2 * rows * c_size);
    let walk = || LinesLaunch::new(rows, layout.channels, layout.inner, slices, SLICE);
    // SAFETY: `x` and `output` hold `len` elements (the caller); `parts` (`2 · rows · slices`) and `stats`
    // (`2 · rows`) are allocated here. Cube `r · slices + s` reads slice `s` of line `r` (line 0 past the last
    // line): indices `(l / inner) · size · inner + l % inner + k · inner` with `k < size`, below `len`; it writes
    // `parts` at `2 · cube` and the next only for `r < rows`. The merge's unit `r < rows` reads its line's
    // `2 · slices` parts and writes `stats[2 · r]` and the next; the element-wise kernel guards `i < len`, and
    // `i`'s line is below `rows`.
    unsafe {
        launch!(
            slice_stats_kernel::<F, F::C>,
            x,
            rows * slices * CUBE_SIZE as usize,
            1usize,
            arg(x, len),
            arg(&parts, 2 * rows * slices),
            walk(),
        );
        launch!(
            merge_stats_kernel::<F::C>,
            x,
            rows,
            1usize,
            arg(&parts, 2 * rows * slices),
            arg(&stats, 2 * rows),
            walk(),
        );
        launch!(
            apply_kernel::<F, F::C>,
            x,
            len,
            1usize,
            arg(x, len),
            arg(&stats, 2 * rows),
            arg(output, len),
            walk(),
            log,
        );
    }
}

/// The input gradient of `softmax` (or `log_softmax` when `log`) into `dx`, from its output `y` and `dy`; each
/// line's sum rounded to `F` first when `round_sum` (see [`crate::softmax::backward`]).
///
/// # Safety
/// `y`, `dy` and `dx` hold `layout.len() ≥ 1` elements of `F`.
pub(crate) unsafe fn backward<F: Compute>(
    y: &GpuBuffer,
    dy: &GpuBuffer,
    dx: &GpuBuffer,
    layout: Layout,
    log: bool,
    round_sum: bool,
) {
    let len = layout.len();
    let (rows, slices) = sizes(layout);
    let c_size = size_of::<F::C>();
    let parts = GpuBuffer::uninit(y.device(), rows * slices * c_size);
    let sums = GpuBuffer::uninit(y.device(), rows * c_size);
    let walk = || LinesLaunch::new(rows, layout.channels, layout.inner, slices, SLICE);
    // SAFETY: as in `forward`, with `parts` of `rows · slices` elements (cube `r · slices + s` writes element
    // `cube` for `r < rows`) and `sums` of `rows` (unit `r < rows` writes `sums[r]`).
    unsafe {
        launch!(
            slice_dot_kernel::<F, F::C>,
            y,
            rows * slices * CUBE_SIZE as usize,
            arg(y, len),
            arg(dy, len),
            arg(&parts, rows * slices),
            walk(),
            log,
        );
        launch!(
            merge_dot_kernel::<F::C>,
            y,
            rows,
            arg(&parts, rows * slices),
            arg(&sums, rows),
            walk(),
        );
        launch!(
            backward_apply_kernel::<F, F::C>,
            y,
            len,
            1usize,
            arg(y, len),
            arg(dy, len),
            arg(&sums, rows),
            arg(dx, len),
            walk(),
            log,
            round_sum,
        );
    }
}
