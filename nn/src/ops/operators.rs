//! `+ - * / %` between tensors and between a tensor and a number (either side), unary `-`,
//! `+= -= *= /= %=`, and `& | ^ !` between bool tensors (masks), by value and by reference, as PyTorch's
//! operators.
//!
//! Each operator runs a `Result` method and **panics** with that method's error where it returns one (shapes
//! that do not broadcast, tensors on two devices, an integer division by zero, a bool operand of `-`): the one
//! place the library panics on bad input. Call the method to handle the error:
//!
//! | operator | method |
//! | --- | --- |
//! | `&a + &b`, `&a - &b`, `&a * &b`, `&a / &b`, `&a % &b` | [`Tensor::add`], [`Tensor::sub`], [`Tensor::mul`], [`Tensor::div`], [`Tensor::remainder`] (broadcasting, PyTorch's type promotion) |
//! | `&a + s`, `&a - s`, `&a * s`, `&a / s`, `&a % s` | [`Tensor::add_scalar`], [`Tensor::sub_scalar`], [`Tensor::mul_scalar`], [`Tensor::div_scalar`], [`Tensor::remainder_scalar`] (an integer tensor and an integer number: the same methods of a 0-d tensor) |
//! | `s + &a`, `s * &a` | as `&a + s`, `&a * s` |
//! | `s - &a`, `s / &a`, `s % &a` | `a.affine(-1.0, s)`, `a.recip()?.mul_scalar(s)`, `s` as a 0-d tensor `.remainder(&a)` (PyTorch's `__rsub__`, `__rtruediv__`, `__rmod__`) |
//! | `-&a` | [`Tensor::neg`] |
//! | `&m & &n`, `&m \| &n`, `&m ^ &n`, `!&m` (bool tensors) | [`Tensor::logical_and`], [`Tensor::logical_or`], [`Tensor::logical_xor`], [`Tensor::logical_not`] |
//! | `a += &b`, `a -= &b`, `a *= &b`, `a /= &b`, `a %= &b` | [`Tensor::add_`], [`Tensor::sub_`], [`Tensor::mul_`], [`Tensor::div_`], [`Tensor::remainder_`] |
//! | `a += s`, `a -= s`, `a *= s`, `a /= s`, `a %= s` | [`Tensor::add_scalar_`], `add_scalar_(-s)`, [`Tensor::mul_scalar_`], [`Tensor::div_scalar_`], `remainder_` of a 0-d tensor |
//!
//! A number is an `f64` or an `i64` (a literal of either needs no suffix; convert others with `f64::from`), and
//! follows PyTorch's rule for a Python number: it never widens a
//! floating-point tensor (`half + 0.1` stays `f16`); a float number makes an integer or bool tensor `f32`
//! (PyTorch's default dtype), an integer one keeps an integer tensor's dtype (a bool tensor becomes `i64`), and
//! `/` always divides as floats. In place, a result PyTorch cannot cast back (`int += 0.5`) is its error. The
//! compound assignments write through the handle, as PyTorch's: every handle of the tensor sees the new values.
//!
//! ```
//! use nn::{DType, Tensor};
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 4.0], [3])?;
//! let b = Tensor::from_vec(vec![10.0f32], [1])?;
//! let y = &x * 2.0 + &b - 1.0 / &x;
//! assert_eq!(y.to_vec::<f32>()?, vec![11.0, 13.5, 17.75]);
//! let mut z = -&y;
//! z /= 2.0;
//! assert_eq!(z.to_vec::<f32>()?, vec![-5.5, -6.75, -8.875]);
//! let steps = Tensor::from_vec(vec![3i64, 4], [2])?;
//! assert_eq!((&steps + 1).dtype(), DType::I64);
//! assert_eq!((&steps / 2).to_vec::<f32>()?, vec![1.5, 2.0]);
//! assert_eq!((&steps * 3 % 5).to_vec::<i64>()?, vec![4, 2]);
//! assert_eq!((&x % 1.5).to_vec::<f32>()?, vec![1.0, 0.5, 1.0]);
//! # Ok::<(), nn::Error>(())
//! ```

use std::ops::{
    Add, AddAssign, BitAnd, BitOr, BitXor, Div, DivAssign, Mul, MulAssign, Neg, Not, Rem, RemAssign, Sub, SubAssign,
};

use super::integer::bool_subtraction;
use crate::{DType, Error, Result, Tensor};

/// A number beside a tensor, as PyTorch's Python `int` or `float`.
#[derive(Clone, Copy, Debug)]
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn value(self) -> f64 {
        match self {
            Number::Int(v) => v as f64,
            Number::Float(v) => v,
        }
    }
}

/// The dtype PyTorch computes `tensor ∘ number` in, for `+ - *`: the tensor's when it is floating-point or
/// the number is an integer (a bool tensor's `i64`), else the default `f32`.
fn result_dtype(x: &Tensor, n: Number) -> DType {
    match (x.dtype(), n) {
        (dtype, _) if dtype.is_floating_point() => dtype,
        (_, Number::Float(_)) => DType::F32,
        (DType::Bool, Number::Int(_)) => DType::I64,
        (dtype, Number::Int(_)) => dtype,
    }
}

/// `x` in `dtype`, the same handle when it is already.
fn in_dtype(x: &Tensor, dtype: DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        Ok(x.clone())
    } else {
        x.to_dtype(dtype)
    }
}

/// The dtype a true division of `x` gives: its own when floating-point, else `f32`.
fn division_dtype(x: &Tensor) -> DType {
    if x.is_floating_point() { x.dtype() } else { DType::F32 }
}

fn add_number(x: &Tensor, n: Number) -> Result<Tensor> {
    in_dtype(x, result_dtype(x, n))?.add_scalar(n.value())
}

fn sub_number(x: &Tensor, n: Number) -> Result<Tensor> {
    bool_subtraction("sub", usize::from(x.dtype() == DType::Bool))?;
    in_dtype(x, result_dtype(x, n))?.sub_scalar(n.value())
}

fn mul_number(x: &Tensor, n: Number) -> Result<Tensor> {
    let x = in_dtype(x, result_dtype(x, n))?;
    if !x.is_floating_point() {
        return Tensor::mul(&x, &number_like(&x, n)?);
    }
    x.mul_scalar(n.value())
}

/// `x % n`: PyTorch's `remainder` of a number.
fn rem_number(x: &Tensor, n: Number) -> Result<Tensor> {
    let x = in_dtype(x, result_dtype(x, n))?;
    if !x.is_floating_point() {
        return x.remainder(&number_like(&x, n)?);
    }
    x.remainder_scalar(n.value())
}

/// `n % x`: PyTorch's `__rmod__`, the remainder of the number divided by each element.
fn number_rem(n: Number, x: &Tensor) -> Result<Tensor> {
    let x = in_dtype(x, result_dtype(x, n))?;
    number_like(&x, n)?.remainder(&x)
}

/// `n` as a 0-d tensor of `x`'s dtype, on its device (an integer number stays exact in an integer dtype).
fn number_like(x: &Tensor, n: Number) -> Result<Tensor> {
    let t = match n {
        Number::Int(v) if x.dtype() == DType::I64 => Tensor::scalar(v),
        Number::Int(v) if x.dtype() == DType::I32 => Tensor::scalar(v as i32),
        Number::Int(v) if x.dtype() == DType::U8 => Tensor::scalar(v as u8),
        _ => Tensor::full([], n.value(), x.dtype()),
    };
    t.to_device(x.device())
}

fn div_number(x: &Tensor, n: Number) -> Result<Tensor> {
    in_dtype(x, division_dtype(x))?.div_scalar(n.value())
}

/// `n - x`: PyTorch's `rsub`, `x·(-1) + n` (the same rounding as `n - x`); for integers `n - x`, wrapping.
fn number_sub(n: Number, x: &Tensor) -> Result<Tensor> {
    bool_subtraction("rsub", usize::from(x.dtype() == DType::Bool))?;
    let x = in_dtype(x, result_dtype(x, n))?;
    if !x.is_floating_point() {
        return Tensor::sub(&number_like(&x, n)?, &x);
    }
    x.affine(-1.0, n.value())
}

/// `n / x`: PyTorch's `__rtruediv__`, `x.reciprocal() * n`.
fn number_div(n: Number, x: &Tensor) -> Result<Tensor> {
    in_dtype(x, division_dtype(x))?.recip()?.mul_scalar(n.value())
}

/// `x op= n` in place, refused as PyTorch refuses it where the result's dtype is not `x`'s.
fn in_place_number(x: &Tensor, n: Number, op: &'static str, division: bool) -> Result<()> {
    if op == "-=" {
        bool_subtraction(op, usize::from(x.dtype() == DType::Bool))?;
    }
    let wanted = if division {
        division_dtype(x)
    } else {
        result_dtype(x, n)
    };
    if wanted != x.dtype() {
        return Err(Error::InvalidArgument {
            op,
            message: format!(
                "result type {} can't be cast to the desired output type {}",
                DType::scalar_type_name(wanted),
                DType::scalar_type_name(x.dtype())
            ),
        });
    }
    match op {
        "+=" => x.add_scalar_(n.value()),
        "-=" => x.add_scalar_(-n.value()),
        "*=" if !x.is_floating_point() => x.mul_(&number_like(x, n)?),
        "*=" => x.mul_scalar_(n.value()),
        "%=" => x.remainder_(&number_like(x, n)?),
        _ => x.div_scalar_(n.value()),
    }
}

/// The value of an operator's method, or a panic with its error.
#[track_caller]
fn expect<T>(result: Result<T>, op: &str) -> T {
    result.unwrap_or_else(|e| panic!("tensor `{op}`: {e}"))
}

/// `Tensor ∘ Tensor` in the four by-value and by-reference forms, through `Tensor::$method`.
macro_rules! tensor_tensor {
    ($Trait:ident, $fn:ident, $method:ident, $symbol:literal) => {
        impl $Trait<&Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: &Tensor) -> Tensor {
                expect(Tensor::$method(self, rhs), $symbol)
            }
        }
        impl $Trait<Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: Tensor) -> Tensor {
                expect(Tensor::$method(self, &rhs), $symbol)
            }
        }
        impl $Trait<&Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: &Tensor) -> Tensor {
                expect(Tensor::$method(&self, rhs), $symbol)
            }
        }
        impl $Trait<Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: Tensor) -> Tensor {
                expect(Tensor::$method(&self, &rhs), $symbol)
            }
        }
    };
}

tensor_tensor!(Add, add, add, "+");
tensor_tensor!(Sub, sub, sub, "-");
tensor_tensor!(Mul, mul, mul, "*");
tensor_tensor!(Div, div, div, "/");
tensor_tensor!(Rem, rem, remainder, "%");
tensor_tensor!(BitAnd, bitand, mask_and, "&");
tensor_tensor!(BitOr, bitor, mask_or, "|");
tensor_tensor!(BitXor, bitxor, mask_xor, "^");

impl Tensor {
    /// `a & b` of bool tensors; another dtype is an error (bitwise operations on integers are not implemented).
    fn mask_and(&self, other: &Tensor) -> Result<Tensor> {
        masks("&", &[self, other])?;
        self.logical_and(other)
    }

    /// `a | b` of bool tensors, as [`mask_and`](Self::mask_and).
    fn mask_or(&self, other: &Tensor) -> Result<Tensor> {
        masks("|", &[self, other])?;
        self.logical_or(other)
    }

    /// `a ^ b` of bool tensors, as [`mask_and`](Self::mask_and).
    fn mask_xor(&self, other: &Tensor) -> Result<Tensor> {
        masks("^", &[self, other])?;
        self.logical_xor(other)
    }

    /// `!a` (PyTorch's `~a`) of a bool tensor, as [`mask_and`](Self::mask_and).
    fn mask_not(&self) -> Result<Tensor> {
        masks("!", &[self])?;
        self.logical_not()
    }
}

/// Refuses operands of a bitwise operator that are not bool, naming the dtype as PyTorch's kernels do.
fn masks(op: &'static str, operands: &[&Tensor]) -> Result<()> {
    match operands.iter().find(|t| t.dtype() != DType::Bool) {
        None => Ok(()),
        Some(t) => Err(Error::UnsupportedDType {
            op,
            dtype: t.dtype(),
            hint: "; the bitwise operators take bool tensors (masks): compare first, or use the logical_* methods",
        }),
    }
}

/// `Tensor ∘ number` and `number ∘ Tensor` for one number type, by value and by reference.
macro_rules! tensor_number {
    (@one $num:ty, $kind:ident, $Trait:ident, $fn:ident, $right:ident, $left:ident, $symbol:literal) => {
        impl $Trait<$num> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: $num) -> Tensor {
                expect($right(self, Number::$kind(rhs)), $symbol)
            }
        }
        impl $Trait<$num> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: $num) -> Tensor {
                expect($right(&self, Number::$kind(rhs)), $symbol)
            }
        }
        impl $Trait<&Tensor> for $num {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: &Tensor) -> Tensor {
                expect($left(Number::$kind(self), rhs), $symbol)
            }
        }
        impl $Trait<Tensor> for $num {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: Tensor) -> Tensor {
                expect($left(Number::$kind(self), &rhs), $symbol)
            }
        }
    };
    (@assign $num:ty, $kind:ident, $Trait:ident, $fn:ident, $symbol:literal, $division:literal) => {
        impl $Trait<$num> for Tensor {
            #[track_caller]
            fn $fn(&mut self, rhs: $num) {
                expect(in_place_number(self, Number::$kind(rhs), $symbol, $division), $symbol)
            }
        }
    };
    ($num:ty, $kind:ident) => {
        tensor_number!(@one $num, $kind, Add, add, add_number, number_add, "+");
        tensor_number!(@one $num, $kind, Sub, sub, sub_number, number_sub, "-");
        tensor_number!(@one $num, $kind, Mul, mul, mul_number, number_mul, "*");
        tensor_number!(@one $num, $kind, Div, div, div_number, number_div, "/");
        tensor_number!(@one $num, $kind, Rem, rem, rem_number, number_rem, "%");
        tensor_number!(@assign $num, $kind, AddAssign, add_assign, "+=", false);
        tensor_number!(@assign $num, $kind, SubAssign, sub_assign, "-=", false);
        tensor_number!(@assign $num, $kind, MulAssign, mul_assign, "*=", false);
        tensor_number!(@assign $num, $kind, DivAssign, div_assign, "/=", true);
        tensor_number!(@assign $num, $kind, RemAssign, rem_assign, "%=", false);
    };
}

/// `n + x`: addition commutes, as in PyTorch's `__radd__`.
fn number_add(n: Number, x: &Tensor) -> Result<Tensor> {
    add_number(x, n)
}

/// `n * x`: multiplication commutes, as in PyTorch's `__rmul__`.
fn number_mul(n: Number, x: &Tensor) -> Result<Tensor> {
    mul_number(x, n)
}

// One float and one integer type, so that a literal needs no suffix (`&x * 2.0`, `&steps + 1`): with more, a
// literal's type would stay open until the end of inference and `(&x * 2.0).sum_all()` would not compile.
tensor_number!(f64, Float);
tensor_number!(i64, Int);

/// `a op= &b` and `a op= b` in place, through `Tensor::$method` (the in-place method: the write goes through
/// the handle, as PyTorch's `+=` does).
macro_rules! tensor_assign {
    ($Trait:ident, $fn:ident, $method:ident, $symbol:literal) => {
        impl $Trait<&Tensor> for Tensor {
            #[track_caller]
            fn $fn(&mut self, rhs: &Tensor) {
                expect(Tensor::$method(self, rhs), $symbol)
            }
        }
        impl $Trait<Tensor> for Tensor {
            #[track_caller]
            fn $fn(&mut self, rhs: Tensor) {
                expect(Tensor::$method(self, &rhs), $symbol)
            }
        }
    };
}

tensor_assign!(AddAssign, add_assign, add_, "+=");
tensor_assign!(SubAssign, sub_assign, sub_, "-=");
tensor_assign!(MulAssign, mul_assign, mul_, "*=");
tensor_assign!(DivAssign, div_assign, div_, "/=");
tensor_assign!(RemAssign, rem_assign, remainder_, "%=");

impl Not for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn not(self) -> Tensor {
        expect(Tensor::mask_not(self), "!")
    }
}

impl Not for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn not(self) -> Tensor {
        expect(Tensor::mask_not(&self), "!")
    }
}

impl Neg for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        expect(Tensor::neg(self), "-")
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        expect(Tensor::neg(&self), "-")
    }
}
