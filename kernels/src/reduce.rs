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
