//! The mean and biased variance of each channel (a batch norm's statistics) or row (a layer norm's), of any
//! length. Up to [`SLICE`] elements, one cube per channel takes both in two passes. A longer channel is cut into
//! slices of [`SLICE`], one cube each, and a second kernel merges the slices' means and variances (Chan et al.'s
//! pairwise update, exact in exact arithmetic). Mesa's lavapipe ends a unit's loops after 65,535 iterations
//! without an error, and one cube of a channel of more than 8.4 million elements would pass that; the slices
//! also spread a few long channels over the device.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::launch::{CUBE_SIZE, arg, launch};
use crate::reduce::channel_moments;
use crate::{GpuBuffer, slices};

/// Elements per channel one cube takes at most: two passes of 16,384 iterations per unit, a quarter of what
/// lavapipe allows left for a third pass (layer norm's output).
pub(crate) const SLICE: usize = CUBE_SIZE as usize * 16_384;

/// Where a channel's elements are: channel `c` of `[outer, channels, inner]` (`count = outer · inner`), or with
/// `rows` row `c` of `[channels, inner]` (`count = inner`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Channels {
    pub channels: usize,
    pub inner: usize,
    pub count: usize,
    pub rows: bool,
}

/// `mean[c]` and biased `var[c]` of channel `c` (cube `c`), the whole channel.
#[cube(launch_unchecked)]
fn moments_kernel<F: Float, C: Float>(
    x: &[F],
    mean: &mut [C],
    var: &mut [C],
    channels: usize,
    inner: usize,
    count: usize,
    #[comptime] rows: bool,
) {
    let c = CUBE_POS;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let (m, v) = channel_moments::<F, C>(x, c, channels, inner, 0, count, &mut partial, rows);
    if UNIT_POS == 0 && c < channels {
        mean[c] = m;
        var[c] = v;
    }
}

/// The mean and biased variance of slice `s` of channel `c` (cube `c · slices + s`), at `2 · (c · slices + s)`
/// and the next element of `parts`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn slice_moments_kernel<F: Float, C: Float>(
    x: &[F],
    parts: &mut [C],
    channels: usize,
    inner: usize,
    count: usize,
    slices: usize,
    per_slice: usize,
    #[comptime] rows: bool,
) {
    let cube = CUBE_POS;
    let (c, s) = (cube / slices, cube % slices);
    let (begin, end) = slices::range(s, count, per_slice);
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let (m, v) = channel_moments::<F, C>(x, c, channels, inner, begin, end, &mut partial, rows);
    if UNIT_POS == 0 && c < channels {
        parts[2 * cube] = m;
        parts[2 * cube + 1] = v;
    }
}

/// Channel `c`'s mean and biased variance from its slices' (unit `c`): the running mean moves by each slice's
/// difference from it weighted by the slice's share, and the sum of squared deviations gains the slice's own
/// plus that difference squared times `n · n_s / (n + n_s)`.
#[cube(launch_unchecked)]
fn merge_moments_kernel<C: Float>(
    parts: &[C],
    mean: &mut [C],
    var: &mut [C],
    channels: usize,
    count: usize,
    slices: usize,
    per_slice: usize,
) {
    let c = ABSOLUTE_POS;
    if c < channels {
        let mut n = C::new(0.0);
        let mut m = C::new(0.0);
        let mut squares = C::new(0.0);
        for s in 0..slices {
            let (begin, end) = slices::range(s, count, per_slice);
            let n_s = C::cast_from(end - begin);
            let (m_s, v_s) = (parts[2 * (c * slices + s)], parts[2 * (c * slices + s) + 1]);
            let total = n + n_s;
            let delta = m_s - m;
            m += delta * (n_s / total);
            squares += v_s * n_s + delta * delta * (n * n_s / total);
            n = total;
        }
        mean[c] = m;
        var[c] = squares / C::cast_from(count);
    }
}

/// The mean and biased variance of every channel of `x` (`F` elements) into `mean` and `var` (`channels`
/// elements of the compute type each), for `count ≥ 1`.
///
/// # Safety
/// `x` holds every element the layout names (`channels · count` of `F`), `mean` and `var` `channels` elements of
/// `F::C`.
pub(crate) unsafe fn moments<F: Compute>(x: &GpuBuffer, at: Channels, mean: &GpuBuffer, var: &GpuBuffer) {
    let Channels {
        channels,
        inner,
        count,
        rows,
    } = at;
    let len = channels * count;
    let slices = slices::count(count, SLICE);
    // SAFETY: the caller vouches for the sizes of `x`, `mean` and `var`. Cube `c` (or `c · slices + s`) reads
    // channel `c < channels`'s elements `k < count`, which the layout places inside `x`, and writes `mean[c]`,
    // `var[c]` or `parts[2 · cube + {0, 1}]` with `cube < channels · slices`; the merge's unit `c < channels`
    // reads `parts` below `2 · channels · slices`.
    unsafe {
        if slices == 1 {
            launch!(
                moments_kernel::<F, F::C>,
                x,
                channels * CUBE_SIZE as usize,
                arg(x, len),
                arg(mean, channels),
                arg(var, channels),
                channels,
                inner,
                count,
                rows,
            );
        } else {
            let parts = GpuBuffer::uninit(x.device(), 2 * channels * slices * size_of::<F::C>());
            launch!(
                slice_moments_kernel::<F, F::C>,
                x,
                channels * slices * CUBE_SIZE as usize,
                arg(x, len),
                arg(&parts, 2 * channels * slices),
                channels,
                inner,
                count,
                slices,
                SLICE,
                rows,
            );
            launch!(
                merge_moments_kernel::<F::C>,
                x,
                channels,
                arg(&parts, 2 * channels * slices),
                arg(mean, channels),
                arg(var, channels),
                channels,
                count,
                slices,
                SLICE,
            );
        }
    }
}
