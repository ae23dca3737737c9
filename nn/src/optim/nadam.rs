//! NAdam: Adam with Nesterov momentum, with L2 or decoupled weight decay and `maximize`.

use super::adam::{check_betas, decay, update_moments};
use super::{Optim, ParamState, algorithm, group_options};
use crate::{Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.NAdam` defaults: `lr=2e-3, betas=(0.9, 0.999), eps=1e-8, momentum_decay=4e-3`, no
    /// weight decay.
    pub struct NAdamOptions for "NAdam" {
        /// Learning rate.
        lr: f64 = 2e-3 => "learning rate",
        /// Decay of the running averages of the gradient and its square, each in `[0, 1)`.
        betas: (f64, f64) = (0.9, 0.999),
        /// Added to the denominator.
        eps: f64 = 1e-8 => "epsilon value",
        /// Weight decay: L2 in the gradient, or decoupled (`p·(1 - lr·wd)`, NAdamW) with
        /// `decoupled_weight_decay`.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// The momentum schedule's decay: `μ_t = β₁·(1 - 0.96^(t·momentum_decay) / 2)`.
        momentum_decay: f64 = 4e-3 => "momentum_decay value",
        /// Decay the weights directly instead of through the gradient.
        decoupled_weight_decay: bool = false,
        /// Maximise the objective.
        maximize: bool = false,
    }
    @momentum = [betas.0];
    @check = |o: &NAdamOptions| check_betas("NAdam", o.betas);
}

algorithm! {
    /// PyTorch's `_single_tensor_nadam`. The product of the momentum schedule, `mu_product`, is a float32 scalar
    /// as in PyTorch (each factor multiplied in float32), and the step sizes read it back.
    NAdamAlgorithm: NAdamOptions, "NAdam", update
}

fn update(o: &NAdamOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let step = state.next_step()?;
    let mu_product = state.scalar("mu_product", 1.0)?;
    let exp_avg = state.zeros_like("exp_avg", param)?;
    let exp_avg_sq = state.zeros_like("exp_avg_sq", param)?;
    let (beta1, beta2) = o.betas;
    let bias_correction2 = 1.0 - beta2.powf(step);
    let g = decay(param, grad, o.lr, o.weight_decay, o.decoupled_weight_decay, o.maximize)?;
    let mu = beta1 * (1.0 - 0.5 * 0.96f64.powf(step * o.momentum_decay));
    let mu_next = beta1 * (1.0 - 0.5 * 0.96f64.powf((step + 1.0) * o.momentum_decay));
    mu_product.mul_scalar_(mu)?;
    let mu_product = mu_product.item()?;
    update_moments(&exp_avg, &exp_avg_sq, &g, o.betas)?;
    let denom = exp_avg_sq.div_scalar(bias_correction2)?.sqrt()?.add_scalar(o.eps)?;
    let mu_product_next = mu_product * mu_next;
    param.add_(&g.mul_scalar(-o.lr * (1.0 - mu) / (1.0 - mu_product))?.div(&denom)?)?;
    param.add_(
        &exp_avg
            .mul_scalar(-o.lr * mu_next / (1.0 - mu_product_next))?
            .div(&denom)?,
    )
}

/// PyTorch's `torch.optim.NAdam`.
pub type NAdam = Optim<NAdamAlgorithm>;
