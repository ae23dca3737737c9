//! Element-wise math as [`Formula`]s, forward and backward side by side (PyTorch's derivatives.yaml): `exp`,
//! `log`, `sqrt`, `abs`, `sign`, `reciprocal`, `erf`, `pow` by a scalar and `clamp` (and Rprop's sign factor). They run through the activations'
//! element-wise kernels ([`forward`](crate::activation::forward), [`backward`](crate::activation::backward)).

use cubecl::prelude::*;
// The formulas below are named as these traits are; the traits stay in scope for their methods.
use cubecl::prelude::{Abs as _, Erf as _, Log as _, Sqrt as _};

use crate::activation::Hardtanh;
use crate::formula::formula;
use crate::math::exp_reduced;
use crate::{Formula, HostFormula, Real};

formula! {
    /// `e^x`; its gradient `dy·e^x` reads the saved output.
    Exp [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { exp_reduced::<C, N>(x) }
    device fn backward(y, dy, _a, _b) { dy * y }
    host fn forward(x, _a, _b) { x.exp() }
    host fn backward(y, dy, _a, _b) { dy * y }
}

formula! {
    /// The natural logarithm; its gradient `dy / x`.
    Log [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x.ln() }
    device fn backward(x, dy, _a, _b) { dy / x }
    host fn forward(x, _a, _b) { x.ln() }
    host fn backward(x, dy, _a, _b) { dy / x }
}

formula! {
    /// `√x`; its gradient `dy / (2√x)` reads the saved output.
    Sqrt [GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { x.sqrt() }
    device fn backward(y, dy, _a, _b) { dy / (y * Vector::new(C::new(2.0))) }
    host fn forward(x, _a, _b) { x.sqrt() }
    host fn backward(y, dy, _a, _b) { dy / (y * R::of(2.0)) }
}

formula! {
    /// `|x|`; its gradient `dy·sgn(x)` (zero at zero).
    Abs [];
    #[cube] device fn forward(x, _a, _b) { x.abs() }
    device fn backward(x, dy, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        select_many(x.greater_than(&zero), dy, select_many(x.less_than(&zero), -dy, zero))
    }
    host fn forward(x, _a, _b) { x.abs() }
    host fn backward(x, dy, _a, _b) {
        if x > R::ZERO {
            dy
        } else if x < R::ZERO {
            -dy
        } else {
            R::ZERO
        }
    }
}

formula! {
    /// PyTorch's `sign` on the CPU: 1 above zero, -1 below, 0 at ±0 and NaN; its gradient zero.
    Sign [];
    #[cube] device fn forward(x, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        let one = Vector::new(C::new(1.0));
        select_many(x.greater_than(&zero), one, zero) - select_many(x.less_than(&zero), one, zero)
    }
    device fn backward(_x, _dy, _a, _b) { Vector::new(C::new(0.0)) }
    host fn forward(x, _a, _b) {
        if x > R::ZERO {
            R::ONE
        } else if x < R::ZERO {
            -R::ONE
        } else {
            R::ZERO
        }
    }
    host fn backward(_x, _dy, _a, _b) { R::ZERO }
}

formula! {
    /// `a` above zero, `b` below, 1 at ±0 and NaN: Rprop's step-size factor read off the sign of `g·prev`
    /// (PyTorch's `sign` then its three masked fills); its gradient zero.
    SignFactor [];
    #[cube] device fn forward(x, a, b) {
        let zero = Vector::new(C::new(0.0));
        let below = select_many(x.less_than(&zero), Vector::new(b), Vector::new(C::new(1.0)));
        select_many(x.greater_than(&zero), Vector::new(a), below)
    }
    device fn backward(_x, _dy, _a, _b) { Vector::new(C::new(0.0)) }
    host fn forward(x, a, b) {
        if x > R::ZERO {
            R::of(a)
        } else if x < R::ZERO {
            R::of(b)
        } else {
            R::ONE
        }
    }
    host fn backward(_x, _dy, _a, _b) { R::ZERO }
}

formula! {
    /// `1 / x`; its gradient `-dy·y²` reads the saved output.
    Recip [GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { Vector::new(C::new(1.0)) / x }
    device fn backward(y, dy, _a, _b) { -dy * y * y }
    host fn forward(x, _a, _b) { R::ONE / x }
    host fn backward(y, dy, _a, _b) { -dy * y * y }
}

formula! {
    /// The error function; its gradient `dy·2/√π·e^{-x²}`.
    Erf [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x.erf() }
    device fn backward(x, dy, _a, _b) {
        dy * Vector::new(C::new(core::f32::consts::FRAC_2_SQRT_PI)) * exp_reduced::<C, N>(-(x * x))
    }
    host fn forward(x, _a, _b) { x.erf() }
    host fn backward(x, dy, _a, _b) { dy * R::of(std::f64::consts::FRAC_2_SQRT_PI) * (-(x * x)).exp() }
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

formula! {
    /// `x` limited to `[a, b]` (NaN passes); its gradient passes `dy` where `a ≤ x ≤ b` (PyTorch's `clamp`, ends
    /// included, unlike `hardtanh`).
    Clamp [];
    #[cube] device fn forward(x, a, b) { <Hardtanh as Formula>::forward::<C, N>(x, a, b) }
    device fn backward(x, dy, a, b) {
        let zero = Vector::new(C::new(0.0));
        let below_top = select_many(x.less_equal(&Vector::new(b)), dy, zero);
        select_many(x.greater_equal(&Vector::new(a)), below_top, zero)
    }
    host fn forward(x, a, b) { crate::host::hardtanh(x, R::of(a), R::of(b)) }
    host fn backward(x, dy, a, b) { if x >= R::of(a) && x <= R::of(b) { dy } else { R::ZERO } }
}
