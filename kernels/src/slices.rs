//! Long loops cut into slices. Mesa's lavapipe (the Vulkan driver on machines without a GPU) ends any loop of a
//! kernel invocation after 65,535 iterations, counted across nested loops, without an error: a unit that walks
//! a whole dimension returns a partial result past that (a dot product of 70,000 ones gave 65,535). A kernel
//! whose unit would walk a long dimension walks one slice of it instead, at most [`ITERATIONS`] iterations,
//! writing its partial result in the compute type; [`add`] then adds each output's partials. The slices also
//! spread a few long reductions over more units, which a GPU needs to keep busy.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::launch::{arg, launch};
use crate::{GpuBuffer, GpuDevice};

/// Loop iterations one unit takes at most on a sliced path: a quarter of lavapipe's limit.
pub(crate) const ITERATIONS: usize = 16_384;

/// Slices of at most `per_slice` elements that cover `len` (one for an empty `len`).
///
/// ```ignore
/// assert_eq!(count(70_000, 16_384), 5);
/// ```
pub(crate) fn count(len: usize, per_slice: usize) -> usize {
    len.div_ceil(per_slice.max(1)).max(1)
}

/// The elements `begin..end` of `len` that slice `s` of `per_slice` elements covers.
#[cube]
pub(crate) fn range(s: usize, len: usize, per_slice: usize) -> (usize, usize) {
    let begin = s * per_slice;
    let mut end = begin + per_slice;
    if end > len {
        end = len;
    }
    (begin, end)
}

/// `out[o] = Σ_s partials[o · slices + s]` (divided by `count` for a mean).
#[cube(launch_unchecked)]
fn add_slices_kernel<F: Float, C: Float>(
    partials: &[C],
    out: &mut [F],
    slices: usize,
    count: usize,
    #[comptime] mean: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let mut sum = C::new(0.0);
        for s in 0..slices {
            sum += partials[ABSOLUTE_POS * slices + s];
        }
        if mean {
            sum /= C::cast_from(count);
        }
        out[ABSOLUTE_POS] = F::cast_from(sum);
    }
}

/// A new buffer of `n` partial results per slice (`n · slices` elements of `F`'s compute type, output `o`'s
/// slice `s` at `o · slices + s`), for a sliced kernel to write and [`add`] to read.
pub(crate) fn partials<F: Compute>(device: &GpuDevice, n: usize, slices: usize) -> GpuBuffer {
    GpuBuffer::uninit(device, n * slices * size_of::<F::C>())
}

/// `out[o]` (`n` elements of `F`) `= Σ_s partials[o · slices + s]`, divided by `count` when `mean`.
pub(crate) fn add<F: Compute>(
    partials: &GpuBuffer,
    out: &GpuBuffer,
    n: usize,
    slices: usize,
    count: usize,
    mean: bool,
) {
    // SAFETY: `partials` holds `n · slices` elements of the compute type and `out` `n` of `F` (every caller
    // makes them so: `partials` comes from [`partials`] with these `n` and `slices`); unit `o < n` reads
    // `partials[o · slices + s]` for `s < slices` and writes `out[o]`.
    unsafe {
        launch!(
            add_slices_kernel::<F, F::C>,
            out,
            n,
            arg(partials, n * slices),
            arg(out, n),
            slices,
            count,
            mean,
        )
    }
}
