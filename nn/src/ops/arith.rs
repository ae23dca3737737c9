//! Arithmetic: broadcast `add` / `sub` / `mul` / `div` / `maximum` / `minimum` (on devices too), their in-place
//! forms, and the scalar forms `x·scale + shift` (`affine`, `add_scalar`, `mul_scalar`, and in place).

use kernels::GpuBuffer;
use kernels::binary::{self, BinaryOp, Operand};
use kernels::{GpuDevice, Real};

use super::elementwise::{BinaryFn, UnaryFn, broadcast_shape, in_place_operand, map_in_place, promote_pair};
use super::integer::{IntegerOp, check_cast, checked_result_type, integer_binary};
use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Formula, Saved, is_grad_enabled, record_function};
use crate::tensor::device::{float_type, probe};
use crate::tensor::storage::CpuData;
use crate::{DType, Error, Result, Tensor};

/// `(da, db)` of `f(a, b)` from the output's gradient `g`, before the sums over broadcast dimensions.
#[derive(Clone, Copy)]
enum BinaryGrads {
    /// From `g` alone (add, sub): the operands are not saved.
    OfGradient(fn(g: &Tensor) -> Result<(Tensor, Tensor)>),
    /// Reading the operands (mul, div): `grad(i, a, b, g)` is operand `i`'s, reading what `reads[i]` marks
    /// (`[a, b]`). An operand is saved only when a needed gradient reads it (a frozen weight times an
    /// activation keeps neither), and only needed gradients are computed.
    OfOperands {
        reads: [[bool; 2]; 2],
        grad: fn(i: usize, a: Option<&Tensor>, b: Option<&Tensor>, g: &Tensor) -> Result<Tensor>,
    },
}

/// An operand a gradient formula reads: saved whenever `reads` says so, so its absence is a bug, reported.
fn saved(t: Option<&Tensor>) -> Result<&Tensor> {
    t.ok_or_else(|| Error::autograd("backward", "an operand the gradient reads was not saved"))
}

/// A binary formula, the device kernel that computes it and its gradients, where there are.
trait Arith: BinaryFn {
    const KERNEL: Option<BinaryOp>;
    const GRADS: Option<BinaryGrads>;
}

/// `f(a, b)` broadcast, `a` and `b` promoted to one float dtype; inputs `[a, b]`.
#[derive(Clone, Copy)]
struct Binary<F> {
    name: &'static str,
    f: F,
}

/// `a = f(a, b)`, `b` in `a`'s dtype broadcast to its shape and not sharing its storage; inputs `[a, b]`.
struct BinaryInPlace<F>(Binary<F>);

/// The probe's operands for a binary operation: the probe sweep as a row, against a column of three values.
fn binary_probe(dtype: DType) -> Result<Vec<Tensor>> {
    let xs = probe::inputs();
    let n = xs.len();
    Ok(vec![
        Tensor::from_vec(xs, [1, n])?.to_dtype(dtype)?,
        Tensor::from_vec(vec![0.75, -1.5, 3.0], [3, 1])?.to_dtype(dtype)?,
    ])
}

impl<F: Arith> Binary<F> {
    /// Probed where the formula has a kernel.
    const DEVICE: DevicePath = match F::KERNEL {
        Some(_) => DevicePath::Probed,
        None => DevicePath::None,
    };

    /// Whether `a = f(a, b)` under autograd needs `a`'s value before the change: a gradient that reads `a` is
    /// needed (`mul_` by a `b` that requires grad). Else the change runs in place with nothing copied, as
    /// PyTorch's `add_` does.
    fn reads_the_changed_operand(&self, a: &Tensor, b: &Tensor) -> bool {
        match F::GRADS {
            None | Some(BinaryGrads::OfGradient(_)) => false,
            Some(BinaryGrads::OfOperands { reads, .. }) => {
                (a.requires_grad() && reads[0][0]) || (b.requires_grad() && reads[1][0])
            }
        }
    }

    /// The device kernel, or the refusal of a formula without one.
    fn kernel(&self, a: &Tensor) -> Result<BinaryOp> {
        F::KERNEL.ok_or_else(|| super::cpu_only(self.name, a))
    }
}

/// A tensor's device memory as a broadcast operand.
pub(super) fn operand<'a>(buffer: &'a GpuBuffer, t: &'a Tensor) -> Operand<'a> {
    Operand {
        buffer,
        shape: t.shape(),
    }
}

impl<F: Arith> Op for Binary<F> {
    type Output = Tensor;
    const DEVICE: DevicePath = Binary::<F>::DEVICE;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].zip_float(inputs[1], self.name, &self.f)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (a, b) = (inputs[0], inputs[1]);
        let out_shape = broadcast_shape(self.name, a.shape(), b.shape())?;
        let (kernel, b_buffer) = (self.kernel(a)?, b.gpu_buffer(self.name)?);
        a.gpu_op(self.name, out_shape.clone(), |dtype, a_buffer| {
            binary::binary(kernel, dtype, operand(a_buffer, a), operand(&b_buffer, b), &out_shape)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Binary { ..*self }, binary_probe(dtype)?)])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let grads = F::GRADS?;
        let (name, a_shape, b_shape) = (self.name, inputs[0].shape().clone(), inputs[1].shape().clone());
        let needs = [inputs[0].requires_grad(), inputs[1].requires_grad()];
        let kept = match grads {
            BinaryGrads::OfGradient(_) => [None, None],
            BinaryGrads::OfOperands { reads, .. } => std::array::from_fn(|j| {
                let read = (needs[0] && reads[0][j]) || (needs[1] && reads[1][j]);
                read.then(|| Saved::new(inputs[j]))
            }),
        };
        let saves = kept.iter().any(Option::is_some);
        let backward = move |g: &[Tensor], needs: &[bool]| {
            let (da, db) = match grads {
                BinaryGrads::OfGradient(f) => {
                    let (da, db) = f(&g[0])?;
                    (Some(da), Some(db))
                }
                BinaryGrads::OfOperands { grad, .. } => {
                    let a = kept[0].as_ref().map(|t| t.get(name)).transpose()?;
                    let b = kept[1].as_ref().map(|t| t.get(name)).transpose()?;
                    (
                        needs[0].then(|| grad(0, a, b, &g[0])).transpose()?,
                        needs[1].then(|| grad(1, a, b, &g[0])).transpose()?,
                    )
                }
            };
            Ok(vec![
                da.filter(|_| needs[0]).map(|d| d.sum_to(&a_shape)).transpose()?,
                db.filter(|_| needs[1]).map(|d| d.sum_to(&b_shape)).transpose()?,
            ])
        };
        // Every formula is made of recorded operations on the gradient and the saved operands.
        let formula = Formula::new(backward).differentiable();
        Some(if saves {
            formula.boxed()
        } else {
            formula.saving_nothing().boxed()
        })
    }
}

impl<F: Arith> Op for BinaryInPlace<F> {
    type Output = ();
    const DEVICE: DevicePath = Binary::<F>::DEVICE;

    fn name(&self) -> &'static str {
        self.0.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        inputs[0].zip_float_(inputs[1], self.0.name, &self.0.f)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let (a, b) = (inputs[0], inputs[1]);
        let (kernel, name) = (self.0.kernel(a)?, self.0.name);
        let (a_buffer, b_buffer) = (a.gpu_buffer(name)?, b.gpu_buffer(name)?);
        binary::binary_in_place(
            kernel,
            float_type(name, a.dtype())?,
            operand(&a_buffer, a),
            operand(&b_buffer, b),
        )
        .map_err(|e| a.kernel_error(name, e))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Three copies of the sweep, into which the column broadcasts.
        let xs = probe::inputs();
        let n = xs.len();
        let rows: Vec<f64> = xs.iter().cycle().take(3 * n).copied().collect();
        let inputs = vec![
            Tensor::from_vec(rows, [3, n])?.to_dtype(dtype)?,
            binary_probe(dtype)?.swap_remove(1),
        ];
        Ok(vec![(BinaryInPlace(Binary { ..self.0 }), inputs)])
    }
}

macro_rules! binary_fn {
    ($(#[$doc:meta])* $vis:vis $name:ident, $method:ident, $method_:ident, $kernel:expr, |$a:ident, $b:ident| $body:expr,
     $(half: |$ha:ident, $hb:ident, $round:ident| $half:expr,)? grads: $grads:expr, integers: $integers:expr) => {
        #[derive(Clone, Copy, Debug, Default)]
        struct $name;
        impl BinaryFn for $name {
            #[inline(always)]
            fn apply<R: Real>(&self, $a: R, $b: R) -> R {
                $body
            }
            $(
                #[inline(always)]
                fn apply_half(&self, $ha: f32, $hb: f32, $round: fn(f32) -> f32) -> f32 {
                    $half
                }
            )?
        }
        impl Arith for $name {
            const KERNEL: Option<BinaryOp> = $kernel;
            const GRADS: Option<BinaryGrads> = $grads;
        }
        impl Tensor {
            $(#[$doc])*
            $vis fn $method(&self, other: &Tensor) -> Result<Tensor> {
                let name = stringify!($method);
                let integers: Option<IntegerOp> = $integers;
                let dtype = checked_result_type(name, integers, self, other)?;
                if !dtype.is_floating_point() {
                    return match integers {
                        Some(op) => integer_binary(name, op, self, other, dtype),
                        // True division: integers divide as the default float dtype.
                        None => self.to_dtype(DType::F32)?.$method(&other.to_dtype(DType::F32)?),
                    };
                }
                let (a, b, _) = promote_pair(name, self, other)?;
                broadcast_shape(name, a.shape(), b.shape())?;
                run(&Binary { name, f: $name }, &[&a, &b])
            }
            $(#[$doc])*
            ///
            /// In place: `other` broadcasts to this tensor's shape.
            $vis fn $method_(&self, other: &Tensor) -> Result<()> {
                let name = stringify!($method_);
                let integers: Option<IntegerOp> = $integers;
                let dtype = checked_result_type(name, integers, self, other)?;
                check_cast(name, dtype, self.dtype())?;
                if !self.is_floating_point() {
                    // Integers never require a gradient: the result, cast back, is written through the handle.
                    let op = integers.ok_or_else(|| Error::float_only(name, self.dtype()))?;
                    in_place_operand(name, self, other)?;
                    return self.copy_(&integer_binary(name, op, self, other, dtype)?.to_dtype(self.dtype())?);
                }
                let other = in_place_operand(name, self, other)?;
                if (self.requires_grad() || other.requires_grad()) && is_grad_enabled() {
                    let binary = Binary { name: stringify!($method), f: $name };
                    // Made before the write, so it saves `other` as it is now.
                    let backward = binary.gradient(&[self, &other], self);
                    return match backward.filter(|_| !binary.reads_the_changed_operand(self, &other)) {
                        Some(backward) => super::in_place_recorded_without_copy(
                            name,
                            &[self, &other],
                            || super::dispatch(&BinaryInPlace(binary), &[self, &other]),
                            || backward,
                        ),
                        None => super::in_place_recorded(name, self, |original| original.$method(&other)),
                    };
                }
                run(&BinaryInPlace(Binary { name, f: $name }), &[self, &other])
            }
        }
    };
}

binary_fn!(/// `a + b`, broadcasting, with PyTorch's type promotion (integers wrap; bools give `a | b`).
    pub Add, add, add_, Some(BinaryOp::Add), |a, b| a + b,
    grads: Some(BinaryGrads::OfGradient(|g| Ok((g.clone(), g.clone())))),
    integers: Some(IntegerOp::Add));
binary_fn!(/// `a - b`, broadcasting (integers wrap; a bool operand is PyTorch's error).
    pub Sub, sub, sub_, Some(BinaryOp::Sub), |a, b| a - b,
    grads: Some(BinaryGrads::OfGradient(|g| Ok((g.clone(), g.neg()?)))),
    integers: Some(IntegerOp::Sub));
binary_fn!(/// `a * b`, broadcasting (integers wrap; bools give `a & b`).
pub Mul, mul, mul_, Some(BinaryOp::Mul), |a, b| a * b,
grads: Some(BinaryGrads::OfOperands {
    reads: [[false, true], [true, false]],
    grad: |i, a, b, g| g.mul(saved(if i == 0 { b } else { a })?),
}),
integers: Some(IntegerOp::Mul));
binary_fn!(/// `a / b`, broadcasting: true division, so integer operands divide as `f32`.
pub Div, div, div_, Some(BinaryOp::Div), |a, b| a / b,
grads: Some(BinaryGrads::OfOperands {
    reads: [[false, true], [true, true]],
    grad: |i, a, b, g| {
        let da = g.div(saved(b)?)?;
        if i == 0 { Ok(da) } else { da.mul(saved(a)?)?.div(saved(b)?)?.neg() }
    },
}),
integers: None);
binary_fn!(/// The larger of `a` and `b` (NaN if either is), broadcasting.
    pub Maximum, maximum, maximum_, Some(BinaryOp::Maximum), |a, b| a.max_nan(b), grads: None,
    integers: Some(IntegerOp::Maximum));
binary_fn!(/// The smaller of `a` and `b` (NaN if either is), broadcasting.
    pub Minimum, minimum, minimum_, Some(BinaryOp::Minimum), |a, b| a.min_nan(b), grads: None,
    integers: Some(IntegerOp::Minimum));
binary_fn!(/// `a / b`, 0 where `b` is 0 (PyTorch's `(a / b).masked_fill_(b == 0, 0)` in the gradients of `std` and
    /// `norm`), broadcasting; not differentiable.
    #[allow(dead_code, reason = "the macro makes every function's in-place form; this one's is not used")]
    pub(crate) DivOrZero, div_or_zero, div_or_zero_, Some(BinaryOp::DivOrZero),
    |a, b| if b == R::ZERO { R::ZERO } else { a / b }, grads: None, integers: None);
binary_fn!(/// PyTorch's `remainder` (Python's `a % b`): `a - b·floor(a / b)` computed exactly, with `b`'s sign;
    /// broadcasting. Integers as PyTorch's (a zero divisor is its `ZeroDivisionError`); floats through C's
    /// `fmod`, exact on devices too (NaN for a zero `b`, `a` plus an infinite `b` of the other sign is that
    /// infinity). Its gradient is `g` for `a` and `-g·floor_divide(a, b)` for `b`.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![5.0f32, -5.0, 1.0], [3])?;
    /// let b = Tensor::from_vec(vec![3.0f32, 3.0, 0.1], [3])?;
    /// assert_eq!(a.remainder(&b)?.to_vec::<f32>()?, vec![2.0, 1.0, 0.09999999]);
    /// let i = Tensor::from_vec(vec![5i64, -5], [2])?;
    /// assert_eq!(i.remainder(&Tensor::from_vec(vec![-3i64, 3], [2])?)?.to_vec::<i64>()?, vec![-1, 1]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub Remainder, remainder, remainder_, Some(BinaryOp::Remainder), |a, b| host_remainder(a, b),
    grads: Some(remainder_grads(|i, a, b, g| remainder_grad(i, a, b, g, Rounding::Floor))),
    integers: Some(IntegerOp::Remainder));
binary_fn!(/// C's `fmod` (PyTorch's `fmod`): `a - b·trunc(a / b)` computed exactly, with `a`'s sign;
    /// broadcasting; integers as PyTorch's. Its gradient is `g` for `a` and `-g·trunc(a / b)` for `b`.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![5.0f32, -5.0], [2])?;
    /// assert_eq!(a.fmod(&Tensor::from_vec(vec![3.0f32], [1])?)?.to_vec::<f32>()?, vec![2.0, -2.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub Fmod, fmod, fmod_, Some(BinaryOp::Fmod), |a, b| R::of(a.f64() % b.f64()),
    grads: Some(remainder_grads(|i, a, b, g| remainder_grad(i, a, b, g, Rounding::Trunc))),
    integers: Some(IntegerOp::Fmod));
binary_fn!(/// PyTorch's `floor_divide` (Python's `a // b`): the quotient rounded down, as `c10::div_floor_floating`
    /// computes it for floats (through the exact `fmod`) and exactly for integers (a zero divisor is PyTorch's
    /// `ZeroDivisionError`); broadcasting. Not differentiable: its backward is PyTorch's error
    /// (`div_rounded(.., Rounding::Floor)` has zero gradients instead).
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], [2])?;
    /// assert_eq!(a.floor_divide(&Tensor::from_vec(vec![2i64], [1])?)?.to_vec::<i64>()?, vec![3, -4]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub FloorDivide, floor_divide, floor_divide_, Some(BinaryOp::FloorDivide), |a, b| host_floor_divide(a, b, |x| x),
    half: |a, b, round| host_floor_divide(a, b, round),
    grads: Some(BinaryGrads::OfGradient(|_| Err(Error::autograd(
        "floor_divide",
        "derivative for aten::floor_divide is not implemented",
    )))),
    integers: Some(IntegerOp::FloorDivide));
binary_fn!(/// `a / b` rounded down, with zero gradients: PyTorch's `div(rounding_mode="floor")`.
    DivFloor, div_floor, div_floor_, Some(BinaryOp::FloorDivide), |a, b| host_floor_divide(a, b, |x| x),
    half: |a, b, round| host_floor_divide(a, b, round),
    grads: Some(BinaryGrads::OfGradient(|g| Ok((g.zeros_like()?, g.zeros_like()?)))),
    integers: Some(IntegerOp::FloorDivide));
/// The gradients of a remainder `a - b·q`, `q = a / b` rounded: `g` for `a` (reading nothing), `-g·q` for `b`
/// (reading both).
const fn remainder_grads(grad: fn(usize, Option<&Tensor>, Option<&Tensor>, &Tensor) -> Result<Tensor>) -> BinaryGrads {
    BinaryGrads::OfOperands {
        reads: [[false, false], [true, true]],
        grad,
    }
}

/// Operand `i`'s gradient of `a - b·q` for `q` rounded as `mode` (PyTorch's `remainder` and `fmod` formulas).
fn remainder_grad(i: usize, a: Option<&Tensor>, b: Option<&Tensor>, g: &Tensor, mode: Rounding) -> Result<Tensor> {
    if i == 0 {
        return Ok(g.clone());
    }
    g.mul(&saved(a)?.div_rounded(saved(b)?, mode)?)?.neg()
}

/// How [`Tensor::div_rounded`] rounds the quotient: PyTorch's `rounding_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Toward zero (`"trunc"`, C's integer division).
    Trunc,
    /// Down (`"floor"`, Python's `//`).
    Floor,
}

impl Tensor {
    /// `a / b` rounded as `mode` says, broadcasting: PyTorch's `torch.div(a, b, rounding_mode=...)`; integers
    /// stay integers (a zero divisor is PyTorch's `ZeroDivisionError`). Its gradients are zero, as PyTorch's.
    ///
    /// ```
    /// use nn::{Rounding, Tensor};
    /// let a = Tensor::from_vec(vec![7.0f32, -7.0], [2])?;
    /// let b = Tensor::from_vec(vec![2.0f32], [1])?;
    /// assert_eq!(a.div_rounded(&b, Rounding::Trunc)?.to_vec::<f32>()?, vec![3.0, -3.0]);
    /// assert_eq!(a.div_rounded(&b, Rounding::Floor)?.to_vec::<f32>()?, vec![3.0, -4.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn div_rounded(&self, other: &Tensor, mode: Rounding) -> Result<Tensor> {
        match mode {
            Rounding::Trunc => self.div_trunc(other),
            Rounding::Floor => self.div_floor(other),
        }
    }

    /// [`div_rounded`](Self::div_rounded) in place; the result must fit this tensor's dtype.
    pub fn div_rounded_(&self, other: &Tensor, mode: Rounding) -> Result<()> {
        match mode {
            Rounding::Trunc => {
                let name = "div_trunc_";
                check_cast(
                    name,
                    checked_result_type(name, Some(IntegerOp::TruncDivide), self, other)?,
                    self.dtype(),
                )?;
                in_place_operand(name, self, other)?;
                self.copy_(&self.div_trunc(other)?.to_dtype(self.dtype())?)
            }
            Rounding::Floor => self.div_floor_(other),
        }
    }

    /// `trunc(a / b)` as PyTorch computes it: the quotient rounded to the dtype first (in `f16` too), so it is
    /// `div` then `trunc`, recorded as one node with zero gradients (`DivBackward2`).
    fn div_trunc(&self, other: &Tensor) -> Result<Tensor> {
        let name = "div_trunc";
        let dtype = checked_result_type(name, Some(IntegerOp::TruncDivide), self, other)?;
        if !dtype.is_floating_point() {
            return integer_binary(name, IntegerOp::TruncDivide, self, other, dtype);
        }
        let mut out = {
            let _untracked = crate::no_grad();
            self.div(other)?.trunc()?
        };
        let zeros = [self, other].map(|t| (t.shape().clone(), t.dtype(), t.device()));
        record_function(name, &[self, other], &mut out, move |_, needs| {
            zeros
                .iter()
                .zip(needs)
                .map(|((shape, dtype, device), &need)| {
                    need.then(|| Tensor::zeros(shape.clone(), *dtype).to_device(*device))
                        .transpose()
                })
                .collect()
        });
        Ok(out)
    }
}

impl Tensor {
    /// `x % value`: PyTorch's `remainder` of a number (`RemainderBackward0`: the gradient passes unchanged); an
    /// integer or bool tensor computes in `f32`, as beside a Python float. For an integer number beside an
    /// integer tensor, `&x % 2` keeps the integer dtype.
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![-1.0f32, 2.5, 1.0], [3])?;
    /// assert_eq!(x.remainder_scalar(2.0)?.to_vec::<f32>()?, vec![1.0, 0.5, 1.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn remainder_scalar(&self, value: f64) -> Result<Tensor> {
        self.with_number("remainder_scalar", Remainder, value)
    }

    /// `fmod(x, value)`: C's `fmod` of a number, with `x`'s sign (`FmodBackward0`: the gradient passes
    /// unchanged); integer or bool tensors compute in `f32`.
    pub fn fmod_scalar(&self, value: f64) -> Result<Tensor> {
        self.with_number("fmod_scalar", Fmod, value)
    }

    /// `f(x, value)` with `value` a 0-d tensor of `x`'s float dtype (`f32` for integer tensors).
    fn with_number<F: Arith>(&self, name: &'static str, f: F, value: f64) -> Result<Tensor> {
        if !self.is_floating_point() {
            return self.to_dtype(DType::F32)?.with_number(name, f, value);
        }
        run(&Binary { name, f }, &[self, &self.number(value)?])
    }
}

/// PyTorch's float `remainder`: C's `fmod` (exact), plus `b` where that is non-zero and of the other sign.
#[inline(always)]
fn host_remainder<R: Real>(a: R, b: R) -> R {
    let m = R::of(a.f64() % b.f64());
    if m != R::ZERO && ((b < R::ZERO) != (m < R::ZERO)) {
        m + b
    } else {
        m
    }
}

/// `c10::div_floor_floating` in the compute type `R`, each step rounded by `round` (to the storage type, as
/// PyTorch's vectorised CPU path computes `f16` and `bf16`; the identity otherwise).
#[inline(always)]
fn host_floor_divide<R: Real>(a: R, b: R, round: impl Fn(R) -> R) -> R {
    if b == R::ZERO {
        return round(a / b);
    }
    let m = R::of(a.f64() % b.f64());
    let mut div = round(round(a - m) / b);
    if m != R::ZERO && ((b < R::ZERO) != (m < R::ZERO)) {
        div = round(div - R::ONE);
    }
    if div == R::ZERO {
        return R::of(0f64.copysign(round(a / b).f64()));
    }
    let mut floored = R::of(div.f64().floor());
    if round(div - floored) > R::of(0.5) {
        floored = round(floored + R::ONE);
    }
    floored
}

/// `x·scale + shift` for a float `x`, in a new tensor; inputs `[x]`.
#[derive(Clone, Copy)]
pub(super) struct Affine {
    name: &'static str,
    scale: f64,
    shift: f64,
}

impl Affine {
    /// `x·scale + shift`, named `name` in errors.
    pub(super) fn new(name: &'static str, scale: f64, shift: f64) -> Affine {
        Affine { name, scale, shift }
    }
}

impl UnaryFn for Affine {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        x * R::of(self.scale) + R::of(self.shift)
    }
}

/// The probe's input of the scalar operations: the probe sweep.
fn sweep(dtype: DType) -> Result<Vec<Tensor>> {
    let xs = probe::inputs();
    let n = xs.len();
    Ok(vec![Tensor::from_vec(xs, [n])?.to_dtype(dtype)?])
}

impl Op for Affine {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].map_float(self.name, self)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        inputs[0].map_gpu(self.name, |dtype, x| binary::affine(dtype, x, self.scale, self.shift))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(*self, sweep(dtype)?)])
    }

    fn gradient(&self, _: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let scale = self.scale;
        let backward = move |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].mul_scalar(scale)?)]);
        // PyTorch's `mul` by a scalar saves it as a tensor; its `add`, `sub` and `neg` of one save nothing.
        let formula = Formula::new(backward).differentiable();
        Some(if matches!(self.name, "add_scalar" | "neg") {
            formula.saving_nothing().boxed()
        } else {
            formula.boxed()
        })
    }
}

/// `x = x·scale + shift` for floats, on the CPU and on devices; with `integers`, PyTorch's integer `x += shift`
/// too (wrapping, the shift truncated to the integer type). Inputs `[x]`.
struct AffineInPlace {
    affine: Affine,
    integers: bool,
}

impl Op for AffineInPlace {
    type Output = ();

    fn name(&self) -> &'static str {
        self.affine.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        let x = inputs[0];
        if x.is_floating_point() || !self.integers {
            return x.map_float_(self.affine.name, &self.affine);
        }
        let value = self.affine.shift;
        x.write_cpu(self.affine.name, |d| -> Result<()> {
            match d {
                CpuData::I64(v) => map_in_place(v, |x| x.wrapping_add(value as i64)),
                CpuData::I32(v) => map_in_place(v, |x| x.wrapping_add(value as i32)),
                CpuData::U8(v) => map_in_place(v, |x| x.wrapping_add(value as i64 as u8)),
                CpuData::F32(_) | CpuData::F64(_) | CpuData::F16(_) | CpuData::BF16(_) => {
                    unreachable!("floats are mapped above")
                }
                CpuData::Bool(_) => {
                    return Err(Error::UnsupportedDType {
                        op: self.affine.name,
                        dtype: DType::Bool,
                        hint: "; arithmetic on bool tensors is not defined",
                    });
                }
            }
            Ok(())
        })?
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let x = inputs[0];
        let Affine { name, scale, shift } = self.affine;
        match x.dtype() {
            dtype if dtype.is_floating_point() => {
                binary::affine_in_place(float_type(name, dtype)?, &x.gpu_buffer(name)?, scale, shift)
            }
            DType::I64 | DType::I32 if self.integers => {
                binary::add_integer_in_place(&x.gpu_buffer(name)?, x.dtype().size_in_bytes(), shift as i64)
            }
            dtype => {
                return Err(Error::UnsupportedOnDevice {
                    op: name,
                    dtype,
                    device: x.device(),
                    reason: "only floating-point, i64 and i32 tensors are incremented on a device".into(),
                });
            }
        }
        .map_err(|e| x.kernel_error(name, e))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let case = AffineInPlace {
            affine: self.affine,
            integers: self.integers,
        };
        Ok(vec![(case, sweep(dtype)?)])
    }
}

impl Tensor {
    /// `x * scale + shift` in one pass.
    pub fn affine(&self, scale: f64, shift: f64) -> Result<Tensor> {
        run(
            &Affine {
                name: "affine",
                scale,
                shift,
            },
            &[self],
        )
    }

    /// `x + value`; integer tensors stay integer (the value is truncated to the integer type).
    pub fn add_scalar(&self, value: f64) -> Result<Tensor> {
        if !self.is_floating_point() {
            let out = self.deep_copy()?;
            out.add_scalar_(value)?;
            return Ok(out);
        }
        run(
            &Affine {
                name: "add_scalar",
                scale: 1.0,
                shift: value,
            },
            &[self],
        )
    }

    /// `x - value`: [`add_scalar`](Self::add_scalar) of `-value` (the same rounding); `&x - value` panics
    /// where this errs.
    pub fn sub_scalar(&self, value: f64) -> Result<Tensor> {
        self.add_scalar(-value)
    }

    /// `x / value`, divided as PyTorch divides by a number: by the number itself, never its reciprocal, in the
    /// compute type (`f32` for `f16` and `bf16`, the quotient then rounded to the tensor's dtype); an integer or
    /// bool tensor divides as `f32` (true division). `&x / value` panics where this errs.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], [2])?;
    /// assert_eq!(x.div_scalar(3.0)?.to_vec::<f32>()?, vec![1.0 / 3.0, 1.0]);
    /// let steps = Tensor::from_vec(vec![3i64, 4], [2])?;
    /// assert_eq!(steps.div_scalar(2.0)?.dtype(), DType::F32);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn div_scalar(&self, value: f64) -> Result<Tensor> {
        match self.dtype() {
            DType::F32 | DType::F64 => self.div(&self.number(value)?),
            DType::F16 | DType::BF16 => self.to_dtype(DType::F32)?.div_scalar(value)?.to_dtype(self.dtype()),
            _ => self.to_dtype(DType::F32)?.div_scalar(value),
        }
    }

    /// `x /= value` in place, as [`div_scalar`](Self::div_scalar) divides; floating-point dtypes only.
    pub fn div_scalar_(&self, value: f64) -> Result<()> {
        match self.dtype() {
            DType::F32 | DType::F64 => self.div_(&self.number(value)?),
            DType::F16 | DType::BF16 => self.copy_(&self.div_scalar(value)?),
            dtype => Err(Error::float_only("div_scalar_", dtype)),
        }
    }

    /// `value` as a 0-d tensor of this tensor's dtype, on its device.
    fn number(&self, value: f64) -> Result<Tensor> {
        Tensor::full([], value, self.dtype()).to_device(self.device())
    }

    /// `x * value` (signed zeros kept: the shift is `-0.0`, which adds nothing to any value).
    pub fn mul_scalar(&self, value: f64) -> Result<Tensor> {
        run(
            &Affine {
                name: "mul_scalar",
                scale: value,
                shift: -0.0,
            },
            &[self],
        )
    }

    /// `-x`.
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![1.5f32, 0.0], [2]).unwrap();
    /// let y = x.neg().unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(y, vec![-1.5, 0.0]);
    /// assert!(y[1].is_sign_negative());
    /// ```
    pub fn neg(&self) -> Result<Tensor> {
        if !self.is_floating_point() {
            return super::integer::integer_neg(self);
        }
        run(
            &Affine {
                name: "neg",
                scale: -1.0,
                shift: -0.0,
            },
            &[self],
        )
    }

    /// PyTorch's `lerp_(end, weight)` in place: `x + weight·(end - x)` for `weight < 0.5`, else
    /// `end - (end - x)·(1 - weight)` (exact at both ends), `end` broadcast to `x`'s shape.
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![0.0f32, 10.0], [2]).unwrap();
    /// x.lerp_(&nn::Tensor::from_vec(vec![4.0f32, 20.0], [2]).unwrap(), 0.25).unwrap();
    /// assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 12.5]);
    /// ```
    pub fn lerp_(&self, end: &Tensor, weight: f64) -> Result<()> {
        let diff = end.sub(self)?;
        if weight < 0.5 {
            self.add_(&diff.mul_scalar(weight)?)
        } else {
            self.copy_(&end.sub(&diff.mul_scalar(1.0 - weight)?)?)
        }
    }

    /// `x += value` in place, for every dtype but bool (BatchNorm's `num_batches_tracked += 1`). On a computed
    /// tensor while autograd records, recorded as PyTorch's `add_` of a number: the gradient passes unchanged.
    pub fn add_scalar_(&self, value: f64) -> Result<()> {
        let op = AffineInPlace {
            affine: Affine {
                name: "add_scalar_",
                scale: 1.0,
                shift: value,
            },
            integers: true,
        };
        self.affine_in_place(op, |g| Ok(g.clone()))
    }

    /// `x *= value` in place; floating-point dtypes only. On a computed tensor while autograd records,
    /// recorded as PyTorch's `mul_` by a number: the gradient is multiplied by `value`.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap().requires_grad_(true).unwrap();
    /// let y = x.mul_scalar(2.0).unwrap();
    /// y.mul_scalar_(3.0).unwrap();
    /// y.sum_all().unwrap().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![6.0, 6.0]);
    /// ```
    pub fn mul_scalar_(&self, value: f64) -> Result<()> {
        let op = AffineInPlace {
            affine: Affine {
                name: "mul_scalar_",
                scale: value,
                shift: -0.0,
            },
            integers: false,
        };
        self.affine_in_place(op, move |g| g.mul_scalar(value))
    }

    /// Runs `op` in place, recorded where this tensor requires a gradient and autograd records: its node's
    /// backward is `grad`, which needs nothing of the old value, so nothing is copied (a leaf that requires
    /// a gradient is refused, as in PyTorch).
    fn affine_in_place(
        &self,
        op: AffineInPlace,
        grad: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
    ) -> Result<()> {
        if !(self.requires_grad() && is_grad_enabled()) {
            return run(&op, &[self]);
        }
        let name = op.affine.name;
        super::in_place_recorded_without_copy(
            name,
            &[self],
            || super::dispatch(&op, &[self]),
            || Box::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(grad(&g[0])?)])),
        )
    }
}
