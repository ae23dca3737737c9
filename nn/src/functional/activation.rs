//! The activations as functions: each element-wise one as PyTorch's `F.<name>` and as a tensor method with its
//! in-place `_` form (generated from the table of activations), [`Activation`] (the formulas themselves,
//! forward and backward, on any device), PReLU, RReLU, GELU, GLU and (log-)softmax and softmin with their
//! backward passes.
//!
//! ```
//! use nn::{Tensor, functional as F};
//! let x = Tensor::from_vec(vec![-2.0f32, 0.5], [2])?;
//! assert_eq!(F::relu(&x)?.to_vec::<f32>()?, vec![0.0, 0.5]);
//! assert_eq!(x.leaky_relu(0.1)?.to_vec::<f32>()?, vec![-0.2, 0.5]);
//! x.hardtanh_(-1.0, 1.0)?;
//! assert_eq!(x.to_vec::<f32>()?, vec![-1.0, 0.5]);
//! # Ok::<(), nn::Error>(())
//! ```

pub use crate::ops::activation::Activation;
pub use crate::ops::prelu::{
    prelu, prelu_backward, prelu_input_backward, prelu_into, rrelu, rrelu_with_noise, rrelu_with_noise_backward,
};
pub use crate::ops::softmax::{log_softmax_backward, softmax_backward};
pub use kernels::activation::{SELU_ALPHA, SELU_SCALE};

use super::widened;
pub use crate::ops::activation::by_name::*;
use crate::{Error, Result, Tensor};

/// PyTorch's `F.gelu(x, approximate)`: `x * Φ(x)` with `approximate` `"none"`, or its `tanh` approximation with
/// `"tanh"` (the formulas of [`GELU`](crate::layers::GELU)); also `x.gelu(approximate)`.
///
/// ```
/// use nn::{Tensor, functional::gelu};
/// let x = Tensor::from_vec(vec![0.0f64, 1.0], [2])?;
/// assert_eq!(gelu(&x, "none")?.to_vec::<f64>()?[0], 0.0);
/// assert!(gelu(&x, "exact").is_err());
/// # Ok::<(), nn::Error>(())
/// ```
pub fn gelu(x: &Tensor, approximate: &str) -> Result<Tensor> {
    gelu_formula(approximate)?.forward(x)
}

/// GELU's formula for `approximate`, or PyTorch's refusal of another name.
fn gelu_formula(approximate: &str) -> Result<Activation> {
    match approximate {
        "none" => Ok(Activation::Gelu),
        "tanh" => Ok(Activation::GeluTanh),
        other => Err(Error::invalid(
            "gelu",
            format!("approximate argument must be either none or tanh. (got {other:?})"),
        )),
    }
}

impl Tensor {
    /// PyTorch's `gelu`: [`functional::gelu`](crate::functional::gelu).
    pub fn gelu(&self, approximate: &str) -> Result<Tensor> {
        gelu(self, approximate)
    }

    /// [`gelu`](Self::gelu) in place, seen through every handle to the storage.
    pub fn gelu_(&self, approximate: &str) -> Result<()> {
        gelu_formula(approximate)?.forward_(self)
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

/// PyTorch's `F.softmin(input, dim)`: the softmax of `-x` along `dim`.
///
/// ```
/// use nn::{Tensor, functional::softmin};
/// let x = Tensor::from_vec(vec![0.0f64, 0.0, 3.0], [3]).unwrap();
/// let y = softmin(&x, 0).unwrap().to_vec::<f64>().unwrap();
/// assert!(y[0] == y[1] && y[2] < 0.03);
/// ```
pub fn softmin(x: &Tensor, dim: isize) -> Result<Tensor> {
    Error::check_float("softmin", x.dtype())?;
    x.neg()?.softmax(dim)
}

/// The gradient of [`softmin`]'s input from its output `y` and the output's gradient `dy`: softmax's backward,
/// negated (PyTorch's autograd through `softmax(-x)`).
///
/// ```
/// use nn::{Tensor, functional::softmin_backward};
/// let y = Tensor::from_vec(vec![0.5f64, 0.5], [2]).unwrap();
/// let dy = Tensor::from_vec(vec![1.0f64, 0.0], [2]).unwrap();
/// assert_eq!(softmin_backward(&y, &dy, -1).unwrap().to_vec::<f64>().unwrap(), vec![-0.25, 0.25]);
/// ```
pub fn softmin_backward(y: &Tensor, dy: &Tensor, dim: isize) -> Result<Tensor> {
    softmax_backward(y, dy, dim)?.neg()
}

/// PyTorch's `F.glu(input, dim=-1)`: `a · sigmoid(b)` where `a` and `b` are the two halves of `x` along `dim`,
/// which must have an even size. Half-precision inputs are computed in `f32` and rounded once, as PyTorch does.
///
/// ```
/// use nn::{Tensor, functional::glu};
/// let x = Tensor::from_vec(vec![2.0f64, 4.0, 0.0, 0.0], [2, 2]).unwrap();
/// assert_eq!(glu(&x, 0).unwrap().to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
/// assert!(glu(&x.reshape([4, 1]).unwrap(), 1).is_err());
/// ```
pub fn glu(x: &Tensor, dim: isize) -> Result<Tensor> {
    let (a, b, _) = glu_halves("glu", x, dim)?;
    let y = widened(&a)?.mul(&widened(&b)?.sigmoid()?)?;
    y.to_dtype(x.dtype())
}

/// PyTorch's `glu_backward(grad_output, input, dim)`: the gradient of [`glu`]'s input, `dy · s` for the first
/// half and `(1 - s) · s · a · dy` for the second, `s = sigmoid(b)` rounded to the dtype first (as PyTorch
/// keeps it), the rest computed in `f32` for half precision.
///
/// ```
/// use nn::{Tensor, functional::glu_backward};
/// let x = Tensor::from_vec(vec![2.0f64, 0.0], [2]).unwrap();
/// let dx = glu_backward(&Tensor::from_vec(vec![1.0f64], [1]).unwrap(), &x, 0).unwrap();
/// assert_eq!(dx.to_vec::<f64>().unwrap(), vec![0.5, 0.5]);
/// ```
pub fn glu_backward(dy: &Tensor, x: &Tensor, dim: isize) -> Result<Tensor> {
    let op = "glu_backward";
    let (a, b, d) = glu_halves(op, x, dim)?;
    Error::check_shapes(
        op,
        dy.shape(),
        a.shape(),
        "a gradient of the output's shape (half of the input)",
    )?;
    crate::ops::same_dtype(op, x, &[Some(dy)])?;
    let s = b.sigmoid()?;
    let first = s.mul(dy)?;
    let (s, a, dy) = (widened(&s)?, widened(&a)?, widened(dy)?);
    let second = s.affine(-1.0, 1.0)?.mul(&s)?.mul(&a)?.mul(&dy)?.to_dtype(x.dtype())?;
    Tensor::cat(&[&first, &second], d as isize)
}

/// The halves `(a, b)` of `x` along `dim` for GLU, and the dimension's index.
fn glu_halves(op: &'static str, x: &Tensor, dim: isize) -> Result<(Tensor, Tensor, usize)> {
    Error::check_float(op, x.dtype())?;
    if x.rank() == 0 {
        return Err(Error::invalid(
            op,
            "glu does not support scalars because halving size must be even",
        ));
    }
    let d = x.dim_index(op, dim)?;
    let size = x.shape()[d];
    if !size.is_multiple_of(2) {
        return Err(Error::invalid(
            op,
            format!("Halving dimension must be even, but dimension {d} is size {size}"),
        ));
    }
    let half = size / 2;
    Ok((x.narrow(d as isize, 0, half)?, x.narrow(d as isize, half, half)?, d))
}
