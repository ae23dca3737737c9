//! Softsign `x/(1 + |x|)`; its gradient `dy/(1 + |x|)²`.

use cubecl::prelude::*;

use crate::Formula;

/// PyTorch's `softsign`.
pub struct Softsign;

#[cube]
impl Formula for Softsign {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x / (Vector::new(C::new(1.0)) + x.abs())
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let d = Vector::new(C::new(1.0)) + x.abs();
        dy / (d * d)
    }
}
