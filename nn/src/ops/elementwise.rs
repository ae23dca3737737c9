//! Element-wise operations: unary maps and broadcasting binary operations, on the CPU.
//!
//! Formulas are written once, generic over [`Real`]; `f16`/`bf16` tensors run the `f32` formula and round the
//! result. Large tensors are split across threads.

use std::mem::MaybeUninit;

use half::{bf16, f16};
use smallvec::SmallVec;

use kernels::Real;

use super::map;
use crate::tensor::{cast, storage::CpuData};
use crate::threads;
use crate::{DType, Error, Result, Shape, Tensor};

use map::CHUNK;

/// A formula of one float argument, written once for `f32` and `f64`. It is `Copy` (its constants), so a
/// loop holds it in registers and vectorises.
pub(crate) trait UnaryFn: Sync + Send + Copy {
    /// Whether the formula's time is its arithmetic (an `exp`, an `erf`…) rather than moving its data. In place,
    /// such a formula keeps the plain element loop, which the compiler may interleave across blocks; the others
    /// run through whole-block stores, which need a block's loads before its stores (64 `f64` fill AVX2's 16
    /// registers) and pay off only where memory is the limit (`map::unary_chunk_in_place`).
    const ARITHMETIC_BOUND: bool = false;

    /// The value at `x`.
    fn apply<R: Real>(&self, x: R) -> R;
}

/// A formula of two float arguments, written once for `f32` and `f64`.
pub(crate) trait BinaryFn: Sync + Send + Copy {
    /// The value at `(a, b)`.
    fn apply<R: Real>(&self, a: R, b: R) -> R;

    /// The value at `(a, b)` of elements stored in a half type, computed in `f32`; `round` rounds an `f32` to
    /// that type. By default computed in `f32`, rounded once by the caller; a formula whose steps PyTorch
    /// rounds to the half type (its vectorised CPU path) rounds them here.
    #[inline(always)]
    fn apply_half(&self, a: f32, b: f32, round: fn(f32) -> f32) -> f32 {
        let _ = round;
        self.apply(a, b)
    }
}

/// `x` rounded to `f16`, as `f32`.
fn round_f16(x: f32) -> f32 {
    f16::from_f32(x).to_f32()
}

/// `x` rounded to `bf16`, as `f32`.
fn round_bf16(x: f32) -> f32 {
    bf16::from_f32(x).to_f32()
}

/// `x = f(x)` for every element, split across threads for large inputs.
pub(crate) fn map_in_place<T: Copy + Send>(data: &mut [T], f: impl Fn(T) -> T + Sync + Send + Copy) {
    let parts = threads::parts_for(data.len(), CHUNK);
    threads::for_each_piece(data, 1, parts, move |_, c| map_chunk_in_place(c, f));
}

/// One chunk of [`map_in_place`], `f` by value.
#[inline(always)]
fn map_chunk_in_place<T: Copy>(data: &mut [T], f: impl Fn(T) -> T + Copy) {
    for x in data.iter_mut() {
        *x = f(*x);
    }
}

/// `f` of half-precision host data computed in `f32`, the result rounded back to the data's dtype (as PyTorch
/// computes the half types on the CPU).
pub(crate) fn widened(data: &CpuData, f: impl FnOnce(&[f32]) -> CpuData) -> CpuData {
    let CpuData::F32(wide) = cast::cast_data(data, DType::F32) else {
        unreachable!("cast to f32")
    };
    cast::cast_data(&f(&wide), data.dtype())
}

impl Tensor {
    /// A new tensor of this tensor's shape holding `f` of its host data; `f` answers `None` for a dtype it
    /// does not take (an integer one), which is an error naming `op`.
    pub(crate) fn map_float_data(
        &self,
        op: &'static str,
        f: impl FnOnce(&CpuData) -> Option<CpuData>,
    ) -> Result<Tensor> {
        let data = self.read_cpu(op, |d| f(d).ok_or_else(|| Error::float_only(op, d.dtype())))??;
        Ok(Tensor::from_cpu(data, self.shape().clone()))
    }

    /// A new tensor `f(x)` of the same dtype; floating-point dtypes only.
    pub(crate) fn map_float<F: UnaryFn>(&self, op: &'static str, f: &F) -> Result<Tensor> {
        let (f, n) = (*f, self.numel());
        self.map_float_data(op, |d| match d {
            CpuData::F32(v) => Some(map::filled(n, |out| map::unary(v, out, f))),
            CpuData::F64(v) => Some(map::filled(n, |out| map::unary(v, out, f))),
            CpuData::F16(v) => Some(map::filled(n, |out| map::unary_half(v, out, f))),
            CpuData::BF16(v) => Some(map::filled(n, |out| map::unary_half(v, out, f))),
            _ => None,
        })
    }

    /// A new tensor `f_b(x)` where the formula changes block by block: block `b` (`block` consecutive
    /// elements) uses `formulas[b % formulas.len()]` — one per channel, for instance.
    pub(crate) fn map_float_blocks<F: UnaryFn>(
        &self,
        op: &'static str,
        block: usize,
        formulas: &[F],
    ) -> Result<Tensor> {
        let n = self.numel();
        self.map_float_data(op, |d| match d {
            CpuData::F32(v) => Some(map::filled(n, |out| map::unary_blocks(v, out, block, formulas))),
            CpuData::F64(v) => Some(map::filled(n, |out| map::unary_blocks(v, out, block, formulas))),
            CpuData::F16(_) | CpuData::BF16(_) => Some(widened(d, |v| {
                map::filled(n, |out| map::unary_blocks(v, out, block, formulas))
            })),
            _ => None,
        })
    }

    /// [`map_float_blocks`](Self::map_float_blocks) written into `out` (same shape and dtype, checked by the
    /// caller). `f32` and `f64` write in place; the half types, and an `out` sharing this tensor's storage, go
    /// through a new tensor copied over.
    pub(crate) fn map_float_blocks_into<F: UnaryFn>(
        &self,
        op: &'static str,
        block: usize,
        formulas: &[F],
        out: &Tensor,
    ) -> Result<()> {
        let direct = !out.shares_storage(self) && matches!(self.dtype(), DType::F32 | DType::F64);
        if !direct {
            return out.copy_(&self.map_float_blocks(op, block, formulas)?);
        }
        self.read_cpu(op, |src| {
            out.write_cpu(op, |dst| match (src, dst) {
                (CpuData::F32(s), CpuData::F32(d)) => map::unary_blocks(s, d, block, formulas),
                (CpuData::F64(s), CpuData::F64(d)) => map::unary_blocks(s, d, block, formulas),
                _ => unreachable!("f32 or f64 in both, checked above and by the caller"),
            })
        })?
    }

    /// A new tensor `f_b(a, b)` of two tensors of one shape and dtype, where the formula changes block by
    /// block: block `k` (`block` consecutive elements) uses `make(k)`.
    pub(crate) fn zip_float_blocks<F: BinaryFn>(
        &self,
        other: &Tensor,
        op: &'static str,
        block: usize,
        make: impl Fn(usize) -> F + Sync,
    ) -> Result<Tensor> {
        Error::check_shapes(op, self.shape(), other.shape(), "equal shapes")?;
        let (a, b) = match self.dtype() {
            DType::F16 | DType::BF16 => (self.to_dtype(DType::F32)?, other.to_dtype(DType::F32)?),
            _ => (self.clone(), other.to_dtype(self.dtype())?),
        };
        let n = self.numel();
        let data = a.read_cpu(op, |da| {
            b.read_cpu(op, |db| -> Result<CpuData> {
                Ok(match (da, db) {
                    (CpuData::F32(x), CpuData::F32(y)) => map::filled(n, |o| map::binary_blocks(x, y, o, block, &make)),
                    (CpuData::F64(x), CpuData::F64(y)) => map::filled(n, |o| map::binary_blocks(x, y, o, block, &make)),
                    _ => return Err(Error::float_only(op, self.dtype())),
                })
            })
        })???;
        Tensor::from_cpu(data, self.shape().clone()).to_dtype(self.dtype())
    }

    /// `out = f(x)` into an existing tensor of the same shape and dtype (not reallocated).
    pub(crate) fn map_float_into<F: UnaryFn>(&self, op: &'static str, f: &F, out: &Tensor) -> Result<()> {
        super::check_like(op, self, out, super::OUTPUT)?;
        if out.shares_storage(self) {
            return self.map_float_(op, f);
        }
        let f = *f;
        self.read_cpu(op, |src| {
            out.write_cpu(op, |dst| -> Result<()> {
                match (src, dst) {
                    (CpuData::F32(s), CpuData::F32(d)) => map::unary(s, d, f),
                    (CpuData::F64(s), CpuData::F64(d)) => map::unary(s, d, f),
                    (CpuData::F16(s), CpuData::F16(d)) => map::unary_half(s, d, f),
                    (CpuData::BF16(s), CpuData::BF16(d)) => map::unary_half(s, d, f),
                    (other, _) => return Err(Error::float_only(op, other.dtype())),
                }
                Ok(())
            })?
        })?
    }

    /// `x = f(x)` in place, seen through every handle to this storage; floating-point dtypes only.
    pub(crate) fn map_float_<F: UnaryFn>(&self, op: &'static str, f: &F) -> Result<()> {
        let f = *f;
        self.write_cpu(op, |d| -> Result<()> {
            match d {
                CpuData::F32(v) => map::unary_in_place(v, f),
                CpuData::F64(v) => map::unary_in_place(v, f),
                CpuData::F16(v) => map::unary_half_in_place(v, f),
                CpuData::BF16(v) => map::unary_half_in_place(v, f),
                other => return Err(Error::float_only(op, other.dtype())),
            }
            Ok(())
        })?
    }

    /// A new tensor `f(a, b)` with `a` and `b` broadcast against each other (PyTorch's rules) and promoted to
    /// a common floating-point dtype.
    pub(crate) fn zip_float<F: BinaryFn>(&self, other: &Tensor, op: &'static str, f: &F) -> Result<Tensor> {
        let f = *f;
        let (a, b, _) = promote_pair(op, self, other)?;
        let out_shape = broadcast_shape(op, a.shape(), b.shape())?;
        if &out_shape == a.shape() && (b.shape() == a.shape() || b.numel() == 1) {
            // Same shapes, or a scalar right side: the vectorised loops.
            let n = out_shape.numel();
            let fast = a.read_cpu(op, |da| {
                b.read_cpu(op, |db| match (da, db) {
                    (CpuData::F32(x), CpuData::F32(y)) => Some(map::filled(n, |o| map::binary(x, y, o, f))),
                    (CpuData::F64(x), CpuData::F64(y)) => Some(map::filled(n, |o| map::binary(x, y, o, f))),
                    _ => None,
                })
            })??;
            if let Some(data) = fast {
                return Ok(Tensor::from_cpu(data, out_shape));
            }
        }
        let data = zip_data(op, &a, &b, &out_shape, f)?;
        Ok(Tensor::from_cpu(data, out_shape))
    }

    /// `a = f(a, b)` in place, with `b` broadcast to `a`'s shape (which does not change).
    pub(crate) fn zip_float_<F: BinaryFn>(&self, other: &Tensor, op: &'static str, f: &F) -> Result<()> {
        let f = *f;
        if !self.is_floating_point() {
            // Refused before the write lock, which counts as a change (the version moves).
            return Err(Error::float_only(op, self.dtype()));
        }
        let other = in_place_operand(op, self, other)?;
        let (shape, sb) = (self.shape(), broadcast_strides(other.shape(), self.shape()));
        // Into this tensor's own elements (`other` never shares them: `in_place_operand`).
        other.read_cpu(op, |db| {
            self.write_cpu(op, |da| {
                match (da, db) {
                    (CpuData::F32(x), CpuData::F32(y)) => {
                        zip_broadcast_in_place(x, y, &sb, shape, |p, q| f.apply(p, q))
                    }
                    (CpuData::F64(x), CpuData::F64(y)) => {
                        zip_broadcast_in_place(x, y, &sb, shape, |p, q| f.apply(p, q))
                    }
                    (CpuData::F16(x), CpuData::F16(y)) => zip_broadcast_in_place(x, y, &sb, shape, |p, q| {
                        f16::from_f32(f.apply_half(p.to_f32(), q.to_f32(), round_f16))
                    }),
                    (CpuData::BF16(x), CpuData::BF16(y)) => zip_broadcast_in_place(x, y, &sb, shape, |p, q| {
                        bf16::from_f32(f.apply_half(p.to_f32(), q.to_f32(), round_bf16))
                    }),
                    _ => return Err(Error::float_only(op, self.dtype())),
                }
                Ok(())
            })?
        })?
    }
}

/// `f(a, b)` over `out_shape` (which `a` and `b`, both on the CPU in one float dtype, broadcast to), in new host
/// data; the half types compute in `f32`. An error for another dtype.
fn zip_data<F: BinaryFn>(op: &'static str, a: &Tensor, b: &Tensor, out_shape: &Shape, f: F) -> Result<CpuData> {
    let (sa, sb) = (
        broadcast_strides(a.shape(), out_shape),
        broadcast_strides(b.shape(), out_shape),
    );
    macro_rules! zip {
        ($x:expr, $y:expr, $g:expr) => {
            zip_broadcast($x, &sa, $y, &sb, out_shape, $g)
        };
    }
    a.read_cpu(op, |da| {
        b.read_cpu(op, |db| {
            Ok(match (da, db) {
                (CpuData::F32(x), CpuData::F32(y)) => CpuData::F32(zip!(x, y, |p, q| f.apply(p, q))),
                (CpuData::F64(x), CpuData::F64(y)) => CpuData::F64(zip!(x, y, |p, q| f.apply(p, q))),
                (CpuData::F16(x), CpuData::F16(y)) => CpuData::F16(zip!(x, y, |p, q| f16::from_f32(f.apply_half(
                    p.to_f32(),
                    q.to_f32(),
                    round_f16
                )))),
                (CpuData::BF16(x), CpuData::BF16(y)) => CpuData::BF16(zip!(x, y, |p, q| bf16::from_f32(f.apply_half(
                    p.to_f32(),
                    q.to_f32(),
                    round_bf16
                )))),
                _ => return Err(Error::float_only(op, a.dtype())),
            })
        })
    })??
}

/// The right side of an in-place operation on `target`: broadcastable to its shape, in its dtype, and never
/// sharing its storage (a copy when it does).
pub(crate) fn in_place_operand(op: &'static str, target: &Tensor, other: &Tensor) -> Result<Tensor> {
    let out_shape = broadcast_shape(op, target.shape(), other.shape())?;
    if &out_shape != target.shape() {
        return Err(Error::shapes(
            op,
            target.shape(),
            other.shape(),
            "the right side broadcastable to the left",
        ));
    }
    if other.shares_storage(target) {
        other.to_dtype(target.dtype())?.recorded_copy()
    } else {
        other.to_dtype(target.dtype())
    }
}

/// Both tensors converted to their common floating-point dtype ([`result_type`]).
pub(crate) fn promote_pair(op: &'static str, a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor, DType)> {
    let dtype = result_type(a, b);
    Error::check_float(op, dtype)?;
    Ok((a.to_dtype(dtype)?, b.to_dtype(dtype)?, dtype))
}

/// The dtype PyTorch computes an operation of `a` and `b` in (`torch.result_type`): a 0-d tensor beside a
/// tensor with dimensions counts only when it is of a higher kind (bool < integer < float): `f16 [n]` with a
/// 0-d `f64` stays `f16`, `i64 [n]` with a 0-d `f32` becomes `f32`, `i32 [n]` with a 0-d `i64` stays `i32`.
pub(crate) fn result_type(a: &Tensor, b: &Tensor) -> DType {
    let (dim, zero) = match (a.rank() == 0, b.rank() == 0) {
        (true, false) => (b.dtype(), a.dtype()),
        (false, true) => (a.dtype(), b.dtype()),
        _ => return promote(a.dtype(), b.dtype()),
    };
    // c10's `combine_categories(higher = dim, lower = zero)`.
    if dim.is_floating_point() {
        dim
    } else if dim == DType::Bool || zero.is_floating_point() {
        promote(dim, zero)
    } else {
        dim
    }
}

impl Tensor {
    /// The dtype an operation of this tensor and `other` computes in (PyTorch's `torch.result_type`): the wider
    /// of the two, a float beating any integer, a 0-d tensor beside one with dimensions counting only when it is
    /// of a higher kind (bool < integer < float).
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let h = Tensor::zeros([2], DType::F16);
    /// assert_eq!(h.result_type(&Tensor::zeros([2], DType::BF16)), DType::F32);
    /// assert_eq!(h.result_type(&Tensor::scalar(1.0f64)), DType::F16);
    /// assert_eq!(Tensor::zeros([2], DType::I32).result_type(&Tensor::scalar(0.5f64)), DType::F64);
    /// ```
    pub fn result_type(&self, other: &Tensor) -> DType {
        result_type(self, other)
    }
}

/// PyTorch's type promotion for two tensors of equal rank category: the wider float wins; `f16` with `bf16`
/// gives `f32`; a float beats any integer.
pub(crate) fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a.is_floating_point(), b.is_floating_point()) {
        (true, false) => a,
        (false, true) => b,
        (true, true) => match (a, b) {
            (F64, _) | (_, F64) => F64,
            (F32, _) | (_, F32) => F32,
            _ => F32,
        },
        (false, false) => match (a, b) {
            (I64, _) | (_, I64) => I64,
            (I32, _) | (_, I32) => I32,
            (U8, _) | (_, U8) => U8,
            _ => Bool,
        },
    }
}

/// The shape two shapes broadcast to, aligned at the last dimension.
pub(crate) fn broadcast_shape(op: &'static str, a: &Shape, b: &Shape) -> Result<Shape> {
    let rank = a.rank().max(b.rank());
    let mut out = Shape::scalar();
    for i in 0..rank {
        let da = if i + a.rank() >= rank {
            a[i + a.rank() - rank]
        } else {
            1
        };
        let db = if i + b.rank() >= rank {
            b[i + b.rank() - rank]
        } else {
            1
        };
        let d = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(Error::shapes(op, a, b, "broadcastable shapes")),
        };
        out.push(d);
    }
    Ok(out)
}

/// Strides of `shape` read as `out` (stride 0 along broadcast dimensions).
pub(crate) fn broadcast_strides(shape: &Shape, out: &Shape) -> SmallVec<[usize; 4]> {
    let own = shape.strides();
    let offset = out.rank() - shape.rank();
    (0..out.rank())
        .map(|i| {
            if i < offset || shape[i - offset] == 1 {
                0
            } else {
                own[i - offset]
            }
        })
        .collect()
}

/// `f(a, b)` over `out_shape`, reading `a` and `b` through broadcast strides; the innermost dimension runs as
/// a straight loop.
pub(crate) fn zip_broadcast<A: Copy + Sync, B: Copy + Sync, O: Copy + Send>(
    a: &[A],
    sa: &[usize],
    b: &[B],
    sb: &[usize],
    out_shape: &Shape,
    f: impl Fn(A, B) -> O + Sync,
) -> Vec<O> {
    let n = out_shape.numel();
    // Written in place of a zero-filled buffer: writing the zeros first costs as much as the operation.
    let mut out = Vec::with_capacity(n);
    let put = |o: &mut MaybeUninit<O>, v: O| {
        o.write(v);
    };
    if n == 0 {
        return out;
    }
    let rows = &mut out.spare_capacity_mut()[..n];
    if a.len() == n && b.len() == n && sa.iter().all(|&s| s != 0) && sb.iter().all(|&s| s != 0) {
        // Both read straight through: one row.
        threads::for_each_piece(rows, 1, threads::parts_for(n, CHUNK), |at, o| {
            let (x, y) = (&a[at..at + o.len()], &b[at..at + o.len()]);
            for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                put(o, f(x, y));
            }
        });
    } else {
        let (shape, sa, sb) = merged(out_shape, sa, sb);
        let (ia, ib) = (sa[sa.len() - 1], sb[sb.len() - 1]);
        for_each_row(rows, &shape, &sa, &sb, |row, oa, ob| {
            let inner = row.len();
            match (ia, ib) {
                (1, 1) => {
                    for ((o, &x), &y) in row.iter_mut().zip(&a[oa..oa + inner]).zip(&b[ob..ob + inner]) {
                        put(o, f(x, y));
                    }
                }
                (1, 0) => {
                    let y = b[ob];
                    for (o, &x) in row.iter_mut().zip(&a[oa..oa + inner]) {
                        put(o, f(x, y));
                    }
                }
                (0, 1) => {
                    let x = a[oa];
                    for (o, &y) in row.iter_mut().zip(&b[ob..ob + inner]) {
                        put(o, f(x, y));
                    }
                }
                _ => {
                    let v = f(a[oa], b[ob]);
                    row.iter_mut().for_each(|o| put(o, v));
                }
            }
        });
    }
    // SAFETY: the first `n` elements (within the capacity) are initialised: the straight path hands every piece
    // of them to the loop once (`for_each_piece` covers its slice with disjoint pieces and returns when all
    // are done), and it writes each element beside `a`'s and `b`'s of the same range (both `n` long). Otherwise
    // `for_each_row` calls the row loop once on each row of `merged`'s innermost size, whose product over the
    // merged shape is `n`, and each arm writes every element of its row: the strided arms zip it with a slice
    // of `a` or `b` of the row's length (inner stride 1 means the operand reads that run), the others fill it.
    unsafe { out.set_len(n) };
    out
}

/// `a = f(a, b)` over `a`'s shape `shape` (contiguous), reading `b` through broadcast strides `sb`: the in-place
/// form of [`zip_broadcast`], writing `a`'s own elements.
pub(crate) fn zip_broadcast_in_place<A: Copy + Send + Sync, B: Copy + Sync>(
    a: &mut [A],
    b: &[B],
    sb: &[usize],
    shape: &Shape,
    f: impl Fn(A, B) -> A + Sync,
) {
    if a.is_empty() {
        return;
    }
    let (shape, sa, sb) = merged(shape, &shape.strides(), sb);
    let ib = sb[sb.len() - 1];
    for_each_row(a, &shape, &sa, &sb, |row, _, ob| {
        if ib == 0 {
            let y = b[ob];
            row.iter_mut().for_each(|x| *x = f(*x, y));
        } else {
            let inner = row.len();
            for (x, &y) in row.iter_mut().zip(&b[ob..ob + inner]) {
                *x = f(*x, y);
            }
        }
    });
}

/// Calls `row(out_row, offset in a, offset in b)` on each row of `out`, read as `shape` (merged, rows its
/// innermost size), with the offsets of the row's first element in two operands of strides `sa` and `sb`.
/// Whole rows per piece over nn's threads; each piece finds its first row's offsets.
fn for_each_row<E: Send>(
    out: &mut [E],
    shape: &[usize],
    sa: &[usize],
    sb: &[usize],
    row: impl Fn(&mut [E], usize, usize) + Sync,
) {
    let rank = shape.len();
    let inner = shape[rank - 1];
    threads::for_each_piece(out, inner, threads::parts_for(out.len(), CHUNK), |at, piece| {
        let mut index: SmallVec<[usize; 4]> = SmallVec::from_elem(0, rank - 1);
        let (mut oa, mut ob, mut rest) = (0usize, 0usize, at / inner);
        for d in (0..rank - 1).rev() {
            index[d] = rest % shape[d];
            rest /= shape[d];
            oa += index[d] * sa[d];
            ob += index[d] * sb[d];
        }
        for chunk in piece.chunks_mut(inner) {
            row(chunk, oa, ob);
            for d in (0..rank - 1).rev() {
                index[d] += 1;
                oa += sa[d];
                ob += sb[d];
                if index[d] < shape[d] {
                    break;
                }
                oa -= sa[d] * shape[d];
                ob -= sb[d] * shape[d];
                index[d] = 0;
            }
        }
    });
}

/// Sizes or strides, one per dimension.
type Dims = SmallVec<[usize; 4]>;

/// `out_shape` with its size-1 dimensions dropped and each run of dimensions that both operands read as one
/// (each stride the next one's times its size, broadcast runs included) merged, with the operands' strides:
/// `(8, 128, 32, 32)` read with `(128, 1, 1)` broadcast is `(8, 128, 1024)`, rows of 1,024 sharing one value.
fn merged(out_shape: &Shape, sa: &[usize], sb: &[usize]) -> (Dims, Dims, Dims) {
    let (mut shape, mut ma, mut mb) = (SmallVec::new(), SmallVec::new(), SmallVec::new());
    for d in (0..out_shape.rank()).filter(|&d| out_shape[d] != 1) {
        let size = out_shape[d];
        match (shape.last_mut(), ma.last_mut(), mb.last_mut()) {
            (Some(outer), Some(a), Some(b)) if *a == sa[d] * size && *b == sb[d] * size => {
                *outer *= size;
                (*a, *b) = (sa[d], sb[d]);
            }
            _ => {
                shape.push(size);
                ma.push(sa[d]);
                mb.push(sb[d]);
            }
        }
    }
    if shape.is_empty() {
        shape.push(1);
        ma.push(0);
        mb.push(0);
    }
    (shape, ma, mb)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(a, b)` by the definition: each output's offsets in `a` and `b` from its index.
    fn naive(a: &[f64], sa: &[usize], b: &[f64], sb: &[usize], shape: &[usize]) -> Vec<f64> {
        let n: usize = shape.iter().product();
        (0..n)
            .map(|i| {
                let (mut rest, mut oa, mut ob) = (i, 0, 0);
                for d in (0..shape.len()).rev() {
                    let index = rest % shape[d];
                    rest /= shape[d];
                    oa += index * sa[d];
                    ob += index * sb[d];
                }
                a[oa] * 10.0 + b[ob]
            })
            .collect()
    }

    #[test]
    fn dimensions_both_operands_read_alike_merge() {
        let shape = Shape::from([8, 128, 1, 32, 32]);
        let (merged_shape, sa, sb) = merged(&shape, &[131072, 1024, 1024, 32, 1], &[0, 1, 0, 0, 0]);
        assert_eq!(
            (merged_shape.as_slice(), sa.as_slice(), sb.as_slice()),
            (
                [8, 128, 1024].as_slice(),
                [131072, 1024, 1].as_slice(),
                [0, 1, 0].as_slice()
            )
        );
    }

    #[test]
    fn broadcasts_match_the_definition() {
        // Small and past the split over threads; a per-channel operand, a row, a column, a scalar, both sides.
        let cases: [(&[usize], &[usize]); 7] = [
            (&[8, 128, 32, 32], &[128, 1, 1]),
            (&[3, 70_001], &[70_001]),
            (&[70_001, 3], &[70_001, 1]),
            (&[2, 1, 5], &[3, 1]),
            (&[1], &[4, 1, 6]),
            (&[5, 1, 7, 1], &[1, 6, 1, 3]),
            (&[2, 3], &[1, 1]),
        ];
        for (a_shape, b_shape) in cases {
            let (a_shape, b_shape) = (Shape::from(a_shape), Shape::from(b_shape));
            let out = broadcast_shape("test", &a_shape, &b_shape).unwrap();
            let a: Vec<f64> = (0..a_shape.numel()).map(|i| (i % 97) as f64).collect();
            let b: Vec<f64> = (0..b_shape.numel()).map(|i| (i % 89) as f64 / 100.0).collect();
            let (sa, sb) = (broadcast_strides(&a_shape, &out), broadcast_strides(&b_shape, &out));
            let got = zip_broadcast(&a, &sa, &b, &sb, &out, |x, y| x * 10.0 + y);
            let want = naive(&a, &sa, &b, &sb, &out);
            assert_eq!(got, want, "{a_shape} with {b_shape}");
            if out == a_shape {
                // In place, where `a` already has the result's shape.
                let mut a = a.clone();
                zip_broadcast_in_place(&mut a, &b, &sb, &out, |x, y| x * 10.0 + y);
                assert_eq!(a, want, "{a_shape} with {b_shape}, in place");
            }
        }
    }

    #[test]
    fn a_whole_operand_in_place_matches_the_definition() {
        // Equal shapes, past the split over threads, and a scalar on both sides.
        for shape in [&[3, 70_001][..], &[], &[1, 1]] {
            let shape = Shape::from(shape);
            let a: Vec<f64> = (0..shape.numel()).map(|i| (i % 97) as f64).collect();
            let b: Vec<f64> = (0..shape.numel()).map(|i| (i % 89) as f64 / 100.0).collect();
            let s = broadcast_strides(&shape, &shape);
            let want = naive(&a, &s, &b, &s, &shape);
            assert_eq!(
                zip_broadcast(&a, &s, &b, &s, &shape, |x, y| x * 10.0 + y),
                want,
                "{shape}"
            );
            let mut a = a;
            zip_broadcast_in_place(&mut a, &b, &s, &shape, |x, y| x * 10.0 + y);
            assert_eq!(a, want, "{shape}, in place");
        }
    }
}
