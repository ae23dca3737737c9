//! The sum or the mean of a contiguous tensor over any set of its dimensions: one unit per output element,
//! walking the reduced elements with compensated (Kahan) summation in the compute type, so a long reduction
//! in `f32` stays within a few ulps of the exact sum (PyTorch's CPU sums accumulate pairwise).

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::gather::metadata;
use crate::launch::{arg, elements, launch};
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// `out[o] = Σ x[...]` (divided by the count for a mean) over the reduced dimensions. `meta` holds the kept
/// dimensions' sizes, then their strides in `x`, then the reduced dimensions' sizes, then their strides.
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
        // The offset in `x` of this output element's first reduced element.
        let mut rest = ABSOLUTE_POS;
        let mut base = 0;
        for k in 0..kept {
            let d = kept - 1 - k;
            let size = meta[d] as usize;
            base += (rest % size) * (meta[kept + d] as usize);
            rest /= size;
        }
        let sizes = 2 * kept;
        let strides = 2 * kept + reduced;
        let mut sum = C::new(0.0);
        let mut carry = C::new(0.0);
        for r in 0..count {
            let mut left = r;
            let mut offset = base;
            for k in 0..reduced {
                let d = reduced - 1 - k;
                let size = meta[sizes + d] as usize;
                offset += (left % size) * (meta[strides + d] as usize);
                left /= size;
            }
            let y = C::cast_from(x[offset]) - carry;
            let t = sum + y;
            carry = (t - sum) - y;
            sum = t;
        }
        if mean {
            sum /= C::cast_from(count);
        }
        out[ABSOLUTE_POS] = F::cast_from(sum);
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
    with_float_type!(dtype, F => {
        // SAFETY: `x` holds the product of `shape` elements (checked); an output index below `n` decomposes
        // into kept indices below their sizes and every `r < count` into reduced indices below theirs, so each
        // offset is a valid index of the contiguous `x`; `out` holds `n` elements, guarded by the kernel;
        // `meta` holds `2 · rank` words (at least one).
        unsafe {
            launch!(
                sum_kernel::<F, <F as Compute>::C>,
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
