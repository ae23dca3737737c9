//! The piecewise-linear gates: Hardsigmoid `clamp(x/6 + 1/2, 0, 1)` and Hardswish `x·hardsigmoid(x)`, with
//! PyTorch's gradients (Hardswish's at exactly 3 is `dy`, as PyTorch's vectorised kernel takes it).

use cubecl::prelude::*;

use crate::formula::formula;
use crate::host::hardtanh;

formula! {
    /// PyTorch's `hardsigmoid`.
    Hardsigmoid [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        let one = Vector::new(C::new(1.0));
        let v = x / Vector::new(C::new(6.0)) + Vector::new(C::new(0.5));
        select_many(
            x.less_equal(&Vector::new(C::new(-3.0))),
            zero,
            select_many(x.greater_equal(&Vector::new(C::new(3.0))), one, v),
        )
    }
    device fn backward(x, dy, _a, _b) {
        let inside = x
            .greater_than(&Vector::new(C::new(-3.0)))
            .vec_and(x.less_than(&Vector::new(C::new(3.0))));
        select_many(inside, dy / Vector::new(C::new(6.0)), Vector::new(C::new(0.0)))
    }
    host fn forward(x, _a, _b) {
        if x <= R::of(-3.0) {
            R::ZERO
        } else if x >= R::of(3.0) {
            R::ONE
        } else {
            x / R::of(6.0) + R::of(0.5)
        }
    }
    host fn backward(x, dy, _a, _b) {
        if x > R::of(-3.0) && x < R::of(3.0) {
            dy * R::of(1.0 / 6.0)
        } else {
            R::ZERO
        }
    }
}

formula! {
    /// PyTorch's `hardswish`.
    Hardswish [];
    #[cube] device fn forward(x, _a, _b) {
        // `x·clamp(x + 3, 0, 6)/6` as the host's and PyTorch's (so -inf gives NaN).
        let six = Vector::new(C::new(6.0));
        let gate = <super::hardtanh::Hardtanh as crate::Formula>::forward::<C, N>(x + Vector::new(C::new(3.0)), C::new(0.0), C::new(6.0));
        x * gate / six
    }
    device fn backward(x, dy, _a, _b) {
        let three = Vector::new(C::new(3.0));
        let middle = dy * (x / three + Vector::new(C::new(0.5)));
        select_many(
            x.less_than(&Vector::new(C::new(-3.0))),
            Vector::new(C::new(0.0)),
            select_many(x.greater_equal(&three), dy, middle),
        )
    }
    host fn forward(x, _a, _b) { x * hardtanh(x + R::of(3.0), R::ZERO, R::of(6.0)) / R::of(6.0) }
    host fn backward(x, dy, _a, _b) {
        // At exactly x = 3, PyTorch's vectorised CPU kernel (what any tensor of more than a few elements runs)
        // takes `dy`, its scalar loop `1.5·dy`; the vectorised result is the one its users see.
        if x < R::of(-3.0) {
            R::ZERO
        } else if x >= R::of(3.0) {
            dy
        } else {
            dy * (x / R::of(3.0) + R::of(0.5))
        }
    }
}
