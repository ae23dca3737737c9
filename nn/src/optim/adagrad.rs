//! Adagrad, with learning-rate decay, weight decay, an initial accumulator and `maximize`.

use super::{Algorithm, Optim, ParamState, group_options};
use crate::ops::optimizer_step::decayed_gradient;
use crate::{Result, Tensor};

group_options! {
    /// PyTorch's `torch.optim.Adagrad` defaults: `lr=0.01, lr_decay=0, weight_decay=0,
    /// initial_accumulator_value=0, eps=1e-10`.
    pub struct AdagradOptions for "Adagrad" {
        /// Learning rate.
        lr: f64 = 1e-2 => "learning rate",
        /// The learning rate is `lr / (1 + (step - 1)·lr_decay)`.
        lr_decay: f64 = 0.0 => "lr_decay value",
        /// Added to the denominator.
        eps: f64 = 1e-10 => "epsilon value",
        /// L2 penalty added to the gradient.
        weight_decay: f64 = 0.0 => "weight_decay value",
        /// The accumulator's starting value.
        initial_accumulator_value: f64 = 0.0 => "initial_accumulator_value value",
        /// Maximise the objective.
        maximize: bool = false,
    }
}

/// PyTorch's `_single_tensor_adagrad`; the accumulator `sum` exists from construction, as PyTorch makes it.
#[derive(Debug)]
pub struct AdagradAlgorithm;

impl Algorithm for AdagradAlgorithm {
    type Options = AdagradOptions;
    const NAME: &'static str = "Adagrad";

    fn initial_state(o: &AdagradOptions, param: &Tensor) -> Result<Option<ParamState>> {
        let mut state = ParamState::default();
        state.set_step(0.0)?;
        let sum = param.zeros_like()?;
        sum.fill_(o.initial_accumulator_value)?;
        state.insert("sum", sum);
        Ok(Some(state))
    }

    fn update(o: &AdagradOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
        let step = state.next_step()?;
        let g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
        let clr = o.lr / (1.0 + (step - 1.0) * o.lr_decay);
        let sum = state.zeros_like("sum", param)?;
        sum.add_(&g.mul(&g)?)?;
        let std = sum.sqrt()?.add_scalar(o.eps)?;
        param.add_(&g.mul_scalar(-clr)?.div(&std)?)
    }
}

/// PyTorch's `torch.optim.Adagrad`.
pub type Adagrad = Optim<AdagradAlgorithm>;
