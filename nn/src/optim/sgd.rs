//! Stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and `maximize`.

use std::collections::BTreeMap;

use super::{Algorithm, GroupOptions, Hyper, Optim, ParamState, check_non_negative, decayed_gradient};
use crate::{Error, Result, Tensor};

/// PyTorch's `torch.optim.SGD` defaults: `lr=1e-3`, no momentum, dampening, weight decay; not Nesterov; minimising.
#[derive(Clone, Debug, PartialEq)]
pub struct SgdOptions {
    /// Learning rate.
    pub lr: f64,
    /// Momentum factor.
    pub momentum: f64,
    /// Dampening of the momentum.
    pub dampening: f64,
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    /// Nesterov momentum (needs momentum and no dampening).
    pub nesterov: bool,
    /// Maximise the objective.
    pub maximize: bool,
}

impl Default for SgdOptions {
    fn default() -> SgdOptions {
        SgdOptions {
            lr: 1e-3,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            maximize: false,
        }
    }
}

impl GroupOptions for SgdOptions {
    fn lr(&self) -> f64 {
        self.lr
    }

    fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn momentum(&self) -> Option<f64> {
        Some(self.momentum)
    }

    fn set_momentum(&mut self, momentum: f64) -> bool {
        self.momentum = momentum;
        true
    }

    fn validate(&self) -> Result<()> {
        check_non_negative("SGD", "learning rate", self.lr)?;
        check_non_negative("SGD", "momentum value", self.momentum)?;
        check_non_negative("SGD", "weight_decay value", self.weight_decay)?;
        if self.nesterov && (self.momentum <= 0.0 || self.dampening != 0.0) {
            return Err(Error::invalid(
                "SGD",
                "Nesterov momentum requires a momentum and zero dampening",
            ));
        }
        Ok(())
    }

    fn to_hypers(&self) -> Vec<(&'static str, Hyper)> {
        vec![
            ("lr", Hyper::Float(self.lr)),
            ("momentum", Hyper::Float(self.momentum)),
            ("dampening", Hyper::Float(self.dampening)),
            ("weight_decay", Hyper::Float(self.weight_decay)),
            ("nesterov", Hyper::Bool(self.nesterov)),
            ("maximize", Hyper::Bool(self.maximize)),
        ]
    }

    fn with_hypers(&self, h: &BTreeMap<String, Hyper>) -> Result<SgdOptions> {
        let mut o = self.clone();
        for (k, v) in h {
            match k.as_str() {
                "lr" => o.lr = v.float(k)?,
                "momentum" => o.momentum = v.float(k)?,
                "dampening" => o.dampening = v.float(k)?,
                "weight_decay" => o.weight_decay = v.float(k)?,
                "nesterov" => o.nesterov = v.bool(k)?,
                "maximize" => o.maximize = v.bool(k)?,
                _ => {}
            }
        }
        Ok(o)
    }
}

/// SGD's update (PyTorch's `_single_tensor_sgd`): the momentum buffer starts as a copy of the first gradient.
#[derive(Debug)]
pub struct SgdAlgorithm;

impl Algorithm for SgdAlgorithm {
    type Options = SgdOptions;
    const NAME: &'static str = "SGD";

    fn update(o: &SgdOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
        let mut g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
        if o.momentum != 0.0 {
            let buf = match state.get("momentum_buffer") {
                None => {
                    let buf = g.deep_copy()?;
                    state.insert("momentum_buffer", buf.clone());
                    buf
                }
                Some(buf) => {
                    buf.mul_scalar_(o.momentum)?;
                    buf.add_(&g.mul_scalar(1.0 - o.dampening)?)?;
                    buf.clone()
                }
            };
            g = if o.nesterov {
                g.add(&buf.mul_scalar(o.momentum)?)?
            } else {
                buf
            };
        }
        param.add_(&g.mul_scalar(-o.lr)?)
    }
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
