//! Moving elements between layouts on the device, for every dtype: a strided gather (reading a view), its
//! inverse the strided scatter (writing into a view), and the placement of rows into a wider buffer (cat).
//!
//! Elements move as they are stored: 4- and 8-byte dtypes as one or two 32-bit words, the 2-byte dtypes as
//! their own float type (which the device must store).

use cubecl::prelude::*;

use crate::launch::{arg, launch, whole_elements};
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// How the elements of a buffer are stored, as far as moving them is concerned.
///
/// ```
/// assert_eq!(kernels::gather::Element::Bits64.size_in_bytes(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// 2-byte IEEE half floats.
    F16,
    /// 2-byte bfloat16.
    BF16,
    /// Any 4-byte element (f32, i32).
    Bits32,
    /// Any 8-byte element (f64, i64).
    Bits64,
}

impl Element {
    /// Bytes per element.
    pub fn size_in_bytes(self) -> usize {
        match self {
            Element::F16 | Element::BF16 => 2,
            Element::Bits32 => 4,
            Element::Bits64 => 8,
        }
    }
}

/// The word of the storage that word `pos` of a view's row-major elements lies at: element `pos / words` at
/// `offset + Σ_d index_d·strides[d]`, `meta` holding the view's `shape` then its `strides`.
#[cube]
fn strided_word(pos: usize, meta: &[u32], rank: usize, offset: usize, words: usize) -> usize {
    let mut rest = pos / words;
    let mut at = offset;
    for i in 0..rank {
        let d = rank - 1 - i;
        let size = meta[d] as usize;
        at += (rest % size) * (meta[rank + d] as usize);
        rest /= size;
    }
    at * words + pos % words
}

/// `output[i] = input[offset + Σ_d index_d(i)·strides[d]]` over `shape`, in words of `T`; an element is
/// `words` consecutive words. `meta` holds `shape` then `strides`.
#[cube(launch_unchecked)]
fn gather_kernel<T: Numeric>(input: &[T], output: &mut [T], meta: &[u32], rank: usize, offset: usize, words: usize) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = input[strided_word(ABSOLUTE_POS, meta, rank, offset, words)];
    }
}

/// `output[offset + Σ_d index_d(i)·strides[d]] = input[i]` over `shape`: the inverse of [`gather_kernel`].
#[cube(launch_unchecked)]
fn scatter_kernel<T: Numeric>(input: &[T], output: &mut [T], meta: &[u32], rank: usize, offset: usize, words: usize) {
    if ABSOLUTE_POS < input.len() {
        output[strided_word(ABSOLUTE_POS, meta, rank, offset, words)] = input[ABSOLUTE_POS];
    }
}

/// `dst[o·dst_row + col + j] = src[o·row + j]`: rows of `src` placed side by side into wider rows of `dst`.
#[cube(launch_unchecked)]
fn place_rows_kernel<T: Numeric>(src: &[T], dst: &mut [T], row: usize, dst_row: usize, col: usize) {
    if ABSOLUTE_POS < src.len() {
        let o = ABSOLUTE_POS / row;
        dst[o * dst_row + col + ABSOLUTE_POS % row] = src[ABSOLUTE_POS];
    }
}

/// Checks that the device stores `element` and that `buffer` holds a whole number of them; returns how many.
pub(crate) fn count(op: &'static str, buffer: &GpuBuffer, element: Element) -> Result<usize> {
    match element {
        Element::F16 => buffer.device().check_dtype(op, FloatType::F16)?,
        Element::BF16 => buffer.device().check_dtype(op, FloatType::BF16)?,
        Element::Bits32 | Element::Bits64 => {}
    }
    let size = element.size_in_bytes();
    whole_elements(op, buffer, size, format_args!("{size}-byte"))
}

/// Runs `$body` with `$t` the type elements move as and `$words` the words of it per element.
macro_rules! with_element {
    ($element:expr, $t:ident, $words:ident => $body:expr) => {
        match $element {
            $crate::gather::Element::F16 => {
                type $t = half::f16;
                let $words = 1usize;
                $body
            }
            $crate::gather::Element::BF16 => {
                type $t = half::bf16;
                let $words = 1usize;
                $body
            }
            $crate::gather::Element::Bits32 => {
                type $t = u32;
                let $words = 1usize;
                $body
            }
            $crate::gather::Element::Bits64 => {
                type $t = u32;
                let $words = 2usize;
                $body
            }
        }
    };
}
pub(crate) use with_element;

/// The elements of `input` at `offset + Σ index[d]·strides[d]` for every index of `shape`, in row-major
/// order, in a new buffer (strides and offset in elements; a stride of 0 repeats an element).
///
/// ```no_run
/// use kernels::gather::{gather, Element};
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]));
/// // the transpose of a 2x3 matrix
/// let t = gather(&x, Element::Bits32, &[3, 2], &[1, 3], 0)?;
/// assert_eq!(t.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn gather(
    input: &GpuBuffer,
    element: Element,
    shape: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<GpuBuffer> {
    let op = "gather";
    let (n, meta) = strided_geometry(op, input, element, shape, strides, offset)?;
    let output = GpuBuffer::uninit(input.device(), n * element.size_in_bytes());
    let Some(meta) = meta else {
        return Ok(output);
    };
    let available = count(op, input, element)?;
    with_element!(element, T, words => {
        // SAFETY: `input` holds `available · words` words of `T` and every index the kernel reads lies inside it
        // (checked by `strided_geometry`); `output` holds `n · words` words, the grid covers them and the kernel
        // guards its index; `meta` holds `2 · rank` u32s.
        unsafe {
            launch!(
                gather_kernel::<T>,
                input,
                n * words,
                arg(input, available * words),
                arg(&output, n * words),
                arg(&meta, (2 * shape.len()).max(1)),
                shape.len(),
                offset,
                words,
            )
        }
    });
    Ok(output)
}

/// Writes the elements of `input` (row-major over `shape`) into `output` at `offset + Σ index[d]·strides[d]`:
/// the inverse of [`gather`], a write into a view. Two elements written to one place (a stride of 0) leave one
/// of them there; callers refuse such views.
///
/// ```no_run
/// use kernels::gather::{scatter, Element};
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[0.0f32; 6]));
/// let column = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0]));
/// // column 1 of a 2x3 matrix
/// scatter(&column, &x, Element::Bits32, &[2], &[3], 1)?;
/// assert_eq!(x.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[0.0, 1.0, 0.0, 0.0, 2.0, 0.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn scatter(
    input: &GpuBuffer,
    output: &GpuBuffer,
    element: Element,
    shape: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<()> {
    let op = "scatter";
    if !input.device().same(output.device()) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("buffers on {} and {}", input.device(), output.device()),
        });
    }
    let (n, meta) = strided_geometry(op, output, element, shape, strides, offset)?;
    let have = count(op, input, element)?;
    if have != n {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{have} elements to write into a view of shape {shape:?}"),
        });
    }
    let Some(meta) = meta else {
        return Ok(());
    };
    let available = count(op, output, element)?;
    if n == 1 && element.size_in_bytes() < 8 {
        // One element of one word: the strided kernel launched as a single unit reads its input as zero on
        // lavapipe (measured, `scatter_writes_where_gather_reads`), so the element (every index 0: at `offset`)
        // goes as a row of one.
        return place_rows(input, output, element, 1, 1, available, offset);
    }
    with_element!(element, T, words => {
        // SAFETY: `input` holds `n · words` words (checked above), the grid covers them and the kernel guards its
        // index; every index it writes lies inside `output`'s `available · words` words (checked by
        // `strided_geometry`); `meta` holds `2 · rank` u32s.
        unsafe {
            launch!(
                scatter_kernel::<T>,
                input,
                n * words,
                arg(input, n * words),
                arg(output, available * words),
                arg(&meta, (2 * shape.len()).max(1)),
                shape.len(),
                offset,
                words,
            )
        }
    });
    Ok(())
}

/// Checks that the elements of `shape` at `strides` from `offset` lie inside `buffer`; returns their count and,
/// when there are any, the kernels' metadata (`shape` then `strides`).
fn strided_geometry(
    op: &'static str,
    buffer: &GpuBuffer,
    element: Element,
    shape: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<(usize, Option<GpuBuffer>)> {
    let available = count(op, buffer, element)?;
    let n: usize = shape.iter().product();
    if strides.len() != shape.len() {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{} strides for a shape of rank {}", strides.len(), shape.len()),
        });
    }
    if n == 0 {
        return Ok((0, None));
    }
    let last = offset
        + shape
            .iter()
            .zip(strides)
            .map(|(s, t)| s.saturating_sub(1) * t)
            .sum::<usize>();
    if last >= available {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!(
                "shape {shape:?} with strides {strides:?} from offset {offset} reaches element {last} of {available}"
            ),
        });
    }
    let meta = metadata(op, buffer, shape.iter().chain(strides))?;
    Ok((n, Some(meta)))
}

/// Writes the `outer` rows of `row` elements of `src` into `dst`, whose rows are `dst_row` elements long,
/// starting at column `col` of each (one input of a concatenation).
///
/// ```no_run
/// use kernels::gather::{place_rows, Element};
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let a = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1i32, 2]));
/// let out = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[0i32; 4]));
/// place_rows(&a, &out, Element::Bits32, 1, 2, 4, 1)?;
/// assert_eq!(out.to_bytes()?, bytemuck::cast_slice::<i32, u8>(&[0, 1, 2, 0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn place_rows(
    src: &GpuBuffer,
    dst: &GpuBuffer,
    element: Element,
    outer: usize,
    row: usize,
    dst_row: usize,
    col: usize,
) -> Result<()> {
    let op = "place_rows";
    let have = count(op, src, element)?;
    let room = count(op, dst, element)?;
    if !src.device().same(dst.device()) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("buffers on {} and {}", src.device(), dst.device()),
        });
    }
    if have != outer * row || col + row > dst_row || room != outer * dst_row {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!(
                "{have} elements as {outer} rows of {row} do not fit at column {col} of {room} elements in rows of {dst_row}"
            ),
        });
    }
    if have == 0 {
        return Ok(());
    }
    with_element!(element, T, words => {
        // SAFETY: `src` holds `outer · row · words` words and `dst` `outer · dst_row · words` (checked above);
        // the kernel writes `o · dst_row + col + j < outer · dst_row` (in words: scaled by `words`, with
        // `col + row <= dst_row`) for the `src` indices it guards.
        unsafe {
            launch!(
                place_rows_kernel::<T>,
                src,
                have * words,
                arg(src, have * words),
                arg(dst, room * words),
                row * words,
                dst_row * words,
                col * words,
            )
        }
    });
    Ok(())
}

/// Uploads sizes as the `u32` metadata a kernel reads, failing for sizes beyond `u32`.
pub(crate) fn metadata<'a>(
    op: &'static str,
    on: &GpuBuffer,
    values: impl Iterator<Item = &'a usize>,
) -> Result<GpuBuffer> {
    let words = values
        .map(|&v| {
            u32::try_from(v).map_err(|_| KernelError::InvalidArgument {
                op,
                message: format!("size or stride {v} exceeds the kernels' 32-bit metadata"),
            })
        })
        .collect::<Result<Vec<u32>>>()?;
    let words = if words.is_empty() { vec![0] } else { words };
    Ok(GpuBuffer::from_bytes(on.device(), bytemuck::cast_slice(&words)))
}
