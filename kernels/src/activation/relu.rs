//! ReLU: `x` where `x ≥ 0` (and NaN), else `0`; its gradient passes `dy` where `x > 0`.

use cubecl::prelude::*;

use crate::formula::formula;

formula! {
    /// PyTorch's `relu`.
    Relu [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        // NaN chosen explicitly: NVIDIA's Vulkan compiler turns the bare select into `max(x, 0)`, which drops it.
        select_many(x.is_nan(), x, select_many(x.less_than(&zero), zero, x))
    }
    device fn backward(x, dy, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        select_many(x.less_equal(&zero), zero, dy)
    }
    host fn forward(x, _a, _b) { if x < R::ZERO { R::ZERO } else { x } }
    host fn backward(x, dy, _a, _b) { if x <= R::ZERO { R::ZERO } else { dy } }
    // `y <= 0` exactly where `x <= 0`; NaN stays NaN.
    host fn gradient_from_output(_a, _b) { true }
}
