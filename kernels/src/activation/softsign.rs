//! Softsign `x/(1 + |x|)`; its gradient `dy/(1 + |x|)²`.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// PyTorch's `softsign`.
pub struct Softsign;

#[cube]
impl Formula for Softsign {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x / (Vector::new(C::new(1.0)) + x.abs())
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let d = Vector::new(C::new(1.0)) + x.abs();
        dy / (d * d)
    }
}

impl HostFormula for Softsign {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x / (R::ONE + x.abs())
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        // PyTorch differentiates `x / (|x| + 1)` through the division and `abs`.
        let d = x.abs() + R::ONE;
        let sign = if x > R::ZERO {
            R::ONE
        } else if x < R::ZERO {
            -R::ONE
        } else {
            R::ZERO
        };
        dy / d + -dy * (x / d / d) * sign
    }
}
