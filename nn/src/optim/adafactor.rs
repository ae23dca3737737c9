//! Adafactor: a second moment factored into row and column means for matrices, with decoupled weight decay,
//! update clipping and `maximize`.

use super::{Optim, ParamState, algorithm, group_options};
use crate::error::py_float;
use crate::ops::optimizer_step::decayed_gradient;
use crate::{DType, Error, Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.Adafactor` defaults: `lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0`, no weight
    /// decay.
    pub struct AdafactorOptions for "Adafactor" {
        /// Learning rate: the largest relative step `min(lr, 1/√t)` and the weight decay's factor.
        lr: f64 = 1e-2,
        /// The second moment's decay: `β₂ = 1 - t^beta2_decay` at step `t` (at most 0).
        beta2_decay: f64 = -0.8,
        /// `(eps1, eps2)`: the floor of the variance estimate's root (`None`: the dtype's machine epsilon) and
        /// of a parameter's RMS in the step size.
        eps: (Option<f64>, f64) = (None, 1e-3),
        /// The clipping threshold of the update's RMS (at least 1).
        d: f64 = 1.0,
        /// Decoupled weight decay: `p·(1 - lr·weight_decay)`.
        weight_decay: f64 = 0.0,
        /// Maximise the objective.
        maximize: bool = false,
    }
    @check = check;
}

/// PyTorch's checks, with its messages (`not 0.0 <= lr` and the like: NaN is refused too).
fn check(o: &AdafactorOptions) -> Result<()> {
    let (eps1, eps2) = o.eps;
    let below = |value: f64, bound: f64| value.partial_cmp(&bound).is_none_or(|c| c.is_lt());
    let above = |value: f64, bound: f64| value.partial_cmp(&bound).is_none_or(|c| c.is_gt());
    let refusals = [
        (below(o.lr, 0.0), "Learning rate should be >= 0", o.lr),
        (above(o.beta2_decay, 0.0), "beta2_decay should be <= 0", o.beta2_decay),
        (
            eps1.is_some_and(|e| below(e, 0.0)),
            "epsilon1 should be >= 0",
            eps1.unwrap_or(0.0),
        ),
        (below(eps2, 0.0), "epsilon2 should be >= 0", eps2),
        (below(o.d, 1.0), "Clipping threshold d should be >= 1", o.d),
        (
            below(o.weight_decay, 0.0),
            "weight_decay should be >= 0",
            o.weight_decay,
        ),
    ];
    match refusals.into_iter().find(|r| r.0) {
        Some((_, what, value)) => Err(Error::invalid(
            "Adafactor",
            format!("{what} but is: {}", py_float(value)),
        )),
        None => Ok(()),
    }
}

algorithm! {
    /// PyTorch's `_single_tensor_adafactor`: a matrix (or a batch of them: the last two dims) keeps the running
    /// means of its squared gradient over rows (`row_var`) and over columns (`col_var`), their product over the
    /// rows' mean estimating the second moment; a vector keeps the whole `variance`.
    AdafactorAlgorithm: AdafactorOptions, "Adafactor", update
}

/// `√(Σx²)` of the whole tensor, as PyTorch's `norm(2).item()` gives it: rounded to `x`'s dtype.
fn norm(x: &Tensor) -> Result<f64> {
    x.mul(x)?.sum_all()?.sqrt()?.item()
}

fn update(o: &AdafactorOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let g = decayed_gradient(grad, param, 0.0, o.maximize)?;
    let eps1 = o.eps.0.unwrap_or(match param.dtype() {
        DType::F64 => f64::EPSILON,
        DType::F16 => 0.000_976_562_5,
        DType::BF16 => 0.007_812_5,
        _ => f64::from(f32::EPSILON),
    });
    let step = state.next_step()?;
    let one_minus_beta2 = step.powf(o.beta2_decay);
    let rho = o.lr.min(1.0 / step.sqrt());
    let alpha = o.eps.1.max(norm(param)? / (param.numel() as f64).sqrt()) * rho;
    if o.weight_decay != 0.0 {
        param.mul_scalar_(1.0 - o.lr * o.weight_decay)?;
    }
    let squared = g.mul(&g)?;
    let estimate = if g.shape().len() > 1 {
        // PyTorch's `norm(g, dim).square_().div_(n)`: the mean of the squares along `dim`.
        let (row_mean, col_mean) = (squared.mean_dims(&[-1], true)?, squared.mean_dims(&[-2], true)?);
        let row_var = state.zeros_like("row_var", &row_mean)?;
        let col_var = state.zeros_like("col_var", &col_mean)?;
        row_var.lerp_(&row_mean, one_minus_beta2)?;
        col_var.lerp_(&col_mean, one_minus_beta2)?;
        let floor = row_var.mean_dims(&[-2], true)?.clamp(eps1, f64::INFINITY)?;
        row_var.matmul(&col_var)?.div(&floor)?
    } else {
        let variance = state.zeros_like("variance", param)?;
        variance.lerp_(&squared, one_minus_beta2)?;
        variance.deep_copy()?
    };
    let update = estimate.clamp(eps1 * eps1, f64::INFINITY)?.sqrt()?.recip()?.mul(&g)?;
    let denom = (norm(&update)? / ((update.numel() as f64).sqrt() * o.d)).max(1.0);
    param.add_(&update.mul_scalar(-alpha / denom)?)
}

/// PyTorch's `torch.optim.Adafactor`.
///
/// ```
/// use nn::optim::{Adafactor, AdafactorOptions, Optimizer};
/// use nn::prelude::*;
/// let fc = Linear::new(3, 2, true);
/// let mut opt = Adafactor::new(fc.parameters(), AdafactorOptions::default())?;
/// fc.forward(Tensor::ones([4, 3], DType::F32))?.sum_all()?.backward()?;
/// opt.step()?;
/// let state = opt.state_of(&fc.weight).unwrap();
/// assert_eq!(state.get("row_var").unwrap().shape().dims(), [2, 1]);
/// assert_eq!(state.get("col_var").unwrap().shape().dims(), [1, 3]);
/// assert!(opt.state_of(&fc.bias.as_ref().unwrap()).unwrap().get("variance").is_some());
/// # Ok::<(), nn::Error>(())
/// ```
pub type Adafactor = Optim<AdafactorAlgorithm>;
