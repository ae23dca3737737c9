//! PyTorch's GRU cell update (its CUDA `_thnn_fused_gru_cell`), one unit per hidden feature `(b, j)`: from the
//! gates' input projection `ig = x·W_ihᵀ + b_ih` and hidden projection `hg = h·W_hhᵀ + b_hh`, both `(rows,
//! 3·hidden)` in gate order r, z, n, and the state `h` `(rows, hidden)`:
//!
//! ```text
//! r = σ(hg_r + ig_r)    z = σ(hg_z + ig_z)    n = tanh(ig_n + hg_n·r)    h' = (h - n)·z + n
//! ```
//!
//! and its backward, which recomputes `r`, `z`, `n` from the same operands rather than keeping them. Elements
//! are read in the storage type and computed in the compute type (`f32` for the half types), as PyTorch's
//! fused kernel does.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::activation::sigmoid::sigmoid1;
use crate::activation::tanh::tanh1;
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// The gates `(r, z, n)` of unit `pos` (row `pos / hidden`, feature `pos % hidden`), in the compute type.
#[cube]
fn gates<F: Float, C: Float>(ig: &[F], hg: &[F], pos: usize, hidden: usize) -> (C, C, C) {
    let g = (pos / hidden) * hidden * 3usize + pos % hidden;
    let r = sigmoid1::<C>(C::cast_from(hg[g]) + C::cast_from(ig[g]));
    let z = sigmoid1::<C>(C::cast_from(hg[g + hidden]) + C::cast_from(ig[g + hidden]));
    let n = tanh1::<C>(C::cast_from(ig[g + hidden * 2usize]) + C::cast_from(hg[g + hidden * 2usize]) * r);
    (r, z, n)
}

/// `h' = (h - n)·z + n` for every unit.
#[cube(launch_unchecked)]
fn forward_kernel<F: Float, C: Float>(ig: &[F], hg: &[F], h: &[F], out: &mut [F], hidden: usize) {
    if ABSOLUTE_POS < out.len() {
        let (_, z, n) = gates::<F, C>(ig, hg, ABSOLUTE_POS, hidden);
        out[ABSOLUTE_POS] = F::cast_from((C::cast_from(h[ABSOLUTE_POS]) - n) * z + n);
    }
}

/// The gradients of `ig`, `hg` and `h` from the output's `dy`, in the order PyTorch's autograd forms them
/// through the cell's operations (`dn = dy - dy·z`; sigmoid's `d·(1 - y)·y`, tanh's `d·(1 - y²)`). `ig`'s and
/// `hg`'s differ only in gate n: `da_n` and `da_n·r`.
#[cube(launch_unchecked)]
fn backward_kernel<F: Float, C: Float>(
    ig: &[F],
    hg: &[F],
    h: &[F],
    dy: &[F],
    d_ig: &mut [F],
    d_hg: &mut [F],
    dh: &mut [F],
    hidden: usize,
) {
    if ABSOLUTE_POS < dh.len() {
        let (r, z, n) = gates::<F, C>(ig, hg, ABSOLUTE_POS, hidden);
        let g = (ABSOLUTE_POS / hidden) * hidden * 3usize + ABSOLUTE_POS % hidden;
        let one = C::new(1.0);
        let d = C::cast_from(dy[ABSOLUTE_POS]);
        let hp = C::cast_from(h[ABSOLUTE_POS]);
        let dz = d * (hp - n);
        let dn = d - d * z;
        let da_n = dn * (one - n * n);
        let da_r = da_n * C::cast_from(hg[g + hidden * 2usize]) * (one - r) * r;
        let da_z = dz * (one - z) * z;
        d_ig[g] = F::cast_from(da_r);
        d_hg[g] = F::cast_from(da_r);
        d_ig[g + hidden] = F::cast_from(da_z);
        d_hg[g + hidden] = F::cast_from(da_z);
        d_ig[g + hidden * 2usize] = F::cast_from(da_n);
        d_hg[g + hidden * 2usize] = F::cast_from(da_n * r);
        dh[ABSOLUTE_POS] = F::cast_from(d * z);
    }
}

/// Checks the operands of `op` for `units` hidden features (`rows·hidden`): the projections hold `3·units`
/// elements, `h` (and `dy`) `units`, all in `dtype` on one device, whose math runs `dtype`.
fn check(op: &'static str, dtype: FloatType, units: usize, hidden: usize, operands: &[&GpuBuffer]) -> Result<()> {
    let on = operands[0];
    on.device().check_dtype(op, dtype)?;
    on.device().check_math(op, dtype)?;
    if (hidden == 0 && units > 0) || (hidden > 0 && !units.is_multiple_of(hidden)) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{units} units are not whole rows of {hidden} hidden features"),
        });
    }
    let names = ["input gates", "hidden gates", "state", "output gradient"];
    let expected: Vec<_> = operands
        .iter()
        .zip(names)
        .enumerate()
        .map(|(k, (b, name))| (*b, if k < 2 { 3 * units } else { units }, name))
        .collect();
    check_operands(op, dtype, on, &expected)
}

/// The GRU cell's new state `(rows, hidden)` from the input gates `ig` and hidden gates `hg` `(rows, 3·hidden)`
/// and the state `h` (`units = rows·hidden` elements).
pub fn forward(dtype: FloatType, [ig, hg, h]: [&GpuBuffer; 3], units: usize, hidden: usize) -> Result<GpuBuffer> {
    check("gru_cell", dtype, units, hidden, &[ig, hg, h])?;
    let out = GpuBuffer::uninit(h.device(), units * dtype.size_in_bytes());
    if units > 0 {
        with_float_type!(dtype, F => launch_forward::<F>([ig, hg, h], &out, units, hidden));
    }
    Ok(out)
}

fn launch_forward<F: Compute>([ig, hg, h]: [&GpuBuffer; 3], out: &GpuBuffer, units: usize, hidden: usize) {
    // SAFETY: `check` verified that `ig`, `hg` hold `3·units` elements of `F` and `h` `units`, `out` is
    // allocated with `units`, and `units` is whole rows of `hidden`. Unit `pos < units` (row `b = pos / hidden`,
    // feature `j`) reads `ig`, `hg` at `3·hidden·b + q·hidden + j < 3·units` and `h`, `out` at `pos`.
    unsafe {
        launch!(
            forward_kernel::<F, F::C>,
            h,
            units,
            arg(ig, 3 * units),
            arg(hg, 3 * units),
            arg(h, units),
            arg(out, units),
            hidden,
        );
    }
}

/// The GRU cell's backward: the gradients of `ig`, `hg` `(rows, 3·hidden)` and `h` `(rows, hidden)` from the
/// new state's gradient `dy`.
pub fn backward(
    dtype: FloatType,
    [ig, hg, h, dy]: [&GpuBuffer; 4],
    units: usize,
    hidden: usize,
) -> Result<(GpuBuffer, GpuBuffer, GpuBuffer)> {
    check("gru_cell_backward", dtype, units, hidden, &[ig, hg, h, dy])?;
    let size = dtype.size_in_bytes();
    let on = h.device();
    let (d_ig, d_hg, dh) = (
        GpuBuffer::uninit(on, 3 * units * size),
        GpuBuffer::uninit(on, 3 * units * size),
        GpuBuffer::uninit(on, units * size),
    );
    if units > 0 {
        with_float_type!(dtype, F => launch_backward::<F>([ig, hg, h, dy], [&d_ig, &d_hg, &dh], units, hidden));
    }
    Ok((d_ig, d_hg, dh))
}

fn launch_backward<F: Compute>(
    [ig, hg, h, dy]: [&GpuBuffer; 4],
    [d_ig, d_hg, dh]: [&GpuBuffer; 3],
    units: usize,
    hidden: usize,
) {
    // SAFETY: `check` verified that `ig`, `hg` hold `3·units` elements of `F` and `h`, `dy` `units`; `d_ig`,
    // `d_hg` are allocated with `3·units`, `dh` with `units`, and `units` is whole rows of `hidden`. Unit `pos <
    // units` reads and writes the projections' gradients at `3·hidden·b + q·hidden + j < 3·units` only, and
    // `h`, `dy`, `dh` at `pos`: no two units write one element.
    unsafe {
        launch!(
            backward_kernel::<F, F::C>,
            h,
            units,
            arg(ig, 3 * units),
            arg(hg, 3 * units),
            arg(h, units),
            arg(dy, units),
            arg(d_ig, 3 * units),
            arg(d_hg, 3 * units),
            arg(dh, units),
            hidden,
        );
    }
}
