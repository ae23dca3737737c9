//! Hardtanh: `x` clamped to `[a, b]` (NaN passes); its gradient passes `dy` strictly inside.

use cubecl::prelude::*;

use crate::host::hardtanh;
use crate::{Formula, HostFormula, Real};

/// PyTorch's `hardtanh(x, min_val = a, max_val = b)`.
pub struct Hardtanh;

#[cube]
impl Formula for Hardtanh {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, b: C) -> Vector<C, N> {
        let lo = Vector::new(a);
        let hi = Vector::new(b);
        select_many(x.less_than(&lo), lo, select_many(x.greater_than(&hi), hi, x))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, b: C) -> Vector<C, N> {
        let outside = x.less_equal(&Vector::new(a)).or(x.greater_equal(&Vector::new(b)));
        select_many(outside, Vector::new(C::new(0.0)), dy)
    }
}

impl HostFormula for Hardtanh {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, b: f64) -> R {
        hardtanh(x, R::of(a), R::of(b))
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, b: f64) -> R {
        if x <= R::of(a) || x >= R::of(b) { R::ZERO } else { dy }
    }
}
