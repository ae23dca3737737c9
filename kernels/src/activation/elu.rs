//! The ELU family in PyTorch's general form: `x > 0 ? s·x : s·a·expm1(x·i)` (ELU: `s = i = 1`; SELU: its
//! constants; CELU: `i = 1/a`), with gradient `x > 0 ? s·dy : dy·s·a·i·exp(x·i)`.

use cubecl::prelude::*;

use crate::Real;
use crate::formula::formula;

/// SELU's `alpha`, as PyTorch defines it.
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
/// SELU's `scale`, as PyTorch defines it.
pub const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
const SELU_ALPHA_F32: f32 = SELU_ALPHA as f32;
const SELU_SCALE_F32: f32 = SELU_SCALE as f32;

/// `s·x` or `s·a·expm1(x·i)`.
#[cube]
fn elu_forward<C: Float, N: Size>(x: Vector<C, N>, a: C, s: C, i: C) -> Vector<C, N> {
    let negative = Vector::new(s * a) * (x * Vector::new(i)).exp_m1();
    select_many(x.greater_than(&Vector::new(C::new(0.0))), x * Vector::new(s), negative)
}

/// `s·dy` or `dy·s·a·i·exp(x·i)`.
#[cube]
fn elu_backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, s: C, i: C) -> Vector<C, N> {
    let negative = dy * Vector::new(s * a * i) * (x * Vector::new(i)).exp();
    select_many(x.greater_than(&Vector::new(C::new(0.0))), dy * Vector::new(s), negative)
}

/// The host form of [`elu_backward`]: `dy·pos_scale` above zero, `dy·input_scale·neg_scale·e^(x·input_scale)`
/// at or below (and at NaN, which gives NaN, as PyTorch's vectorised kernel).
#[inline(always)]
fn elu_grad<R: Real>(x: R, dy: R, neg_scale: R, pos_scale: R, input_scale: R) -> R {
    if x > R::ZERO {
        dy * pos_scale
    } else {
        dy * input_scale * neg_scale * (x * input_scale).exp()
    }
}

formula! {
    /// PyTorch's `elu(x, alpha = a)`.
    Elu [TRANSCENDENTAL];
    #[cube] device fn forward(x, a, _b) { elu_forward::<C, N>(x, a, C::new(1.0), C::new(1.0)) }
    device fn backward(x, dy, a, _b) { elu_backward::<C, N>(x, dy, a, C::new(1.0), C::new(1.0)) }
    host fn forward(x, a, _b) { if x > R::ZERO { x } else { R::of(a) * x.exp_m1() } }
    host fn backward(x, dy, a, _b) { elu_grad(x, dy, R::of(a), R::ONE, R::ONE) }
}

formula! {
    /// PyTorch's `selu`.
    Selu [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) {
        elu_forward::<C, N>(x, C::new(SELU_ALPHA_F32), C::new(SELU_SCALE_F32), C::new(1.0))
    }
    device fn backward(x, dy, _a, _b) {
        elu_backward::<C, N>(x, dy, C::new(SELU_ALPHA_F32), C::new(SELU_SCALE_F32), C::new(1.0))
    }
    host fn forward(x, _a, _b) { R::of(SELU_SCALE) * if x > R::ZERO { x } else { R::of(SELU_ALPHA) * x.exp_m1() } }
    host fn backward(x, dy, _a, _b) { elu_grad(x, dy, R::of(SELU_ALPHA * SELU_SCALE), R::of(SELU_SCALE), R::ONE) }
}

formula! {
    /// PyTorch's `celu(x, alpha = a)`.
    Celu [TRANSCENDENTAL];
    #[cube] device fn forward(x, a, _b) { elu_forward::<C, N>(x, a, C::new(1.0), C::new(1.0) / a) }
    device fn backward(x, dy, a, _b) { elu_backward::<C, N>(x, dy, a, C::new(1.0), C::new(1.0) / a) }
    host fn forward(x, a, _b) {
        // ELU with input scale `1/alpha`, a product (not a division), as PyTorch computes it.
        if x > R::ZERO {
            x
        } else {
            R::of(a) * (x * R::of(1.0 / a)).exp_m1()
        }
    }
    host fn backward(x, dy, a, _b) { elu_grad(x, dy, R::of(a), R::ONE, R::of(1.0 / a)) }
}
