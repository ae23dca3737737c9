//! GELU, tanh form: `x/2·(1 + tanh(β·(x + κx³)))`, and PyTorch's gradient of it.

use cubecl::prelude::*;

use super::tanh::tanh;
use crate::{Formula, HostFormula, Real};

/// `√(2/π)`.
const BETA: f32 = 0.797_884_6;
const KAPPA: f32 = 0.044_715;

/// PyTorch's `gelu(approximate='tanh')`.
pub struct GeluTanh;

#[cube]
impl Formula for GeluTanh {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let inner = Vector::new(C::new(BETA)) * (x + Vector::new(C::new(KAPPA)) * x * x * x);
        Vector::new(C::new(0.5)) * x * (Vector::new(C::new(1.0)) + tanh::<C, N>(inner))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let one = Vector::new(C::new(1.0));
        let half = Vector::new(C::new(0.5));
        let x_sq = x * x;
        let inner = Vector::new(C::new(BETA)) * (x + Vector::new(C::new(KAPPA)) * x_sq * x);
        let t = tanh::<C, N>(inner);
        let left_derivative = half * (one + t);
        let right_derivative =
            (one - t * t) * Vector::new(C::new(BETA)) * (one + Vector::new(C::new(3.0 * KAPPA)) * x_sq);
        dy * (left_derivative + half * x * right_derivative)
    }
}

impl HostFormula for GeluTanh {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        let inner = R::of(0.797_884_560_802_865_4) * (x + R::of(0.044715) * x * x * x);
        R::of(0.5) * x * (R::ONE + inner.tanh())
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        let (beta, kappa) = (R::of(0.797_884_560_802_865_4), R::of(0.044715));
        let x_sq = x * x;
        let t = (beta * (x + kappa * x_sq * x)).tanh();
        let left_derivative = R::of(0.5) * (R::ONE + t);
        let right_derivative = (R::ONE - t * t) * (beta * (R::ONE + R::of(3.0) * kappa * x_sq));
        dy * (left_derivative + R::of(0.5) * x * right_derivative)
    }
}
