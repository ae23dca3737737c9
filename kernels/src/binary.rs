//! Element-wise arithmetic between two tensors with PyTorch's broadcasting, `x·scale + shift`, and integer
//! addition of a constant (BatchNorm's `num_batches_tracked += 1` on a device).

use cubecl::prelude::*;

use crate::activation::{Compute, forward_in_place, forward_into};
use crate::dtype::with_float_type;
use crate::gather::metadata;
use crate::launch::{arg, elements, launch};
use crate::math::{fmod, is_inf, is_nan, nan_from, sign_bit};
use crate::{FloatType, GpuBuffer, KernelError, Result};
use crate::{Formula, HostFormula, Real};

/// An arithmetic operation of two operands.
#[cube]
pub trait BinaryFormula: 'static + Send + Sync {
    /// The result for `a` and `b`, computed in `C` for elements stored as `F` (`f32` for the half types: a
    /// formula that rounds its steps as PyTorch's vectorised half path does reads `F`).
    fn apply<F: Float, C: Float>(a: C, b: C) -> C;
}

macro_rules! binary_formula {
    ($(#[$doc:meta])* $name:ident, |$a:ident, $b:ident| $body:expr) => {
        $(#[$doc])*
        pub struct $name;

        #[cube]
        impl BinaryFormula for $name {
            fn apply<F: Float, C: Float>($a: C, $b: C) -> C {
                $body
            }
        }
    };
}

binary_formula!(/// `a + b`.
    Add, |a, b| a + b);
binary_formula!(/// `a - b`.
    Sub, |a, b| a - b);
binary_formula!(/// `a * b`.
    Mul, |a, b| a * b);
binary_formula!(/// `a / b`.
    Div, |a, b| a / b);
/// The larger of `a` and `b`, NaN if either is (PyTorch's `maximum`); `b` where they are equal, as the CPU's
/// `max_nan`.
pub struct Maximum;

#[cube]
impl BinaryFormula for Maximum {
    fn apply<F: Float, C: Float>(a: C, b: C) -> C {
        let mut larger = b;
        if is_nan::<C, Const<1>>(a) || a > b {
            larger = a;
        }
        larger
    }
}

/// The smaller of `a` and `b`, NaN if either is (PyTorch's `minimum`); `b` where they are equal, as the CPU's
/// `min_nan`.
pub struct Minimum;

#[cube]
impl BinaryFormula for Minimum {
    fn apply<F: Float, C: Float>(a: C, b: C) -> C {
        let mut smaller = b;
        if is_nan::<C, Const<1>>(a) || a < b {
            smaller = a;
        }
        smaller
    }
}

/// `a / b` where `b` is not zero, else 0: PyTorch's `(a / b).masked_fill_(b == 0, 0)`, the gradient of `std`
/// and `norm` at zero.
pub struct DivOrZero;

#[cube]
impl BinaryFormula for DivOrZero {
    fn apply<F: Float, C: Float>(a: C, b: C) -> C {
        let mut q = C::new(0.0);
        if b != C::new(0.0) {
            q = a / b;
        }
        q
    }
}

/// C's `fmod`: the remainder of the division truncated toward zero, with `a`'s sign; exact.
pub struct Fmod;

#[cube]
impl BinaryFormula for Fmod {
    fn apply<F: Float, C: Float>(a: C, b: C) -> C {
        fmod::<C>(a, b)
    }
}

/// PyTorch's `remainder` (Python's `%`): the remainder of the floor division, with `b`'s sign: `fmod`, plus
/// `b` where it is non-zero and of the other sign.
pub struct Remainder;

#[cube]
impl BinaryFormula for Remainder {
    fn apply<F: Float, C: Float>(a: C, b: C) -> C {
        let zero = C::new(0.0);
        let mut m = fmod::<C>(a, b);
        if m != zero && ((b < zero) != (m < zero)) {
            m += b;
        }
        m
    }
}

/// PyTorch's floor division of floats (`c10::div_floor_floating`, Python's `//`): `(a - fmod(a, b)) / b`, one
/// less where the remainder and `b` differ in sign, then rounded to the nearest integer below; a zero
/// quotient keeps the sign of `a / b`; `a / b` (±inf or NaN) where `b` is zero; NaN where `a` is infinite or
/// either is NaN (tested by their bits: a shader compiler may take `NaN != 0` as false). Each step is rounded
/// to the storage type `F`, as PyTorch's vectorised CPU path computes `f16` and `bf16` (a no-op for `f32` and
/// `f64`).
pub struct FloorDivide;

#[cube]
impl BinaryFormula for FloorDivide {
    fn apply<F: Float, C: Float>(a: C, b: C) -> C {
        let zero = C::new(0.0);
        let one = C::new(1.0);
        let mut q = stored::<F, C>(a / b);
        if is_nan::<C, Const<1>>(a) || is_nan::<C, Const<1>>(b) || is_inf::<C, Const<1>>(a) {
            q = nan_from::<C>(a);
        } else if b != zero {
            let m = fmod::<C>(a, b);
            let mut div = stored::<F, C>(stored::<F, C>(a - m) / b);
            if m != zero && ((b < zero) != (m < zero)) {
                div = stored::<F, C>(div - one);
            }
            if div != zero {
                let mut floored = div.floor();
                if stored::<F, C>(div - floored) > C::new(0.5) {
                    floored = stored::<F, C>(floored + one);
                }
                q = floored;
            } else if sign_bit::<C>(q) {
                // `|a / b| < 1` here: a zero with the quotient's sign.
                q = C::new(-0.0);
            } else {
                q = zero;
            }
        }
        q
    }
}

/// `x` rounded to the storage type `F` (nothing for `F = C`).
#[cube]
fn stored<F: Float, C: Float>(x: C) -> C {
    C::cast_from(F::cast_from(x))
}

/// Which arithmetic operation to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`.
    Div,
    /// The larger, NaN if either is.
    Maximum,
    /// The smaller, NaN if either is.
    Minimum,
    /// `a / b`, 0 where `b` is 0.
    DivOrZero,
    /// C's `fmod`, exact.
    Fmod,
    /// PyTorch's `remainder` (the sign of `b`), exact.
    Remainder,
    /// PyTorch's floor division.
    FloorDivide,
}

/// Runs `$body` with `$o` the [`BinaryFormula`] of the [`BinaryOp`] `$op`.
macro_rules! with_op {
    ($op:expr, $o:ident => $body:expr) => {
        with_op!(@each $op, $o, $body, Add Sub Mul Div Maximum Minimum DivOrZero Fmod Remainder FloorDivide)
    };
    (@each $op:expr, $o:ident, $body:expr, $($name:ident)*) => {
        match $op {
            $(BinaryOp::$name => {
                type $o = $name;
                $body
            })*
        }
    };
}

/// Offsets into `a` and `b` of output element `i`: `meta` holds the output's shape, then `a`'s strides,
/// then `b`'s (0 along broadcast dimensions).
#[cube]
fn offsets(i: usize, meta: &[u32], rank: usize) -> (usize, usize) {
    let mut rest = i;
    let mut ia = 0;
    let mut ib = 0;
    for k in 0..rank {
        let d = rank - 1 - k;
        let size = meta[d] as usize;
        let index = rest % size;
        rest /= size;
        ia += index * (meta[rank + d] as usize);
        ib += index * (meta[2 * rank + d] as usize);
    }
    (ia, ib)
}

/// `out[i] = O(a[ia], b[ib])` over the broadcast shape.
#[cube(launch_unchecked)]
fn binary_kernel<F: Float, C: Float, O: BinaryFormula>(a: &[F], b: &[F], out: &mut [F], meta: &[u32], rank: usize) {
    if ABSOLUTE_POS < out.len() {
        let (ia, ib) = offsets(ABSOLUTE_POS, meta, rank);
        out[ABSOLUTE_POS] = F::cast_from(O::apply::<F, C>(C::cast_from(a[ia]), C::cast_from(b[ib])));
    }
}

/// `a[i] = O(a[i], b[ib])`, `b` broadcast to `a`'s shape.
#[cube(launch_unchecked)]
fn binary_in_place_kernel<F: Float, C: Float, O: BinaryFormula>(a: &mut [F], b: &[F], meta: &[u32], rank: usize) {
    if ABSOLUTE_POS < a.len() {
        let (_, ib) = offsets(ABSOLUTE_POS, meta, rank);
        a[ABSOLUTE_POS] = F::cast_from(O::apply::<F, C>(C::cast_from(a[ABSOLUTE_POS]), C::cast_from(b[ib])));
    }
}

/// `x·a + b`, an element-wise [`Formula`] (its gradient is `dy·a`).
pub struct Affine;

#[cube]
impl Formula for Affine {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, b: C) -> Vector<C, N> {
        x * Vector::new(a) + Vector::new(b)
    }

    fn backward<C: Float, N: Size>(_x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        dy * Vector::new(a)
    }
}

impl HostFormula for Affine {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, b: f64) -> R {
        x * R::of(a) + R::of(b)
    }

    #[inline(always)]
    fn backward<R: Real>(_x: R, dy: R, a: f64, _b: f64) -> R {
        dy * R::of(a)
    }
}

/// Wrapping addition of `(low, high)` to each integer of `words` 32-bit words (1: i32, 2: i64, low word
/// first), with the carry between the words.
#[cube(launch_unchecked)]
fn add_integer_kernel(data: &mut [u32], low: u32, high: u32, #[comptime] words: usize) {
    let i = ABSOLUTE_POS * words;
    if i < data.len() {
        let sum = data[i] + low;
        data[i] = sum;
        if comptime!(words == 2) {
            let carry = select(sum < low, 1u32, 0u32);
            data[i + 1] = data[i + 1] + high + carry;
        }
    }
}

/// The offset of output element `i` in operand `which` of a broadcast whose `meta` holds the output's shape,
/// then each operand's strides (0 along broadcast dimensions).
#[cube]
pub(crate) fn offset_in(i: usize, meta: &[u32], rank: usize, which: usize) -> usize {
    let mut rest = i;
    let mut at = 0;
    for k in 0..rank {
        let d = rank - 1 - k;
        let size = meta[d] as usize;
        at += (rest % size) * (meta[(1 + which) * rank + d] as usize);
        rest /= size;
    }
    at
}

/// Broadcast strides of `shape` against `out` (aligned at the right), in elements.
fn strides_in(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; out.len()];
    let mut step = 1;
    for (k, &size) in shape.iter().enumerate().rev() {
        let d = out.len() - shape.len() + k;
        strides[d] = if size == 1 { 0 } else { step };
        step *= size;
    }
    strides
}

/// The metadata of a broadcast (`out_shape`, then `a`'s and `b`'s strides in it) on `a`'s device, and the rank.
fn broadcast_metadata(
    op: &'static str,
    a: &GpuBuffer,
    a_shape: &[usize],
    b_shape: &[usize],
    out_shape: &[usize],
) -> Result<(GpuBuffer, usize)> {
    operands_metadata(op, a, &[a_shape, b_shape], out_shape)
}

/// The metadata of a broadcast of `shapes` to `out_shape` (`out_shape`, then each operand's strides in it, as
/// [`offset_in`] reads them) on `on`'s device, and the rank.
pub(crate) fn operands_metadata(
    op: &'static str,
    on: &GpuBuffer,
    shapes: &[&[usize]],
    out_shape: &[usize],
) -> Result<(GpuBuffer, usize)> {
    let strides: Vec<usize> = shapes.iter().flat_map(|s| strides_in(s, out_shape)).collect();
    Ok((metadata(op, on, out_shape.iter().chain(&strides))?, out_shape.len()))
}

/// An operand of a broadcast operation: a buffer and the shape of its elements.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    /// The elements.
    pub buffer: &'a GpuBuffer,
    /// Their shape (row-major).
    pub shape: &'a [usize],
}

impl Operand<'_> {
    /// Elements in the shape.
    fn len(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Whether `shape` broadcasts to `out_shape` (aligned at the right, sizes equal or 1).
pub(crate) fn broadcasts_to(shape: &[usize], out_shape: &[usize]) -> bool {
    shape.len() <= out_shape.len()
        && shape
            .iter()
            .rev()
            .zip(out_shape.iter().rev())
            .all(|(&s, &o)| s == o || s == 1)
}

fn check_operands(
    op: &'static str,
    dtype: FloatType,
    a: Operand<'_>,
    b: Operand<'_>,
    out_shape: &[usize],
) -> Result<()> {
    let (a, a_shape, b, b_shape) = (a.buffer, a.shape, b.buffer, b.shape);
    a.device().check_dtype(op, dtype)?;
    if !a.device().same(b.device()) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("operands on {} and {}", a.device(), b.device()),
        });
    }
    for (buffer, shape) in [(a, a_shape), (b, b_shape)] {
        if elements(op, buffer, dtype)? != shape.iter().product::<usize>() || !broadcasts_to(shape, out_shape) {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!(
                    "an operand of shape {shape:?} ({} bytes) does not broadcast to {out_shape:?}",
                    buffer.len()
                ),
            });
        }
    }
    Ok(())
}

/// `op(a, b)` over `out_shape`, the shape `a_shape` and `b_shape` broadcast to, in a new buffer.
///
/// ```no_run
/// use kernels::binary::{binary, BinaryOp, Operand};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let a = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0, 3.0, 4.0]));
/// let b = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[10.0f32, 20.0]));
/// let (a, b) = (Operand { buffer: &a, shape: &[2, 2] }, Operand { buffer: &b, shape: &[2] });
/// let y = binary(BinaryOp::Add, FloatType::F32, a, b, &[2, 2])?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[11.0, 22.0, 13.0, 24.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn binary(
    op: BinaryOp,
    dtype: FloatType,
    a: Operand<'_>,
    b: Operand<'_>,
    out_shape: &[usize],
) -> Result<GpuBuffer> {
    let name = "binary";
    check_operands(name, dtype, a, b, out_shape)?;
    let n: usize = out_shape.iter().product();
    let out = GpuBuffer::uninit(a.buffer.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let (meta, rank) = broadcast_metadata(name, a.buffer, a.shape, b.shape, out_shape)?;
    with_float_type!(dtype, F => with_op!(op, O => {
        // SAFETY: `a` and `b` hold the elements of their shapes (checked), and a broadcast offset of an index
        // of `out_shape` is below that count; `out` holds `n` elements and the kernel guards its index;
        // `meta` holds `3 · rank` u32s.
        unsafe {
            launch!(
                binary_kernel::<F, <F as Compute>::C, O>,
                a.buffer,
                n,
                arg(a.buffer, a.len()),
                arg(b.buffer, b.len()),
                arg(&out, n),
                arg(&meta, (3 * rank).max(1)),
                rank,
            )
        }
    }));
    Ok(out)
}

/// `a = op(a, b)` in place, `b` broadcast to `a_shape`.
pub fn binary_in_place(op: BinaryOp, dtype: FloatType, a: Operand<'_>, b: Operand<'_>) -> Result<()> {
    let name = "binary_in_place";
    check_operands(name, dtype, a, b, a.shape)?;
    let n = a.len();
    if n == 0 {
        return Ok(());
    }
    let (meta, rank) = broadcast_metadata(name, a.buffer, a.shape, b.shape, a.shape)?;
    with_float_type!(dtype, F => with_op!(op, O => {
        // SAFETY: as in `binary`, with `a` as the output: each unit reads and writes only its own `a[i]`.
        unsafe {
            launch!(
                binary_in_place_kernel::<F, <F as Compute>::C, O>,
                a.buffer,
                n,
                arg(a.buffer, n),
                arg(b.buffer, b.len()),
                arg(&meta, (3 * rank).max(1)),
                rank,
            )
        }
    }));
    Ok(())
}

/// `x·scale + shift` in a new buffer (computed in `f32` for the half types).
pub fn affine(dtype: FloatType, x: &GpuBuffer, scale: f64, shift: f64) -> Result<GpuBuffer> {
    let out = GpuBuffer::uninit(x.device(), x.len());
    forward_into::<Affine>([scale, shift], dtype, x, &out)?;
    Ok(out)
}

/// `x = x·scale + shift` in place.
pub fn affine_in_place(dtype: FloatType, x: &GpuBuffer, scale: f64, shift: f64) -> Result<()> {
    forward_in_place::<Affine>([scale, shift], dtype, x)
}

/// Adds `value` (wrapping, two's complement) to every integer of a buffer of `i32` (`bytes = 4`) or `i64`
/// (`bytes = 8`) elements, in place.
pub fn add_integer_in_place(data: &GpuBuffer, bytes: usize, value: i64) -> Result<()> {
    let op = "add_integer";
    if !(bytes == 4 || bytes == 8) || !data.len().is_multiple_of(bytes) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{} bytes of {bytes}-byte integers", data.len()),
        });
    }
    let n = data.len() / bytes;
    if n == 0 {
        return Ok(());
    }
    let (low, high) = (value as u64 as u32, ((value as u64) >> 32) as u32);
    // SAFETY: `data` holds `n · bytes / 4` words; unit `i < n` reads and writes words `i·w` and `i·w + 1`
    // (for `w = 2`) only, which the kernel guards by `i·w < len`, and the length is a multiple of `w`.
    unsafe {
        launch!(
            add_integer_kernel,
            data,
            n,
            arg(data, n * bytes / 4),
            low,
            high,
            bytes / 4,
        )
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::strides_in;

    #[test]
    fn broadcast_strides_align_at_the_right() {
        assert_eq!(strides_in(&[3], &[2, 3]), vec![0, 1]);
        assert_eq!(strides_in(&[2, 1], &[2, 3]), vec![1, 0]);
        assert_eq!(strides_in(&[2, 3], &[2, 3]), vec![3, 1]);
        assert_eq!(strides_in(&[], &[2, 3]), vec![0, 0]);
    }
}
