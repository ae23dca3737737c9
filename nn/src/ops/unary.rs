//! Element-wise math without a device kernel yet: `exp`, `log`, `sqrt`, `abs`, `erf`, `recip`,
//! `pow_scalar`, `clamp` (on a device they are refused, never run through the host). `tanh` and `sigmoid` are
//! the activations' ops, which run on devices too.

use kernels::Real;

use super::activation::Activation;
use super::elementwise::UnaryFn;
use super::{DevicePath, Op, run};
use crate::{Result, Tensor};

/// `f(x)` in a new tensor on the CPU; inputs `[x]`.
struct Map<F> {
    name: &'static str,
    f: F,
}

impl<F: UnaryFn> Op for Map<F> {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::None;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].map_float(self.name, &self.f)
    }
}

macro_rules! unary_fn {
    ($(#[$doc:meta])* $name:ident, $method:ident, |$x:ident| $body:expr) => {
        #[derive(Clone, Copy, Debug, Default)]
        struct $name;
        impl UnaryFn for $name {
            #[inline(always)]
            fn apply<R: Real>(&self, $x: R) -> R {
                $body
            }
        }
        impl Tensor {
            $(#[$doc])*
            pub fn $method(&self) -> Result<Tensor> {
                run(&Map { name: stringify!($method), f: $name }, &[self])
            }
        }
    };
}

unary_fn!(/// `e^x`.
    Exp, exp, |x| x.exp());
unary_fn!(/// Natural logarithm.
    Log, log, |x| x.ln());
unary_fn!(/// Square root.
    Sqrt, sqrt, |x| x.sqrt());
unary_fn!(/// `|x|`.
    Abs, abs, |x| x.abs());
unary_fn!(/// The error function.
    Erf, erf, |x| x.erf());
unary_fn!(/// `1 / x`.
    Recip, recip, |x| R::ONE / x);

#[derive(Clone, Copy)]
struct Clamp {
    low: f64,
    high: f64,
}

impl UnaryFn for Clamp {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        if x.is_nan() {
            return x;
        }
        kernels::host::hardtanh(x, R::of(self.low), R::of(self.high))
    }
}

#[derive(Clone, Copy)]
struct Powf(f64);

impl UnaryFn for Powf {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        x.powf(R::of(self.0))
    }
}

impl Tensor {
    /// Hyperbolic tangent (the [`Tanh`](crate::layers::Tanh) activation).
    pub fn tanh(&self) -> Result<Tensor> {
        Activation::Tanh.forward(self)
    }

    /// `1 / (1 + e^-x)` (the [`Sigmoid`](crate::layers::Sigmoid) activation).
    pub fn sigmoid(&self) -> Result<Tensor> {
        Activation::Sigmoid.forward(self)
    }

    /// `x^exponent`.
    pub fn pow_scalar(&self, exponent: f64) -> Result<Tensor> {
        run(
            &Map {
                name: "pow_scalar",
                f: Powf(exponent),
            },
            &[self],
        )
    }

    /// `x` limited to `[low, high]` (NaN stays NaN).
    pub fn clamp(&self, low: f64, high: f64) -> Result<Tensor> {
        run(
            &Map {
                name: "clamp",
                f: Clamp { low, high },
            },
            &[self],
        )
    }
}
