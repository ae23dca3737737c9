//! ReduceLROnPlateau: the rates cut by `factor` when a metric has stopped improving for `patience` epochs.

use super::{SchedulerState, read};
use crate::optim::{Hyper, Optimizer};
use crate::{Error, Result};

/// Whether a lower or a higher metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlateauMode {
    /// `'min'`: a loss.
    Min,
    /// `'max'`: an accuracy.
    Max,
}

/// How much better counts as better: relative to the best so far, or by an absolute margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdMode {
    /// `'rel'`: better than `best·(1 ∓ threshold)`.
    Rel,
    /// `'abs'`: better than `best ∓ threshold`.
    Abs,
}

/// ReduceLROnPlateau's options, with PyTorch's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct PlateauOptions {
    /// Lower or higher is better: `Min`.
    pub mode: PlateauMode,
    /// The factor a rate is cut by, below 1: 0.1.
    pub factor: f64,
    /// Epochs without improvement tolerated before a cut: 10.
    pub patience: i64,
    /// The margin of an improvement: 1e-4.
    pub threshold: f64,
    /// How the margin applies: `Rel`.
    pub threshold_mode: ThresholdMode,
    /// Epochs after a cut before bad epochs count again: 0.
    pub cooldown: i64,
    /// The lowest rate of each group (one value for all, or one per group): 0.
    pub min_lr: Vec<f64>,
    /// A cut smaller than this is not made: 1e-8.
    pub eps: f64,
}

impl Default for PlateauOptions {
    fn default() -> PlateauOptions {
        PlateauOptions {
            mode: PlateauMode::Min,
            factor: 0.1,
            patience: 10,
            threshold: 1e-4,
            threshold_mode: ThresholdMode::Rel,
            cooldown: 0,
            min_lr: vec![0.0],
            eps: 1e-8,
        }
    }
}

/// PyTorch's `ReduceLROnPlateau`: `step(&mut opt, metric)` once per epoch with the metric watched. It is no
/// [`LrScheduler`](super::LrScheduler): its step needs the metric, and PyTorch's chaining schedulers refuse it
/// too.
///
/// ```
/// use nn::optim::lr_scheduler::{PlateauOptions, ReduceLROnPlateau};
/// use nn::optim::{Optimizer, SGD, SgdOptions};
/// use nn::prelude::*;
/// let fc = Linear::new(2, 1, true);
/// let mut opt = SGD::new(fc.parameters(), SgdOptions { lr: 0.1, ..Default::default() })?;
/// let mut sched = ReduceLROnPlateau::new(&mut opt, PlateauOptions { patience: 1, ..Default::default() })?;
/// for loss in [1.0, 0.5, 0.5, 0.5] {
///     sched.step(&mut opt, loss)?;
/// }
/// assert!((opt.lrs()[0] - 0.01).abs() < 1e-12);
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReduceLROnPlateau {
    options: PlateauOptions,
    min_lrs: Vec<f64>,
    best: f64,
    num_bad_epochs: i64,
    cooldown_counter: i64,
    last_epoch: i64,
    last_lr: Vec<f64>,
}

impl ReduceLROnPlateau {
    /// Watches `opt`'s groups; `factor` must be below 1 and `min_lr` one value or one per group.
    pub fn new(opt: &mut dyn Optimizer, options: PlateauOptions) -> Result<ReduceLROnPlateau> {
        let op = "ReduceLROnPlateau";
        if options.factor >= 1.0 {
            return Err(Error::invalid(op, "Factor should be < 1.0."));
        }
        let groups = opt.lrs().len();
        let min_lrs = match options.min_lr.len() {
            1 => vec![options.min_lr[0]; groups],
            n if n == groups => options.min_lr.clone(),
            n => return Err(Error::invalid(op, format!("expected {groups} min_lrs, got {n}"))),
        };
        Ok(ReduceLROnPlateau {
            best: worst(options.mode),
            options,
            min_lrs,
            num_bad_epochs: 0,
            cooldown_counter: 0,
            last_epoch: 0,
            last_lr: opt.lrs(),
        })
    }

    /// One epoch with `metric`: a new best resets the count of bad epochs; past `patience` of them every
    /// rate is cut by `factor` (not below its `min_lr`, and not by less than `eps`) and the cooldown starts.
    pub fn step(&mut self, opt: &mut dyn Optimizer, metric: f64) -> Result<()> {
        self.last_epoch += 1;
        if self.is_better(metric) {
            self.best = metric;
            self.num_bad_epochs = 0;
        } else {
            self.num_bad_epochs += 1;
        }
        if self.cooldown_counter > 0 {
            self.cooldown_counter -= 1;
            self.num_bad_epochs = 0;
        }
        if self.num_bad_epochs > self.options.patience {
            for (g, old) in opt.lrs().into_iter().enumerate() {
                let new = (old * self.options.factor).max(self.min_lrs[g]);
                if old - new > self.options.eps {
                    opt.set_lr(g, new)?;
                }
            }
            self.cooldown_counter = self.options.cooldown;
            self.num_bad_epochs = 0;
        }
        self.last_lr = opt.lrs();
        Ok(())
    }

    fn is_better(&self, a: f64) -> bool {
        let (t, best) = (self.options.threshold, self.best);
        match (self.options.mode, self.options.threshold_mode) {
            (PlateauMode::Min, ThresholdMode::Rel) => a < best * (1.0 - t),
            (PlateauMode::Min, ThresholdMode::Abs) => a < best - t,
            (PlateauMode::Max, ThresholdMode::Rel) => a > best * (t + 1.0),
            (PlateauMode::Max, ThresholdMode::Abs) => a > best + t,
        }
    }

    /// The best metric so far (infinite, of the worse sign, before the first step).
    pub fn best(&self) -> f64 {
        self.best
    }

    /// Bad epochs since the last improvement or cut.
    pub fn num_bad_epochs(&self) -> i64 {
        self.num_bad_epochs
    }

    /// Epochs of cooldown left.
    pub fn cooldown_counter(&self) -> i64 {
        self.cooldown_counter
    }

    /// The rates after the last step.
    pub fn get_last_lr(&self) -> Vec<f64> {
        self.last_lr.clone()
    }

    /// Epochs stepped.
    pub fn last_epoch(&self) -> i64 {
        self.last_epoch
    }

    /// PyTorch's state dict entries that are numbers (the modes, strings there, stay this scheduler's).
    pub fn state_dict(&self) -> SchedulerState {
        let o = &self.options;
        [
            ("factor", Hyper::Float(o.factor)),
            ("min_lrs", Hyper::List(self.min_lrs.clone())),
            ("patience", Hyper::Int(o.patience)),
            ("cooldown", Hyper::Int(o.cooldown)),
            ("cooldown_counter", Hyper::Int(self.cooldown_counter)),
            ("threshold", Hyper::Float(o.threshold)),
            ("best", Hyper::Float(self.best)),
            ("num_bad_epochs", Hyper::Int(self.num_bad_epochs)),
            ("mode_worse", Hyper::Float(worst(o.mode))),
            ("eps", Hyper::Float(o.eps)),
            ("last_epoch", Hyper::Int(self.last_epoch)),
            ("_last_lr", Hyper::List(self.last_lr.clone())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Loads a state dict of this kind of scheduler; on an error nothing changes.
    pub fn load_state_dict(&mut self, state: &SchedulerState) -> Result<()> {
        let min_lrs: Vec<f64> = read(state, "min_lrs")?;
        if min_lrs.len() != self.min_lrs.len() {
            return Err(Error::invalid(
                "load_state_dict",
                format!(
                    "the state has {} min_lrs, this scheduler {}",
                    min_lrs.len(),
                    self.min_lrs.len()
                ),
            ));
        }
        let options = PlateauOptions {
            factor: read(state, "factor")?,
            patience: read(state, "patience")?,
            cooldown: read(state, "cooldown")?,
            threshold: read(state, "threshold")?,
            eps: read(state, "eps")?,
            ..self.options.clone()
        };
        *self = ReduceLROnPlateau {
            options,
            min_lrs,
            best: read(state, "best")?,
            num_bad_epochs: read(state, "num_bad_epochs")?,
            cooldown_counter: read(state, "cooldown_counter")?,
            last_epoch: read(state, "last_epoch")?,
            last_lr: read(state, "_last_lr")?,
        };
        Ok(())
    }
}

/// The metric every other is better than.
fn worst(mode: PlateauMode) -> f64 {
    match mode {
        PlateauMode::Min => f64::INFINITY,
        PlateauMode::Max => f64::NEG_INFINITY,
    }
}
