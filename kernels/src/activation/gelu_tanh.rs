//! GELU, tanh form: `x/2·(1 + tanh(β·(x + κx³)))`, and PyTorch's gradient of it, written without cancellation.

use cubecl::prelude::*;

use super::tanh::tanh;
use crate::formula::formula;

/// `√(2/π)`.
const BETA: f32 = 0.797_884_6;
const KAPPA: f32 = 0.044_715;

formula! {
    /// PyTorch's `gelu(approximate='tanh')`.
    GeluTanh [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) {
        let inner = Vector::new(C::new(BETA)) * (x + Vector::new(C::new(KAPPA)) * x * x * x);
        Vector::new(C::new(0.5)) * x * (Vector::new(C::new(1.0)) + tanh::<C, N>(inner))
    }
    device fn backward(x, dy, _a, _b) {
        let one = Vector::new(C::new(1.0));
        let x_sq = x * x;
        let inner = Vector::new(C::new(BETA)) * (x + Vector::new(C::new(KAPPA)) * x_sq * x);
        // With e = exp(-2|u|) and s = 1/(1 + e): (1 + tanh u)/2 is s or e·s and 1 - tanh²u = 4·e·s², with
        // no cancellation where tanh u nears ±1 (see `backward_parts`).
        let e = (Vector::new(C::new(-2.0)) * inner.abs()).exp();
        let s = one / (one + e);
        let half_one_plus_t = select_many(inner.greater_equal(&Vector::new(C::new(0.0))), s, e * s);
        let slope = Vector::new(C::new(BETA)) * (one + Vector::new(C::new(3.0 * KAPPA)) * x_sq);
        dy * (half_one_plus_t + Vector::new(C::new(2.0)) * x * e * s * s * slope)
    }
    host fn forward(x, _a, _b) {
        let inner = R::of(0.797_884_560_802_865_4) * (x + R::of(0.044715) * x * x * x);
        R::of(0.5) * x * (R::ONE + inner.tanh())
    }
    // PyTorch's gradient, `(1 + t)/2 + x/2·(1 - t²)·β(1 + 3κx²)` with `t = tanh u`, `u = β(x + κx³)`, written
    // without its cancellation: with `e = exp(-2|u|)` and `s = 1/(1 + e)`, `(1 + t)/2` is `s` for `u ≥ 0` and
    // `e·s` below, and `1 - t² = 4·e·s²`. Where `t` rounds near ±1 (|x| around 3 to 5.5 in f32), PyTorch's
    // `1 - t·t` keeps one or two significant bits and its f32 result is up to 1.9e-6 from the true value;
    // this form stays within 1e-6 of it.
    host fn backward(x, dy, _a, _b) {
        let (beta, kappa) = (R::of(0.797_884_560_802_865_4), R::of(0.044715));
        let x_sq = x * x;
        let inner = beta * (x + kappa * x_sq * x);
        let e = (R::of(-2.0) * inner.abs()).exp();
        let s = R::ONE / (R::ONE + e);
        let half_one_plus_t = if inner >= R::ZERO { s } else { e * s };
        let slope = beta * (R::ONE + R::of(3.0) * kappa * x_sq);
        dy * (half_one_plus_t + R::of(2.0) * x * e * s * s * slope)
    }
}
