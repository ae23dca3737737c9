//! Stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and `maximize`.

use super::{Optim, ParamState, algorithm, group_options};
use crate::ops::optimizer_step::SgdStep;
use crate::{Error, Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.SGD` defaults: `lr=1e-3`, no momentum, dampening, weight decay; not Nesterov; minimising.
    pub struct SgdOptions for "SGD" {
        /// Learning rate.
        lr: f64 = 1e-3 => "learning rate",
        /// Momentum factor.
        momentum: f64 = 0.0 => "momentum value",
        /// Dampening of the momentum.
        dampening: f64 = 0.0,
        /// L2 penalty added to the gradient.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Nesterov momentum (needs momentum and no dampening).
        nesterov: bool = false,
        /// Maximise the objective.
        maximize: bool = false,
    }
    @momentum = [momentum];
    @check = nesterov_needs_momentum;
}

/// PyTorch's check that Nesterov momentum has a momentum and no dampening.
fn nesterov_needs_momentum(o: &SgdOptions) -> Result<()> {
    if o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0) {
        return Err(Error::invalid(
            "SGD",
            "Nesterov momentum requires a momentum and zero dampening",
        ));
    }
    Ok(())
}

algorithm! {
    /// SGD's update (PyTorch's `_single_tensor_sgd`): the momentum buffer starts as a copy of the first gradient.
    SgdAlgorithm: SgdOptions, "SGD", update
}

fn update(o: &SgdOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let first = state.get("momentum_buffer").is_none();
    let buf = state.zeros_like_if(o.momentum != 0.0, "momentum_buffer", param)?;
    let update = SgdStep {
        lr: o.lr,
        momentum: o.momentum,
        dampening: o.dampening,
        weight_decay: o.weight_decay,
        nesterov: o.nesterov,
        maximize: o.maximize,
        first,
    };
    update.apply(param, grad, buf.as_ref())
}

/// PyTorch's `torch.optim.SGD`.
///
/// ```
/// use nn::optim::{SGD, SgdOptions};
/// use nn::prelude::*;
/// let fc = Linear::new(2, 2, true);
/// let nesterov = SgdOptions { lr: 0.1, momentum: 0.9, nesterov: true, ..Default::default() };
/// assert!(SGD::new(fc.parameters(), nesterov).is_ok());
/// let bad = SgdOptions { nesterov: true, ..Default::default() };
/// assert!(SGD::new(fc.parameters(), bad).is_err());
/// ```
pub type SGD = Optim<SgdAlgorithm>;
