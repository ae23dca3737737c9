//! ReLU: `x` where `x ≥ 0` (and NaN), else `0`; its gradient passes `dy` where `x > 0`.

use cubecl::prelude::*;

use crate::Formula;

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
