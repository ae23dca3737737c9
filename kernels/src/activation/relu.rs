//! ReLU: `x` where `x ≥ 0` (and NaN), else `0`; its gradient passes `dy` where `x > 0`.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// PyTorch's `relu`.
pub struct Relu;

#[cube]
impl Formula for Relu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let zero = Vector::new(C::new(0.0));
        select_many(x.less_than(&zero), zero, x)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let zero = Vector::new(C::new(0.0));
        select_many(x.less_equal(&zero), zero, dy)
    }
}

impl HostFormula for Relu {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        if x < R::ZERO { R::ZERO } else { x }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        if x <= R::ZERO { R::ZERO } else { dy }
    }
}
