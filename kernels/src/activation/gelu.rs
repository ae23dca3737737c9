//! GELU with the exact normal CDF: `x·Φ(x) = x/2·(1 + erf(x/√2))`, and its gradient `Φ(x) + x·φ(x)`.

use cubecl::prelude::*;

use crate::formula::formula;

formula! {
    /// PyTorch's `gelu(approximate='none')`.
    Gelu [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) {
        let half = Vector::new(C::new(0.5));
        let one = Vector::new(C::new(1.0));
        x * half * (one + (x * Vector::new(C::new(core::f32::consts::FRAC_1_SQRT_2))).erf())
    }
    device fn backward(x, dy, _a, _b) {
        let half = Vector::new(C::new(0.5));
        let one = Vector::new(C::new(1.0));
        let cdf = half * (one + (x * Vector::new(C::new(core::f32::consts::FRAC_1_SQRT_2))).erf());
        let pdf = (Vector::new(C::new(-0.5)) * x * x).exp() * Vector::new(C::new(0.398_942_3));
        dy * (cdf + x * pdf)
    }
    host fn forward(x, _a, _b) { x.gelu() }
    host fn backward(x, dy, _a, _b) {
        let cdf = R::of(0.5) * (R::ONE + (x * R::of(std::f64::consts::FRAC_1_SQRT_2)).erf());
        let pdf = (R::of(-0.5) * x * x).exp() * R::of(0.398_942_280_401_432_7);
        dy * (cdf + x * pdf)
    }
}
