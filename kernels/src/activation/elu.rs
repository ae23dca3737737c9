//! The ELU family in PyTorch's general form: `x > 0 ? s·x : s·a·expm1(x·i)` (ELU: `s = i = 1`; SELU: its
//! constants; CELU: `i = 1/a`), with gradient `x > 0 ? s·dy : dy·s·a·i·exp(x·i)`.

use cubecl::prelude::*;

use crate::Formula;

/// SELU's `alpha` and `scale`, as PyTorch defines them.
const SELU_ALPHA: f32 = 1.673_263_2;
const SELU_SCALE: f32 = 1.050_701;

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

/// PyTorch's `elu(x, alpha = a)`.
pub struct Elu;

#[cube]
impl Formula for Elu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        elu_forward::<C, N>(x, a, C::new(1.0), C::new(1.0))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        elu_backward::<C, N>(x, dy, a, C::new(1.0), C::new(1.0))
    }
}

/// PyTorch's `selu`.
pub struct Selu;

#[cube]
impl Formula for Selu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        elu_forward::<C, N>(x, C::new(SELU_ALPHA), C::new(SELU_SCALE), C::new(1.0))
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, _a: C, _b: C) -> Vector<C, N> {
        elu_backward::<C, N>(x, dy, C::new(SELU_ALPHA), C::new(SELU_SCALE), C::new(1.0))
    }
}

/// PyTorch's `celu(x, alpha = a)`.
pub struct Celu;

#[cube]
impl Formula for Celu {
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        elu_forward::<C, N>(x, a, C::new(1.0), C::new(1.0) / a)
    }

    fn backward<C: Float, N: Size>(x: Vector<C, N>, dy: Vector<C, N>, a: C, _b: C) -> Vector<C, N> {
        elu_backward::<C, N>(x, dy, a, C::new(1.0), C::new(1.0) / a)
    }
}
