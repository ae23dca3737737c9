//! RAdam: Adam with the variance of the adaptive rate rectified, with L2 or decoupled weight decay and
//! `maximize`.

use super::adam::{check_betas, decay, update_moments};
use super::{Optim, ParamState, algorithm, group_options};
use crate::{Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.RAdam` defaults: `lr=1e-3, betas=(0.9, 0.999), eps=1e-8`, no weight decay.
    pub struct RAdamOptions for "RAdam" {
        /// Learning rate.
        lr: f64 = 1e-3 => "learning rate",
        /// Decay of the running averages of the gradient and its square, each in `[0, 1)`.
        betas: (f64, f64) = (0.9, 0.999),
        /// Added to the denominator.
        eps: f64 = 1e-8 => "epsilon value",
        /// Weight decay: L2 in the gradient, or decoupled (`p·(1 - lr·wd)`) with `decoupled_weight_decay`.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Decay the weights directly instead of through the gradient.
        decoupled_weight_decay: bool = false,
        /// Maximise the objective.
        maximize: bool = false,
    }
    @momentum = [betas.0];
    @check = |o: &RAdamOptions| check_betas("RAdam", o.betas);
}

algorithm! {
    /// PyTorch's `_single_tensor_radam`: the adaptive step once the approximated moving average's length passes 5,
    /// plain momentum before.
    RAdamAlgorithm: RAdamOptions, "RAdam", update
}

fn update(o: &RAdamOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let step = state.next_step()?;
    let exp_avg = state.zeros_like("exp_avg", param)?;
    let exp_avg_sq = state.zeros_like("exp_avg_sq", param)?;
    let g = decay(param, grad, o.lr, o.weight_decay, o.decoupled_weight_decay, o.maximize)?;
    let (beta1, beta2) = o.betas;
    update_moments(&exp_avg, &exp_avg_sq, &g, o.betas)?;
    let bias_correction1 = 1.0 - beta1.powf(step);
    let bias_correction2 = 1.0 - beta2.powf(step);
    let corrected = exp_avg.div_scalar(bias_correction1)?.mul_scalar(o.lr)?;
    let rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    let rho_t = rho_inf - 2.0 * step * beta2.powf(step) / bias_correction2;
    if rho_t > 5.0 {
        let rect = ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t)).sqrt();
        // PyTorch's `number / tensor` is the tensor's reciprocal times the number.
        let adaptive = exp_avg_sq
            .sqrt()?
            .add_scalar(o.eps)?
            .recip()?
            .mul_scalar(bias_correction2.sqrt())?;
        param.sub_(&corrected.mul(&adaptive)?.mul_scalar(rect)?)
    } else {
        param.sub_(&corrected)
    }
}

/// PyTorch's `torch.optim.RAdam`.
pub type RAdam = Optim<RAdamAlgorithm>;
