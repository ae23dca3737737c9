//! Adagrad, with learning-rate decay, weight decay, an initial accumulator and `maximize`.

use std::collections::BTreeMap;

use super::{Algorithm, GroupOptions, Hyper, Optim, ParamState, check_non_negative, decayed_gradient};
use crate::{Result, Tensor};

/// PyTorch's `torch.optim.Adagrad` defaults: `lr=0.01, lr_decay=0, weight_decay=0,
/// initial_accumulator_value=0, eps=1e-10`.
#[derive(Clone, Debug, PartialEq)]
pub struct AdagradOptions {
    /// Learning rate.
    pub lr: f64,
    /// The learning rate is `lr / (1 + (step - 1)·lr_decay)`.
    pub lr_decay: f64,
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    /// The accumulator's starting value.
    pub initial_accumulator_value: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// Maximise the objective.
    pub maximize: bool,
}

impl Default for AdagradOptions {
    fn default() -> AdagradOptions {
        AdagradOptions {
            lr: 1e-2,
            lr_decay: 0.0,
            weight_decay: 0.0,
            initial_accumulator_value: 0.0,
            eps: 1e-10,
            maximize: false,
        }
    }
}

impl GroupOptions for AdagradOptions {
    fn lr(&self) -> f64 {
        self.lr
    }

    fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn validate(&self) -> Result<()> {
        check_non_negative("Adagrad", "learning rate", self.lr)?;
        check_non_negative("Adagrad", "lr_decay value", self.lr_decay)?;
        check_non_negative("Adagrad", "weight_decay value", self.weight_decay)?;
        check_non_negative("Adagrad", "initial_accumulator_value", self.initial_accumulator_value)?;
        check_non_negative("Adagrad", "epsilon value", self.eps)
    }

    fn to_hypers(&self) -> Vec<(&'static str, Hyper)> {
        vec![
            ("lr", Hyper::Float(self.lr)),
            ("lr_decay", Hyper::Float(self.lr_decay)),
            ("eps", Hyper::Float(self.eps)),
            ("weight_decay", Hyper::Float(self.weight_decay)),
            (
                "initial_accumulator_value",
                Hyper::Float(self.initial_accumulator_value),
            ),
            ("maximize", Hyper::Bool(self.maximize)),
        ]
    }

    fn with_hypers(&self, h: &BTreeMap<String, Hyper>) -> Result<AdagradOptions> {
        let mut o = self.clone();
        for (k, v) in h {
            match k.as_str() {
                "lr" => o.lr = v.float(k)?,
                "lr_decay" => o.lr_decay = v.float(k)?,
                "eps" => o.eps = v.float(k)?,
                "weight_decay" => o.weight_decay = v.float(k)?,
                "initial_accumulator_value" => o.initial_accumulator_value = v.float(k)?,
                "maximize" => o.maximize = v.bool(k)?,
                _ => {}
            }
        }
        Ok(o)
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
        let step = state.step()? + 1.0;
        state.set_step(step)?;
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
