//! Hardshrink (`0` on `[-a, a]`, else `x`) and Softshrink (`x ∓ a` outside `[-a, a]`, else `0`); both
//! gradients pass `dy` outside `[-a, a]`.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// Whether `x` lies in `[-a, a]`.
#[cube]
fn inside<C: Float, N: Size>(x: Vector<C, N>, a: C) -> Vector<bool, N> {
    x.greater_equal(&Vector::new(-a)).vec_and(x.less_equal(&Vector::new(a)))
}

/// `dy` outside `[-a, a]`, else `0`.
#[cube]
fn shrink_backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C) -> Vector<C, N> {
    select_many(inside::<C, N>(x, a), Vector::new(C::new(0.0)), dy)
}

/// The host form of [`shrink_backward`].
#[inline(always)]
fn shrink_grad<R: Real>(x: R, dy: R, lambd: R) -> R {
    if x >= -lambd && x <= lambd { R::ZERO } else { dy }
}

/// PyTorch's `hardshrink(x, lambd = a)`.
pub struct Hardshrink;

#[cube]
impl Formula for Hardshrink {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        select_many(inside::<C, N>(x, a), Vector::new(C::new(0.0)), x)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        shrink_backward::<C, N>(x, dy, a)
    }
}

impl HostFormula for Hardshrink {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, _b: f64) -> R {
        if x >= -R::of(a) && x <= R::of(a) { R::ZERO } else { x }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, _b: f64) -> R {
        shrink_grad(x, dy, R::of(a))
    }
}

/// PyTorch's `softshrink(x, lambd = a)`.
pub struct Softshrink;

#[cube]
impl Formula for Softshrink {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        let l = Vector::new(a);
        select_many(
            x.greater_than(&l),
            x - l,
            select_many(x.less_than(&-l), x + l, Vector::new(C::new(0.0))),
        )
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        shrink_backward::<C, N>(x, dy, a)
    }
}

impl HostFormula for Softshrink {
    #[inline(always)]
    fn forward<R: Real>(x: R, a: f64, _b: f64) -> R {
        let l = R::of(a);
        if x > l {
            x - l
        } else if x < -l {
            x + l
        } else if x.is_nan() {
            x
        } else {
            R::ZERO
        }
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, a: f64, _b: f64) -> R {
        shrink_grad(x, dy, R::of(a))
    }
}
