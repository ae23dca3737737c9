//! Element-wise math as [`Formula`]s, forward and backward side by side (PyTorch's derivatives.yaml): `exp`,
//! `log`, `sqrt`, `abs`, `reciprocal`, `erf`, `pow` by a scalar and `clamp`. They run through the activations'
//! element-wise kernels ([`forward`](crate::activation::forward), [`backward`](crate::activation::backward)).

use cubecl::prelude::*;
// The formulas below are named as these traits are; the traits stay in scope for their methods.
use cubecl::prelude::{Abs as _, Erf as _, Log as _, Sqrt as _};

use crate::math::exp_reduced;
use crate::{Formula, HostFormula, Real};

/// `e^x`; its gradient `dy·e^x` reads the saved output.
pub struct Exp;

#[cube]
impl Formula for Exp {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        exp_reduced::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy * y
    }
}

impl HostFormula for Exp {
    const TRANSCENDENTAL: bool = true;
    const GRAD_FROM_OUTPUT: bool = true;

    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x.exp()
    }

    #[inline(always)]
    fn backward<R: Real>(y: R, dy: R, _a: f64, _b: f64) -> R {
        dy * y
    }
}

/// The natural logarithm; its gradient `dy / x`.
pub struct Log;

#[cube]
impl Formula for Log {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x.ln()
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy / x
    }
}

impl HostFormula for Log {
    const TRANSCENDENTAL: bool = true;
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x.ln()
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        dy / x
    }
}

/// `√x`; its gradient `dy / (2√x)` reads the saved output.
pub struct Sqrt;

#[cube]
impl Formula for Sqrt {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x.sqrt()
    }

    fn backward<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy / (y * Vector::new(C::new(2.0)))
    }
}

impl HostFormula for Sqrt {
    const GRAD_FROM_OUTPUT: bool = true;

    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x.sqrt()
    }

    #[inline(always)]
    fn backward<R: Real>(y: R, dy: R, _a: f64, _b: f64) -> R {
        dy / (y * R::of(2.0))
    }
}

/// `|x|`; its gradient `dy·sgn(x)` (zero at zero).
pub struct Abs;

#[cube]
impl Formula for Abs {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x.abs()
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let zero = Vector::new(C::new(0.0));
        select_many(x.greater_than(&zero), dy, select_many(x.less_than(&zero), -dy, zero))
    }
}

impl HostFormula for Abs {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x.abs()
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        if x > R::ZERO {
            dy
        } else if x < R::ZERO {
            -dy
        } else {
            R::ZERO
        }
    }
}

/// `1 / x`; its gradient `-dy·y²` reads the saved output.
pub struct Recip;

#[cube]
impl Formula for Recip {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        Vector::new(C::new(1.0)) / x
    }

    fn backward<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        -dy * y * y
    }
}

impl HostFormula for Recip {
    const GRAD_FROM_OUTPUT: bool = true;

    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        R::ONE / x
    }

    #[inline(always)]
    fn backward<R: Real>(y: R, dy: R, _a: f64, _b: f64) -> R {
        -dy * y * y
    }
}

/// The error function; its gradient `dy·2/√π·e^{-x²}`.
pub struct Erf;

#[cube]
impl Formula for Erf {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x.erf()
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy * Vector::new(C::new(core::f32::consts::FRAC_2_SQRT_PI)) * exp_reduced::<C, N>(-(x * x))
    }
}

impl HostFormula for Erf {
    const TRANSCENDENTAL: bool = true;
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x.erf()
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        dy * R::of(std::f64::consts::FRAC_2_SQRT_PI) * (-(x * x)).exp()
    }
}

/// `x^a` for a scalar exponent `a` (a negative base with an integer exponent as in exact arithmetic); its
/// gradient `dy·a·x^(a-1)`, zero for `a = 0`.
pub struct Pow;

/// `x^a` with the sign a negative `x` takes for an integer `a`; NaN for a negative `x` and another `a`.
#[cube]
fn signed_pow<C: Float, N: Size>(x: Vector<C, N>, a: C) -> Vector<C, N> {
    let zero = Vector::new(C::new(0.0));
    let exponent = Vector::new(a);
    let magnitude = x.abs().powf(exponent);
    let integer = a == a.floor();
    let half = a * C::new(0.5);
    let odd = integer && half != half.floor();
    let negative = x.less_than(&zero);
    let mut signed = magnitude;
    if odd {
        signed = -magnitude;
    }
    let mut out = select_many(negative, x.powf(exponent), magnitude);
    if integer {
        out = select_many(negative, signed, magnitude);
    }
    out
}

#[cube]
impl Formula for Pow {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        signed_pow::<C, N>(x, a)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        let mut dx = Vector::new(C::new(0.0));
        if a != C::new(0.0) {
            dx = dy * Vector::new(a) * signed_pow::<C, N>(x, a - C::new(1.0));
        }
        dx
    }
}

impl HostFormula for Pow {
    const TRANSCENDENTAL: bool = true;
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, _b: f64) -> R {
        x.powf(R::of(a))
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, _b: f64) -> R {
        if a == 0.0 {
            R::ZERO
        } else {
            dy * R::of(a) * x.powf(R::of(a - 1.0))
        }
    }
}

/// `x` limited to `[a, b]` (NaN passes); its gradient passes `dy` where `a ≤ x ≤ b` (PyTorch's `clamp`, ends
/// included, unlike `hardtanh`).
pub struct Clamp;

#[cube]
impl Formula for Clamp {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, b: C) -> Vector<C, N> {
        let lo = Vector::new(a);
        let hi = Vector::new(b);
        select_many(x.less_than(&lo), lo, select_many(x.greater_than(&hi), hi, x))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, b: C) -> Vector<C, N> {
        let zero = Vector::new(C::new(0.0));
        let below_top = select_many(x.less_equal(&Vector::new(b)), dy, zero);
        select_many(x.greater_equal(&Vector::new(a)), below_top, zero)
    }
}

impl HostFormula for Clamp {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, b: f64) -> R {
        if x.is_nan() {
            x
        } else {
            crate::host::hardtanh(x, R::of(a), R::of(b))
        }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, b: f64) -> R {
        if x >= R::of(a) && x <= R::of(b) { dy } else { R::ZERO }
    }
}
