//! CosineAnnealingWarmRestarts: cosine annealing from the base rate to `eta_min`, restarted every `T_i`
//! epochs, each period `T_mult` times the last (SGDR).

use std::f64::consts::PI;

use super::{Base, LrScheduler, SchedulerState, base_accessors, read};
use crate::optim::{Hyper, Optimizer};
use crate::{Error, Result};

/// PyTorch's `CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0)`.
///
/// ```
/// use nn::optim::lr_scheduler::{CosineAnnealingWarmRestarts, LrScheduler};
/// use nn::optim::{Optimizer, SGD, SgdOptions};
/// use nn::prelude::*;
/// let fc = Linear::new(2, 1, true);
/// let mut opt = SGD::new(fc.parameters(), SgdOptions { lr: 0.1, ..Default::default() })?;
/// let mut sched = CosineAnnealingWarmRestarts::new(&mut opt, 2, 1, 0.0)?;
/// sched.step(&mut opt)?; // halfway down: 0.05
/// sched.step(&mut opt)?; // restarted: 0.1
/// assert!((opt.lrs()[0] - 0.1).abs() < 1e-12);
/// sched.step_epoch(&mut opt, 0.5)?; // within an epoch, as PyTorch's `step(epoch + i / iters)`
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CosineAnnealingWarmRestarts {
    base: Base,
    t_0: i64,
    t_i: f64,
    t_mult: i64,
    eta_min: f64,
    t_cur: f64,
}

impl CosineAnnealingWarmRestarts {
    /// Attaches to `opt` and takes the initial step; `t_0` must be positive and `t_mult` at least 1, as
    /// PyTorch's checks say.
    pub fn new(opt: &mut dyn Optimizer, t_0: i64, t_mult: i64, eta_min: f64) -> Result<CosineAnnealingWarmRestarts> {
        let op = "CosineAnnealingWarmRestarts";
        if t_0 <= 0 {
            return Err(Error::invalid(
                op,
                format!("Expected positive integer T_0, but got {t_0}"),
            ));
        }
        if t_mult < 1 {
            return Err(Error::invalid(
                op,
                format!("Expected integer T_mult >= 1, but got {t_mult}"),
            ));
        }
        let mut s = CosineAnnealingWarmRestarts {
            base: Base::attach(opt)?,
            t_0,
            t_i: t_0 as f64,
            t_mult,
            eta_min,
            t_cur: -1.0,
        };
        s.initial_step(opt)?;
        Ok(s)
    }

    /// The epoch within the current period (fractional after [`step_epoch`](Self::step_epoch)).
    pub fn t_cur(&self) -> f64 {
        self.t_cur
    }

    /// The current period's length.
    pub fn t_i(&self) -> f64 {
        self.t_i
    }

    /// Steps to `epoch`, which may be fractional (PyTorch's `step(epoch)`): the period and the place in it
    /// follow from the epoch alone. A negative epoch is an error.
    pub fn step_epoch(&mut self, opt: &mut dyn Optimizer, epoch: f64) -> Result<()> {
        if epoch < 0.0 {
            return Err(Error::invalid(
                "CosineAnnealingWarmRestarts",
                format!("Expected non-negative epoch, but got {epoch}"),
            ));
        }
        let t_0 = self.t_0 as f64;
        if epoch >= t_0 {
            if self.t_mult == 1 {
                self.t_cur = epoch % t_0;
            } else {
                let m = self.t_mult as f64;
                let n = (epoch / t_0 * (m - 1.0) + 1.0).log(m).trunc();
                self.t_cur = epoch - t_0 * (m.powf(n) - 1.0) / (m - 1.0);
                self.t_i = t_0 * m.powf(n);
            }
        } else {
            self.t_i = t_0;
            self.t_cur = epoch;
        }
        self.base.last_epoch = epoch.floor() as i64;
        self.apply(opt)
    }

    fn apply(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        let lrs: Vec<f64> = self
            .base
            .base_lrs
            .iter()
            .map(|b| self.eta_min + (b - self.eta_min) * (1.0 + (PI * self.t_cur / self.t_i).cos()) / 2.0)
            .collect();
        for (g, lr) in lrs.iter().enumerate() {
            opt.set_lr(g, *lr)?;
        }
        self.base.last_lr = lrs;
        Ok(())
    }
}

/// A number as PyTorch's state holds it: an integer while it is one.
fn number(v: f64) -> Hyper {
    if v.fract() == 0.0 && v.abs() < 2f64.powi(53) {
        Hyper::Int(v as i64)
    } else {
        Hyper::Float(v)
    }
}

/// The number `key` of `state`, integer or not.
fn read_number(state: &SchedulerState, key: &str) -> Result<f64> {
    match state.get(key) {
        Some(Hyper::Int(v)) => Ok(*v as f64),
        Some(other) => other.float(key),
        None => Err(Error::invalid(
            "load_state_dict",
            format!("the scheduler state has no {key}"),
        )),
    }
}

impl LrScheduler for CosineAnnealingWarmRestarts {
    /// One epoch on: the place in the period advances, and past its end a new period `T_mult` times longer
    /// starts (PyTorch's `step()`, which leaves `_step_count` alone).
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        if self.base.last_epoch < 0 {
            return self.step_epoch(opt, 0.0);
        }
        self.base.last_epoch += 1;
        self.t_cur += 1.0;
        if self.t_cur >= self.t_i {
            self.t_cur -= self.t_i;
            self.t_i *= self.t_mult as f64;
        }
        self.apply(opt)
    }

    base_accessors!();

    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) -> Result<()> {
        self.step_epoch(opt, epoch as f64)
    }

    fn state_dict(&self) -> SchedulerState {
        let mut out: SchedulerState = self.base.state().into_iter().collect();
        out.insert("T_0".into(), Hyper::Int(self.t_0));
        out.insert("T_i".into(), number(self.t_i));
        out.insert("T_mult".into(), Hyper::Int(self.t_mult));
        out.insert("eta_min".into(), Hyper::Float(self.eta_min));
        out.insert("T_cur".into(), number(self.t_cur));
        out
    }

    fn load_state_dict(&mut self, state: &SchedulerState) -> Result<()> {
        let base = self.base.load(state)?;
        let loaded = CosineAnnealingWarmRestarts {
            base,
            t_0: read(state, "T_0")?,
            t_i: read_number(state, "T_i")?,
            t_mult: read(state, "T_mult")?,
            eta_min: read_number(state, "eta_min")?,
            t_cur: read_number(state, "T_cur")?,
        };
        *self = loaded;
        Ok(())
    }
}
