//! PyTorch's `torch.optim.lr_scheduler`: [`StepLR`], [`MultiStepLR`], [`ExponentialLR`], [`CosineAnnealingLR`],
//! [`LinearLR`], [`OneCycleLR`], [`LambdaLR`], [`MultiplicativeLR`], [`ConstantLR`], [`PolynomialLR`],
//! [`CyclicLR`], [`CosineAnnealingWarmRestarts`], [`SequentialLR`], [`ChainedScheduler`] and
//! [`ReduceLROnPlateau`] (stepped with the metric), each with its state dict.
//!
//! A scheduler does not own the optimizer: it is built from it (taking the initial step, as PyTorch's
//! constructor does) and each `step(&mut opt)` sets the groups' learning rates, with PyTorch's recursive
//! (chainable) formulas, so the numbers are PyTorch's. The first scheduler attached records each group's
//! `initial_lr` in the optimizer, as PyTorch does.
//!
//! ```
//! use nn::optim::lr_scheduler::{LrScheduler, StepLR};
//! use nn::optim::{Optimizer, SGD, SgdOptions};
//! use nn::prelude::*;
//! let fc = Linear::new(2, 1, true);
//! let mut opt = SGD::new(fc.parameters(), SgdOptions { lr: 0.1, ..Default::default() })?;
//! let mut sched = StepLR::new(&mut opt, 2, 0.5)?;
//! for _ in 0..4 {
//!     opt.step()?;
//!     sched.step(&mut opt)?;
//! }
//! assert_eq!(opt.lrs(), [0.025]);
//! # Ok::<(), nn::Error>(())
//! ```

mod chained;
mod plateau;
mod schedules;
mod warm_restarts;

pub use chained::ChainedScheduler;
pub use plateau::{PlateauMode, PlateauOptions, ReduceLROnPlateau, ThresholdMode};
pub use schedules::{
    Anneal, Constant, CosineAnnealing, Cyclic, CyclicMode, CyclicOptions, Exponential, Lambda, Lambdas, Linear,
    LrLambda, MultiStep, Multiplicative, OneCycle, OneCycleOptions, Polynomial, Step,
};
pub use warm_restarts::CosineAnnealingWarmRestarts;

use std::collections::BTreeMap;

use super::{Hyper, HyperValue, Optimizer};
use crate::{Error, Result};

/// A scheduler's state dict: its attributes by PyTorch's names (`last_epoch`, `base_lrs`, `_step_count`,
/// `_last_lr` and the schedule's own).
pub type SchedulerState = BTreeMap<String, Hyper>;

/// What every scheduler does.
pub trait LrScheduler {
    /// Advances one epoch (or batch, for [`OneCycleLR`]) and sets the optimizer's learning rates.
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()>;

    /// The learning rates the last step set, one per group.
    fn get_last_lr(&self) -> Vec<f64>;

    /// The epoch count (-1 before the constructor's initial step).
    fn last_epoch(&self) -> i64;

    /// Sets the epoch count (what [`SequentialLR`] does to the schedulers it chains).
    fn set_last_epoch(&mut self, epoch: i64);

    /// Steps to `epoch` with the closed form where PyTorch has one (its deprecated `step(epoch)`), else the
    /// recursive one.
    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) -> Result<()>;

    /// Resets the step count and steps once (PyTorch's `_initial_step`).
    fn initial_step(&mut self, opt: &mut dyn Optimizer) -> Result<()>;

    /// The state dict.
    fn state_dict(&self) -> SchedulerState;

    /// Loads a state dict written by the same kind of scheduler; on an error nothing changes.
    fn load_state_dict(&mut self, state: &SchedulerState) -> Result<()>;
}

/// What every scheduler keeps: PyTorch's `LRScheduler` attributes.
#[derive(Clone, Debug)]
pub struct Base {
    /// Each group's `initial_lr`.
    pub base_lrs: Vec<f64>,
    /// The epoch count.
    pub last_epoch: i64,
    /// Steps taken since the initial one reset it.
    pub step_count: i64,
    /// The rates the last step set.
    pub last_lr: Vec<f64>,
}

impl Base {
    /// Attaches to `opt`: each group's `initial_lr` (set to its learning rate where no scheduler set it yet).
    fn attach(opt: &mut dyn Optimizer) -> Result<Base> {
        let lrs = opt.lrs();
        let mut base_lrs = vec![];
        for (g, initial) in opt.initial_lrs().into_iter().enumerate() {
            let lr = match initial {
                Some(lr) => lr,
                None => {
                    opt.set_initial_lr(g, lrs[g])?;
                    lrs[g]
                }
            };
            base_lrs.push(lr);
        }
        Ok(Base {
            base_lrs,
            last_epoch: -1,
            step_count: 0,
            last_lr: lrs,
        })
    }

    fn state(&self) -> Vec<(String, Hyper)> {
        vec![
            ("base_lrs".into(), Hyper::List(self.base_lrs.clone())),
            ("last_epoch".into(), Hyper::Int(self.last_epoch)),
            ("_step_count".into(), Hyper::Int(self.step_count)),
            ("_last_lr".into(), Hyper::List(self.last_lr.clone())),
        ]
    }

    fn load(&self, state: &SchedulerState) -> Result<Base> {
        let base = Base {
            base_lrs: read(state, "base_lrs")?,
            last_epoch: read(state, "last_epoch")?,
            step_count: read(state, "_step_count")?,
            last_lr: read(state, "_last_lr")?,
        };
        if base.base_lrs.len() != self.base_lrs.len() {
            return Err(Error::invalid(
                "load_state_dict",
                format!(
                    "the scheduler state has {} groups, this scheduler {}",
                    base.base_lrs.len(),
                    self.base_lrs.len()
                ),
            ));
        }
        Ok(base)
    }
}

/// The entry `key` of a scheduler state dict, of type `T`.
fn read<T: HyperValue>(state: &SchedulerState, key: &str) -> Result<T> {
    state
        .get(key)
        .ok_or_else(|| Error::invalid("load_state_dict", format!("the scheduler state has no {key}")))?
        .get(key)
}

/// One schedule's formulas.
pub trait Schedule: Send + 'static {
    /// PyTorch's recursive `get_lr` at `base.last_epoch` (already advanced), from the optimizer's current rates;
    /// may set momentum ([`OneCycleLR`]).
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>>;

    /// PyTorch's `_get_closed_form_lr` at `base.last_epoch`, where it has one.
    fn closed_form(&self, _base: &Base) -> Option<Vec<f64>> {
        None
    }

    /// The schedule's own attributes for the state dict.
    fn state(&self) -> Vec<(String, Hyper)>;

    /// The schedule with the attributes of `state` (each of the right kind).
    fn load(&self, state: &SchedulerState) -> Result<Self>
    where
        Self: Sized;
}

/// The [`LrScheduler`] methods of a scheduler that keeps a [`Base`] in `self.base`: the last rates, the epoch,
/// and PyTorch's `_initial_step` (the step count reset, then one step).
macro_rules! base_accessors {
    () => {
        fn get_last_lr(&self) -> Vec<f64> {
            self.base.last_lr.clone()
        }

        fn last_epoch(&self) -> i64 {
            self.base.last_epoch
        }

        fn set_last_epoch(&mut self, epoch: i64) {
            self.base.last_epoch = epoch;
        }

        fn initial_step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
            self.base.step_count = 0;
            self.step(opt)
        }
    };
}

use base_accessors;

/// A scheduler running schedule `S`; [`StepLR`] and the others are this type.
pub struct Scheduler<S: Schedule> {
    base: Base,
    schedule: S,
}

impl<S: Schedule> std::fmt::Debug for Scheduler<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("base", &self.base).finish()
    }
}

impl<S: Schedule> Scheduler<S> {
    /// Attaches `schedule` to `opt` and takes the initial step (PyTorch's constructor with `last_epoch=-1`).
    pub fn with_schedule(opt: &mut dyn Optimizer, schedule: S) -> Result<Scheduler<S>> {
        let mut s = Scheduler {
            base: Base::attach(opt)?,
            schedule,
        };
        s.initial_step(opt)?;
        Ok(s)
    }

    /// The schedule.
    pub fn schedule(&self) -> &S {
        &self.schedule
    }

    fn apply(&mut self, opt: &mut dyn Optimizer, lrs: Vec<f64>) -> Result<()> {
        for (g, lr) in lrs.iter().enumerate() {
            opt.set_lr(g, *lr)?;
        }
        self.base.last_lr = lrs;
        Ok(())
    }
}

impl<S: Schedule> LrScheduler for Scheduler<S> {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.base.step_count += 1;
        self.base.last_epoch += 1;
        let lrs = self.schedule.get_lr(&self.base, opt)?;
        self.apply(opt, lrs)
    }

    base_accessors!();

    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) -> Result<()> {
        self.base.step_count += 1;
        self.base.last_epoch = epoch;
        let lrs = match self.schedule.closed_form(&self.base) {
            Some(lrs) => lrs,
            None => self.schedule.get_lr(&self.base, opt)?,
        };
        self.apply(opt, lrs)
    }

    fn state_dict(&self) -> SchedulerState {
        self.base.state().into_iter().chain(self.schedule.state()).collect()
    }

    fn load_state_dict(&mut self, state: &SchedulerState) -> Result<()> {
        let base = self.base.load(state)?;
        let schedule = self.schedule.load(state)?;
        self.base = base;
        self.schedule = schedule;
        Ok(())
    }
}

/// PyTorch's `StepLR(optimizer, step_size, gamma=0.1)`.
pub type StepLR = Scheduler<Step>;
/// PyTorch's `MultiStepLR(optimizer, milestones, gamma=0.1)`.
pub type MultiStepLR = Scheduler<MultiStep>;
/// PyTorch's `ExponentialLR(optimizer, gamma)`.
pub type ExponentialLR = Scheduler<Exponential>;
/// PyTorch's `CosineAnnealingLR(optimizer, T_max, eta_min=0)`.
pub type CosineAnnealingLR = Scheduler<CosineAnnealing>;
/// PyTorch's `LinearLR(optimizer, start_factor=1/3, end_factor=1, total_iters=5)`.
pub type LinearLR = Scheduler<Linear>;
/// PyTorch's `OneCycleLR`.
pub type OneCycleLR = Scheduler<OneCycle>;
/// PyTorch's `LambdaLR(optimizer, lr_lambda)`.
pub type LambdaLR = Scheduler<Lambda>;
/// PyTorch's `MultiplicativeLR(optimizer, lr_lambda)`.
pub type MultiplicativeLR = Scheduler<Multiplicative>;
/// PyTorch's `ConstantLR(optimizer, factor=1/3, total_iters=5)`.
pub type ConstantLR = Scheduler<Constant>;
/// PyTorch's `PolynomialLR(optimizer, total_iters=5, power=1)`.
pub type PolynomialLR = Scheduler<Polynomial>;
/// PyTorch's `CyclicLR(optimizer, base_lr, max_lr, …)`.
pub type CyclicLR = Scheduler<Cyclic>;

/// PyTorch's `SequentialLR(optimizer, schedulers, milestones)`: `schedulers[i]` runs from `milestones[i - 1]`.
pub struct SequentialLR {
    schedulers: Vec<Box<dyn LrScheduler + Send>>,
    milestones: Vec<i64>,
    last_epoch: i64,
    last_lr: Vec<f64>,
}

impl std::fmt::Debug for SequentialLR {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SequentialLR")
            .field("milestones", &self.milestones)
            .field("last_epoch", &self.last_epoch)
            .finish()
    }
}

impl SequentialLR {
    /// Chains `schedulers` (built on `opt`, in order) at `milestones` (one fewer than schedulers), as PyTorch's
    /// constructor does: the rates go back to `initial_lr`, every scheduler's epoch back by one, and the first
    /// takes its initial step.
    pub fn new(
        opt: &mut dyn Optimizer,
        mut schedulers: Vec<Box<dyn LrScheduler + Send>>,
        milestones: Vec<i64>,
    ) -> Result<SequentialLR> {
        if schedulers.is_empty() {
            return Err(Error::invalid("SequentialLR", "expects at least one scheduler"));
        }
        if milestones.len() != schedulers.len() - 1 {
            return Err(Error::invalid(
                "SequentialLR",
                format!(
                    "expects {} milestones for {} schedulers, got {}",
                    schedulers.len() - 1,
                    schedulers.len(),
                    milestones.len()
                ),
            ));
        }
        for (g, initial) in opt.initial_lrs().into_iter().enumerate() {
            let lr = initial.ok_or_else(|| Error::invalid("SequentialLR", "the optimizer has no initial_lr"))?;
            opt.set_lr(g, lr)?;
        }
        for s in &mut schedulers {
            let e = s.last_epoch();
            s.set_last_epoch(e - 1);
        }
        schedulers[0].initial_step(opt)?;
        let last_lr = schedulers[0].get_last_lr();
        Ok(SequentialLR {
            schedulers,
            milestones,
            last_epoch: 0,
            last_lr,
        })
    }
}

impl LrScheduler for SequentialLR {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.last_epoch += 1;
        let idx = self.milestones.partition_point(|m| *m <= self.last_epoch);
        let scheduler = &mut self.schedulers[idx];
        if idx > 0 && self.milestones[idx - 1] == self.last_epoch {
            scheduler.step_to(opt, 0)?;
        } else {
            scheduler.step(opt)?;
        }
        self.last_lr = scheduler.get_last_lr();
        Ok(())
    }

    fn get_last_lr(&self) -> Vec<f64> {
        self.last_lr.clone()
    }

    fn last_epoch(&self) -> i64 {
        self.last_epoch
    }

    fn set_last_epoch(&mut self, epoch: i64) {
        self.last_epoch = epoch;
    }

    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) -> Result<()> {
        self.last_epoch = epoch - 1;
        self.step(opt)
    }

    fn initial_step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.step(opt)
    }

    fn state_dict(&self) -> SchedulerState {
        let mut out = SchedulerState::new();
        out.insert("last_epoch".into(), Hyper::Int(self.last_epoch));
        out.insert(
            "_milestones".into(),
            Hyper::List(self.milestones.iter().map(|m| *m as f64).collect()),
        );
        out.insert("_last_lr".into(), Hyper::List(self.last_lr.clone()));
        out.extend(children_state(&self.schedulers));
        out
    }

    fn load_state_dict(&mut self, state: &SchedulerState) -> Result<()> {
        let get = |k: &str| {
            state
                .get(k)
                .ok_or_else(|| Error::invalid("load_state_dict", format!("the scheduler state has no {k}")))
        };
        let last_epoch = get("last_epoch")?.int("last_epoch")?;
        let last_lr = get("_last_lr")?.list("_last_lr")?;
        load_children(&mut self.schedulers, state)?;
        self.last_epoch = last_epoch;
        self.last_lr = last_lr;
        Ok(())
    }
}

/// The children's state dicts, each entry under `_schedulers.{i}.` (SequentialLR's and ChainedScheduler's
/// `_schedulers` list, flattened).
fn children_state(schedulers: &[Box<dyn LrScheduler + Send>]) -> SchedulerState {
    let mut out = SchedulerState::new();
    for (i, s) in schedulers.iter().enumerate() {
        for (k, v) in s.state_dict() {
            out.insert(format!("_schedulers.{i}.{k}"), v);
        }
    }
    out
}

/// Loads each child's entries of `state` (under `_schedulers.{i}.`) into `schedulers`, all or nothing: a child
/// that fails puts the ones before it back.
fn load_children(schedulers: &mut [Box<dyn LrScheduler + Send>], state: &SchedulerState) -> Result<()> {
    let mut children = vec![];
    for (i, s) in schedulers.iter().enumerate() {
        let prefix = format!("_schedulers.{i}.");
        let child: SchedulerState = state
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_owned(), v.clone())))
            .collect();
        children.push((s.state_dict(), child));
    }
    for (i, (_, child)) in children.iter().enumerate() {
        if let Err(e) = schedulers[i].load_state_dict(child) {
            for (j, (before, _)) in children.iter().enumerate().take(i) {
                schedulers[j].load_state_dict(before)?;
            }
            return Err(e);
        }
    }
    Ok(())
}
