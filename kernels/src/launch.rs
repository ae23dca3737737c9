//! How a launch is shaped: vector width, units per cube, and a cube count spread over as many dispatch
//! dimensions as the device needs (one dimension holds at most 65,535 cubes on wgpu).

use cubecl::prelude::*;

use crate::{FloatType, GpuBuffer, KernelError, Result};

/// Units per cube.
pub(crate) const CUBE_SIZE: u32 = 256;

/// The widest vector (4, 2 or 1 elements) that divides `len` and `align`, so no vector straddles the end or
/// a block boundary.
pub(crate) fn vector_size(len: usize, align: usize) -> usize {
    [4, 2]
        .into_iter()
        .find(|&v| len.is_multiple_of(v) && align.is_multiple_of(v))
        .unwrap_or(1)
}

/// Cubes of [`CUBE_SIZE`] units for `units` units, spread over two or three dimensions when one cannot hold
/// them. Kernels guard with `ABSOLUTE_POS < len`, as the grid may be larger than asked.
pub(crate) fn cube_count(buffer: &GpuBuffer, units: usize) -> CubeCount {
    cubecl::calculate_cube_count_elemwise(buffer.device().client(), units, CubeDim::new_1d(CUBE_SIZE))
}

/// A cube of [`CUBE_SIZE`] units in one dimension.
pub(crate) fn cube_dim() -> CubeDim {
    CubeDim::new_1d(CUBE_SIZE)
}

/// Launches a `#[cube(launch_unchecked)]` kernel on `on`'s device with (at least) `units` units, in cubes
/// of [`cube_dim`] spread by [`cube_count`]; the remaining arguments are the kernel's. Unsafe as the launch
/// is: the caller proves every index the kernel reads and writes is in bounds.
///
/// ```ignore
/// // SAFETY: …
/// unsafe { launch!(convert_kernel::<A, B>, src, len, arg(src, len), arg(&dst, len)) };
/// ```
macro_rules! launch {
    ($kernel:ident $(::<$($generic:ty),+>)?, $on:expr, $units:expr, $($arg:expr),+ $(,)?) => {{
        let on: &$crate::GpuBuffer = $on;
        $kernel::launch_unchecked $(::<$($generic),+>)? (
            on.device().client(),
            $crate::launch::cube_count(on, $units),
            $crate::launch::cube_dim(),
            $($arg),+
        )
    }};
}
pub(crate) use launch;

/// Checks that `buffer` holds a whole number of `dtype` elements, and returns how many.
pub(crate) fn elements(op: &'static str, buffer: &GpuBuffer, dtype: FloatType) -> Result<usize> {
    whole_elements(op, buffer, dtype.size_in_bytes(), dtype)
}

/// Checks that `buffer` holds a whole number of `size`-byte elements (of the kind `kind` names, for the
/// error), and returns how many.
pub(crate) fn whole_elements(
    op: &'static str,
    buffer: &GpuBuffer,
    size: usize,
    kind: impl std::fmt::Display,
) -> Result<usize> {
    if !buffer.len().is_multiple_of(size) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{} bytes is not a whole number of {kind} elements", buffer.len()),
        });
    }
    Ok(buffer.len() / size)
}

/// Checks that each operand holds the number of `dtype` elements it should and is on `on`'s device; the error
/// names the operand (`(buffer, elements expected, name)`).
pub(crate) fn check_operands<N: std::fmt::Display>(
    op: &'static str,
    dtype: FloatType,
    on: &GpuBuffer,
    operands: &[(&GpuBuffer, usize, N)],
) -> Result<()> {
    for (buffer, want, name) in operands {
        let have = elements(op, buffer, dtype)?;
        if have != *want || !buffer.device().same(on.device()) {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!(
                    "the {name} holds {have} elements on {}, expected {want} on {}",
                    buffer.device(),
                    on.device()
                ),
            });
        }
    }
    Ok(())
}

/// Checks that every buffer is on `first`'s device and has its length.
pub(crate) fn check_same(op: &'static str, first: &GpuBuffer, others: &[&GpuBuffer]) -> Result<()> {
    for other in others {
        if !other.device().same(first.device()) {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!("buffers on {} and {}", first.device(), other.device()),
            });
        }
        if other.len() != first.len() {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!("buffers of {} and {} bytes", first.len(), other.len()),
            });
        }
    }
    Ok(())
}

/// The buffer as a kernel argument of `len` elements.
pub(crate) fn arg(buffer: &GpuBuffer, len: usize) -> BufferArg {
    // SAFETY: `len` elements of the kernel's element type fit in the buffer: every caller derives `len` from
    // the buffer's byte length through `elements` (or checks it against it), and kernels index below `len`.
    unsafe { BufferArg::from_raw_parts(buffer.handle().clone(), len) }
}

#[cfg(test)]
mod tests {
    use super::vector_size;

    #[test]
    fn vector_width_divides_length_and_alignment() {
        assert_eq!(vector_size(16, 16), 4);
        assert_eq!(vector_size(6, 6), 2);
        assert_eq!(vector_size(7, 7), 1);
        assert_eq!(vector_size(16, 6), 2);
        assert_eq!(vector_size(16, 1), 1);
    }
}
