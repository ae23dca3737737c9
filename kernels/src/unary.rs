//! Element-wise math as [`Formula`]s, forward and backward side by side (PyTorch's derivatives.yaml): `exp`,
//! `expm1`, `log`, `log1p`, `log2`, `log10`, `sqrt`, `rsqrt`, `abs`, `sign`, `reciprocal`, `erf`, `sin`,
//! `cos`, `tan`, `floor`, `ceil`, `round`, `trunc`, `pow` by a scalar and `clamp` (and Rprop's sign factor).
//! They run through the activations' element-wise kernels ([`forward`](crate::activation::forward),
//! [`backward`](crate::activation::backward)).

use cubecl::prelude::*;
// The formulas below are named as these traits are; the traits stay in scope for their methods.
use cubecl::prelude::{
    Abs as _, Ceil as _, Cos as _, Erf as _, Expm1 as _, Floor as _, Log as _, Sin as _, Sqrt as _, Tan as _,
    Trunc as _,
};

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
    Abs [PIECEWISE_LINEAR];
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
    Sign [PIECEWISE_LINEAR];
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
    Clamp [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, a, b) { <Hardtanh as Formula>::forward::<C, N>(x, a, b) }
    device fn backward(x, dy, a, b) {
        let zero = Vector::new(C::new(0.0));
        let below_top = select_many(x.less_equal(&Vector::new(b)), dy, zero);
        select_many(x.greater_equal(&Vector::new(a)), below_top, zero)
    }
    host fn forward(x, a, b) { crate::host::hardtanh(x, R::of(a), R::of(b)) }
    host fn backward(x, dy, a, b) { if x >= R::of(a) && x <= R::of(b) { dy } else { R::ZERO } }
}

formula! {
    /// `1 / √x`; its gradient `-dy·y³/2` reads the saved output.
    Rsqrt [GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { x.inverse_sqrt() }
    device fn backward(y, dy, _a, _b) { -dy * y * y * y * Vector::new(C::new(0.5)) }
    host fn forward(x, _a, _b) { R::ONE / x.sqrt() }
    host fn backward(y, dy, _a, _b) { -dy * y * y * y * R::of(0.5) }
}

formula! {
    /// `ln(1 + x)`, accurate near 0; its gradient `dy / (1 + x)`.
    Log1p [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) {
        // Kahan's `ln(u)·x/(u - 1)` with `u = 1 + x` (backends' own `log1p` is inexact or wrong near -1): exact
        // where `u` rounds to 1, and infinite `u` kept.
        let one = Vector::new(C::new(1.0));
        let u = x + one;
        let d = u - one;
        let scaled = u.ln() * (x / d);
        let zero = Vector::new(C::new(0.0));
        // `ln(0)` is undefined in the shading languages: at `x = -1` (`u = 0`) the result is `x / u = -inf`,
        // computed (a folded constant would be a literal WGSL cannot spell).
        let at_minus_one = x / u;
        let result = select_many(d.equal(&zero), x, select_many(u.equal(&x), u.ln(), scaled));
        select_many(u.equal(&zero), at_minus_one, result)
    }
    device fn backward(x, dy, _a, _b) { dy / (x + Vector::new(C::new(1.0))) }
    host fn forward(x, _a, _b) { x.ln_1p() }
    host fn backward(x, dy, _a, _b) { dy / (x + R::ONE) }
}

formula! {
    /// `e^x - 1`, accurate near 0; its gradient `dy·(y + 1)` reads the saved output.
    Expm1 [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { x.exp_m1() }
    device fn backward(y, dy, _a, _b) { dy * (y + Vector::new(C::new(1.0))) }
    host fn forward(x, _a, _b) { x.exp_m1() }
    host fn backward(y, dy, _a, _b) { dy * (y + R::ONE) }
}

formula! {
    /// The base-2 logarithm; its gradient `dy / (x·ln 2)`.
    Log2 [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x.ln() * Vector::new(C::new(core::f32::consts::LOG2_E)) }
    device fn backward(x, dy, _a, _b) { dy / (x * Vector::new(C::new(core::f32::consts::LN_2))) }
    host fn forward(x, _a, _b) { R::of(x.f64().log2()) }
    host fn backward(x, dy, _a, _b) { dy / (x * R::of(std::f64::consts::LN_2)) }
}

formula! {
    /// The base-10 logarithm; its gradient `dy / (x·ln 10)`.
    Log10 [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x.ln() * Vector::new(C::new(core::f32::consts::LOG10_E)) }
    device fn backward(x, dy, _a, _b) { dy / (x * Vector::new(C::new(core::f32::consts::LN_10))) }
    host fn forward(x, _a, _b) { R::of(x.f64().log10()) }
    host fn backward(x, dy, _a, _b) { dy / (x * R::of(std::f64::consts::LN_10)) }
}

formula! {
    /// The sine; its gradient `dy·cos x`.
    Sin [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x.sin() }
    device fn backward(x, dy, _a, _b) { dy * x.cos() }
    host fn forward(x, _a, _b) { R::of(x.f64().sin()) }
    host fn backward(x, dy, _a, _b) { dy * R::of(x.f64().cos()) }
}

formula! {
    /// The cosine; its gradient `-dy·sin x`.
    Cos [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x.cos() }
    device fn backward(x, dy, _a, _b) { -dy * x.sin() }
    host fn forward(x, _a, _b) { R::of(x.f64().cos()) }
    host fn backward(x, dy, _a, _b) { -dy * R::of(x.f64().sin()) }
}

formula! {
    /// The tangent; its gradient `dy·(1 + y²)` reads the saved output.
    Tan [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { x.tan() }
    device fn backward(y, dy, _a, _b) { dy * (Vector::new(C::new(1.0)) + y * y) }
    host fn forward(x, _a, _b) { R::of(x.f64().tan()) }
    host fn backward(y, dy, _a, _b) { dy * (R::ONE + y * y) }
}

formula! {
    /// The largest integer not above `x`; its gradient zero.
    Floor [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) { x.floor() }
    device fn backward(_x, _dy, _a, _b) { Vector::new(C::new(0.0)) }
    host fn forward(x, _a, _b) { R::of(x.f64().floor()) }
    host fn backward(_x, _dy, _a, _b) { R::ZERO }
}

formula! {
    /// The smallest integer not below `x`; its gradient zero.
    Ceil [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) { x.ceil() }
    device fn backward(_x, _dy, _a, _b) { Vector::new(C::new(0.0)) }
    host fn forward(x, _a, _b) { R::of(x.f64().ceil()) }
    host fn backward(_x, _dy, _a, _b) { R::ZERO }
}

formula! {
    /// `x` without its fraction (toward zero); its gradient zero.
    Trunc [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) { x.trunc() }
    device fn backward(_x, _dy, _a, _b) { Vector::new(C::new(0.0)) }
    host fn forward(x, _a, _b) { R::of(x.f64().trunc()) }
    host fn backward(_x, _dy, _a, _b) { R::ZERO }
}

formula! {
    /// The nearest integer, halves to the even one (PyTorch's `round`, IEEE's default); its gradient zero.
    /// On devices it is written out from `floor`, since backends round halves differently.
    Round [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) {
        let half = Vector::new(C::new(0.5));
        let one = Vector::new(C::new(1.0));
        let down = x.floor();
        // `x - floor(x)` is exact; where it is a half, the even neighbour is the one whose half is whole.
        let fraction = x - down;
        let down_is_odd = (down * half).floor().not_equal(&(down * half));
        let tie_up = select_many(down_is_odd, down + one, down);
        let rounded = select_many(fraction.greater_than(&half), down + one, select_many(fraction.equal(&half), tie_up, down));
        // A zero result keeps `x`'s sign (`round(-0.4) = -0`).
        let zero = Vector::new(C::new(0.0));
        select_many(rounded.equal(&zero), x * zero, rounded)
    }
    device fn backward(_x, _dy, _a, _b) { Vector::new(C::new(0.0)) }
    host fn forward(x, _a, _b) { R::of(x.f64().round_ties_even()) }
    host fn backward(_x, _dy, _a, _b) { R::ZERO }
}
