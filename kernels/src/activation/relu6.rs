//! ReLU6 (`hardtanh(x, 0, 6)`): `x` clamped to `[0, 6]`; its gradient passes `dy` strictly inside.

use cubecl::prelude::*;

use super::hardtanh::Hardtanh;
use crate::Formula;
use crate::formula::formula;
use crate::host::hardtanh;

formula! {
    /// PyTorch's `relu6`.
    Relu6 [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) { <Hardtanh as Formula>::forward::<C, N>(x, C::new(0.0), C::new(6.0)) }
    device fn backward(x, dy, _a, _b) { <Hardtanh as Formula>::backward::<C, N>(x, dy, C::new(0.0), C::new(6.0)) }
    host fn forward(x, _a, _b) { hardtanh(x, R::ZERO, R::of(6.0)) }
    host fn backward(x, dy, _a, _b) { if x > R::ZERO && x < R::of(6.0) { dy } else { R::ZERO } }
}
