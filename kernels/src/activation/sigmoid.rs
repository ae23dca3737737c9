//! Sigmoid `1/(1 + e^-x)`, and SiLU `x·sigmoid(x)`. Sigmoid's gradient reads the saved output `y`:
//! `dy·y·(1 - y)`, as PyTorch's does.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// `1/(1 + e^-x)`.
#[cube]
pub(crate) fn sigmoid<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let one = Vector::new(C::new(1.0));
    one / (one + (-x).exp())
}

/// PyTorch's `sigmoid`; [`Formula::backward`] takes the output.
pub struct Sigmoid;

#[cube]
impl Formula for Sigmoid {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        sigmoid::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy * (Vector::new(C::new(1.0)) - y) * y
    }
}

impl HostFormula for Sigmoid {
    const TRANSCENDENTAL: bool = true;
    const GRAD_FROM_OUTPUT: bool = true;

    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        R::ONE / (R::ONE + (-x).exp())
    }

    #[inline(always)]
    fn backward<R: Real>(y: R, dy: R, _a: f64, _b: f64) -> R {
        dy * (R::ONE - y) * y
    }
}

/// PyTorch's `silu`.
pub struct Silu;

#[cube]
impl Formula for Silu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x * sigmoid::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        // sigmoid(x)·(1 + x·sigmoid(-x)), both sigmoids from one e = exp(-|x|) (see the host form).
        let one = Vector::new(C::new(1.0));
        let e = (-x.abs()).exp();
        let d = one / (one + e);
        let positive = x.greater_equal(&Vector::new(C::new(0.0)));
        let s = select_many(positive, d, e * d);
        let s_neg = select_many(positive, e * d, d);
        dy * s * (one + x * s_neg)
    }
}

impl HostFormula for Silu {
    const TRANSCENDENTAL: bool = true;
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x / (R::ONE + (-x).exp())
    }

    /// `sigmoid(x)·(1 + x·(1 - sigmoid(x)))`, PyTorch's gradient, with `1 - sigmoid(x)` taken as `sigmoid(-x)`:
    /// both from `e = exp(-|x|)`, so neither cancels where `sigmoid(x)` rounds near 1 (x around 15 to 17 in
    /// f32, where `x·(1 - s)` would carry x times s's rounding).
    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        let e = (-x.abs()).exp();
        let d = R::ONE / (R::ONE + e);
        let (s, s_neg) = if x >= R::ZERO { (d, e * d) } else { (e * d, d) };
        dy * s * (R::ONE + x * s_neg)
    }
}
