//! Tanh, with its gradient from the saved output `dy·(1 - y²)`, and Tanhshrink `x - tanh(x)`.
//!
//! `tanh` is computed as `sign(x)·(1 - 2/(e^{2|x|} + 1))`, which saturates to ±1 for any `|x|` on any
//! driver (Vulkan and WGSL leave the built-in's accuracy to the implementation; Mesa's is `(e^x - e^-x) /
//! (e^x + e^-x)`, two exps, cancelling near 0) and keeps `1 - |tanh|` accurate in the tails, which GELU-tanh's
//! gradient multiplies by up to `x²`. Below `|x| < 0.55`, where it cancels, an odd polynomial is used in
//! 32 bits and less, the device's own `tanh` in 64.

use cubecl::prelude::*;

use crate::formula::formula;
use cubecl::frontend::Tanh as TanhOp;

/// `tanh(x)`, exact for large `|x|` on every driver.
#[cube]
pub(crate) fn tanh<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let one = Vector::new(C::new(1.0));
    let ax = x.abs();
    let big = one - Vector::new(C::new(2.0)) / ((ax + ax).exp() + one);
    let signed = select_many(x.less_than(&Vector::new(C::new(0.0))), -big, big);
    let small = if C::size_bits().comptime() <= 32 {
        tanh_small::<C, N>(x)
    } else {
        TanhOp::tanh(x)
    };
    select_many(ax.less_than(&Vector::new(C::new(0.55))), small, signed)
}

/// The tanh of a scalar, for kernels that compute element by element (the recurrent cells).
#[cube]
pub(crate) fn tanh1<C: Float>(x: C) -> C {
    tanh::<C, Const<1>>(Vector::new(x)).extract(0usize)
}

/// `x + x³·P(x²)` for `|x| < 0.55`: `P` of degree 4 fitted to tanh's relative error there (weighted least
/// squares iterated towards equal ripple: 1.1e-9 in exact arithmetic, under 0.8 ulp evaluated in f32). Five
/// multiply-adds, where tanh's Taylor series needs eight to reach the same error.
#[cube]
#[allow(clippy::excessive_precision)] // the fit's values, rounded once to f32 by the compiler
fn tanh_small<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let t = x * x;
    let mut p = Vector::new(C::new(-6.251_620_515_770_39e-3));
    p = p * t + Vector::new(C::new(2.105_593_198_582_768e-2));
    p = p * t + Vector::new(C::new(-5.384_857_791_732_016e-2));
    p = p * t + Vector::new(C::new(1.333_255_196_239_153e-1));
    p = p * t + Vector::new(C::new(-3.333_331_662_220_578e-1));
    x + x * t * p
}

formula! {
    /// PyTorch's `tanh`; [`Formula::backward`](crate::Formula::backward) takes the output.
    Tanh [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) { tanh::<C, N>(x) }
    device fn backward(y, dy, _a, _b) { dy * (Vector::new(C::new(1.0)) - y * y) }
    host fn forward(x, _a, _b) { x.tanh() }
    host fn backward(y, dy, _a, _b) { dy * (R::ONE - y * y) }
}

formula! {
    /// PyTorch's `tanhshrink`.
    Tanhshrink [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x - tanh::<C, N>(x) }
    device fn backward(x, dy, _a, _b) {
        let t = tanh::<C, N>(x);
        dy * t * t
    }
    host fn forward(x, _a, _b) { x - x.tanh() }
    host fn backward(x, dy, _a, _b) {
        let t = x.tanh();
        dy - dy * (R::ONE - t * t)
    }
}
