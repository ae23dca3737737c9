//! Hardshrink (`0` on `[-a, a]`, else `x`) and Softshrink (`x ∓ a` outside `[-a, a]`, else `0`, NaN too);
//! both gradients pass `dy` outside `[-a, a]` (0 at NaN, as PyTorch's vectorised kernels).

use cubecl::prelude::*;

use crate::Real;
use crate::formula::formula;

/// Whether `x` lies in `[-a, a]`.
#[cube]
fn inside<C: Float, N: Size>(x: Vector<C, N>, a: C) -> Vector<bool, N> {
    x.greater_equal(&Vector::new(-a)).vec_and(x.less_equal(&Vector::new(a)))
}

/// `dy` outside `[-a, a]`, else (NaN too) `0`.
#[cube]
fn shrink_backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C) -> Vector<C, N> {
    let outside = x.less_than(&Vector::new(-a)).or(x.greater_than(&Vector::new(a)));
    select_many(outside, dy, Vector::new(C::new(0.0)))
}

/// The host form of [`shrink_backward`].
#[inline(always)]
fn shrink_grad<R: Real>(x: R, dy: R, lambd: R) -> R {
    if x < -lambd || x > lambd { dy } else { R::ZERO }
}

formula! {
    /// PyTorch's `hardshrink(x, lambd = a)`.
    Hardshrink [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, a, _b) { select_many(inside::<C, N>(x, a), Vector::new(C::new(0.0)), x) }
    device fn backward(x, dy, a, _b) { shrink_backward::<C, N>(x, dy, a) }
    host fn forward(x, a, _b) { if x >= -R::of(a) && x <= R::of(a) { R::ZERO } else { x } }
    host fn backward(x, dy, a, _b) { shrink_grad(x, dy, R::of(a)) }
}

formula! {
    /// PyTorch's `softshrink(x, lambd = a)`.
    Softshrink [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, a, _b) {
        let l = Vector::new(a);
        select_many(
            x.greater_than(&l),
            x - l,
            select_many(x.less_than(&-l), x + l, Vector::new(C::new(0.0))),
        )
    }
    device fn backward(x, dy, a, _b) { shrink_backward::<C, N>(x, dy, a) }
    host fn forward(x, a, _b) {
        let l = R::of(a);
        if x > l {
            x - l
        } else if x < -l {
            x + l
        } else {
            R::ZERO
        }
    }
    host fn backward(x, dy, a, _b) { shrink_grad(x, dy, R::of(a)) }
}
