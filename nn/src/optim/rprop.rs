//! Rprop: resilient backpropagation, steps of a size of their own per element, with `maximize`.

use super::{Optim, ParamState, algorithm, group_options};
use crate::error::py_float;
use crate::ops::optimizer_step::decayed_gradient;
use crate::{Error, Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.Rprop` defaults: `lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50)`.
    pub struct RpropOptions for "Rprop" {
        /// Learning rate: every element's first step size.
        lr: f64 = 1e-2 => "learning rate",
        /// The factors `(etaminus, etaplus)` a step size takes when the gradient's sign flips or holds
        /// (`0 < etaminus < 1 < etaplus`).
        etas: (f64, f64) = (0.5, 1.2),
        /// The smallest and largest step sizes.
        step_sizes: (f64, f64) = (1e-6, 50.0),
        /// Maximise the objective.
        maximize: bool = false,
    }
    @check = etas_around_one;
}

/// PyTorch's check that `0 < etaminus < 1 < etaplus`.
fn etas_around_one(o: &RpropOptions) -> Result<()> {
    let (minus, plus) = o.etas;
    if !(0.0 < minus && minus < 1.0 && 1.0 < plus) {
        return Err(Error::invalid(
            "Rprop",
            format!("invalid eta values: {}, {}", py_float(minus), py_float(plus)),
        ));
    }
    Ok(())
}

algorithm! {
    /// PyTorch's `_single_tensor_rprop`: each element's step size grows by `etaplus` while its gradient keeps its
    /// sign and shrinks by `etaminus` when it flips (that step then skipped, and the gradient remembered as 0).
    RpropAlgorithm: RpropOptions, "Rprop", update
}

fn update(o: &RpropOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
    let g = decayed_gradient(grad, param, 0.0, o.maximize)?;
    state.next_step()?;
    let prev = state.zeros_like("prev", param)?;
    let step_size = match state.get("step_size") {
        Some(t) => t.clone(),
        None => {
            let t = g.zeros_like()?;
            t.fill_(o.lr)?;
            state.insert("step_size", t.clone());
            t
        }
    };
    let (etaminus, etaplus) = o.etas;
    let (smallest, largest) = o.step_sizes;
    let agreement = g.mul(&prev)?;
    step_size.copy_(
        &step_size
            .mul(&agreement.sign_factor(etaplus, etaminus)?)?
            .clamp(smallest, largest)?,
    )?;
    let g = g.mul(&agreement.sign_factor(1.0, 0.0)?)?;
    param.sub_(&g.sign()?.mul(&step_size)?)?;
    prev.copy_(&g)
}

/// PyTorch's `torch.optim.Rprop`.
pub type Rprop = Optim<RpropAlgorithm>;
