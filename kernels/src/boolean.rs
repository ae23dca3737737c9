//! Bool tensors on a device: comparisons, logical operations and the selection by a mask (`where`), with
//! PyTorch's broadcasting.
//!
//! A bool element is one byte (0 or 1), as on the host; a buffer holds them packed four to a 32-bit word (a
//! [`GpuBuffer`] is padded to whole words). A kernel that writes bools writes whole words, four elements per
//! unit, so no two units write into one word.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::binary::{Operand, broadcasts_to, offset_in, operands_metadata};
use crate::dtype::with_float_type;
use crate::gather::{Element, count, with_element};
use crate::launch::{arg, elements, launch};
use crate::math::is_nan;
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// A comparison of two numbers, as PyTorch's `eq`, `ne`, `lt`, `le`, `gt` and `ge`: false where either is NaN,
/// except `Ne`, which is true there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
}

impl CompareOp {
    /// The comparison as the kernels' compile-time code.
    fn code(self) -> u32 {
        self as u32
    }
}

/// A logical operation of two bools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicalOp {
    /// Both.
    And,
    /// Either.
    Or,
    /// Exactly one.
    Xor,
}

/// Whether `a op b` holds, `op` a [`CompareOp`]'s code.
#[cube]
fn holds<C: Float>(a: C, b: C, #[comptime] op: u32) -> bool {
    let ordered = !(is_nan::<C, Const<1>>(a) || is_nan::<C, Const<1>>(b));
    if comptime!(op == 0) {
        ordered && a == b
    } else if comptime!(op == 1) {
        !ordered || a != b
    } else if comptime!(op == 2) {
        ordered && a < b
    } else if comptime!(op == 3) {
        ordered && a <= b
    } else if comptime!(op == 4) {
        ordered && a > b
    } else {
        ordered && a >= b
    }
}

/// Byte `i` of bytes packed in words: 0 or 1 for a bool.
#[cube]
pub(crate) fn byte_at(words: &[u32], i: usize) -> u32 {
    (words[i / 4] >> (u32::cast_from(i % 4) * 8)) & 0xffu32
}

/// Output word `w` of `a op b` over a broadcast of `n` elements: elements `4w..4w+4`, one byte each.
#[cube(launch_unchecked)]
fn compare_kernel<F: Float, C: Float>(
    a: &[F],
    b: &[F],
    out: &mut [u32],
    meta: &[u32],
    rank: usize,
    n: usize,
    #[comptime] op: u32,
) {
    let w = ABSOLUTE_POS;
    if w < out.len() {
        let mut packed = 0u32;
        for k in 0..4usize {
            let i = w * 4 + k;
            if i < n {
                let (ia, ib) = (offset_in(i, meta, rank, 0), offset_in(i, meta, rank, 1));
                if holds::<C>(C::cast_from(a[ia]), C::cast_from(b[ib]), op) {
                    packed |= 1u32 << (u32::cast_from(k) * 8);
                }
            }
        }
        out[w] = packed;
    }
}

/// The comparable form of element `i` of integers stored as `words` words each (0: one byte), at word
/// `words·i`: `(high, low)` to compare as unsigned pairs, the sign bit flipped for signed integers so that the
/// unsigned order is the signed one.
#[cube]
fn integer_at(x: &[u32], i: usize, #[comptime] words: u32, #[comptime] signed: bool) -> (u32, u32) {
    let flip = comptime!(if signed { 0x8000_0000u32 } else { 0u32 });
    if comptime!(words == 0) {
        (0u32, byte_at(x, i))
    } else if comptime!(words == 1) {
        (0u32, x[i] ^ flip)
    } else {
        (x[2 * i + 1] ^ flip, x[2 * i])
    }
}

/// Whether `a op b` holds for `(high, low)` pairs compared as unsigned.
#[cube]
fn pair_holds(a: (u32, u32), b: (u32, u32), #[comptime] op: u32) -> bool {
    let less = a.0 < b.0 || (a.0 == b.0 && a.1 < b.1);
    let equal = a.0 == b.0 && a.1 == b.1;
    if comptime!(op == 0) {
        equal
    } else if comptime!(op == 1) {
        !equal
    } else if comptime!(op == 2) {
        less
    } else if comptime!(op == 3) {
        less || equal
    } else if comptime!(op == 4) {
        !(less || equal)
    } else {
        !less
    }
}

/// Output word `w` of `a op b` for integers or bools (see [`integer_at`]), as [`compare_kernel`].
#[cube(launch_unchecked)]
fn compare_integers_kernel(
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
    meta: &[u32],
    rank: usize,
    n: usize,
    #[comptime] op: u32,
    #[comptime] words: u32,
    #[comptime] signed: bool,
) {
    let w = ABSOLUTE_POS;
    if w < out.len() {
        let mut packed = 0u32;
        for k in 0..4usize {
            let i = w * 4 + k;
            if i < n {
                let p = integer_at(a, offset_in(i, meta, rank, 0), words, signed);
                let q = integer_at(b, offset_in(i, meta, rank, 1), words, signed);
                if pair_holds(p, q, op) {
                    packed |= 1u32 << (u32::cast_from(k) * 8);
                }
            }
        }
        out[w] = packed;
    }
}

/// Output word `w` of `a op b` for bools `a` and `b` (bytes packed in words), `op` a [`LogicalOp`]'s code.
#[cube(launch_unchecked)]
fn logical_kernel(a: &[u32], b: &[u32], out: &mut [u32], meta: &[u32], rank: usize, n: usize, #[comptime] op: u32) {
    let w = ABSOLUTE_POS;
    if w < out.len() {
        let mut packed = 0u32;
        for k in 0..4usize {
            let i = w * 4 + k;
            if i < n {
                let p = byte_at(a, offset_in(i, meta, rank, 0)) != 0;
                let q = byte_at(b, offset_in(i, meta, rank, 1)) != 0;
                let mut r = p != q;
                if comptime!(op == 0) {
                    r = p && q;
                } else if comptime!(op == 1) {
                    r = p || q;
                }
                if r {
                    packed |= 1u32 << (u32::cast_from(k) * 8);
                }
            }
        }
        out[w] = packed;
    }
}

/// Word `pos` of `cond ? a : b` over a broadcast, an element being `words` words of `T`.
#[cube(launch_unchecked)]
fn select_kernel<T: Numeric>(cond: &[u32], a: &[T], b: &[T], out: &mut [T], meta: &[u32], rank: usize, words: usize) {
    if ABSOLUTE_POS < out.len() {
        let (i, word) = (ABSOLUTE_POS / words, ABSOLUTE_POS % words);
        if byte_at(cond, offset_in(i, meta, rank, 0)) != 0 {
            out[ABSOLUTE_POS] = a[offset_in(i, meta, rank, 1) * words + word];
        } else {
            out[ABSOLUTE_POS] = b[offset_in(i, meta, rank, 2) * words + word];
        }
    }
}

/// Checks that each operand holds the elements of its shape (`size`-byte elements) on `on`'s device and
/// broadcasts to `out_shape`.
fn check_broadcast(
    op: &'static str,
    on: &GpuBuffer,
    operands: &[(Operand<'_>, usize)],
    out_shape: &[usize],
) -> Result<()> {
    for (operand, size) in operands {
        let want: usize = operand.shape.iter().product();
        let fits = operand.buffer.len() == want * size && broadcasts_to(operand.shape, out_shape);
        if !fits || !operand.buffer.device().same(on.device()) {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!(
                    "an operand of shape {:?} ({} bytes on {}) does not broadcast to {out_shape:?} on {}",
                    operand.shape,
                    operand.buffer.len(),
                    operand.buffer.device(),
                    on.device()
                ),
            });
        }
    }
    Ok(())
}

/// Broadcast metadata on the device and its rank.
type Broadcast = (GpuBuffer, usize);

/// The output of an operation writing bools over `out_shape` from operands `a` and `b` of `size`-byte elements,
/// after checking them: the output buffer (of `n` bytes), and the broadcast metadata with its rank, `None`
/// when there is nothing to compute.
fn bools_of_two(
    name: &'static str,
    a: Operand<'_>,
    b: Operand<'_>,
    size: usize,
    out_shape: &[usize],
) -> Result<(GpuBuffer, usize, Option<Broadcast>)> {
    output_of_two(name, a, b, size, 1, out_shape)
}

/// As [`bools_of_two`], for an output of `out_size`-byte elements.
pub(crate) fn output_of_two(
    name: &'static str,
    a: Operand<'_>,
    b: Operand<'_>,
    size: usize,
    out_size: usize,
    out_shape: &[usize],
) -> Result<(GpuBuffer, usize, Option<Broadcast>)> {
    check_broadcast(name, a.buffer, &[(a, size), (b, size)], out_shape)?;
    let n: usize = out_shape.iter().product();
    let out = GpuBuffer::uninit(a.buffer.device(), n * out_size);
    if n == 0 {
        return Ok((out, n, None));
    }
    let meta = operands_metadata(name, a.buffer, &[a.shape, b.shape], out_shape)?;
    Ok((out, n, Some(meta)))
}

/// Words a buffer of `bytes` bytes is bound as (at least one: an empty binding is not allowed).
pub(crate) fn words_of(bytes: usize) -> usize {
    bytes.div_ceil(4).max(1)
}

/// `a op b` over `out_shape`, the shape `a` and `b` (elements of `dtype`) broadcast to: a new buffer of bools.
///
/// ```no_run
/// use kernels::binary::Operand;
/// use kernels::boolean::{compare, CompareOp};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let a = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0, 3.0]));
/// let b = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[2.0f32]));
/// let (a, b) = (Operand { buffer: &a, shape: &[3] }, Operand { buffer: &b, shape: &[] });
/// assert_eq!(compare(CompareOp::Ge, FloatType::F32, a, b, &[3])?.to_bytes()?, vec![0, 1, 1]);
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn compare(
    op: CompareOp,
    dtype: FloatType,
    a: Operand<'_>,
    b: Operand<'_>,
    out_shape: &[usize],
) -> Result<GpuBuffer> {
    let name = "compare";
    a.buffer.device().check_dtype(name, dtype)?;
    let (out, n, Some((meta, rank))) = bools_of_two(name, a, b, dtype.size_in_bytes(), out_shape)? else {
        return Ok(GpuBuffer::uninit(a.buffer.device(), 0));
    };
    let (la, lb) = (elements(name, a.buffer, dtype)?, elements(name, b.buffer, dtype)?);
    with_float_type!(dtype, F => {
        // SAFETY: `a` and `b` hold the elements of their shapes (checked), and a broadcast offset of an index
        // below `n` is below that count; `out` is bound as the `⌈n/4⌉` words its `n` bytes are padded to and
        // the kernel guards its word; `meta` holds `3 · rank` u32s.
        unsafe {
            launch!(
                compare_kernel::<F, <F as Compute>::C>,
                a.buffer,
                words_of(n),
                arg(a.buffer, la),
                arg(b.buffer, lb),
                arg(&out, words_of(n)),
                arg(&meta, (3 * rank).max(1)),
                rank,
                n,
                op.code(),
            )
        }
    });
    Ok(out)
}

/// How integers lie in a buffer, for [`compare_integers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integer {
    /// One unsigned byte (`u8`; bool, whose false is below true).
    Byte,
    /// `i32`.
    I32,
    /// `i64`, low word first.
    I64,
}

impl Integer {
    pub(crate) fn size_in_bytes(self) -> usize {
        match self {
            Integer::Byte => 1,
            Integer::I32 => 4,
            Integer::I64 => 8,
        }
    }
}

/// `a op b` over `out_shape` for integer (or bool) operands of one [`Integer`] kind: a new buffer of bools.
/// Exact: the integers are compared word by word, never converted.
pub fn compare_integers(
    op: CompareOp,
    kind: Integer,
    a: Operand<'_>,
    b: Operand<'_>,
    out_shape: &[usize],
) -> Result<GpuBuffer> {
    let name = "compare";
    let size = kind.size_in_bytes();
    let (out, n, Some((meta, rank))) = bools_of_two(name, a, b, size, out_shape)? else {
        return Ok(GpuBuffer::uninit(a.buffer.device(), 0));
    };
    let words = (size / 4) as u32;
    // SAFETY: `a` and `b` hold `size` bytes per element of their shapes (checked); a broadcast offset of an
    // index below `n` is below those counts, so its words (or its byte, in word `i / 4`) lie in the words
    // their buffers are padded to; `out` is bound as its `⌈n/4⌉` words and the kernel guards its word; `meta`
    // holds `3 · rank` u32s.
    unsafe {
        launch!(
            compare_integers_kernel,
            a.buffer,
            words_of(n),
            arg(a.buffer, words_of(a.buffer.len())),
            arg(b.buffer, words_of(b.buffer.len())),
            arg(&out, words_of(n)),
            arg(&meta, (3 * rank).max(1)),
            rank,
            n,
            op.code(),
            words,
            kind != Integer::Byte,
        )
    }
    Ok(out)
}

/// `a op b` for bool operands `a` and `b` (one byte per element), broadcast to `out_shape`: a new buffer of
/// bools.
pub fn logical(op: LogicalOp, a: Operand<'_>, b: Operand<'_>, out_shape: &[usize]) -> Result<GpuBuffer> {
    let name = "logical";
    let (out, n, Some((meta, rank))) = bools_of_two(name, a, b, 1, out_shape)? else {
        return Ok(GpuBuffer::uninit(a.buffer.device(), 0));
    };
    // SAFETY: `a` and `b` hold one byte per element of their shapes (checked), so byte `i` of a broadcast
    // offset below their counts lies in word `i / 4` of the words their buffers are padded to; `out` is bound
    // as its `⌈n/4⌉` words and the kernel guards its word; `meta` holds `3 · rank` u32s.
    unsafe {
        launch!(
            logical_kernel,
            a.buffer,
            words_of(n),
            arg(a.buffer, words_of(a.buffer.len())),
            arg(b.buffer, words_of(b.buffer.len())),
            arg(&out, words_of(n)),
            arg(&meta, (3 * rank).max(1)),
            rank,
            n,
            op as u32,
        )
    }
    Ok(out)
}

/// `cond ? a : b` element by element (PyTorch's `torch.where`), `cond` of bools and `a` and `b` of one
/// `element` kind, broadcast to `out_shape`: a new buffer. Elements move as they are (exact for every dtype).
pub fn where_cond(
    element: Element,
    cond: Operand<'_>,
    a: Operand<'_>,
    b: Operand<'_>,
    out_shape: &[usize],
) -> Result<GpuBuffer> {
    let name = "where";
    let size = element.size_in_bytes();
    check_broadcast(name, cond.buffer, &[(cond, 1), (a, size), (b, size)], out_shape)?;
    let (la, lb) = (count(name, a.buffer, element)?, count(name, b.buffer, element)?);
    let n: usize = out_shape.iter().product();
    let out = GpuBuffer::uninit(cond.buffer.device(), n * size);
    if n == 0 {
        return Ok(out);
    }
    let (meta, rank) = operands_metadata(name, cond.buffer, &[cond.shape, a.shape, b.shape], out_shape)?;
    with_element!(element, T, words => {
        // SAFETY: `cond` holds one byte per element of its shape and `a` and `b` `words` words of `T` per
        // element of theirs (checked), and a broadcast offset of an index below `n` is below those counts;
        // `out` holds `n · words` words of `T` and the kernel guards its word; `meta` holds `4 · rank` u32s.
        unsafe {
            launch!(
                select_kernel::<T>,
                cond.buffer,
                n * words,
                arg(cond.buffer, words_of(cond.buffer.len())),
                arg(a.buffer, la * words),
                arg(b.buffer, lb * words),
                arg(&out, n * words),
                arg(&meta, (4 * rank).max(1)),
                rank,
                words,
            )
        }
    });
    Ok(out)
}
