//! LeakyReLU: `x` where `x > 0`, else `a·x`; its gradient `dy` or `a·dy`.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// PyTorch's `leaky_relu(x, negative_slope = a)`.
pub struct LeakyRelu;

#[cube]
impl Formula for LeakyRelu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        select_many(x.greater_than(&Vector::new(C::new(0.0))), x, x * Vector::new(a))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        select_many(x.greater_than(&Vector::new(C::new(0.0))), dy, dy * Vector::new(a))
    }
}

impl HostFormula for LeakyRelu {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, _b: f64) -> R {
        if x > R::ZERO { x } else { x * R::of(a) }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, _b: f64) -> R {
        if x > R::ZERO { dy } else { dy * R::of(a) }
    }
}
