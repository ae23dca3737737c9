//! The activation formulas, written once for `f32` and `f64` (the half types compute in `f32`).
//!
//! Each formula is PyTorch's (`aten/src/ATen/native/cpu/Activation.cpp`), including how it treats signed
//! zeros and NaN: `relu(-0.0)` is `-0.0`, `relu(NaN)` is NaN.

use crate::tensor::real::Real;
use crate::{Error, Result, Tensor, UnaryFn};

/// An element-wise activation with its constants: what a layer runs, on any device.
///
/// ```
/// use nn::{Tensor, functional::Activation};
/// let x = Tensor::from_vec(vec![-1.0f32, 0.5], [2]).unwrap();
/// let y = Activation::LeakyRelu { negative_slope: 0.1 }.forward(&x).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-0.1, 0.5]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Activation {
    /// `max(x, 0)`.
    Relu,
    /// `min(max(x, 0), 6)`.
    Relu6,
    /// `x` if `x > 0` else `negative_slope * x`.
    LeakyRelu {
        /// Slope for negative inputs.
        negative_slope: f64,
    },
    /// `x` if `x > threshold` else `value`.
    Threshold {
        /// The threshold.
        threshold: f64,
        /// The value below it.
        value: f64,
    },
    /// `x` clamped to `[min_val, max_val]`.
    Hardtanh {
        /// Lower bound.
        min_val: f64,
        /// Upper bound.
        max_val: f64,
    },
    /// `x` if `x > 0` else `alpha * (e^x - 1)`.
    Elu {
        /// Scale of the negative part.
        alpha: f64,
    },
    /// `scale * elu(x, alpha)` with SELU's constants.
    Selu,
    /// `max(0, x) + min(0, alpha * (e^(x / alpha) - 1))`.
    Celu {
        /// Scale of the negative part.
        alpha: f64,
    },
    /// `x * Φ(x)` with the exact normal CDF (`erf`).
    Gelu,
    /// GELU's `tanh` approximation.
    GeluTanh,
    /// `x * sigmoid(x)`.
    Silu,
    /// `x * tanh(softplus(x))`.
    Mish,
    /// `log(1 + e^(beta x)) / beta`, linear above `threshold`.
    Softplus {
        /// Sharpness.
        beta: f64,
        /// Where it becomes linear (in `beta * x`).
        threshold: f64,
    },
    /// `x / (1 + |x|)`.
    Softsign,
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `clamp(x / 6 + 1/2, 0, 1)`.
    Hardsigmoid,
    /// `x * clamp(x + 3, 0, 6) / 6`.
    Hardswish,
    /// `x - tanh(x)`.
    Tanhshrink,
    /// `0` on `[-lambd, lambd]`, else `x`.
    Hardshrink {
        /// Half-width of the zero band.
        lambd: f64,
    },
    /// `x ∓ lambd` outside `[-lambd, lambd]`, else `0`.
    Softshrink {
        /// Half-width of the zero band.
        lambd: f64,
    },
    /// `log(sigmoid(x))`.
    LogSigmoid,
}

/// SELU's `alpha`.
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
/// SELU's `scale`.
pub const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

macro_rules! formula {
    ($(#[$doc:meta])* $name:ident { $($field:ident),* }, |$s:ident, $x:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name { $(pub $field: f64),* }
        impl UnaryFn for $name {
            #[inline(always)]
            fn apply<R: Real>(&self, $x: R) -> R {
                let $s = self;
                let _ = $s;
                $body
            }
        }
    };
}

formula!(/// ReLU.
    ReluFn {}, |_s, x| if x < R::ZERO { R::ZERO } else { x });
formula!(/// ReLU6.
    Relu6Fn {}, |_s, x| hardtanh(x, R::ZERO, R::of(6.0)));
formula!(/// LeakyReLU.
    LeakyReluFn { negative_slope }, |s, x| if x > R::ZERO { x } else { x * R::of(s.negative_slope) });
formula!(/// Threshold.
    ThresholdFn { threshold, value }, |s, x| if x > R::of(s.threshold) || x.is_nan() { x } else { R::of(s.value) });
formula!(/// Hardtanh.
    HardtanhFn { min_val, max_val }, |s, x| hardtanh(x, R::of(s.min_val), R::of(s.max_val)));
formula!(/// ELU.
    EluFn { alpha }, |s, x| if x > R::ZERO { x } else { R::of(s.alpha) * x.exp_m1() });
formula!(/// SELU.
    SeluFn {}, |_s, x| R::of(SELU_SCALE) * if x > R::ZERO { x } else { R::of(SELU_ALPHA) * x.exp_m1() });
formula!(/// CELU, as PyTorch computes it: ELU with input scale `1/alpha` (a product, not a division).
    CeluFn { alpha }, |s, x| if x > R::ZERO { x } else { R::of(s.alpha) * (x * R::of(1.0 / s.alpha)).exp_m1() });
formula!(/// GELU (erf).
    GeluFn {}, |_s, x| x.gelu());
formula!(/// GELU (tanh).
GeluTanhFn {}, |_s, x| {
    let inner = R::of(0.797_884_560_802_865_4) * (x + R::of(0.044715) * x * x * x);
    R::of(0.5) * x * (R::ONE + inner.tanh())
});
formula!(/// SiLU.
    SiluFn {}, |_s, x| x / (R::ONE + (-x).exp()));
formula!(/// Mish.
    MishFn {}, |_s, x| x * x.log1p_exp().tanh());
formula!(/// Softplus.
    SoftplusFn { beta, threshold }, |s, x| softplus(x, R::of(s.beta), R::of(s.threshold)));
formula!(/// Softsign.
    SoftsignFn {}, |_s, x| x / (R::ONE + x.abs()));
formula!(/// Sigmoid.
    SigmoidFn {}, |_s, x| R::ONE / (R::ONE + (-x).exp()));
formula!(/// Tanh.
    TanhFn {}, |_s, x| x.tanh());
formula!(/// Hardsigmoid.
HardsigmoidFn {}, |_s, x| {
    if x <= R::of(-3.0) { R::ZERO } else if x >= R::of(3.0) { R::ONE } else { x / R::of(6.0) + R::of(0.5) }
});
formula!(/// Hardswish.
    HardswishFn {}, |_s, x| x * hardtanh(x + R::of(3.0), R::ZERO, R::of(6.0)) / R::of(6.0));
formula!(/// Tanhshrink.
    TanhshrinkFn {}, |_s, x| x - x.tanh());
formula!(/// Hardshrink.
    HardshrinkFn { lambd }, |s, x| if x >= -R::of(s.lambd) && x <= R::of(s.lambd) { R::ZERO } else { x });
formula!(/// Softshrink.
SoftshrinkFn { lambd }, |s, x| {
    let l = R::of(s.lambd);
    if x > l { x - l } else if x < -l { x + l } else if x.is_nan() { x } else { R::ZERO }
});
formula!(/// LogSigmoid.
LogSigmoidFn {}, |_s, x| {
    // min(x, 0) - log1p(e^-|x|), PyTorch's formula, is exactly -softplus(-x).
    -(-x).log1p_exp()
});

#[inline(always)]
fn hardtanh<R: Real>(x: R, lo: R, hi: R) -> R {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

#[inline(always)]
fn softplus<R: Real>(x: R, beta: R, threshold: R) -> R {
    if x * beta > threshold {
        x
    } else {
        // log1p(exp(z)) / beta, through the overflow-free `max(z, 0) + log1p(e^-|z|)` whose log1p only
        // sees (0, 1].
        (x * beta).log1p_exp() / beta
    }
}

/// Runs `$body` with `$f` bound to the formula struct of `$act`: one dispatch per tensor, not per element.
macro_rules! with_formula {
    ($act:expr, $f:ident => $body:expr) => {
        match *$act {
            Activation::Relu => {
                let $f = ReluFn {};
                $body
            }
            Activation::Relu6 => {
                let $f = Relu6Fn {};
                $body
            }
            Activation::LeakyRelu { negative_slope } => {
                let $f = LeakyReluFn { negative_slope };
                $body
            }
            Activation::Threshold { threshold, value } => {
                let $f = ThresholdFn { threshold, value };
                $body
            }
            Activation::Hardtanh { min_val, max_val } => {
                let $f = HardtanhFn { min_val, max_val };
                $body
            }
            Activation::Elu { alpha } => {
                let $f = EluFn { alpha };
                $body
            }
            Activation::Selu => {
                let $f = SeluFn {};
                $body
            }
            Activation::Celu { alpha } => {
                let $f = CeluFn { alpha };
                $body
            }
            Activation::Gelu => {
                let $f = GeluFn {};
                $body
            }
            Activation::GeluTanh => {
                let $f = GeluTanhFn {};
                $body
            }
            Activation::Silu => {
                let $f = SiluFn {};
                $body
            }
            Activation::Mish => {
                let $f = MishFn {};
                $body
            }
            Activation::Softplus { beta, threshold } => {
                let $f = SoftplusFn { beta, threshold };
                $body
            }
            Activation::Softsign => {
                let $f = SoftsignFn {};
                $body
            }
            Activation::Sigmoid => {
                let $f = SigmoidFn {};
                $body
            }
            Activation::Tanh => {
                let $f = TanhFn {};
                $body
            }
            Activation::Hardsigmoid => {
                let $f = HardsigmoidFn {};
                $body
            }
            Activation::Hardswish => {
                let $f = HardswishFn {};
                $body
            }
            Activation::Tanhshrink => {
                let $f = TanhshrinkFn {};
                $body
            }
            Activation::Hardshrink { lambd } => {
                let $f = HardshrinkFn { lambd };
                $body
            }
            Activation::Softshrink { lambd } => {
                let $f = SoftshrinkFn { lambd };
                $body
            }
            Activation::LogSigmoid => {
                let $f = LogSigmoidFn {};
                $body
            }
        }
    };
}
pub(crate) use with_formula;

impl Activation {
    /// PyTorch's name of the function (`relu`, `gelu`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Relu6 => "relu6",
            Activation::LeakyRelu { .. } => "leaky_relu",
            Activation::Threshold { .. } => "threshold",
            Activation::Hardtanh { .. } => "hardtanh",
            Activation::Elu { .. } => "elu",
            Activation::Selu => "selu",
            Activation::Celu { .. } => "celu",
            Activation::Gelu => "gelu",
            Activation::GeluTanh => "gelu_tanh",
            Activation::Silu => "silu",
            Activation::Mish => "mish",
            Activation::Softplus { .. } => "softplus",
            Activation::Softsign => "softsign",
            Activation::Sigmoid => "sigmoid",
            Activation::Tanh => "tanh",
            Activation::Hardsigmoid => "hardsigmoid",
            Activation::Hardswish => "hardswish",
            Activation::Tanhshrink => "tanhshrink",
            Activation::Hardshrink { .. } => "hardshrink",
            Activation::Softshrink { .. } => "softshrink",
            Activation::LogSigmoid => "logsigmoid",
        }
    }

    /// The activation of every element of `x`, in a new tensor of `x`'s dtype.
    ///
    /// A tensor on a device runs the activation's cubecl kernel there (see [`crate::gpu`]).
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if !x.device().is_cpu() {
            return crate::gpu::activation_forward(self, x);
        }
        with_formula!(self, f => x.map_float(self.name(), &f))
    }

    /// The activation of every element of `x`, in place (seen through every handle to `x`'s storage).
    pub fn forward_(&self, x: &Tensor) -> Result<()> {
        if !x.device().is_cpu() {
            return crate::gpu::activation_forward_(self, x);
        }
        with_formula!(self, f => x.map_float_(self.name(), &f))
    }

    /// The activation of every element of `x`, written into `out` (same shape and dtype), which is not
    /// reallocated.
    pub fn forward_into(&self, x: &Tensor, out: &Tensor) -> Result<()> {
        if !x.device().is_cpu() || !out.device().is_cpu() {
            return crate::gpu::activation_forward_into(self, x, out);
        }
        with_formula!(self, f => x.map_float_into(self.name(), &f, out))
    }

    /// The value at one `f64` point (for references and tests).
    pub fn at(&self, x: f64) -> f64 {
        with_formula!(self, f => f.apply(x))
    }
}

/// PReLU: `x` if `x > 0` else `weight * x`, with one weight or one per channel (dimension 1).
///
/// ```
/// use nn::{Tensor, functional::prelu};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// assert_eq!(prelu(&x, &w).unwrap().to_vec::<f32>().unwrap(), vec![-0.5, 2.0, -1.5, 4.0]);
/// ```
pub fn prelu(x: &Tensor, weight: &Tensor) -> Result<Tensor> {
    let layout = super::derivative::prelu_layout("prelu", x, weight)?;
    if !x.device().is_cpu() {
        return crate::gpu::prelu_forward(x, weight, layout);
    }
    let w = weight.to_vec_f64()?;
    if layout.channels == 1 {
        return x.map_float("prelu", &PreluFn { weight: w[0] });
    }
    x.map_float_blocks("prelu", layout.inner, |block| PreluFn {
        weight: w[block % layout.channels],
    })
}

/// [`prelu`] written into `out`, an existing tensor of `x`'s shape, dtype and device (no allocation; `out` may
/// be `x` itself, for PReLU in place).
///
/// ```
/// use nn::{Tensor, functional::prelu_into};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// let out = Tensor::zeros([2, 2], nn::DType::F32);
/// prelu_into(&x, &w, &out).unwrap();
/// assert_eq!(out.to_vec::<f32>().unwrap(), vec![-0.5, 2.0, -1.5, 4.0]);
/// prelu_into(&x, &w, &x).unwrap(); // in place
/// assert_eq!(x.to_vec::<f32>().unwrap(), vec![-0.5, 2.0, -1.5, 4.0]);
/// ```
pub fn prelu_into(x: &Tensor, weight: &Tensor, out: &Tensor) -> Result<()> {
    let op = "prelu_into";
    let layout = super::derivative::prelu_layout(op, x, weight)?;
    if out.shape() != x.shape() {
        return Err(Error::shapes(
            op,
            x.shape(),
            out.shape(),
            "an output of the input's shape",
        ));
    }
    if out.dtype() != x.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            expected: x.dtype(),
            got: out.dtype(),
        });
    }
    if out.device() != x.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: x.device(),
            rhs: out.device(),
        });
    }
    if !x.device().is_cpu() {
        return crate::gpu::prelu_forward_into(x, weight, out, layout);
    }
    let w = weight.to_vec_f64()?;
    if layout.channels == 1 {
        return x.map_float_into(op, &PreluFn { weight: w[0] }, out);
    }
    x.map_float_blocks_into(
        op,
        layout.inner,
        |block| PreluFn {
            weight: w[block % layout.channels],
        },
        out,
    )
}

/// PyTorch's `x > 0 ? x : w * x`, for one weight.
#[derive(Clone, Copy, Debug)]
pub struct PreluFn {
    /// The slope of negative inputs.
    pub weight: f64,
}
impl UnaryFn for PreluFn {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        if x > R::ZERO { x } else { R::of(self.weight) * x }
    }
}

/// Softmax along `dim`.
pub fn softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    x.softmax(dim)
}

/// Log-softmax along `dim`.
pub fn log_softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    x.log_softmax(dim)
}
