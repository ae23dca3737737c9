//! The ELU family in PyTorch's general form: `x > 0 ? s·x : s·a·expm1(x·i)` (ELU: `s = i = 1`; SELU: its
//! constants; CELU: `i = 1/a`), with gradient `x > 0 ? s·dy : dy·s·a·i·exp(x·i)`; and each one's form whose
//! gradient reads its result `y` (PyTorch's in-place `elu_`, `selu_`, `celu_` save it):
//! `y <= 0 ? dy·i·(y + s·a) : s·dy`, for `a >= 0`.

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

/// [`elu_backward`] from the result `y`: `dy·i·(y + s·a)` at or below zero, `s·dy` above (and at NaN, as
/// PyTorch's `elu_backward(…, is_result=True, result)`).
#[cube]
fn elu_backward_of_result<C: Float, N: Size>(y: Vector<C, N>, dy: Vector<C, N>, a: C, s: C, i: C) -> Vector<C, N> {
    let negative = dy * Vector::new(i) * (y + Vector::new(s * a));
    select_many(y.less_equal(&Vector::new(C::new(0.0))), negative, dy * Vector::new(s))
}

/// The host form of [`elu_backward_of_result`], its products in PyTorch's order.
#[inline(always)]
fn elu_grad_of_result<R: Real>(y: R, dy: R, neg_scale: R, pos_scale: R, input_scale: R) -> R {
    if y <= R::ZERO {
        dy * input_scale * (y + neg_scale)
    } else {
        dy * pos_scale
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

formula! {
    /// [`Elu`] recorded as PyTorch's in-place `elu_` records it: the same forward, its gradient read off the
    /// result (for `a >= 0`, where `y <= 0` exactly where `x <= 0`).
    EluOfResult [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, a, _b) { elu_forward::<C, N>(x, a, C::new(1.0), C::new(1.0)) }
    device fn backward(y, dy, a, _b) { elu_backward_of_result::<C, N>(y, dy, a, C::new(1.0), C::new(1.0)) }
    host fn forward(x, a, _b) { <Elu as crate::HostFormula>::forward(x, a, 0.0) }
    host fn backward(y, dy, a, _b) { elu_grad_of_result(y, dy, R::of(a), R::ONE, R::ONE) }
}

formula! {
    /// [`Selu`] recorded as PyTorch's in-place `selu_` records it: its gradient read off the result.
    SeluOfResult [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, _a, _b) {
        elu_forward::<C, N>(x, C::new(SELU_ALPHA_F32), C::new(SELU_SCALE_F32), C::new(1.0))
    }
    device fn backward(y, dy, _a, _b) {
        elu_backward_of_result::<C, N>(y, dy, C::new(SELU_ALPHA_F32), C::new(SELU_SCALE_F32), C::new(1.0))
    }
    host fn forward(x, _a, _b) { <Selu as crate::HostFormula>::forward(x, 0.0, 0.0) }
    host fn backward(y, dy, _a, _b) {
        // PyTorch's `alpha · scale` in the tensor's type: the product of the two constants rounded to it.
        elu_grad_of_result(y, dy, R::of(SELU_ALPHA) * R::of(SELU_SCALE), R::of(SELU_SCALE), R::ONE)
    }
}

formula! {
    /// [`Celu`] recorded as PyTorch's in-place `celu_` records it (`elu_` with input scale `1/a`): its gradient
    /// read off the result, for `a >= 0`.
    CeluOfResult [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
    #[cube] device fn forward(x, a, _b) { elu_forward::<C, N>(x, a, C::new(1.0), C::new(1.0) / a) }
    device fn backward(y, dy, a, _b) { elu_backward_of_result::<C, N>(y, dy, a, C::new(1.0), C::new(1.0) / a) }
    host fn forward(x, a, _b) { <Celu as crate::HostFormula>::forward(x, a, 0.0) }
    host fn backward(y, dy, a, _b) { elu_grad_of_result(y, dy, R::of(a), R::ONE, R::of(1.0 / a)) }
}
