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

macro_rules! real {
    ($t:ty, $exp:path, $exp_nonpositive:path, $exp_m1:path, $ln:path, $ln_1p:path, $tanh:path, $erf:path, $gelu:path, $log1p_exp:path) => {
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
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn exp_nonpositive(self) -> Self {
                $exp_nonpositive(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                $exp_m1(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $ln(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                $ln_1p(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn gelu(self) -> Self {
                $gelu(self)
            }
            #[inline(always)]
            fn log1p_exp(self) -> Self {
                $log1p_exp(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
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
        }
    };
}
// f32 runs the vectorisable functions of `fastmath` (within 2 ulp); f64 the correctly rounded-ish libm ones.
real!(
    f32,
    fastmath::exp,
    fastmath::exp_nonpositive,
    fastmath::exp_m1,
    fastmath::ln,
    fastmath::ln_1p,
    fastmath::tanh,
    fastmath::erf,
    fastmath::gelu,
    fastmath::log1p_exp
);
real!(
    f64,
    f64::exp,
    f64::exp,
    f64::exp_m1,
    f64::ln,
    f64::ln_1p,
    f64::tanh,
    libm::erf,
    gelu_f64,
    log1p_exp_f64
);

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
