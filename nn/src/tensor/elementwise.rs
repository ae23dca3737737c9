//! Element-wise operations: unary maps and broadcasting binary operations, on the CPU.
//!
//! Formulas are written once, generic over [`Real`]; `f16`/`bf16` tensors run the `f32` formula and round the
//! result. Large tensors are split across threads.

use half::{bf16, f16};
use rayon::prelude::*;
use smallvec::SmallVec;

use super::Tensor;
use super::cast;
use super::map;
use super::real::Real;
use super::storage::CpuData;
use crate::{DType, Error, Result, Shape};

/// Elements below which a map runs on the calling thread (splitting smaller work costs more than it saves).
pub(crate) const PARALLEL_THRESHOLD: usize = 1 << 15;
/// Elements per parallel chunk.
const CHUNK: usize = 1 << 14;

/// A formula of one float argument, written once for `f32` and `f64`. It is `Copy` (its constants), so a
/// loop holds it in registers and vectorises.
pub trait UnaryFn: Sync + Send + Copy {
    /// The value at `x`.
    fn apply<R: Real>(&self, x: R) -> R;
}

/// A formula of two float arguments, written once for `f32` and `f64`.
pub trait BinaryFn: Sync + Send + Copy {
    /// The value at `(a, b)`.
    fn apply<R: Real>(&self, a: R, b: R) -> R;
}

/// `x = f(x)` for every element, split across threads for large inputs.
pub(crate) fn map_in_place<T: Copy + Send>(data: &mut [T], f: impl Fn(T) -> T + Sync + Send + Copy) {
    if data.len() < PARALLEL_THRESHOLD {
        map_chunk_in_place(data, f);
    } else {
        data.par_chunks_mut(CHUNK).for_each(move |c| map_chunk_in_place(c, f));
    }
}

/// One chunk of [`map_in_place`], `f` by value.
#[inline(always)]
fn map_chunk_in_place<T: Copy>(data: &mut [T], f: impl Fn(T) -> T + Copy) {
    for x in data.iter_mut() {
        *x = f(*x);
    }
}

impl Tensor {
    /// A new tensor `f(x)` of the same dtype; floating-point dtypes only.
    pub fn map_float<F: UnaryFn>(&self, op: &'static str, f: &F) -> Result<Tensor> {
        let f = *f;
        let data = self.read_cpu(op, |d| -> Result<CpuData> {
            let n = d.len();
            Ok(match d {
                CpuData::F32(v) => map::filled(n, |out| map::unary(v, out, f)),
                CpuData::F64(v) => map::filled(n, |out| map::unary(v, out, f)),
                CpuData::F16(v) => map::filled(n, |out| map::unary_half(v, out, f)),
                CpuData::BF16(v) => map::filled(n, |out| map::unary_half(v, out, f)),
                other => return Err(Error::float_only(op, other.dtype())),
            })
        })??;
        Ok(Tensor::from_cpu(data, self.shape.clone()))
    }

    /// A new tensor `f_b(x)` where the formula changes block by block: block `b` (`block` consecutive
    /// elements) uses `make(b)` — a per-channel constant, for instance.
    pub(crate) fn map_float_blocks<F: UnaryFn>(
        &self,
        op: &'static str,
        block: usize,
        make: impl Fn(usize) -> F + Sync,
    ) -> Result<Tensor> {
        let n = self.numel();
        let data = self.read_cpu(op, |d| -> Result<CpuData> {
            Ok(match d {
                CpuData::F32(v) => map::filled(n, |out| map::unary_blocks(v, out, block, &make)),
                CpuData::F64(v) => map::filled(n, |out| map::unary_blocks(v, out, block, &make)),
                CpuData::F16(_) | CpuData::BF16(_) => {
                    let wide = cast::cast_data(d, DType::F32);
                    let CpuData::F32(v) = &wide else {
                        unreachable!("cast to f32")
                    };
                    let out = map::filled(n, |out| map::unary_blocks(v, out, block, &make));
                    cast::cast_data(&out, d.dtype())
                }
                other => return Err(Error::float_only(op, other.dtype())),
            })
        })??;
        Ok(Tensor::from_cpu(data, self.shape.clone()))
    }

    /// [`map_float_blocks`](Self::map_float_blocks) written into `out` (same shape and dtype, checked by the
    /// caller). `f32` and `f64` write in place; the half types, and an `out` sharing this tensor's storage, go
    /// through a new tensor copied over.
    pub(crate) fn map_float_blocks_into<F: UnaryFn>(
        &self,
        op: &'static str,
        block: usize,
        make: impl Fn(usize) -> F + Sync,
        out: &Tensor,
    ) -> Result<()> {
        let direct = !out.shares_storage(self) && matches!(self.dtype(), DType::F32 | DType::F64);
        if !direct {
            return out.copy_(&self.map_float_blocks(op, block, make)?);
        }
        self.read_cpu(op, |src| {
            out.write_cpu(op, |dst| match (src, dst) {
                (CpuData::F32(s), CpuData::F32(d)) => map::unary_blocks(s, d, block, &make),
                (CpuData::F64(s), CpuData::F64(d)) => map::unary_blocks(s, d, block, &make),
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
        if self.shape != other.shape {
            return Err(Error::shapes(op, &self.shape, &other.shape, "equal shapes"));
        }
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
        Tensor::from_cpu(data, self.shape.clone()).to_dtype(self.dtype())
    }

    /// `out = f(x)` into an existing tensor of the same shape and dtype (not reallocated).
    pub fn map_float_into<F: UnaryFn>(&self, op: &'static str, f: &F, out: &Tensor) -> Result<()> {
        if out.shape != self.shape {
            return Err(Error::shapes(
                op,
                &self.shape,
                &out.shape,
                "an output of the input's shape",
            ));
        }
        if out.dtype() != self.dtype() {
            return Err(Error::DTypeMismatch {
                op,
                expected: self.dtype(),
                got: out.dtype(),
            });
        }
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
    pub fn map_float_<F: UnaryFn>(&self, op: &'static str, f: &F) -> Result<()> {
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
    pub fn zip_float<F: BinaryFn>(&self, other: &Tensor, op: &'static str, f: &F) -> Result<Tensor> {
        let f = *f;
        let (a, b, dtype) = promote_pair(op, self, other)?;
        let out_shape = broadcast_shape(op, &a.shape, &b.shape)?;
        if out_shape == a.shape && (b.shape == a.shape || b.numel() == 1) {
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
        let sa = broadcast_strides(&a.shape, &out_shape);
        let sb = broadcast_strides(&b.shape, &out_shape);
        let data = a.read_cpu(op, |da| {
            b.read_cpu(op, |db| -> Result<CpuData> {
                Ok(match (da, db) {
                    (CpuData::F32(x), CpuData::F32(y)) => {
                        CpuData::F32(zip_broadcast(x, &sa, y, &sb, &out_shape, |p, q| f.apply(p, q)))
                    }
                    (CpuData::F64(x), CpuData::F64(y)) => {
                        CpuData::F64(zip_broadcast(x, &sa, y, &sb, &out_shape, |p, q| f.apply(p, q)))
                    }
                    (CpuData::F16(x), CpuData::F16(y)) => {
                        CpuData::F16(zip_broadcast(x, &sa, y, &sb, &out_shape, |p, q| {
                            f16::from_f32(f.apply(p.to_f32(), q.to_f32()))
                        }))
                    }
                    (CpuData::BF16(x), CpuData::BF16(y)) => {
                        CpuData::BF16(zip_broadcast(x, &sa, y, &sb, &out_shape, |p, q| {
                            bf16::from_f32(f.apply(p.to_f32(), q.to_f32()))
                        }))
                    }
                    _ => return Err(Error::float_only(op, dtype)),
                })
            })
        })???;
        Ok(Tensor::from_cpu(data, out_shape))
    }

    /// `a = f(a, b)` in place, with `b` broadcast to `a`'s shape (which does not change).
    pub fn zip_float_<F: BinaryFn>(&self, other: &Tensor, op: &'static str, f: &F) -> Result<()> {
        let f = *f;
        let other = in_place_operand(op, self, other)?;
        let out_shape = self.shape.clone();
        let so = broadcast_strides(&other.shape, &out_shape);
        let data = other.read_cpu(op, |o| -> Result<CpuData> {
            let ss = broadcast_strides(&self.shape, &out_shape);
            self.read_cpu(op, |s| -> Result<CpuData> {
                Ok(match (s, o) {
                    (CpuData::F32(x), CpuData::F32(y)) => {
                        CpuData::F32(zip_broadcast(x, &ss, y, &so, &out_shape, |p, q| f.apply(p, q)))
                    }
                    (CpuData::F64(x), CpuData::F64(y)) => {
                        CpuData::F64(zip_broadcast(x, &ss, y, &so, &out_shape, |p, q| f.apply(p, q)))
                    }
                    (CpuData::F16(x), CpuData::F16(y)) => {
                        CpuData::F16(zip_broadcast(x, &ss, y, &so, &out_shape, |p, q| {
                            f16::from_f32(f.apply(p.to_f32(), q.to_f32()))
                        }))
                    }
                    (CpuData::BF16(x), CpuData::BF16(y)) => {
                        CpuData::BF16(zip_broadcast(x, &ss, y, &so, &out_shape, |p, q| {
                            bf16::from_f32(f.apply(p.to_f32(), q.to_f32()))
                        }))
                    }
                    _ => return Err(Error::float_only(op, self.dtype())),
                })
            })?
        })??;
        self.write_cpu(op, |d| *d = data)
    }
}

/// The right side of an in-place operation on `target`: broadcastable to its shape, on its device, in its
/// dtype, and never sharing its storage (a copy when it does).
fn in_place_operand(op: &'static str, target: &Tensor, other: &Tensor) -> Result<Tensor> {
    let out_shape = broadcast_shape(op, &target.shape, &other.shape)?;
    if out_shape != target.shape {
        return Err(Error::shapes(
            op,
            &target.shape,
            &other.shape,
            "the right side broadcastable to the left",
        ));
    }
    if other.device() != target.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: target.device(),
            rhs: other.device(),
        });
    }
    if other.shares_storage(target) {
        other.to_dtype(target.dtype())?.deep_copy()
    } else {
        other.to_dtype(target.dtype())
    }
}

/// Both tensors on one device and converted to their common floating-point dtype.
fn promote_pair(op: &'static str, a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor, DType)> {
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: a.device(),
            rhs: b.device(),
        });
    }
    let dtype = promote(a.dtype(), b.dtype());
    if !dtype.is_floating_point() {
        return Err(Error::float_only(op, dtype));
    }
    Ok((a.to_dtype(dtype)?, b.to_dtype(dtype)?, dtype))
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
pub(crate) fn zip_broadcast<A: Copy + Sync, B: Copy + Sync, O: Copy + Default + Send>(
    a: &[A],
    sa: &[usize],
    b: &[B],
    sb: &[usize],
    out_shape: &Shape,
    f: impl Fn(A, B) -> O + Sync,
) -> Vec<O> {
    let n = out_shape.numel();
    if n == 0 {
        return Vec::new();
    }
    let rank = out_shape.rank();
    if rank == 0 {
        return vec![f(a[0], b[0])];
    }
    if a.len() == n && b.len() == n && sa.iter().all(|&s| s != 0) && sb.iter().all(|&s| s != 0) {
        let mut out = vec![O::default(); n];
        if n < PARALLEL_THRESHOLD {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        } else {
            out.par_chunks_mut(CHUNK)
                .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
                .for_each(|(o, (x, y))| {
                    for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                        *o = f(x, y);
                    }
                });
        }
        return out;
    }
    let inner = out_shape[rank - 1];
    let (ia, ib) = (sa[rank - 1], sb[rank - 1]);
    let mut out = Vec::with_capacity(n);
    let mut index: SmallVec<[usize; 4]> = SmallVec::from_elem(0, rank - 1);
    let (mut oa, mut ob) = (0usize, 0usize);
    for _ in 0..n / inner {
        match (ia, ib) {
            (1, 1) => out.extend(a[oa..oa + inner].iter().zip(&b[ob..ob + inner]).map(|(&x, &y)| f(x, y))),
            (1, 0) => {
                let y = b[ob];
                out.extend(a[oa..oa + inner].iter().map(|&x| f(x, y)));
            }
            (0, 1) => {
                let x = a[oa];
                out.extend(b[ob..ob + inner].iter().map(|&y| f(x, y)));
            }
            _ => {
                let (x, y) = (a[oa], b[ob]);
                out.extend(std::iter::repeat_n(f(x, y), inner));
            }
        }
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            oa += sa[d];
            ob += sb[d];
            if index[d] < out_shape[d] {
                break;
            }
            oa -= sa[d] * out_shape[d];
            ob -= sb[d] * out_shape[d];
            index[d] = 0;
        }
    }
    out
}

macro_rules! unary_fn {
    ($(#[$doc:meta])* $name:ident, $method:ident, |$x:ident| $body:expr) => {
        #[derive(Clone, Copy, Debug, Default)]
        pub(crate) struct $name;
        impl UnaryFn for $name {
            #[inline(always)]
            fn apply<R: Real>(&self, $x: R) -> R {
                $body
            }
        }
        impl Tensor {
            $(#[$doc])*
            pub fn $method(&self) -> Result<Tensor> {
                self.map_float(stringify!($method), &$name)
            }
        }
    };
}

unary_fn!(/// `-x`.
    Neg, neg, |x| -x);
unary_fn!(/// `e^x`.
    Exp, exp, |x| x.exp());
unary_fn!(/// Natural logarithm.
    Log, log, |x| x.ln());
unary_fn!(/// Square root.
    Sqrt, sqrt, |x| x.sqrt());
unary_fn!(/// `|x|`.
    Abs, abs, |x| x.abs());
unary_fn!(/// Hyperbolic tangent.
    Tanh, tanh, |x| x.tanh());
unary_fn!(/// The error function.
    Erf, erf, |x| x.erf());
unary_fn!(/// `1 / (1 + e^-x)`.
    Sigmoid, sigmoid, |x| R::ONE / (R::ONE + (-x).exp()));
unary_fn!(/// `1 / x`.
    Recip, recip, |x| R::ONE / x);

/// The arithmetic operations that also run on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

macro_rules! binary_fn {
    ($(#[$doc:meta])* $name:ident, $method:ident, $method_:ident, $device:expr, |$a:ident, $b:ident| $body:expr) => {
        #[derive(Clone, Copy, Debug, Default)]
        pub(crate) struct $name;
        impl BinaryFn for $name {
            #[inline(always)]
            fn apply<R: Real>(&self, $a: R, $b: R) -> R {
                $body
            }
        }
        impl Tensor {
            $(#[$doc])*
            pub fn $method(&self, other: &Tensor) -> Result<Tensor> {
                let op = stringify!($method);
                let device: Option<Arith> = $device;
                if let Some(arith) = device && !self.device().is_cpu() {
                    let (a, b, _) = promote_pair(op, self, other)?;
                    let out_shape = broadcast_shape(op, &a.shape, &b.shape)?;
                    return crate::gpu::arith(arith, op, &a, &b, out_shape);
                }
                self.zip_float(other, op, &$name)
            }
            $(#[$doc])*
            ///
            /// In place: `other` broadcasts to this tensor's shape.
            pub fn $method_(&self, other: &Tensor) -> Result<()> {
                let op = stringify!($method_);
                let device: Option<Arith> = $device;
                if let Some(arith) = device && !self.device().is_cpu() {
                    let other = in_place_operand(op, self, other)?;
                    return crate::gpu::arith_(arith, op, self, &other);
                }
                self.zip_float_(other, op, &$name)
            }
        }
    };
}

binary_fn!(/// `a + b`, broadcasting.
    Add, add, add_, Some(Arith::Add), |a, b| a + b);
binary_fn!(/// `a - b`, broadcasting.
    Sub, sub, sub_, Some(Arith::Sub), |a, b| a - b);
binary_fn!(/// `a * b`, broadcasting.
    Mul, mul, mul_, Some(Arith::Mul), |a, b| a * b);
binary_fn!(/// `a / b`, broadcasting.
    Div, div, div_, Some(Arith::Div), |a, b| a / b);
binary_fn!(/// The larger of `a` and `b` (NaN if either is), broadcasting.
    Maximum, maximum, maximum_, None, |a, b| a.max_nan(b));
binary_fn!(/// The smaller of `a` and `b` (NaN if either is), broadcasting.
    Minimum, minimum, minimum_, None, |a, b| a.min_nan(b));

#[derive(Clone, Copy)]
struct Affine {
    scale: f64,
    shift: f64,
}
impl UnaryFn for Affine {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        x * R::of(self.scale) + R::of(self.shift)
    }
}

#[derive(Clone, Copy)]
struct Clamp {
    low: f64,
    high: f64,
}
impl UnaryFn for Clamp {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        if x.is_nan() {
            return x;
        }
        let (lo, hi) = (R::of(self.low), R::of(self.high));
        if x < lo {
            lo
        } else if x > hi {
            hi
        } else {
            x
        }
    }
}

#[derive(Clone, Copy)]
struct Powf(f64);
impl UnaryFn for Powf {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        x.powf(R::of(self.0))
    }
}

impl Tensor {
    /// `x + value`; integer tensors stay integer (the value is truncated to the integer type).
    pub fn add_scalar(&self, value: f64) -> Result<Tensor> {
        if self.is_floating_point() && !self.device().is_cpu() {
            return crate::gpu::affine(self, 1.0, value);
        }
        if self.is_floating_point() {
            return self.map_float(
                "add_scalar",
                &Affine {
                    scale: 1.0,
                    shift: value,
                },
            );
        }
        let out = self.deep_copy()?;
        out.add_scalar_(value)?;
        Ok(out)
    }

    /// `x * value`.
    pub fn mul_scalar(&self, value: f64) -> Result<Tensor> {
        if self.is_floating_point() && !self.device().is_cpu() {
            return crate::gpu::affine(self, value, 0.0);
        }
        self.map_float(
            "mul_scalar",
            &Affine {
                scale: value,
                shift: 0.0,
            },
        )
    }

    /// `x * scale + shift` in one pass.
    pub fn affine(&self, scale: f64, shift: f64) -> Result<Tensor> {
        if self.is_floating_point() && !self.device().is_cpu() {
            return crate::gpu::affine(self, scale, shift);
        }
        self.map_float("affine", &Affine { scale, shift })
    }

    /// `x^exponent`.
    pub fn pow_scalar(&self, exponent: f64) -> Result<Tensor> {
        self.map_float("pow_scalar", &Powf(exponent))
    }

    /// `x` limited to `[low, high]` (NaN stays NaN).
    pub fn clamp(&self, low: f64, high: f64) -> Result<Tensor> {
        self.map_float("clamp", &Clamp { low, high })
    }

    /// `x += value` in place, for every dtype but bool (BatchNorm's `num_batches_tracked += 1`).
    pub fn add_scalar_(&self, value: f64) -> Result<()> {
        if !self.device().is_cpu() {
            return crate::gpu::add_scalar_(self, value);
        }
        self.write_cpu("add_scalar_", |d| -> Result<()> {
            match d {
                CpuData::F32(v) => map_in_place(v, |x| x + value as f32),
                CpuData::F64(v) => map_in_place(v, |x| x + value),
                CpuData::F16(v) => map_in_place(v, |x| f16::from_f32(x.to_f32() + value as f32)),
                CpuData::BF16(v) => map_in_place(v, |x| bf16::from_f32(x.to_f32() + value as f32)),
                CpuData::I64(v) => map_in_place(v, |x| x.wrapping_add(value as i64)),
                CpuData::I32(v) => map_in_place(v, |x| x.wrapping_add(value as i32)),
                CpuData::U8(v) => map_in_place(v, |x| x.wrapping_add(value as i64 as u8)),
                CpuData::Bool(_) => {
                    return Err(Error::UnsupportedDType {
                        op: "add_scalar_",
                        dtype: DType::Bool,
                        hint: "; arithmetic on bool tensors is not defined",
                    });
                }
            }
            Ok(())
        })?
    }

    /// `x *= value` in place; floating-point dtypes only.
    pub fn mul_scalar_(&self, value: f64) -> Result<()> {
        if self.is_floating_point() && !self.device().is_cpu() {
            return crate::gpu::affine_(self, value, 0.0);
        }
        self.map_float_(
            "mul_scalar_",
            &Affine {
                scale: value,
                shift: 0.0,
            },
        )
    }
}
