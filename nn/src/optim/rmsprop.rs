//! RMSprop, with momentum, centring, weight decay and `maximize`.

use super::{Optim, ParamState, algorithm, group_options};
use crate::ops::optimizer_step::decayed_gradient;
use crate::{Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.RMSprop` defaults: `lr=0.01, alpha=0.99, eps=1e-8`, no weight decay or momentum, not
    /// centred.
    pub struct RMSpropOptions for "RMSprop" {
        /// Learning rate.
        lr: f64 = 1e-2 => "learning rate",
        /// Momentum factor.
        momentum: f64 = 0.0 => "momentum value",
        /// Smoothing constant of the squared average.
        alpha: f64 = 0.99 => "alpha value",
        /// Added to the denominator.
        eps: f64 = 1e-8 => "epsilon value",
        /// Normalise by the variance (the squared average less the squared mean gradient).
        centered: bool = false,
        /// L2 penalty added to the gradient.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Maximise the objective.
        maximize: bool = false,
    }
    @momentum = [momentum];
}

algorithm! {
    /// PyTorch's `_single_tensor_rmsprop`.
    RMSpropAlgorithm: RMSpropOptions, "RMSprop", update
}

fn update(o: &RMSpropOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    state.next_step()?;
    let g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
    let square_avg = state.zeros_like("square_avg", param)?;
    let momentum_buffer = state.zeros_like_if(o.momentum > 0.0, "momentum_buffer", param)?;
    square_avg.mul_scalar_(o.alpha)?;
    square_avg.add_(&g.mul_scalar(1.0 - o.alpha)?.mul(&g)?)?;
    let avg = if o.centered {
        let grad_avg = state.zeros_like("grad_avg", param)?;
        grad_avg.lerp_(&g, 1.0 - o.alpha)?;
        square_avg.sub(&grad_avg.mul(&grad_avg)?)?.sqrt()?
    } else {
        square_avg.sqrt()?
    };
    let avg = avg.add_scalar(o.eps)?;
    match momentum_buffer {
        Some(buf) => {
            buf.mul_scalar_(o.momentum)?;
            buf.add_(&g.div(&avg)?)?;
            param.add_(&buf.mul_scalar(-o.lr)?)
        }
        None => param.add_(&g.mul_scalar(-o.lr)?.div(&avg)?),
    }
}

/// PyTorch's `torch.optim.RMSprop`.
pub type RMSprop = Optim<RMSpropAlgorithm>;
