//! Element-wise math: `exp`, `log`, `sqrt`, `abs`, `sign`, `erf`, `recip`, `pow_scalar`, `clamp`. Each is a formula of
//! `kernels::unary` (forward and backward side by side) run as the activations run: on the CPU and on devices,
//! with its gradient recorded. `tanh`, `sigmoid` and the other activations are methods of
//! [`functional`](crate::functional), generated from the activations' table.

use kernels::unary;

use super::activation::apply;
use crate::{Result, Tensor};

/// `Tensor` methods applying a formula of `kernels::unary` without constants, named as PyTorch names them.
macro_rules! unary_methods {
    ($( $(#[$doc:meta])* $name:ident => $formula:ident; )*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<Tensor> {
                    apply::<unary::$formula>((stringify!($name), concat!(stringify!($name), "_backward")), [0.0; 2], self)
                }
            )*
        }
    };
}

unary_methods! {
    /// `e^x`.
    exp => Exp;
    /// Natural logarithm.
    log => Log;
    /// Square root.
    sqrt => Sqrt;
    /// `|x|`.
    abs => Abs;
    /// PyTorch's `sign`: 1, -1, or 0 (at ±0 and NaN, as PyTorch's CPU kernel gives); its gradient is zero.
    sign => Sign;
    /// The error function.
    erf => Erf;
    /// `1 / x`.
    recip => Recip;
}

impl Tensor {
    /// `x^exponent` (PyTorch's `pow` with a scalar exponent: a negative base with an integer exponent keeps its
    /// sign rule).
    pub fn pow_scalar(&self, exponent: f64) -> Result<Tensor> {
        apply::<unary::Pow>(("pow_scalar", "pow_scalar_backward"), [exponent, 0.0], self)
    }

    /// `x` limited to `[low, high]` (NaN stays NaN); the gradient passes where `low ≤ x ≤ high`.
    pub fn clamp(&self, low: f64, high: f64) -> Result<Tensor> {
        apply::<unary::Clamp>(("clamp", "clamp_backward"), [low, high], self)
    }
}

impl Tensor {
    /// Rprop's step-size factor: `above` where `x > 0`, `below` where `x < 0`, 1 elsewhere (±0, NaN).
    pub(crate) fn sign_factor(&self, above: f64, below: f64) -> Result<Tensor> {
        apply::<unary::SignFactor>(("sign_factor", "sign_factor_backward"), [above, below], self)
    }
}
