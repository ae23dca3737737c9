//! [`Real`]: the two float types math runs in. `f16` and `bf16` tensors compute in `f32` and round the result,
//! as PyTorch's CPU kernels do. `f32`'s functions are `fastmath`'s, which vectorise.

use std::ops::{Add, Div, Mul, Neg, Sub};

use super::fastmath;

/// `f32` or `f64`: the arithmetic and functions the element-wise kernels use.
pub trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + std::fmt::Debug
    + 'static
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// The nearest value of this type.
    fn of(v: f64) -> Self;
    /// The value as `f64`.
    fn f64(self) -> f64;
    /// e^x.
    fn exp(self) -> Self;
    /// e^x for `x <= 0` (or NaN): no overflow to handle.
    fn exp_nonpositive(self) -> Self;
    /// e^x - 1, accurate near 0.
    fn exp_m1(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// ln(1 + x), accurate near 0.
    fn ln_1p(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// The error function.
    fn erf(self) -> Self;
    /// `x·Φ(x)` (GELU with the exact normal CDF).
    fn gelu(self) -> Self;
    /// `ln(1 + e^x)`, without overflow.
    fn log1p_exp(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// x^n.
    fn powi(self, n: i32) -> Self;
    /// x^y.
    fn powf(self, y: Self) -> Self;
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
    /// `self · a + b` rounded once (IEEE's fused multiply-add): one instruction where the code is compiled
    /// for a target with one, a slow library call where not (see nn's `multiversion!`).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The larger value; NaN if either is NaN (PyTorch's `maximum`).
    #[inline(always)]
    fn max_nan(self, other: Self) -> Self {
        if self.is_nan() || other.is_nan() {
            return if self.is_nan() { self } else { other };
        }
        if self > other { self } else { other }
    }
    /// The smaller value; NaN if either is NaN (PyTorch's `minimum`).
    #[inline(always)]
    fn min_nan(self, other: Self) -> Self {
        if self.is_nan() || other.is_nan() {
            return if self.is_nan() { self } else { other };
        }
        if self < other { self } else { other }
    }
}

/// `Real` for a float type: its constants and conversions, then each unary function as the path given for it
/// (`fastmath`'s vectorisable ones for `f32`, the standard library's and libm's for `f64`).
macro_rules! real {
    ($t:ty { $($method:ident => $f:path),* $(,)? }) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn of(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn f64(self) -> f64 {
                self as f64
            }
            $(
                #[inline(always)]
                fn $method(self) -> Self {
                    $f(self)
                }
            )*
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                <$t>::powi(self, n)
            }
            #[inline(always)]
            fn powf(self, y: Self) -> Self {
                <$t>::powf(self, y)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
        }
    };
}

// f32 runs the vectorisable functions of `fastmath` (within 2 ulp); f64 the correctly rounded-ish libm ones.
real!(f32 {
    exp => fastmath::exp,
    exp_nonpositive => fastmath::exp_nonpositive,
    exp_m1 => fastmath::exp_m1,
    ln => fastmath::ln,
    ln_1p => fastmath::ln_1p,
    tanh => fastmath::tanh,
    erf => fastmath::erf,
    gelu => fastmath::gelu,
    log1p_exp => fastmath::log1p_exp,
    sqrt => f32::sqrt,
    abs => f32::abs,
});
real!(f64 {
    exp => f64::exp,
    exp_nonpositive => f64::exp,
    exp_m1 => f64::exp_m1,
    ln => f64::ln,
    ln_1p => f64::ln_1p,
    tanh => f64::tanh,
    erf => libm::erf,
    gelu => gelu_f64,
    log1p_exp => log1p_exp_f64,
    sqrt => f64::sqrt,
    abs => f64::abs,
});

/// `ln(1 + e^x)` in `f64`.
#[inline(always)]
fn log1p_exp_f64(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p() + if x.is_nan() { x } else { 0.0 }
}

/// PyTorch's GELU formula in `f64`.
#[inline(always)]
fn gelu_f64(x: f64) -> f64 {
    x * 0.5 * (1.0 + libm::erf(x * std::f64::consts::FRAC_1_SQRT_2))
}
