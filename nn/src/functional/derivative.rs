//! The backward pass of every activation: `dx` from the saved tensor and the incoming gradient `dy`.
//!
//! Each derivative is PyTorch's backward formula (`aten/src/ATen/native/cpu/Activation.cpp`,
//! `derivatives.yaml`), in the same order of operations, so `f32` and `f64` gradients agree with PyTorch's to
//! an ulp or two. These are the functions a later autograd records; they are public so a user can run a
//! backward pass by hand today.

use super::activation::*;
use crate::tensor::real::Real;
use crate::{BinaryFn, Error, Result, Tensor, UnaryFn};

/// The derivative of an activation formula.
pub trait Derivative: UnaryFn {
    /// Whether [`Derivative::grad`] reads the forward's output rather than its input (PyTorch saves the
    /// result of `sigmoid` and `tanh`, and half-precision gradients depend on that rounding).
    const FROM_OUTPUT: bool = false;
    /// `dx` for one element: `saved` is the input (or the output when [`Derivative::FROM_OUTPUT`]).
    fn grad<R: Real>(&self, saved: R, dy: R) -> R;
}

/// A [`Derivative`] as a formula of `(saved, dy)`.
#[derive(Clone, Copy)]
struct Grad<F>(F);

impl<F: Derivative> BinaryFn for Grad<F> {
    #[inline(always)]
    fn apply<R: Real>(&self, saved: R, dy: R) -> R {
        self.0.grad(saved, dy)
    }
}

macro_rules! derivative {
    ($name:ident, |$s:ident, $x:ident, $dy:ident| $body:expr) => {
        derivative!($name, false, |$s, $x, $dy| $body);
    };
    ($name:ident, $from_output:expr, |$s:ident, $x:ident, $dy:ident| $body:expr) => {
        impl Derivative for $name {
            const FROM_OUTPUT: bool = $from_output;
            #[inline(always)]
            fn grad<R: Real>(&self, $x: R, $dy: R) -> R {
                let $s = self;
                let _ = $s;
                $body
            }
        }
    };
}

derivative!(ReluFn, |_s, x, dy| if x <= R::ZERO { R::ZERO } else { dy });
derivative!(Relu6Fn, |_s, x, dy| if x <= R::ZERO || x >= R::of(6.0) {
    R::ZERO
} else {
    dy
});
derivative!(LeakyReluFn, |s, x, dy| if x > R::ZERO {
    dy
} else {
    dy * R::of(s.negative_slope)
});
derivative!(ThresholdFn, |s, x, dy| if x <= R::of(s.threshold) {
    R::ZERO
} else {
    dy
});
derivative!(
    HardtanhFn,
    |s, x, dy| if x <= R::of(s.min_val) || x >= R::of(s.max_val) {
        R::ZERO
    } else {
        dy
    }
);
derivative!(EluFn, |s, x, dy| elu_grad(x, dy, R::of(s.alpha), R::ONE, R::ONE));
derivative!(SeluFn, |_s, x, dy| elu_grad(
    x,
    dy,
    R::of(SELU_ALPHA * SELU_SCALE),
    R::of(SELU_SCALE),
    R::ONE
));
derivative!(CeluFn, |s, x, dy| elu_grad(
    x,
    dy,
    R::of(s.alpha),
    R::ONE,
    R::of(1.0 / s.alpha)
));
derivative!(GeluFn, |_s, x, dy| {
    let cdf = R::of(0.5) * (R::ONE + (x * R::of(std::f64::consts::FRAC_1_SQRT_2)).erf());
    let pdf = (R::of(-0.5) * x * x).exp() * R::of(0.398_942_280_401_432_7);
    dy * (cdf + x * pdf)
});
derivative!(GeluTanhFn, |_s, x, dy| {
    let (beta, kappa) = (R::of(0.797_884_560_802_865_4), R::of(0.044715));
    let x_sq = x * x;
    let inner = beta * (x + kappa * x_sq * x);
    let t = inner.tanh();
    let left = R::of(0.5) * x;
    let right = R::ONE + t;
    let left_derivative = R::of(0.5) * right;
    let right_derivative = (R::ONE - t * t) * (beta * (R::ONE + R::of(3.0) * kappa * x_sq));
    dy * (left_derivative + left * right_derivative)
});
derivative!(SiluFn, |_s, x, dy| {
    let sigmoid = R::ONE / (R::ONE + (-x).exp());
    dy * sigmoid * (R::ONE + x * (R::ONE - sigmoid))
});
derivative!(MishFn, |_s, x, dy| {
    let sigmoid = R::ONE / (R::ONE + (-x).exp());
    let t = x.log1p_exp().tanh();
    dy * (t + x * sigmoid * (R::ONE - t * t))
});
derivative!(SoftplusFn, |s, x, dy| {
    let bx = x * R::of(s.beta);
    if bx > R::of(s.threshold) {
        dy
    } else {
        let z = bx.exp();
        dy * z / (z + R::ONE)
    }
});
derivative!(SoftsignFn, |_s, x, dy| {
    // PyTorch differentiates `x / (|x| + 1)` through the division and `abs`.
    let d = x.abs() + R::ONE;
    let sign = if x > R::ZERO {
        R::ONE
    } else if x < R::ZERO {
        -R::ONE
    } else {
        R::ZERO
    };
    dy / d + -dy * (x / d / d) * sign
});
derivative!(SigmoidFn, true, |_s, y, dy| dy * (R::ONE - y) * y);
derivative!(TanhFn, true, |_s, y, dy| dy * (R::ONE - y * y));
derivative!(HardsigmoidFn, |_s, x, dy| if x > R::of(-3.0) && x < R::of(3.0) {
    dy * R::of(1.0 / 6.0)
} else {
    R::ZERO
});
// At exactly x = 3, PyTorch's vectorised CPU kernel (what any tensor of more than a few elements runs) takes
// `dy`, its scalar loop `1.5·dy`; the vectorised result is the one its users see, and the one matched here.
derivative!(HardswishFn, |_s, x, dy| if x < R::of(-3.0) {
    R::ZERO
} else if x >= R::of(3.0) {
    dy
} else {
    dy * (x / R::of(3.0) + R::of(0.5))
});
derivative!(TanhshrinkFn, |_s, x, dy| {
    let t = x.tanh();
    dy - dy * (R::ONE - t * t)
});
derivative!(HardshrinkFn, |s, x, dy| shrink_grad(x, dy, R::of(s.lambd)));
derivative!(SoftshrinkFn, |s, x, dy| shrink_grad(x, dy, R::of(s.lambd)));
derivative!(LogSigmoidFn, |_s, x, dy| {
    let z = (-x.abs()).exp();
    let (max_deriv, sign) = if x < R::ZERO {
        (R::ONE, R::ONE)
    } else {
        (R::ZERO, -R::ONE)
    };
    (max_deriv - sign * (z / (R::ONE + z))) * dy
});
derivative!(PreluFn, |s, x, dy| if x > R::ZERO { dy } else { R::of(s.weight) * dy });

/// ELU's family: `dy · input_scale · neg_scale · e^(x · input_scale)` below zero, `dy · pos_scale` above.
#[inline(always)]
fn elu_grad<R: Real>(x: R, dy: R, neg_scale: R, pos_scale: R, input_scale: R) -> R {
    if x <= R::ZERO {
        dy * input_scale * neg_scale * (x * input_scale).exp()
    } else {
        dy * pos_scale
    }
}

/// Zero on `[-lambd, lambd]`, `dy` outside.
#[inline(always)]
fn shrink_grad<R: Real>(x: R, dy: R, lambd: R) -> R {
    if x >= -lambd && x <= lambd { R::ZERO } else { dy }
}

/// Checks that `dy` can be the gradient of `x`: same shape, dtype and device.
fn check_grad(op: &'static str, x: &Tensor, dy: &Tensor) -> Result<()> {
    if x.shape() != dy.shape() {
        return Err(Error::shapes(
            op,
            x.shape(),
            dy.shape(),
            "a gradient of the input's shape",
        ));
    }
    if x.dtype() != dy.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            expected: x.dtype(),
            got: dy.dtype(),
        });
    }
    if x.device() != dy.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: x.device(),
            rhs: dy.device(),
        });
    }
    Ok(())
}

/// `dx` of one derivative on the CPU.
fn cpu_backward<F: Derivative>(op: &'static str, f: F, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let saved = if F::FROM_OUTPUT {
        x.map_float(op, &f)?
    } else {
        x.clone()
    };
    saved.zip_float(dy, op, &Grad(f))
}

impl Activation {
    /// The gradient of the input, `dx`, given the input `x` of the forward and the gradient of its output `dy`
    /// (PyTorch's backward of the function, e.g. `gelu_backward`).
    ///
    /// ```
    /// use nn::{Tensor, functional::Activation};
    /// let x = Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap();
    /// let dy = Tensor::from_vec(vec![10.0f32, 10.0], [2]).unwrap();
    /// let dx = Activation::LeakyRelu { negative_slope: 0.1 }.backward(&x, &dy).unwrap();
    /// assert_eq!(dx.to_vec::<f32>().unwrap(), vec![1.0, 10.0]);
    /// ```
    pub fn backward(&self, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
        let op = self.backward_name();
        check_grad(op, x, dy)?;
        if !x.device().is_cpu() {
            return crate::gpu::activation_backward(*self, x, dy);
        }
        with_formula!(self, f => cpu_backward(op, f, x, dy))
    }

    /// PyTorch's name of the backward function (`relu_backward`, …).
    pub fn backward_name(&self) -> &'static str {
        macro_rules! names {
            ($($name:literal),*) => {
                match self.name() {
                    $($name => concat!($name, "_backward"),)*
                    _ => "activation_backward",
                }
            };
        }
        names!(
            "relu",
            "relu6",
            "leaky_relu",
            "threshold",
            "hardtanh",
            "elu",
            "selu",
            "celu",
            "gelu",
            "gelu_tanh",
            "silu",
            "mish",
            "softplus",
            "softsign",
            "sigmoid",
            "tanh",
            "hardsigmoid",
            "hardswish",
            "tanhshrink",
            "hardshrink",
            "softshrink",
            "logsigmoid"
        )
    }
}

/// PReLU's backward: `(dx, dweight)`. `dx` is `dy` where `x > 0` and `weight · dy` elsewhere; `dweight` sums
/// `x · dy` over the elements where `x ≤ 0`, per channel (accumulated in `f64`, returned in the weight's dtype).
///
/// ```
/// use nn::{Tensor, functional::prelu_backward};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// let dy = Tensor::ones([2, 2], nn::DType::F32);
/// let (dx, dw) = prelu_backward(&x, &w, &dy).unwrap();
/// assert_eq!(dx.to_vec::<f32>().unwrap(), vec![0.5, 1.0, 0.5, 1.0]);
/// assert_eq!(dw.to_vec::<f32>().unwrap(), vec![-4.0, 0.0]);
/// ```
pub fn prelu_backward(x: &Tensor, weight: &Tensor, dy: &Tensor) -> Result<(Tensor, Tensor)> {
    let op = "prelu_backward";
    check_grad(op, x, dy)?;
    let layout = prelu_layout(op, x, weight)?;
    if !x.device().is_cpu() {
        return crate::gpu::prelu_backward(x, weight, dy, layout);
    }
    let w = weight.to_vec_f64()?;
    let dx = x.zip_float_blocks(dy, op, layout.inner, |block| {
        Grad(PreluFn {
            weight: w[block % layout.channels],
        })
    })?;
    let xs = x.to_vec_f64()?;
    let dys = dy.to_vec_f64()?;
    let mut sums = vec![0.0f64; layout.channels];
    let block = layout.inner.max(1);
    for (b, (xb, db)) in xs.chunks(block).zip(dys.chunks(block)).enumerate() {
        let s: f64 = xb
            .iter()
            .zip(db)
            .filter(|(x, _)| x.partial_cmp(&&0.0) != Some(std::cmp::Ordering::Greater))
            .map(|(x, d)| x * d)
            .sum();
        sums[b % layout.channels] += s;
    }
    let dweight = Tensor::from_vec(sums, weight.shape().clone())?.to_dtype(weight.dtype())?;
    Ok((dx, dweight))
}

/// How a PReLU weight maps onto an input: `channels` weights, each used for `inner` consecutive elements in
/// turn (one weight: one channel covering everything).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreluLayout {
    /// Number of weights.
    pub channels: usize,
    /// Consecutive elements sharing one weight.
    pub inner: usize,
}

/// Validates a PReLU weight against an input, PyTorch's rules: one weight, or one per channel (dimension 1).
pub(crate) fn prelu_layout(op: &'static str, x: &Tensor, weight: &Tensor) -> Result<PreluLayout> {
    let n = weight.numel();
    if weight.rank() > 1 {
        return Err(Error::invalid(
            op,
            format!("the weight must be 1-dimensional; got shape {}", weight.shape()),
        ));
    }
    if n == 0 {
        return Err(Error::invalid(op, "the weight is empty"));
    }
    if n == 1 {
        return Ok(PreluLayout {
            channels: 1,
            inner: x.numel(),
        });
    }
    let channels = if x.rank() >= 2 { x.shape()[1] } else { 0 };
    if channels != n {
        return Err(Error::invalid(
            op,
            format!(
                "{n} weights need an input with {n} channels in dimension 1; the input has shape {}",
                x.shape()
            ),
        ));
    }
    Ok(PreluLayout {
        channels,
        inner: x.shape()[2..].iter().product(),
    })
}

/// Softmax's backward from its output `y`: `dx = y · (dy - Σ dy·y)` along `dim` (PyTorch's
/// `_softmax_backward_data`).
///
/// ```
/// use nn::{Tensor, functional::softmax_backward};
/// let y = Tensor::from_vec(vec![0.5f64, 0.5], [2]).unwrap();
/// let dy = Tensor::from_vec(vec![1.0f64, 0.0], [2]).unwrap();
/// assert_eq!(softmax_backward(&y, &dy, -1).unwrap().to_vec::<f64>().unwrap(), vec![0.25, -0.25]);
/// ```
pub fn softmax_backward(y: &Tensor, dy: &Tensor, dim: isize) -> Result<Tensor> {
    check_grad("softmax_backward", y, dy)?;
    y.softmax_backward_impl(dy, dim, false)
}

/// Log-softmax's backward from its output `y`: `dx = dy - e^y · Σ dy` along `dim` (PyTorch's
/// `_log_softmax_backward_data`).
pub fn log_softmax_backward(y: &Tensor, dy: &Tensor, dim: isize) -> Result<Tensor> {
    check_grad("log_softmax_backward", y, dy)?;
    y.softmax_backward_impl(dy, dim, true)
}
