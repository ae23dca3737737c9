//! Reductions over one cube, shared by the kernels that reduce a channel (batch norm's statistics, PReLU's
//! weight gradient) or a row (layer norm).

use cubecl::prelude::*;

use crate::launch::CUBE_SIZE;

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

/// Element `k` of channel `c` (`k` over `outer · inner`).
#[cube]
pub(crate) fn channel_index(k: usize, c: usize, channels: usize, inner: usize) -> usize {
    ((k / inner) * channels + c) * inner + k % inner
}

/// The mean and the biased variance of channel `c`'s `count` elements (`channel_index` over `inner`), in two
/// passes (the mean, then the squared deviations from it), each unit of the cube taking every
/// `CUBE_SIZE`-th element; every unit gets both. A row of a `[rows, inner]` tensor is channel `c` of
/// `rows` channels with `count = inner`.
#[cube]
pub(crate) fn channel_moments<F: Float, C: Float>(
    x: &[F],
    c: usize,
    channels: usize,
    inner: usize,
    count: usize,
    partial: &mut Shared<[C]>,
) -> (C, C) {
    let unit = UNIT_POS as usize;
    let mut acc = C::new(0.0);
    if c < channels {
        let mut k = unit;
        while k < count {
            acc += C::cast_from(x[channel_index(k, c, channels, inner)]);
            k += CUBE_SIZE as usize;
        }
    }
    let mean = cube_sum::<C>(acc, partial) / C::cast_from(count);
    let mut dev = C::new(0.0);
    if c < channels {
        let mut k = unit;
        while k < count {
            let d = C::cast_from(x[channel_index(k, c, channels, inner)]) - mean;
            dev += d * d;
            k += CUBE_SIZE as usize;
        }
    }
    let var = cube_sum::<C>(dev, partial) / C::cast_from(count);
    (mean, var)
}
