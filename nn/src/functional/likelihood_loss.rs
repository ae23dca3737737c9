//! PyTorch's negative log-likelihood losses of a distribution's parameters: `poisson_nll_loss` and
//! `gaussian_nll_loss`, composed of recorded ops (on the input's device, gradients from autograd).

use super::distance::floored;
use super::loss::Reduction;
use crate::tensor::autograd::{Saved, record_function};
use crate::{Error, Result, Tensor};

/// PyTorch's `F.poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction='mean')`:
/// `exp(x) - t·x` for a log rate `x` (`log_input`), else `x - t·log(x + eps)`; with `full` the Stirling term
/// `t·log t - t + ½·log(2πt)` added where `t > 1`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Reduction, poisson_nll_loss};
/// let x = Tensor::from_vec(vec![0.0f64, 1.0], [2])?;
/// let t = Tensor::from_vec(vec![1.0f64, 2.0], [2])?;
/// let loss = poisson_nll_loss(&x, &t, true, false, 1e-8, Reduction::Sum)?.item()?;
/// assert!((loss - (1.0 + 1f64.exp() - 2.0)).abs() < 1e-12);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn poisson_nll_loss(
    input: &Tensor,
    target: &Tensor,
    log_input: bool,
    full: bool,
    eps: f64,
    reduction: Reduction,
) -> Result<Tensor> {
    let mut loss = if log_input {
        input.exp()?.sub(&target.mul(input)?)?
    } else {
        input.sub(&target.mul(&input.add_scalar(eps)?.log()?)?)?
    };
    if full {
        loss = loss.add(&stirling_term(target)?)?;
    }
    reduction.apply(loss)
}

/// The Stirling term `t·log t - t + ½·log(2πt)` where `t > 1`, 0 elsewhere, and its gradient
/// `g·(log t + 1/(2t))` with `g` zeroed where `t ≤ 1` — PyTorch's `masked_fill` of the term, whose gradient is
/// that zero times the term's own: NaN at a target of 0.
fn stirling_term(target: &Tensor) -> Result<Tensor> {
    let stirling = |t: &Tensor| -> Result<Tensor> {
        t.mul(&t.log()?)?
            .sub(t)?
            .add(&t.mul_scalar(2.0 * std::f64::consts::PI)?.log()?.mul_scalar(0.5)?)
    };
    let (mut term, above_one) = {
        let _no_grad = crate::no_grad();
        let above_one = target.add_scalar(-1.0)?.sign()?.clamp(0.0, 1.0)?;
        // The term at max(t, 1), which is finite, times the mask.
        let term = stirling(&target.clamp(1.0, f64::INFINITY)?)?.mul(&above_one)?;
        (term, above_one)
    };
    let t = Saved::new(target);
    record_function("PoissonNllLossBackward0", &[target], &mut term, move |grad, needs| {
        if !needs[0] {
            return Ok(vec![None]);
        }
        let t = t.get("poisson_nll_loss")?;
        let slope = t.log()?.add(&t.recip()?.mul_scalar(0.5)?)?;
        Ok(vec![Some(grad.mul(&above_one)?.mul(&slope)?)])
    });
    Ok(term)
}

/// PyTorch's `F.gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean')`:
/// `½·(log v + (x - t)² / v)` with the variance `v` floored at `eps` (the floor not in the gradient), plus
/// `½·log 2π` with `full`. `var` has the input's shape, or one value per row (the input's shape less or with 1
/// in its last dimension); it must not be negative.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Reduction, gaussian_nll_loss};
/// let x = Tensor::from_vec(vec![1.0f64, 3.0], [2])?;
/// let t = Tensor::from_vec(vec![1.0f64, 1.0], [2])?;
/// let v = Tensor::from_vec(vec![1.0f64, 2.0], [2])?;
/// let loss = gaussian_nll_loss(&x, &t, &v, false, 1e-6, Reduction::None)?.to_vec::<f64>()?;
/// assert!((loss[1] - 0.5 * (2f64.ln() + 2.0)).abs() < 1e-12);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn gaussian_nll_loss(
    input: &Tensor,
    target: &Tensor,
    var: &Tensor,
    full: bool,
    eps: f64,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "gaussian_nll_loss";
    let (xs, vs) = (input.shape().dims(), var.shape().dims());
    let var = if vs == xs {
        var.clone()
    } else if !xs.is_empty() && vs == &xs[..xs.len() - 1] {
        var.unsqueeze(-1)?
    } else if !xs.is_empty() && !vs.is_empty() && vs[..vs.len() - 1] == xs[..xs.len() - 1] && vs[vs.len() - 1] == 1 {
        var.clone()
    } else {
        return Err(Error::invalid(op, "var is of incorrect size"));
    };
    if var.to_vec_f64()?.iter().any(|&v| v < 0.0) {
        return Err(Error::invalid(op, "var has negative entry/entries"));
    }
    let var = floored(&var, eps)?;
    let d = input.sub(target)?;
    let mut loss = var.log()?.add(&d.mul(&d)?.div(&var)?)?.mul_scalar(0.5)?;
    if full {
        loss = loss.add_scalar(0.5 * (2.0 * std::f64::consts::PI).ln())?;
    }
    reduction.apply(loss)
}
