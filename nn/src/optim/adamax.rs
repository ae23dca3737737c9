//! Adamax: Adam with the infinity norm, with weight decay and `maximize`.

use super::adam::check_betas;
use super::{Optim, ParamState, algorithm, group_options};
use crate::ops::optimizer_step::decayed_gradient;
use crate::{Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.Adamax` defaults: `lr=2e-3, betas=(0.9, 0.999), eps=1e-8`, no weight decay.
    pub struct AdamaxOptions for "Adamax" {
        /// Learning rate.
        lr: f64 = 2e-3 => "learning rate",
        /// Decay of the running average of the gradient and of the infinity norm, each in `[0, 1)`.
        betas: (f64, f64) = (0.9, 0.999),
        /// Added to the gradient's magnitude.
        eps: f64 = 1e-8 => "epsilon value",
        /// L2 penalty added to the gradient.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Maximise the objective.
        maximize: bool = false,
    }
    @momentum = [betas.0];
    @check = |o: &AdamaxOptions| check_betas("Adamax", o.betas);
}

algorithm! {
    /// PyTorch's `_single_tensor_adamax`.
    AdamaxAlgorithm: AdamaxOptions, "Adamax", update
}

fn update(o: &AdamaxOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let step = state.next_step()?;
    let exp_avg = state.zeros_like("exp_avg", param)?;
    let exp_inf = state.zeros_like("exp_inf", param)?;
    let g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
    let (beta1, beta2) = o.betas;
    exp_avg.lerp_(&g, 1.0 - beta1)?;
    exp_inf.mul_scalar_(beta2)?;
    exp_inf.maximum_(&g.abs()?.add_scalar(o.eps)?)?;
    let clr = o.lr / (1.0 - beta1.powf(step));
    param.add_(&exp_avg.mul_scalar(-clr)?.div(&exp_inf)?)
}

/// PyTorch's `torch.optim.Adamax`.
pub type Adamax = Optim<AdamaxAlgorithm>;
