//! Tanh, with its gradient from the saved output `dy·(1 - y²)`, and Tanhshrink `x - tanh(x)`.
//!
//! `tanh` is computed as `sign(x)·(1 - 2/(e^{2|x|} + 1))`, which saturates to ±1 for any `|x|` on any
//! driver (Vulkan and WGSL leave the built-in's accuracy to the implementation, and the textbook
//! `(e^{2x} - 1)/(e^{2x} + 1)` is `∞/∞` above `|x| = 44` in f32); below `|x| < 0.55`, where that form cancels,
//! tanh's Taylor series is used in 32 bits and less, the device's own `tanh` in 64.

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
    // Below |x| = 0.55, in 32 bits and less: tanh's Taylor series to x^17 (relative error 5e-9, under half
    // an f32 ulp), nine multiply-adds instead of a second transcendental; wider types keep the driver's.
    let small = if C::size_bits().comptime() <= 32 {
        tanh_series::<C, N>(x)
    } else {
        TanhOp::tanh(x)
    };
    select_many(ax.less_than(&Vector::new(C::new(0.55))), small, signed)
}

/// `x + x³·P(x²)`, tanh's Taylor series through `x^17` (coefficients `2^{2n}(2^{2n}-1)B_{2n}/(2n)!`).
#[cube]
#[allow(clippy::excessive_precision)] // the series' exact values, rounded once to f32 by the compiler
fn tanh_series<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let x2 = x * x;
    let mut p = Vector::new(C::new(0.000_590_027_440_945_586));
    p = p * x2 + Vector::new(C::new(-0.001_455_834_387_051_318_3));
    p = p * x2 + Vector::new(C::new(0.003_592_128_036_572_481));
    p = p * x2 + Vector::new(C::new(-0.008_863_235_529_902_197));
    p = p * x2 + Vector::new(C::new(0.021_869_488_536_155_203));
    p = p * x2 + Vector::new(C::new(-0.053_968_253_968_253_97));
    p = p * x2 + Vector::new(C::new(0.133_333_333_333_333_33));
    p = p * x2 + Vector::new(C::new(-0.333_333_333_333_333_3));
    x + x * x2 * p
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
