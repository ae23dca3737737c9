//! Hardtanh: `x` clamped to `[a, b]` (NaN passes); its gradient passes `dy` strictly inside.

use cubecl::prelude::*;

use crate::formula::formula;
use crate::host::hardtanh;

formula! {
    /// PyTorch's `hardtanh(x, min_val = a, max_val = b)`.
    Hardtanh [];
    #[cube] device fn forward(x, a, b) {
        let lo = Vector::new(a);
        let hi = Vector::new(b);
        select_many(x.less_than(&lo), lo, select_many(x.greater_than(&hi), hi, x))
    }
    device fn backward(x, dy, a, b) {
        let outside = x.less_equal(&Vector::new(a)).or(x.greater_equal(&Vector::new(b)));
        select_many(outside, Vector::new(C::new(0.0)), dy)
    }
    host fn forward(x, a, b) { hardtanh(x, R::of(a), R::of(b)) }
    host fn backward(x, dy, a, b) { if x <= R::of(a) || x >= R::of(b) { R::ZERO } else { dy } }
}
