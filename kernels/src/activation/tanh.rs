//! Tanh, with its gradient from the saved output `dy·(1 - y²)`, and Tanhshrink `x - tanh(x)`.
//!
//! `tanh` is computed as `sign(x)·(1 - 2/(e^{2|x|} + 1))`, which saturates to ±1 for any `|x|` on any
//! driver (Vulkan and WGSL leave the built-in's accuracy to the implementation, and the textbook
//! `(e^{2x} - 1)/(e^{2x} + 1)` is `∞/∞` above `|x| = 44` in f32); below `|x| < 0.55`, where that form cancels,
//! the device's own `tanh` is used.

use cubecl::prelude::*;

use crate::Formula;
use cubecl::frontend::Tanh as TanhOp;

/// `tanh(x)`, exact for large `|x|` on every driver.
#[cube]
pub(crate) fn tanh<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let one = Vector::new(C::new(1.0));
    let ax = x.abs();
    let big = one - Vector::new(C::new(2.0)) / ((ax + ax).exp() + one);
    let signed = select_many(x.less_than(&Vector::new(C::new(0.0))), -big, big);
    select_many(ax.less_than(&Vector::new(C::new(0.55))), TanhOp::tanh(x), signed)
}

/// PyTorch's `tanh`; [`Formula::backward`] takes the output.
pub struct Tanh;

#[cube]
impl Formula for Tanh {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        tanh::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        dy * (Vector::new(C::new(1.0)) - y * y)
    }
}

/// PyTorch's `tanhshrink`.
pub struct Tanhshrink;

#[cube]
impl Formula for Tanhshrink {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        x - tanh::<C, N>(x)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        let t = tanh::<C, N>(x);
        dy * t * t
    }
}
