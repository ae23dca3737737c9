//! The piecewise-linear gates: Hardsigmoid `clamp(x/6 + 1/2, 0, 1)` and Hardswish `x·hardsigmoid(x)`, with
//! PyTorch's gradients (Hardswish's at exactly 3 is `dy`, as PyTorch's vectorised kernel takes it).

use cubecl::prelude::*;

use crate::host::hardtanh;
use crate::{Formula, HostFormula, Real};

/// PyTorch's `hardsigmoid`.
pub struct Hardsigmoid;

#[cube]
impl Formula for Hardsigmoid {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let zero = Vector::new(C::new(0.0));
        let one = Vector::new(C::new(1.0));
        let v = x / Vector::new(C::new(6.0)) + Vector::new(C::new(0.5));
        select_many(
            x.less_equal(&Vector::new(C::new(-3.0))),
            zero,
            select_many(x.greater_equal(&Vector::new(C::new(3.0))), one, v),
        )
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let inside = x
            .greater_than(&Vector::new(C::new(-3.0)))
            .vec_and(x.less_than(&Vector::new(C::new(3.0))));
        select_many(inside, dy / Vector::new(C::new(6.0)), Vector::new(C::new(0.0)))
    }
}

impl HostFormula for Hardsigmoid {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        if x <= R::of(-3.0) {
            R::ZERO
        } else if x >= R::of(3.0) {
            R::ONE
        } else {
            x / R::of(6.0) + R::of(0.5)
        }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        if x > R::of(-3.0) && x < R::of(3.0) {
            dy * R::of(1.0 / 6.0)
        } else {
            R::ZERO
        }
    }
}

/// PyTorch's `hardswish`.
pub struct Hardswish;

#[cube]
impl Formula for Hardswish {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let three = Vector::new(C::new(3.0));
        let v = x * (x + three) / Vector::new(C::new(6.0));
        select_many(
            x.less_equal(&Vector::new(C::new(-3.0))),
            Vector::new(C::new(0.0)),
            select_many(x.greater_equal(&three), x, v),
        )
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let three = Vector::new(C::new(3.0));
        let middle = dy * (x / three + Vector::new(C::new(0.5)));
        select_many(
            x.less_than(&Vector::new(C::new(-3.0))),
            Vector::new(C::new(0.0)),
            select_many(x.greater_equal(&three), dy, middle),
        )
    }
}

impl HostFormula for Hardswish {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x * hardtanh(x + R::of(3.0), R::ZERO, R::of(6.0)) / R::of(6.0)
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        // At exactly x = 3, PyTorch's vectorised CPU kernel (what any tensor of more than a few elements runs)
        // takes `dy`, its scalar loop `1.5·dy`; the vectorised result is the one its users see.
        if x < R::of(-3.0) {
            R::ZERO
        } else if x >= R::of(3.0) {
            dy
        } else {
            dy * (x / R::of(3.0) + R::of(0.5))
        }
    }
}
