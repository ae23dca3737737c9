//! ReLU6 (`hardtanh(x, 0, 6)`): `x` clamped to `[0, 6]`; its gradient passes `dy` strictly inside.

use cubecl::prelude::*;

use super::hardtanh::Hardtanh;
use crate::Formula;

/// PyTorch's `relu6`.
pub struct Relu6;

#[cube]
impl Formula for Relu6 {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        Hardtanh::forward::<C, N>(x, C::new(0.0), C::new(6.0))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        Hardtanh::backward::<C, N>(x, dy, C::new(0.0), C::new(6.0))
    }
}
