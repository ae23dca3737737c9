//! RMSprop, with momentum, centring, weight decay and `maximize`.

use std::collections::BTreeMap;

use super::{Algorithm, GroupOptions, Hyper, Optim, ParamState, check_non_negative, decayed_gradient, lerp_};
use crate::{Result, Tensor};

/// PyTorch's `torch.optim.RMSprop` defaults: `lr=0.01, alpha=0.99, eps=1e-8`, no weight decay or momentum, not
/// centred.
#[derive(Clone, Debug, PartialEq)]
pub struct RMSpropOptions {
    /// Learning rate.
    pub lr: f64,
    /// Smoothing constant of the squared average.
    pub alpha: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    /// Momentum factor.
    pub momentum: f64,
    /// Normalise by the variance (the squared average less the squared mean gradient).
    pub centered: bool,
    /// Maximise the objective.
    pub maximize: bool,
}

impl Default for RMSpropOptions {
    fn default() -> RMSpropOptions {
        RMSpropOptions {
            lr: 1e-2,
            alpha: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
            maximize: false,
        }
    }
}

impl GroupOptions for RMSpropOptions {
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
        check_non_negative("RMSprop", "learning rate", self.lr)?;
        check_non_negative("RMSprop", "epsilon value", self.eps)?;
        check_non_negative("RMSprop", "momentum value", self.momentum)?;
        check_non_negative("RMSprop", "weight_decay value", self.weight_decay)?;
        check_non_negative("RMSprop", "alpha value", self.alpha)
    }

    fn to_hypers(&self) -> Vec<(&'static str, Hyper)> {
        vec![
            ("lr", Hyper::Float(self.lr)),
            ("momentum", Hyper::Float(self.momentum)),
            ("alpha", Hyper::Float(self.alpha)),
            ("eps", Hyper::Float(self.eps)),
            ("centered", Hyper::Bool(self.centered)),
            ("weight_decay", Hyper::Float(self.weight_decay)),
            ("maximize", Hyper::Bool(self.maximize)),
        ]
    }

    fn with_hypers(&self, h: &BTreeMap<String, Hyper>) -> Result<RMSpropOptions> {
        let mut o = self.clone();
        for (k, v) in h {
            match k.as_str() {
                "lr" => o.lr = v.float(k)?,
                "momentum" => o.momentum = v.float(k)?,
                "alpha" => o.alpha = v.float(k)?,
                "eps" => o.eps = v.float(k)?,
                "centered" => o.centered = v.bool(k)?,
                "weight_decay" => o.weight_decay = v.float(k)?,
                "maximize" => o.maximize = v.bool(k)?,
                _ => {}
            }
        }
        Ok(o)
    }
}

/// PyTorch's `_single_tensor_rmsprop`.
#[derive(Debug)]
pub struct RMSpropAlgorithm;

impl Algorithm for RMSpropAlgorithm {
    type Options = RMSpropOptions;
    const NAME: &'static str = "RMSprop";

    fn update(o: &RMSpropOptions, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
        let step = state.step()? + 1.0;
        state.set_step(step)?;
        let g = decayed_gradient(grad, param, o.weight_decay, o.maximize)?;
        let square_avg = state.zeros_like("square_avg", param)?;
        let momentum_buffer = if o.momentum > 0.0 {
            Some(state.zeros_like("momentum_buffer", param)?)
        } else {
            None
        };
        square_avg.mul_scalar_(o.alpha)?;
        square_avg.add_(&g.mul_scalar(1.0 - o.alpha)?.mul(&g)?)?;
        let avg = if o.centered {
            let grad_avg = state.zeros_like("grad_avg", param)?;
            lerp_(&grad_avg, &g, 1.0 - o.alpha)?;
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
}

/// PyTorch's `torch.optim.RMSprop`.
pub type RMSprop = Optim<RMSpropAlgorithm>;
