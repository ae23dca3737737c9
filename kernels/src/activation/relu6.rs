//! ReLU6 (`hardtanh(x, 0, 6)`): `x` clamped to `[0, 6]`; its gradient passes `dy` strictly inside.

use cubecl::prelude::*;

use super::hardtanh::Hardtanh;
use crate::host::hardtanh;
use crate::{Formula, HostFormula, Real};

/// PyTorch's `relu6`.
pub struct Relu6;

#[cube]
impl Formula for Relu6 {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        <Hardtanh as Formula>::forward::<C, N>(x, C::new(0.0), C::new(6.0))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        <Hardtanh as Formula>::backward::<C, N>(x, dy, C::new(0.0), C::new(6.0))
    }
}

impl HostFormula for Relu6 {
    #[inline(always)]
    fn forward<R: Real>(x: R, _a: f64, _b: f64) -> R {
        hardtanh(x, R::ZERO, R::of(6.0))
    }

    #[inline(always)]
    fn backward<R: Real>(x: R, dy: R, _a: f64, _b: f64) -> R {
        if x <= R::ZERO || x >= R::of(6.0) { R::ZERO } else { dy }
    }
}
