//! Element-wise math: `exp`, `log`, `sqrt`, `abs`, `erf`, `recip`, `pow_scalar`, `clamp`. Each is a formula of
//! `kernels::unary` (forward and backward side by side) run as the activations run: on the CPU and on devices,
//! with its gradient recorded. `tanh` and `sigmoid` are the activations' own.

use kernels::unary;

use super::activation::{Activation, apply};
use crate::{Result, Tensor};

impl Tensor {
    /// `e^x`.
    pub fn exp(&self) -> Result<Tensor> {
        apply::<unary::Exp>("exp", [0.0; 2], self)
    }

    /// Natural logarithm.
    pub fn log(&self) -> Result<Tensor> {
        apply::<unary::Log>("log", [0.0; 2], self)
    }

    /// Square root.
    pub fn sqrt(&self) -> Result<Tensor> {
        apply::<unary::Sqrt>("sqrt", [0.0; 2], self)
    }

    /// `|x|`.
    pub fn abs(&self) -> Result<Tensor> {
        apply::<unary::Abs>("abs", [0.0; 2], self)
    }

    /// The error function.
    pub fn erf(&self) -> Result<Tensor> {
        apply::<unary::Erf>("erf", [0.0; 2], self)
    }

    /// `1 / x`.
    pub fn recip(&self) -> Result<Tensor> {
        apply::<unary::Recip>("recip", [0.0; 2], self)
    }

    /// Hyperbolic tangent (the [`Tanh`](crate::layers::Tanh) activation).
    pub fn tanh(&self) -> Result<Tensor> {
        Activation::Tanh.forward(self)
    }

    /// `1 / (1 + e^-x)` (the [`Sigmoid`](crate::layers::Sigmoid) activation).
    pub fn sigmoid(&self) -> Result<Tensor> {
        Activation::Sigmoid.forward(self)
    }

    /// `x^exponent` (PyTorch's `pow` with a scalar exponent: a negative base with an integer exponent keeps its
    /// sign rule).
    pub fn pow_scalar(&self, exponent: f64) -> Result<Tensor> {
        apply::<unary::Pow>("pow_scalar", [exponent, 0.0], self)
    }

    /// `x` limited to `[low, high]` (NaN stays NaN); the gradient passes where `low ≤ x ≤ high`.
    pub fn clamp(&self, low: f64, high: f64) -> Result<Tensor> {
        apply::<unary::Clamp>("clamp", [low, high], self)
    }
}
