//! The sum or the mean of a contiguous tensor over any set of its dimensions. A short reduction runs one unit
//! per output element, walking the reduced elements with compensated (Kahan) summation in the compute type; a
//! reduction of at least a cube's worth of elements runs one cube per output element (and per slice of 2²⁰
//! elements, whose sums a second kernel adds), each unit summing every `CUBE_SIZE`-th element and the cube
//! adding the units' sums as a tree. The tree keeps a long `f32` sum within a few ulps of the exact one, as
//! PyTorch's sums are (pairwise on the CPU, a tree on a GPU); it spreads a few long reductions (a batch norm's
//! per-channel sums) over the device instead of one unit each; and no unit loops more than 4,096 times, which
//! Mesa's lavapipe needs: it ends a loop after 65,535 iterations without an error (one unit per output summed
//! only the first 21,845 of 2¹⁸ elements).

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::gather::metadata;
use crate::launch::{CUBE_SIZE, arg, elements, launch};
use crate::reduce::cube_sum;
use crate::slices;
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// Levels of a pairwise sum of up to `2^(LEVELS - 1)` terms: more than the `CUBE_SIZE` elements [`sum_kernel`]
/// takes, and than the 4,096 each unit of [`sum_cube_kernel`] takes.
const LEVELS: usize = 14;

/// Adds `value`, term `index` (from 0) of a pairwise sum, to its partial sums: as a binary counter carries,
/// `levels[k]` holds the sum of the last complete block of `2^k` terms. The rounding error of the sum grows with
/// `log2` of its terms' count, not with the count. (A compensated, Kahan, sum would not do: Mesa's shader
/// compiler, given no `exact` marking, which WGSL cannot express, simplifies its `(t - sum) - y` to 0. That left
/// a 120-element mean 7 ulps off on lavapipe, and a batch norm's gradient, whose terms cancel around that mean,
/// 30 times further from the exact one than PyTorch's: seed 812 of `dynamics_sweep.py --grad-batch`.)
#[cube]
fn pairwise_add<C: Float>(levels: &mut Array<C>, index: usize, value: C) {
    let mut sum = value;
    let mut level = 0;
    let mut carries = index;
    while carries % 2 == 1 {
        sum = levels[level] + sum;
        level += 1;
        carries /= 2;
    }
    levels[level] = sum;
}

/// The total of a pairwise sum of `count` terms ([`pairwise_add`]): the blocks left are those of `count`'s set
/// bits, added smallest first.
#[cube]
fn pairwise_total<C: Float>(levels: &Array<C>, count: usize) -> C {
    let mut total = C::new(0.0);
    for level in 0..LEVELS {
        if (count >> level) % 2 == 1 {
            total = levels[level] + total;
        }
    }
    total
}

/// `out[o] = Σ x[...]` (divided by the count for a mean) over the reduced dimensions, fewer than `CUBE_SIZE`
/// (one unit per output, a pairwise sum). `meta` holds the kept dimensions' sizes, then their strides in `x`,
/// then the reduced dimensions' sizes, then their strides.
#[cube(launch_unchecked)]
fn sum_kernel<F: Float, C: Float>(
    x: &[F],
    out: &mut [F],
    meta: &[u32],
    kept: usize,
    reduced: usize,
    count: usize,
    #[comptime] mean: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let base = kept_base(ABSOLUTE_POS, meta, kept);
        let mut levels = Array::<C>::new(LEVELS);
        for r in 0..count {
            pairwise_add::<C>(
                &mut levels,
                r,
                C::cast_from(x[base + reduced_offset(r, meta, kept, reduced)]),
            );
        }
        let mut total = pairwise_total::<C>(&levels, count);
        if mean {
            total /= C::cast_from(count);
        }
        out[ABSOLUTE_POS] = F::cast_from(total);
    }
}

/// The offset in `x` of output element `o`'s first reduced element (`meta` as [`sum_kernel`]'s).
#[cube]
fn kept_base(o: usize, meta: &[u32], kept: usize) -> usize {
    let mut rest = o;
    let mut base = 0;
    for k in 0..kept {
        let d = kept - 1 - k;
        let size = meta[d] as usize;
        base += (rest % size) * (meta[kept + d] as usize);
        rest /= size;
    }
    base
}

/// The offset of reduced element `r` from its output element's base (`meta` as [`sum_kernel`]'s).
#[cube]
fn reduced_offset(r: usize, meta: &[u32], kept: usize, reduced: usize) -> usize {
    let (sizes, strides) = (2 * kept, 2 * kept + reduced);
    let mut left = r;
    let mut offset = 0;
    for k in 0..reduced {
        let d = reduced - 1 - k;
        let size = meta[sizes + d] as usize;
        offset += (left % size) * (meta[strides + d] as usize);
        left /= size;
    }
    offset
}

/// Reduced elements one cube sums at most, so that each unit loops at most 4,096 times: Mesa's lavapipe ends
/// any loop after 65,535 iterations, without an error (a sum of 2²³ ones read 5,592,320), so a longer
/// reduction is cut into slices whose sums [`slices::add`] adds.
const SLICE: usize = CUBE_SIZE as usize * 4096;

/// [`sum_kernel`]'s result with one cube per output element and slice of [`SLICE`] reduced elements (cube
/// `o · slices + s` writes `out[o · slices + s]`): each unit sums every `CUBE_SIZE`-th element of the slice
/// pairwise, then the cube adds the units' sums as a tree. `O` is `F` with one slice, else the compute type (partial
/// sums, `mean` false).
#[cube(launch_unchecked)]
fn sum_cube_kernel<F: Float, C: Float, O: Float>(
    x: &[F],
    out: &mut [O],
    meta: &[u32],
    kept: usize,
    reduced: usize,
    count: usize,
    slices: usize,
    #[comptime] mean: bool,
) {
    let cube = CUBE_POS;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let mut levels = Array::<C>::new(LEVELS);
    let mut terms = 0;
    if cube < out.len() {
        let (o, s) = (cube / slices, cube % slices);
        let base = kept_base(o, meta, kept);
        let mut end = (s + 1) * SLICE;
        if end > count {
            end = count;
        }
        let mut r = s * SLICE + UNIT_POS as usize;
        while r < end {
            pairwise_add::<C>(
                &mut levels,
                terms,
                C::cast_from(x[base + reduced_offset(r, meta, kept, reduced)]),
            );
            terms += 1;
            r += CUBE_SIZE as usize;
        }
    }
    let mut sum = cube_sum::<C>(pairwise_total::<C>(&levels, terms), &mut partial);
    if UNIT_POS == 0 && cube < out.len() {
        if mean {
            sum /= C::cast_from(count);
        }
        out[cube] = O::cast_from(sum);
    }
}

/// The sum (or with `mean` the mean) of the contiguous `x` of `shape` over the dimensions `reduce` marks, in a
/// new buffer holding the kept dimensions in order. Reducing no dimension copies; an empty reduction sums to 0
/// (its mean is NaN, as PyTorch's).
///
/// ```no_run
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]));
/// let rows = kernels::sum::sum_dims(FloatType::F32, &x, &[2, 3], &[false, true], false)?;
/// assert_eq!(rows.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[6.0, 15.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn sum_dims(dtype: FloatType, x: &GpuBuffer, shape: &[usize], reduce: &[bool], mean: bool) -> Result<GpuBuffer> {
    let op = if mean { "mean" } else { "sum" };
    x.device().check_dtype(op, dtype)?;
    let len = elements(op, x, dtype)?;
    if reduce.len() != shape.len() || len != shape.iter().product::<usize>() {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!(
                "{len} elements for a shape {shape:?} with {} dimension flags",
                reduce.len()
            ),
        });
    }
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let pick = |reduced: bool| -> (Vec<usize>, Vec<usize>) {
        (0..shape.len())
            .filter(|&d| reduce[d] == reduced)
            .map(|d| (shape[d], strides[d]))
            .unzip()
    };
    let ((kept_sizes, kept_strides), (red_sizes, red_strides)) = (pick(false), pick(true));
    let n: usize = kept_sizes.iter().product();
    let count: usize = red_sizes.iter().product();
    if count == 0 {
        // Nothing to read: every output is the empty sum (0) or the empty mean (NaN), made on the host.
        let fill = if mean { f64::NAN } else { 0.0 };
        return Ok(GpuBuffer::from_bytes(x.device(), &filled(dtype, fill, n)));
    }
    let out = GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let words: Vec<usize> = [kept_sizes.clone(), kept_strides, red_sizes.clone(), red_strides].concat();
    let meta = metadata(op, x, words.iter())?;
    let (kept, reduced) = (kept_sizes.len(), red_sizes.len());
    let by_cube = count >= CUBE_SIZE as usize;
    let slices = slices::count(count, SLICE);
    with_float_type!(dtype, F => {
        type C = <F as Compute>::C;
        // SAFETY: `x` holds the product of `shape` elements (checked); an output index below `n` decomposes
        // into kept indices below their sizes and every `r < count` into reduced indices below theirs, so each
        // offset is a valid index of the contiguous `x`. `out` holds `n` elements and `partials` `n · slices`,
        // each guarded by its kernel: by unit, or by cube (`n · slices · CUBE_SIZE` units, cube `i` writes
        // element `i`); `slices::add` reads `partials[o · slices + s]` for `o < n`, `s < slices`. `meta`
        // holds `2 · rank` words (at least one).
        unsafe {
            if by_cube && slices == 1 {
                launch!(
                    sum_cube_kernel::<F, C, F>,
                    x,
                    n * CUBE_SIZE as usize,
                    arg(x, len),
                    arg(&out, n),
                    arg(&meta, words.len().max(1)),
                    kept,
                    reduced,
                    count,
                    1,
                    mean,
                )
            } else if by_cube {
                let partials = slices::partials::<F>(x.device(), n, slices);
                launch!(
                    sum_cube_kernel::<F, C, C>,
                    x,
                    n * slices * CUBE_SIZE as usize,
                    arg(x, len),
                    arg(&partials, n * slices),
                    arg(&meta, words.len().max(1)),
                    kept,
                    reduced,
                    count,
                    slices,
                    false,
                );
                slices::add::<F>(&partials, &out, n, slices, count, mean);
            } else {
                launch!(
                    sum_kernel::<F, C>,
                    x,
                    n,
                    arg(x, len),
                    arg(&out, n),
                    arg(&meta, words.len().max(1)),
                    kept,
                    reduced,
                    count,
                    mean,
                )
            }
        }
    });
    Ok(out)
}

/// `n` elements of `value` in `dtype`, as bytes.
pub(crate) fn filled(dtype: FloatType, value: f64, n: usize) -> Vec<u8> {
    let one: Vec<u8> = match dtype {
        FloatType::F16 => half::f16::from_f64(value).to_le_bytes().to_vec(),
        FloatType::BF16 => half::bf16::from_f64(value).to_le_bytes().to_vec(),
        FloatType::F32 => (value as f32).to_le_bytes().to_vec(),
        FloatType::F64 => value.to_le_bytes().to_vec(),
    };
    one.repeat(n)
}
