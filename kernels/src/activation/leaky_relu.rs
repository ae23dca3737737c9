//! LeakyReLU: `x` where `x > 0`, else `a·x`; its gradient `dy` or `a·dy`.

use cubecl::prelude::*;

use crate::formula::formula;

formula! {
    /// PyTorch's `leaky_relu(x, negative_slope = a)`.
    LeakyRelu [PIECEWISE_LINEAR];
    #[cube] device fn forward(x, a, _b) { select_many(x.greater_than(&Vector::new(C::new(0.0))), x, x * Vector::new(a)) }
    device fn backward(x, dy, a, _b) {
        select_many(x.greater_than(&Vector::new(C::new(0.0))), dy, dy * Vector::new(a))
    }
    host fn forward(x, a, _b) { if x > R::ZERO { x } else { x * R::of(a) } }
    host fn backward(x, dy, a, _b) { if x > R::ZERO { dy } else { dy * R::of(a) } }
    // `y > 0` exactly where `x > 0` when the slope keeps signs (rounding keeps them too); PyTorch's
    // `leaky_relu_` under autograd refuses a negative slope, which here copies the input instead.
    host fn gradient_from_output(a, _b) { a >= 0.0 }
}
