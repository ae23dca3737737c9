//! Sigmoid `1/(1 + e^-x)`, and SiLU `x·sigmoid(x)`. Sigmoid's gradient reads the saved output `y`:
//! `dy·y·(1 - y)`, as PyTorch's does.

use cubecl::prelude::*;

use crate::formula::formula;

/// `1/(1 + e^-x)`.
#[cube]
pub(crate) fn sigmoid<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let one = Vector::new(C::new(1.0));
    one / (one + (-x).exp())
}

/// The sigmoid of a scalar, for kernels that compute element by element (the recurrent cells).
#[cube]
pub(crate) fn sigmoid1<C: Float>(x: C) -> C {
    sigmoid::<C, Const<1>>(Vector::new(x)).extract(0usize)
}

formula! {
    /// PyTorch's `sigmoid`; [`Formula::backward`](crate::Formula::backward) takes the output.
    Sigmoid [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { sigmoid::<C, N>(x) }
    device fn backward(y, dy, _a, _b) { dy * (Vector::new(C::new(1.0)) - y) * y }
    host fn forward(x, _a, _b) { R::ONE / (R::ONE + (-x).exp()) }
    host fn backward(y, dy, _a, _b) { dy * (R::ONE - y) * y }
}

formula! {
    /// PyTorch's `silu`.
    Silu [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x * sigmoid::<C, N>(x) }
    device fn backward(x, dy, _a, _b) {
        // sigmoid(x)·(1 + x·sigmoid(-x)), both sigmoids from one e = exp(-|x|) (see the host form).
        let one = Vector::new(C::new(1.0));
        let e = (-x.abs()).exp();
        let d = one / (one + e);
        let positive = x.greater_equal(&Vector::new(C::new(0.0)));
        let s = select_many(positive, d, e * d);
        let s_neg = select_many(positive, e * d, d);
        dy * s * (one + x * s_neg)
    }
    host fn forward(x, _a, _b) { x / (R::ONE + (-x).exp()) }
    // `sigmoid(x)·(1 + x·(1 - sigmoid(x)))`, PyTorch's gradient, with `1 - sigmoid(x)` taken as `sigmoid(-x)`:
    // both from `e = exp(-|x|)`, so neither cancels where `sigmoid(x)` rounds near 1 (x around 15 to 17 in
    // f32, where `x·(1 - s)` would carry x times s's rounding).
    host fn backward(x, dy, _a, _b) {
        let e = (-x.abs()).exp();
        let d = R::ONE / (R::ONE + e);
        let (s, s_neg) = if x >= R::ZERO { (d, e * d) } else { (e * d, d) };
        dy * s * (R::ONE + x * s_neg)
    }
}
