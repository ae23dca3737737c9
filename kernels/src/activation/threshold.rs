//! Threshold: `b` where `x ≤ a`, else `x`; its gradient `0` where `x ≤ a`, else `dy`.

use cubecl::prelude::*;

use crate::formula::formula;

formula! {
    /// PyTorch's `threshold(x, threshold = a, value = b)`.
    Threshold [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, a, b) { select_many(x.less_equal(&Vector::new(a)), Vector::new(b), x) }
    device fn backward(x, dy, a, _b) { select_many(x.less_equal(&Vector::new(a)), Vector::new(C::new(0.0)), dy) }
    // `x <= a` is false for NaN, which passes through: one comparison per element.
    host fn forward(x, a, b) { if x <= R::of(a) { R::of(b) } else { x } }
    host fn backward(x, dy, a, _b) { if x <= R::of(a) { R::ZERO } else { dy } }
}
