//! ASGD: averaged stochastic gradient descent, with weight decay and `maximize`.

use super::{Optim, ParamState, algorithm, group_options};
use crate::ops::optimizer_step::decayed_gradient;
use crate::{Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.ASGD` defaults: `lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6`, no weight decay.
    pub struct ASGDOptions for "ASGD" {
        /// Learning rate.
        lr: f64 = 1e-2 => "learning rate",
        /// Decay term.
        lambd: f64 = 1e-4,
        /// Power of the learning rate's decay `eta = lr / (1 + lambd·lr·t)^alpha`.
        alpha: f64 = 0.75,
        /// The step from which the average runs.
        t0: f64 = 1e6,
        /// L2 penalty added to the gradient.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Maximise the objective.
        maximize: bool = false,
    }
}

algorithm! {
    /// PyTorch's `_single_tensor_asgd`: `eta` and `mu` are float32 scalars, as PyTorch keeps them, and each step
    /// reads them back; `ax` holds the average of the parameters since step `t0`.
    ASGDAlgorithm: ASGDOptions, "ASGD", update
}

fn update(o: &ASGDOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let step = state.next_step()?;
    let eta = state.scalar("eta", o.lr)?;
    let mu = state.scalar("mu", 1.0)?;
    let ax = state.zeros_like("ax", param)?;
    let g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
    let eta_value = eta.item()?;
    param.mul_scalar_(1.0 - o.lambd * eta_value)?;
    param.add_(&g.mul_scalar(-eta_value)?)?;
    let mu_value = mu.item()?;
    if mu_value != 1.0 {
        ax.add_(&param.sub(&ax)?.mul_scalar(mu_value)?)?;
    } else {
        ax.copy_(param)?;
    }
    eta.fill_(o.lr / (1.0 + o.lambd * o.lr * step).powf(o.alpha))?;
    mu.fill_(1.0 / (step - o.t0).max(1.0))
}

/// PyTorch's `torch.optim.ASGD`.
pub type ASGD = Optim<ASGDAlgorithm>;
