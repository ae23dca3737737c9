//! Adam and AdamW (decoupled weight decay), with `amsgrad` and `maximize`.

use super::{Algorithm, Optim, ParamState, group_options};
use crate::error::py_float;
use crate::ops::optimizer_step::{AdamStep, decayed_gradient};
use crate::{Error, Result, Tensor};

group_options! {
    /// The options of [`Adam`] and [`AdamW`]. `Default` is Adam's (`lr=1e-3, betas=(0.9, 0.999), eps=1e-8`, no
    /// weight decay); [`AdamOptions::adamw`] is AdamW's (weight decay 0.01).
    pub struct AdamOptions for "Adam" {
        /// Learning rate.
        lr: f64 = 1e-3 => "learning rate",
        /// Decay of the running averages of the gradient and its square.
        betas: (f64, f64) = (0.9, 0.999),
        /// Added to the denominator.
        eps: f64 = 1e-8 => "epsilon value",
        /// Weight decay: L2 in the gradient for Adam, decoupled (`p·(1 - lr·wd)`) for AdamW.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Use the maximum of the squared averages so far.
        amsgrad: bool = false,
        /// Maximise the objective.
        maximize: bool = false,
    }
    @momentum = [betas.0];
    @check = |o: &AdamOptions| check_betas("Adam", o.betas);
}

/// `Ok` when both betas lie in `[0, 1)`, else `op`'s error with PyTorch's message.
pub(super) fn check_betas(op: &'static str, betas: (f64, f64)) -> Result<()> {
    for (i, beta) in [betas.0, betas.1].into_iter().enumerate() {
        if !(0.0..1.0).contains(&beta) {
            return Err(Error::invalid(
                op,
                format!("invalid beta parameter at index {i}: {}", py_float(beta)),
            ));
        }
    }
    Ok(())
}

/// The gradient after `maximize` and weight decay, for NAdam and RAdam: L2 in the gradient, or (`decoupled`)
/// the parameter decayed by `lr·weight_decay` first.
pub(super) fn decay(
    param: &Tensor,
    grad: &Tensor,
    lr: f64,
    weight_decay: f64,
    decoupled: bool,
    maximize: bool,
) -> Result<Tensor> {
    if !decoupled {
        return decayed_gradient(grad, param, weight_decay, maximize);
    }
    if weight_decay != 0.0 {
        param.mul_scalar_(1.0 - lr * weight_decay)?;
    }
    decayed_gradient(grad, param, 0.0, maximize)
}

/// Adam's running moments of `g`, in PyTorch's order: `exp_avg` lerped towards `g` by `1 - β₁`, then
/// `exp_avg_sq·β₂ + (1 - β₂)·g·g`.
pub(super) fn update_moments(exp_avg: &Tensor, exp_avg_sq: &Tensor, g: &Tensor, betas: (f64, f64)) -> Result<()> {
    exp_avg.lerp_(g, 1.0 - betas.0)?;
    exp_avg_sq.mul_scalar_(betas.1)?;
    exp_avg_sq.add_(&g.mul_scalar(1.0 - betas.1)?.mul(g)?)
}

impl AdamOptions {
    /// AdamW's defaults: Adam's with `weight_decay=0.01`.
    pub fn adamw() -> AdamOptions {
        AdamOptions {
            weight_decay: 0.01,
            ..AdamOptions::default()
        }
    }
}

/// PyTorch's `_single_tensor_adam` step, decoupled weight decay for AdamW: one op
/// ([`AdamStep`](crate::ops::optimizer_step::AdamStep)), a single pass over the elements on the CPU.
fn adam_update(o: &AdamOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState, decoupled: bool) -> Result<()> {
    let step = state.next_step()?;
    let exp_avg = state.zeros_like("exp_avg", param)?;
    let exp_avg_sq = state.zeros_like("exp_avg_sq", param)?;
    let max = state.zeros_like_if(o.amsgrad, "max_exp_avg_sq", param)?;
    let update = AdamStep {
        lr: o.lr,
        betas: o.betas,
        eps: o.eps,
        weight_decay: o.weight_decay,
        decoupled,
        amsgrad: o.amsgrad,
        maximize: o.maximize,
        step,
    };
    update.apply(param, grad, &exp_avg, &exp_avg_sq, max.as_ref())
}

/// Adam's update (`DECOUPLED = false`) or AdamW's (`true`: the weight decays by `lr·weight_decay` before Adam's
/// step).
#[derive(Debug)]
pub struct AdamUpdate<const DECOUPLED: bool>;

/// Adam's update.
pub type AdamAlgorithm = AdamUpdate<false>;

/// AdamW's update.
pub type AdamWAlgorithm = AdamUpdate<true>;

impl<const DECOUPLED: bool> Algorithm for AdamUpdate<DECOUPLED> {
    type Options = AdamOptions;
    const NAME: &'static str = if DECOUPLED { "AdamW" } else { "Adam" };

    fn update(o: &AdamOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
        adam_update(o, param, grad, state, DECOUPLED)
    }
}

/// PyTorch's `torch.optim.Adam`.
///
/// ```
/// use nn::optim::{Adam, AdamOptions, Optimizer};
/// use nn::prelude::*;
/// let fc = Linear::new(2, 1, false);
/// let mut opt = Adam::new(fc.parameters(), AdamOptions { lr: 0.1, ..Default::default() })?;
/// fc.forward(Tensor::ones([1, 2], DType::F32))?.sum_all()?.backward()?;
/// let before = fc.weight.data().to_vec::<f32>()?;
/// opt.step()?;
/// // Adam's first step moves each weight by lr against the gradient's sign.
/// let after = fc.weight.data().to_vec::<f32>()?;
/// assert!((before[0] - after[0] - 0.1).abs() < 1e-6);
/// # Ok::<(), nn::Error>(())
/// ```
pub type Adam = Optim<AdamAlgorithm>;

/// PyTorch's `torch.optim.AdamW` (construct with [`AdamOptions::adamw`] for its defaults).
pub type AdamW = Optim<AdamWAlgorithm>;
