//! Threshold: `b` where `x ≤ a`, else `x`; its gradient `0` where `x ≤ a`, else `dy`.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// PyTorch's `threshold(x, threshold = a, value = b)`.
pub struct Threshold;

#[cube]
impl Formula for Threshold {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, b: C) -> Vector<C, N> {
        select_many(x.less_equal(&Vector::new(a)), Vector::new(b), x)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        select_many(x.less_equal(&Vector::new(a)), Vector::new(C::new(0.0)), dy)
    }
}

impl HostFormula for Threshold {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, b: f64) -> R {
        if x > R::of(a) || x.is_nan() { x } else { R::of(b) }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, _b: f64) -> R {
        if x <= R::of(a) { R::ZERO } else { dy }
    }
}
