//! ChainedScheduler: several schedulers of one optimizer stepped together, each on the rates the one before
//! set.

use super::{LrScheduler, SchedulerState};
use crate::optim::{Hyper, Optimizer};
use crate::{Error, Result};

/// PyTorch's `ChainedScheduler(schedulers)`: every step steps each scheduler in order (their formulas being
/// recursive, the factors multiply).
///
/// ```
/// use nn::optim::lr_scheduler::{ChainedScheduler, ConstantLR, ExponentialLR, LrScheduler};
/// use nn::optim::{Optimizer, SGD, SgdOptions};
/// use nn::prelude::*;
/// let fc = Linear::new(2, 1, true);
/// let mut opt = SGD::new(fc.parameters(), SgdOptions { lr: 1.0, ..Default::default() })?;
/// let constant = Box::new(ConstantLR::new(&mut opt, 0.1, 2)?);
/// let exponential = Box::new(ExponentialLR::new(&mut opt, 0.9)?);
/// let mut sched = ChainedScheduler::new(&opt, vec![constant, exponential])?;
/// sched.step(&mut opt)?;
/// assert!((opt.lrs()[0] - 0.1 * 0.9).abs() < 1e-12);
/// # Ok::<(), nn::Error>(())
/// ```
pub struct ChainedScheduler {
    schedulers: Vec<Box<dyn LrScheduler + Send>>,
    last_lr: Vec<f64>,
}

impl std::fmt::Debug for ChainedScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainedScheduler")
            .field("schedulers", &self.schedulers.len())
            .finish()
    }
}

impl ChainedScheduler {
    /// Chains `schedulers`, all built on `opt`; at least one.
    pub fn new(opt: &dyn Optimizer, schedulers: Vec<Box<dyn LrScheduler + Send>>) -> Result<ChainedScheduler> {
        if schedulers.is_empty() {
            return Err(Error::invalid(
                "ChainedScheduler",
                "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.",
            ));
        }
        Ok(ChainedScheduler {
            schedulers,
            last_lr: opt.lrs(),
        })
    }
}

impl LrScheduler for ChainedScheduler {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        for s in &mut self.schedulers {
            s.step(opt)?;
        }
        self.last_lr = opt.lrs();
        Ok(())
    }

    fn get_last_lr(&self) -> Vec<f64> {
        self.last_lr.clone()
    }

    /// The last scheduler's epoch (PyTorch's ChainedScheduler keeps none of its own).
    fn last_epoch(&self) -> i64 {
        self.schedulers.last().map_or(0, |s| s.last_epoch())
    }

    fn set_last_epoch(&mut self, epoch: i64) {
        for s in &mut self.schedulers {
            s.set_last_epoch(epoch);
        }
    }

    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) -> Result<()> {
        for s in &mut self.schedulers {
            s.step_to(opt, epoch)?;
        }
        self.last_lr = opt.lrs();
        Ok(())
    }

    fn initial_step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        for s in &mut self.schedulers {
            s.initial_step(opt)?;
        }
        self.last_lr = opt.lrs();
        Ok(())
    }

    fn state_dict(&self) -> SchedulerState {
        let mut out = super::children_state(&self.schedulers);
        out.insert("_last_lr".into(), Hyper::List(self.last_lr.clone()));
        out
    }

    fn load_state_dict(&mut self, state: &SchedulerState) -> Result<()> {
        let last_lr = super::read(state, "_last_lr")?;
        super::load_children(&mut self.schedulers, state)?;
        self.last_lr = last_lr;
        Ok(())
    }
}
