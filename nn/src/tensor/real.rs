//! [`Real`]: the two float types math runs in. `f16` and `bf16` tensors compute in `f32` and round the result,
//! as PyTorch's CPU kernels do.

use std::ops::{Add, Div, Mul, Neg, Sub};

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
    ($t:ty, $erf:path) => {
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
                <$t>::exp(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
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
real!(f32, libm::erff);
real!(f64, libm::erf);
