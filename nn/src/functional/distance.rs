//! Distances between rows of two tensors: PyTorch's `pairwise_distance` (a p-norm of the difference) and
//! `cosine_similarity`, composed of recorded ops, so they run on the inputs' device with autograd's gradients.

use crate::{Error, Result, Tensor};

/// The `p`-norm of `x` over dimension `dim` (PyTorch's `norm(x, p, dim, keepdim)`): `(Σ |x|^p)^(1/p)`, the
/// largest `|x|` at `p = ∞`, the count of non-zeros at `p = 0`.
pub(crate) fn p_norm(x: &Tensor, p: f64, dim: isize, keepdim: bool) -> Result<Tensor> {
    if p == 2.0 {
        return x.mul(x)?.sum_dims(&[dim], keepdim)?.sqrt();
    }
    if p == 1.0 {
        return x.abs()?.sum_dims(&[dim], keepdim);
    }
    if p == f64::INFINITY {
        return Ok(x.abs()?.max_dim(dim, keepdim)?.0);
    }
    if p == f64::NEG_INFINITY {
        return Ok(x.abs()?.min_dim(dim, keepdim)?.0);
    }
    if p == 0.0 {
        let _no_grad = crate::no_grad();
        return x.abs()?.sign()?.sum_dims(&[dim], keepdim);
    }
    x.abs()?.pow_scalar(p)?.sum_dims(&[dim], keepdim)?.pow_scalar(1.0 / p)
}

/// PyTorch's `F.pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False)`: the `p`-norm of `x1 - x2 + eps`
/// over the last dimension (of the broadcast shape).
///
/// ```
/// use nn::Tensor;
/// use nn::functional::pairwise_distance;
/// let a = Tensor::from_vec(vec![0.0f64, 0.0, 1.0, 1.0], [2, 2])?;
/// let b = Tensor::from_vec(vec![3.0f64, 4.0, 1.0, 1.0], [2, 2])?;
/// let d = pairwise_distance(&a, &b, 2.0, 0.0, false)?.to_vec::<f64>()?;
/// assert_eq!(d, vec![5.0, 0.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn pairwise_distance(x1: &Tensor, x2: &Tensor, p: f64, eps: f64, keepdim: bool) -> Result<Tensor> {
    if p < 0.0 {
        return Err(Error::invalid("pairwise_distance", "p should be a non-negative number"));
    }
    let diff = x1.sub(x2)?.add_scalar(eps)?;
    if diff.rank() == 0 {
        // PyTorch's norm of a scalar over its only "dimension".
        return p_norm(&diff.reshape([1])?, p, 0, false);
    }
    p_norm(&diff, p, -1, keepdim)
}

/// PyTorch's `F.cosine_similarity(x1, x2, dim=1, eps=1e-8)`: `Σ (x1 / max(‖x1‖, eps)) · (x2 / max(‖x2‖, eps))`
/// over `dim` of the broadcast inputs; the norms' floor, as PyTorch's, does not enter the gradient.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::cosine_similarity;
/// let a = Tensor::from_vec(vec![1.0f64, 0.0, 1.0, 1.0], [2, 2])?;
/// let b = Tensor::from_vec(vec![0.0f64, 2.0, 2.0, 2.0], [2, 2])?;
/// let c = cosine_similarity(&a, &b, 1, 1e-8)?.to_vec::<f64>()?;
/// assert!((c[0] - 0.0).abs() < 1e-12 && (c[1] - 1.0).abs() < 1e-12);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn cosine_similarity(x1: &Tensor, x2: &Tensor, dim: isize, eps: f64) -> Result<Tensor> {
    let shape = crate::ops::elementwise::broadcast_shape("cosine_similarity", x1.shape(), x2.shape())?;
    let sizes: Vec<isize> = shape.dims().iter().map(|&s| s as isize).collect();
    let (x1, x2) = (x1.expand(&sizes)?, x2.expand(&sizes)?);
    let unit = |x: &Tensor| -> Result<Tensor> {
        let norm = p_norm(x, 2.0, dim, true)?;
        x.div(&floored(&norm, eps)?)
    };
    unit(&x1)?.mul(&unit(&x2)?)?.sum_dims(&[dim], false)
}

/// `t` with its values raised to at least `low`, the gradient passing as if they were not (PyTorch's
/// `clamp_min_` under `no_grad` on a tensor that requires a gradient).
pub(crate) fn floored(t: &Tensor, low: f64) -> Result<Tensor> {
    let raised = {
        let _no_grad = crate::no_grad();
        t.clamp(low, f64::INFINITY)?.sub(t)?
    };
    t.add(&raised)
}
