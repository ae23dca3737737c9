//! Adadelta, with weight decay and `maximize`.

use super::{Optim, ParamState, algorithm, group_options};
use crate::error::py_float;
use crate::ops::optimizer_step::decayed_gradient;
use crate::{Error, Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.Adadelta` defaults: `lr=1.0, rho=0.9, eps=1e-6`, no weight decay.
    pub struct AdadeltaOptions for "Adadelta" {
        /// Learning rate: the factor of the computed step.
        lr: f64 = 1.0 => "learning rate",
        /// Decay of the running averages of the squared gradient and the squared step, in `[0, 1]`.
        rho: f64 = 0.9,
        /// Added inside both square roots.
        eps: f64 = 1e-6 => "epsilon value",
        /// L2 penalty added to the gradient.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// Maximise the objective.
        maximize: bool = false,
    }
    @check = rho_in_unit_interval;
}

/// PyTorch's check that `rho` lies in `[0, 1]`.
fn rho_in_unit_interval(o: &AdadeltaOptions) -> Result<()> {
    if !(0.0..=1.0).contains(&o.rho) {
        return Err(Error::invalid(
            "Adadelta",
            format!("invalid rho value: {}", py_float(o.rho)),
        ));
    }
    Ok(())
}

algorithm! {
    /// PyTorch's `_single_tensor_adadelta`.
    AdadeltaAlgorithm: AdadeltaOptions, "Adadelta", update
}

fn update(o: &AdadeltaOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    state.next_step()?;
    let square_avg = state.zeros_like("square_avg", param)?;
    let acc_delta = state.zeros_like("acc_delta", param)?;
    let g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
    square_avg.mul_scalar_(o.rho)?;
    square_avg.add_(&g.mul_scalar(1.0 - o.rho)?.mul(&g)?)?;
    let std = square_avg.add_scalar(o.eps)?.sqrt()?;
    let delta = acc_delta.add_scalar(o.eps)?.sqrt()?.div(&std)?.mul(&g)?;
    acc_delta.mul_scalar_(o.rho)?;
    acc_delta.add_(&delta.mul_scalar(1.0 - o.rho)?.mul(&delta)?)?;
    param.add_(&delta.mul_scalar(-o.lr)?)
}

/// PyTorch's `torch.optim.Adadelta`.
///
/// ```
/// use nn::optim::{Adadelta, AdadeltaOptions, Optimizer};
/// use nn::prelude::*;
/// let fc = Linear::new(3, 1, true);
/// let mut opt = Adadelta::new(fc.parameters(), AdadeltaOptions::default())?;
/// fc.forward(Tensor::ones([2, 3], DType::F32))?.sum_all()?.backward()?;
/// opt.step()?;
/// assert_eq!(opt.state_dict()?.state[&0].iter().map(|(k, _)| k).collect::<Vec<_>>(), ["step", "square_avg", "acc_delta"]);
/// # Ok::<(), nn::Error>(())
/// ```
pub type Adadelta = Optim<AdadeltaAlgorithm>;
