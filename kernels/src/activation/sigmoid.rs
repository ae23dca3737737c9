//! Sigmoid `1/(1 + e^-x)`, and SiLU `x·sigmoid(x)`. Sigmoid's gradient reads the saved output `y`:
//! `dy·y·(1 - y)`, as PyTorch's does.

use cubecl::prelude::*;

use crate::{Formula, HostFormula, Real};

/// `1/(1 + e^-x)`.
#[cube]
pub(crate) fn sigmoid<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let one = Vector::new(C::new(1.0));
    one / (one + (-x).exp())
}

/// PyTorch's `sigmoid`; [`Formula::backward`] takes the output.
pub struct Sigmoid;

#[cube]
impl Formula for Sigmoid {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        sigmoid::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy * (Vector::new(C::new(1.0)) - y) * y
    }
}

impl HostFormula for Sigmoid {
    const GRAD_FROM_OUTPUT: bool = true;

    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        R::ONE / (R::ONE + (-x).exp())
    }

    #[inline(always)]
    fn backward<R: Real>(y: R, dy: R, _a: f64, _b: f64) -> R {
        dy * (R::ONE - y) * y
    }
}

/// PyTorch's `silu`.
pub struct Silu;

#[cube]
impl Formula for Silu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x * sigmoid::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let one = Vector::new(C::new(1.0));
        let s = sigmoid::<C, N>(x);
        dy * s * (one + x * (one - s))
    }
}

impl HostFormula for Silu {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        x / (R::ONE + (-x).exp())
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        let sigmoid = R::ONE / (R::ONE + (-x).exp());
        dy * sigmoid * (R::ONE + x * (R::ONE - sigmoid))
    }
}
