//! LeakyReLU: `x` where `x > 0`, else `a·x`; its gradient `dy` or `a·dy`.

use cubecl::prelude::*;

use crate::Formula;

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
