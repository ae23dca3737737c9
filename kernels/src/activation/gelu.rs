//! GELU with the exact normal CDF: `x·Φ(x) = x/2·(1 + erf(x/√2))`, and its gradient `Φ(x) + x·φ(x)`.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// PyTorch's `gelu(approximate='none')`.
pub struct Gelu;

#[cube]
impl Formula for Gelu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let half = Vector::new(C::new(0.5));
        let one = Vector::new(C::new(1.0));
        x * half * (one + (x * Vector::new(C::new(core::f32::consts::FRAC_1_SQRT_2))).erf())
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let half = Vector::new(C::new(0.5));
        let one = Vector::new(C::new(1.0));
        let cdf = half * (one + (x * Vector::new(C::new(core::f32::consts::FRAC_1_SQRT_2))).erf());
        let pdf = (Vector::new(C::new(-0.5)) * x * x).exp() * Vector::new(C::new(0.398_942_3));
        dy * (cdf + x * pdf)
    }
}

impl HostFormula for Gelu {
    const TRANSCENDENTAL: bool = true;
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x.gelu()
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        let cdf = R::of(0.5) * (R::ONE + (x * R::of(std::f64::consts::FRAC_1_SQRT_2)).erf());
        let pdf = (R::of(-0.5) * x * x).exp() * R::of(0.398_942_280_401_432_7);
        dy * (cdf + x * pdf)
    }
}
