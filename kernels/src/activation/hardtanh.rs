//! Hardtanh: `x` clamped to `[a, b]` (NaN passes); its gradient passes `dy` strictly inside (0 at NaN, as
//! PyTorch's vectorised kernel).

use cubecl::prelude::*;

use crate::formula::formula;
use crate::host::hardtanh;

formula! {
    /// PyTorch's `hardtanh(x, min_val = a, max_val = b)`.
    Hardtanh [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, a, b) {
        let lo = Vector::new(a);
        let hi = Vector::new(b);
        // NaN chosen explicitly: NVIDIA's Vulkan compiler turns the bare selects into a clamp, which drops it.
        let clamped = select_many(x.less_than(&lo), lo, select_many(x.greater_than(&hi), hi, x));
        select_many(x.is_nan(), x, clamped)
    }
    device fn backward(x, dy, a, b) {
        let inside = x.greater_than(&Vector::new(a)).vec_and(x.less_than(&Vector::new(b)));
        select_many(inside, dy, Vector::new(C::new(0.0)))
    }
    host fn forward(x, a, b) { hardtanh(x, R::of(a), R::of(b)) }
    host fn backward(x, dy, a, b) { if x > R::of(a) && x < R::of(b) { dy } else { R::ZERO } }
}
