//! Softsign `x/(1 + |x|)`; its gradient `dy/(1 + |x|)²`.

use cubecl::prelude::*;

use crate::formula::formula;

formula! {
    /// PyTorch's `softsign`.
    Softsign [];
    #[cube] device fn forward(x, _a, _b) { x / (Vector::new(C::new(1.0)) + x.abs()) }
    device fn backward(x, dy, _a, _b) {
        // As the host's: through the division and `abs`, so ±inf gives NaN as PyTorch's.
        let zero = Vector::new(C::new(0.0));
        let d = x.abs() + Vector::new(C::new(1.0));
        let sign = select_many(
            x.greater_than(&zero),
            Vector::new(C::new(1.0)),
            select_many(x.less_than(&zero), Vector::new(C::new(-1.0)), zero),
        );
        dy / d + -dy * (x / d / d) * sign
    }
    host fn forward(x, _a, _b) { x / (R::ONE + x.abs()) }
    host fn backward(x, dy, _a, _b) {
        // PyTorch differentiates `x / (|x| + 1)` through the division and `abs`.
        let d = x.abs() + R::ONE;
        let sign = if x > R::ZERO {
            R::ONE
        } else if x < R::ZERO {
            -R::ONE
        } else {
            R::ZERO
        };
        dy / d + -dy * (x / d / d) * sign
    }
}
