//! Conversion between the float types on the device (`to_dtype` without a trip through the host).

use cubecl::prelude::*;

use crate::dtype::with_float_type;
use crate::launch::{arg, elements, launch};
use crate::{FloatType, GpuBuffer, Result};

/// `dst[dst_offset + i] = src[src_offset + i]` for `i < len`, converting the element type (rounding to
/// nearest).
#[cube(launch_unchecked)]
pub(crate) fn convert_kernel<A: Float, B: Float>(
    src: &[A],
    dst: &mut [B],
    src_offset: usize,
    dst_offset: usize,
    len: usize,
) {
    if ABSOLUTE_POS < len {
        dst[dst_offset + ABSOLUTE_POS] = B::cast_from(src[src_offset + ABSOLUTE_POS]);
    }
}

/// The elements of `src` (of type `from`) converted to `to`, in a new buffer on the same device.
///
/// ```no_run
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.5f32, -2.25]));
/// let y = kernels::cast::cast(&x, FloatType::F32, FloatType::F64)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f64, u8>(&[1.5, -2.25]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn cast(src: &GpuBuffer, from: FloatType, to: FloatType) -> Result<GpuBuffer> {
    src.device().check_dtype("cast", from)?;
    src.device().check_dtype("cast", to)?;
    let len = elements("cast", src, from)?;
    let dst = GpuBuffer::uninit(src.device(), len * to.size_in_bytes());
    if len > 0 {
        with_float_type!(from, A => with_float_type!(to, B => {
            // SAFETY: `src` holds `len` elements of `A` (checked), `dst` is allocated for `len` of `B`; unit
            // `i < len` reads and writes element `i` only.
            unsafe {
                launch!(
                    convert_kernel::<A, B>,
                    src,
                    len,
                    arg(src, len),
                    arg(&dst, len),
                    0,
                    0,
                    len,
                )
            }
        }));
    }
    Ok(dst)
}
