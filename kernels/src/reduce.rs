//! Reductions over one cube, shared by the kernels that reduce a channel (batch norm's statistics, PReLU's
//! weight gradient) or a row (layer norm).

use cubecl::prelude::*;

use crate::launch::CUBE_SIZE;
use crate::math::is_nan;

/// The sum of every unit's `value` over the cube, returned to every unit.
#[cube]
pub(crate) fn cube_sum<C: Float>(value: C, partial: &mut Shared<[C]>) -> C {
    let unit = UNIT_POS as usize;
    partial[unit] = value;
    sync_cube();
    #[unroll]
    for level in 1..9usize {
        let step = CUBE_SIZE as usize >> level;
        if unit < step {
            let sum = partial[unit] + partial[unit + step];
            partial[unit] = sum;
        }
        sync_cube();
    }
    let total = partial[0];
    sync_cube();
    total
}

/// The largest of every unit's `value` over the cube, NaN if any is (PyTorch's `max`), returned to every unit.
/// `N` is one lane (for [`is_nan`]).
#[cube]
pub(crate) fn cube_max<C: Float, N: Size>(value: C, partial: &mut Shared<[C]>) -> C {
    let unit = UNIT_POS as usize;
    partial[unit] = value;
    sync_cube();
    #[unroll]
    for level in 1..9usize {
        let step = CUBE_SIZE as usize >> level;
        if unit < step {
            let (a, b) = (partial[unit], partial[unit + step]);
            if !is_nan::<C, N>(a) && (b > a || is_nan::<C, N>(b)) {
                partial[unit] = b;
            }
        }
        sync_cube();
    }
    let largest = partial[0];
    sync_cube();
    largest
}

/// Element `k` of channel `c` (`k` over `outer · inner`).
#[cube]
pub(crate) fn channel_index(k: usize, c: usize, channels: usize, inner: usize) -> usize {
    ((k / inner) * channels + c) * inner + k % inner
}

/// Element `k` of channel `c`: [`channel_index`], or for `rows` (channel `c` is the `c`-th run of `inner`
/// consecutive elements, a row of a `[channels, inner]` tensor) `c · inner + k` without a division.
#[cube]
fn moment_index(k: usize, c: usize, channels: usize, inner: usize, #[comptime] rows: bool) -> usize {
    if rows {
        c * inner + k
    } else {
        channel_index(k, c, channels, inner)
    }
}

/// The mean and the biased variance of channel `c`'s elements `begin..end` of `count` ([`moment_index`] over
/// `inner`, `rows` for a row of a `[channels, inner]` tensor with `count = inner`), in two passes (the mean,
/// then the squared deviations from it), each unit of the cube taking every `CUBE_SIZE`-th element; every unit
/// gets both. A cube of [`CUBE_SIZE`] units loops `2 · (end - begin) / CUBE_SIZE` times.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn channel_moments<F: Float, C: Float>(
    x: &[F],
    c: usize,
    channels: usize,
    inner: usize,
    begin: usize,
    end: usize,
    partial: &mut Shared<[C]>,
    #[comptime] rows: bool,
) -> (C, C) {
    let unit = UNIT_POS as usize;
    let mut acc = C::new(0.0);
    if c < channels {
        let mut k = begin + unit;
        while k < end {
            acc += C::cast_from(x[moment_index(k, c, channels, inner, rows)]);
            k += CUBE_SIZE as usize;
        }
    }
    let count = C::cast_from(end - begin);
    let mean = cube_sum::<C>(acc, partial) / count;
    let mut dev = C::new(0.0);
    if c < channels {
        let mut k = begin + unit;
        while k < end {
            let d = C::cast_from(x[moment_index(k, c, channels, inner, rows)]) - mean;
            dev += d * d;
            k += CUBE_SIZE as usize;
        }
    }
    let var = cube_sum::<C>(dev, partial) / count;
    (mean, var)
}
