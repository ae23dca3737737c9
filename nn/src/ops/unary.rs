//! Element-wise math: `exp`, `expm1`, `log`, `log1p`, `log2`, `log10`, `sqrt`, `rsqrt`, `abs`, `sign`, `erf`,
//! `recip`, `sin`, `cos`, `tan`, `floor`, `ceil`, `round`, `trunc`, `pow_scalar`, `clamp`, each with its in-place
//! form (`exp_`, …). Each is a formula of `kernels::unary` (forward and backward side by side) run as the
//! activations run: on the CPU and on devices, with its gradient recorded. `tanh`, `sigmoid` and the other
//! activations are methods of [`functional`](crate::functional), generated from the activations' table.
//!
//! ```
//! use nn::Tensor;
//! let x = Tensor::from_vec(vec![0.25f64, 2.5, -1.5], [3])?;
//! assert_eq!(x.round()?.to_vec::<f64>()?, vec![0.0, 2.0, -2.0]);
//! assert_eq!(x.floor()?.to_vec::<f64>()?, vec![0.0, 2.0, -2.0]);
//! x.abs_()?;
//! assert_eq!(x.rsqrt()?.to_vec::<f64>()?[0], 2.0);
//! # Ok::<(), nn::Error>(())
//! ```

use kernels::unary;

use super::activation::{apply, apply_};
use crate::{Result, Tensor};

/// `Tensor` methods applying a formula of `kernels::unary` without constants, named as PyTorch names them, and
/// their in-place forms.
macro_rules! unary_methods {
    ($( $(#[$doc:meta])* $name:ident $name_:ident => $formula:ident; )*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<Tensor> {
                    apply::<unary::$formula>((stringify!($name), concat!(stringify!($name), "_backward")), [0.0; 2], self)
                }

                #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), ") in place, seen through every handle to the storage; recorded as PyTorch records an in-place change.")]
                pub fn $name_(&self) -> Result<()> {
                    apply_::<unary::$formula>((stringify!($name), concat!(stringify!($name), "_backward")), [0.0; 2], self)
                }
            )*
        }
    };
}

unary_methods! {
    /// `e^x`.
    exp exp_ => Exp;
    /// `e^x - 1`, accurate near 0.
    expm1 expm1_ => Expm1;
    /// Natural logarithm.
    log log_ => Log;
    /// `ln(1 + x)`, accurate near 0.
    log1p log1p_ => Log1p;
    /// Base-2 logarithm.
    log2 log2_ => Log2;
    /// Base-10 logarithm.
    log10 log10_ => Log10;
    /// Square root.
    sqrt sqrt_ => Sqrt;
    /// `1 / √x`.
    rsqrt rsqrt_ => Rsqrt;
    /// `|x|`.
    abs abs_ => Abs;
    /// PyTorch's `sign`: 1, -1, or 0 (at ±0 and NaN, as PyTorch's CPU kernel gives); its gradient is zero.
    sign sign_ => Sign;
    /// The error function.
    erf erf_ => Erf;
    /// `1 / x` (PyTorch's `reciprocal`).
    recip recip_ => Recip;
    /// The sine.
    sin sin_ => Sin;
    /// The cosine.
    cos cos_ => Cos;
    /// The tangent.
    tan tan_ => Tan;
    /// The largest integer not above `x`; its gradient is zero.
    floor floor_ => Floor;
    /// The smallest integer not below `x`; its gradient is zero.
    ceil ceil_ => Ceil;
    /// The nearest integer, halves to the even one (`round(2.5) = 2`), as PyTorch's; its gradient is zero.
    round round_ => Round;
    /// `x` rounded toward zero; its gradient is zero.
    trunc trunc_ => Trunc;
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

    /// [`clamp`](Self::clamp) in place.
    pub fn clamp_(&self, low: f64, high: f64) -> Result<()> {
        apply_::<unary::Clamp>(("clamp", "clamp_backward"), [low, high], self)
    }

    /// [`pow_scalar`](Self::pow_scalar) in place.
    pub fn pow_scalar_(&self, exponent: f64) -> Result<()> {
        apply_::<unary::Pow>(("pow_scalar", "pow_scalar_backward"), [exponent, 0.0], self)
    }
}

impl Tensor {
    /// Rprop's step-size factor: `above` where `x > 0`, `below` where `x < 0`, 1 elsewhere (±0, NaN).
    pub(crate) fn sign_factor(&self, above: f64, below: f64) -> Result<Tensor> {
        apply::<unary::SignFactor>(("sign_factor", "sign_factor_backward"), [above, below], self)
    }
}
