//! The schedules: PyTorch 2.5.1's `get_lr` (recursive) and `_get_closed_form_lr` of each scheduler.

use std::f64::consts::PI;
use std::sync::Arc;

use super::{Base, Schedule, Scheduler, SchedulerState, read};
use crate::optim::{Hyper, HyperValue, Optimizer};
use crate::{Error, Result};

/// A schedule's `state` and `load` over its fields, each saved under PyTorch's attribute name.
macro_rules! schedule_state {
    ($schedule:ident { $($key:literal => $field:ident),* $(,)? }) => {
        fn state(&self) -> Vec<(String, Hyper)> {
            vec![$(($key.into(), HyperValue::to_hyper(&self.$field)),)*]
        }

        fn load(&self, state: &SchedulerState) -> Result<$schedule> {
            Ok($schedule { $($field: read(state, $key)?,)* })
        }
    };
}

/// `Ok` when `value` is positive, else an error of `op` naming the argument.
fn positive(op: &'static str, name: &str, value: i64) -> Result<()> {
    if value <= 0 {
        return Err(Error::invalid(op, format!("{name} is {value}: it must be positive")));
    }
    Ok(())
}

/// StepLR's schedule: the rate times `gamma` every `step_size` epochs.
#[derive(Clone, Debug)]
pub struct Step {
    /// Epochs between decays.
    pub step_size: i64,
    /// The decay factor.
    pub gamma: f64,
}

impl Schedule for Step {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let lrs = opt.lrs();
        if base.last_epoch == 0 || base.last_epoch % self.step_size != 0 {
            return Ok(lrs);
        }
        Ok(lrs.into_iter().map(|lr| lr * self.gamma).collect())
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        let k = base.last_epoch.div_euclid(self.step_size);
        Some(base.base_lrs.iter().map(|b| b * self.gamma.powi(k as i32)).collect())
    }

    schedule_state!(Step { "step_size" => step_size, "gamma" => gamma });
}

impl Scheduler<Step> {
    /// `StepLR(optimizer, step_size, gamma)`; `step_size` must be positive.
    pub fn new(opt: &mut dyn Optimizer, step_size: i64, gamma: f64) -> Result<Scheduler<Step>> {
        positive("StepLR", "step_size", step_size)?;
        Scheduler::with_schedule(opt, Step { step_size, gamma })
    }
}

/// MultiStepLR's schedule: the rate times `gamma` at each milestone (times `gamma^k` for a milestone listed
/// `k` times).
#[derive(Clone, Debug)]
pub struct MultiStep {
    /// The epochs of the decays, sorted.
    pub milestones: Vec<i64>,
    /// The decay factor.
    pub gamma: f64,
}

impl Schedule for MultiStep {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let count = self.milestones.iter().filter(|m| **m == base.last_epoch).count();
        let lrs = opt.lrs();
        if count == 0 {
            return Ok(lrs);
        }
        Ok(lrs.into_iter().map(|lr| lr * self.gamma.powi(count as i32)).collect())
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        let passed = self.milestones.iter().filter(|m| **m <= base.last_epoch).count();
        Some(
            base.base_lrs
                .iter()
                .map(|b| b * self.gamma.powi(passed as i32))
                .collect(),
        )
    }

    schedule_state!(MultiStep { "milestones" => milestones, "gamma" => gamma });
}

impl Scheduler<MultiStep> {
    /// `MultiStepLR(optimizer, milestones, gamma)`.
    pub fn new(opt: &mut dyn Optimizer, mut milestones: Vec<i64>, gamma: f64) -> Result<Scheduler<MultiStep>> {
        milestones.sort_unstable();
        Scheduler::with_schedule(opt, MultiStep { milestones, gamma })
    }
}

/// ExponentialLR's schedule: the rate times `gamma` every epoch.
#[derive(Clone, Debug)]
pub struct Exponential {
    /// The decay factor.
    pub gamma: f64,
}

impl Schedule for Exponential {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let lrs = opt.lrs();
        if base.last_epoch == 0 {
            return Ok(lrs);
        }
        Ok(lrs.into_iter().map(|lr| lr * self.gamma).collect())
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        Some(
            base.base_lrs
                .iter()
                .map(|b| b * self.gamma.powi(base.last_epoch as i32))
                .collect(),
        )
    }

    schedule_state!(Exponential { "gamma" => gamma });
}

impl Scheduler<Exponential> {
    /// `ExponentialLR(optimizer, gamma)`.
    pub fn new(opt: &mut dyn Optimizer, gamma: f64) -> Result<Scheduler<Exponential>> {
        Scheduler::with_schedule(opt, Exponential { gamma })
    }
}

/// CosineAnnealingLR's schedule (SGDR without restarts): from the base rate to `eta_min` over `t_max` epochs,
/// and back, periodically.
#[derive(Clone, Debug)]
pub struct CosineAnnealing {
    /// Half the period, in epochs.
    pub t_max: i64,
    /// The lowest rate.
    pub eta_min: f64,
}

impl Schedule for CosineAnnealing {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let (e, t) = (base.last_epoch as f64, self.t_max as f64);
        let lrs = opt.lrs();
        if base.last_epoch == 0 {
            return Ok(lrs);
        }
        let out = if base.step_count == 1 && base.last_epoch > 0 {
            base.base_lrs
                .iter()
                .map(|b| self.eta_min + (b - self.eta_min) * (1.0 + (e * PI / t).cos()) / 2.0)
                .collect()
        } else if (base.last_epoch - 1 - self.t_max).rem_euclid(2 * self.t_max) == 0 {
            lrs.iter()
                .zip(&base.base_lrs)
                .map(|(lr, b)| lr + (b - self.eta_min) * (1.0 - (PI / t).cos()) / 2.0)
                .collect()
        } else {
            lrs.iter()
                .map(|lr| {
                    (1.0 + (PI * e / t).cos()) / (1.0 + (PI * (e - 1.0) / t).cos()) * (lr - self.eta_min) + self.eta_min
                })
                .collect()
        };
        Ok(out)
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        let (e, t) = (base.last_epoch as f64, self.t_max as f64);
        Some(
            base.base_lrs
                .iter()
                .map(|b| self.eta_min + (b - self.eta_min) * (1.0 + (PI * e / t).cos()) / 2.0)
                .collect(),
        )
    }

    schedule_state!(CosineAnnealing { "T_max" => t_max, "eta_min" => eta_min });
}

impl Scheduler<CosineAnnealing> {
    /// `CosineAnnealingLR(optimizer, T_max, eta_min)`; `t_max` must be positive.
    pub fn new(opt: &mut dyn Optimizer, t_max: i64, eta_min: f64) -> Result<Scheduler<CosineAnnealing>> {
        positive("CosineAnnealingLR", "T_max", t_max)?;
        Scheduler::with_schedule(opt, CosineAnnealing { t_max, eta_min })
    }
}

/// LinearLR's schedule: the factor goes linearly from `start_factor` to `end_factor` over `total_iters` epochs.
#[derive(Clone, Debug)]
pub struct Linear {
    /// The first epoch's factor, in (0, 1].
    pub start_factor: f64,
    /// The factor from `total_iters` on, in [0, 1].
    pub end_factor: f64,
    /// Epochs of the ramp.
    pub total_iters: i64,
}

impl Schedule for Linear {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let lrs = opt.lrs();
        if base.last_epoch == 0 {
            return Ok(lrs.into_iter().map(|lr| lr * self.start_factor).collect());
        }
        if base.last_epoch > self.total_iters {
            return Ok(lrs);
        }
        let (s, e) = (self.start_factor, self.end_factor);
        let factor = 1.0 + (e - s) / (self.total_iters as f64 * s + (base.last_epoch - 1) as f64 * (e - s));
        Ok(lrs.into_iter().map(|lr| lr * factor).collect())
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        let done = self.total_iters.min(base.last_epoch) as f64;
        let factor = self.start_factor + (self.end_factor - self.start_factor) * done / self.total_iters as f64;
        Some(base.base_lrs.iter().map(|b| b * factor).collect())
    }

    schedule_state!(Linear { "start_factor" => start_factor, "end_factor" => end_factor, "total_iters" => total_iters });
}

impl Scheduler<Linear> {
    /// `LinearLR(optimizer, start_factor, end_factor, total_iters)` (PyTorch's defaults: 1/3, 1.0, 5).
    pub fn new(
        opt: &mut dyn Optimizer,
        start_factor: f64,
        end_factor: f64,
        total_iters: i64,
    ) -> Result<Scheduler<Linear>> {
        if !(start_factor > 0.0 && start_factor <= 1.0) {
            return Err(Error::invalid(
                "LinearLR",
                format!("start_factor is {start_factor}: it must be greater than 0 and at most 1"),
            ));
        }
        if !(0.0..=1.0).contains(&end_factor) {
            return Err(Error::invalid(
                "LinearLR",
                format!("end_factor is {end_factor}: it must be in [0, 1]"),
            ));
        }
        Scheduler::with_schedule(
            opt,
            Linear {
                start_factor,
                end_factor,
                total_iters,
            },
        )
    }
}

/// A LambdaLR function of the epoch.
pub type LrLambda = Arc<dyn Fn(i64) -> f64 + Send + Sync>;

/// LambdaLR's schedule (`MULTIPLY = false`: `base_lr · lambda(epoch)`) or MultiplicativeLR's (`true`: the
/// rate times `lambda(epoch)` every epoch after the first), one function for every group or one per group.
#[derive(Clone)]
pub struct Lambdas<const MULTIPLY: bool> {
    lambdas: Vec<LrLambda>,
}

/// LambdaLR's schedule.
pub type Lambda = Lambdas<false>;

/// MultiplicativeLR's schedule.
pub type Multiplicative = Lambdas<true>;

impl<const MULTIPLY: bool> Lambdas<MULTIPLY> {
    const NAME: &'static str = if MULTIPLY { "MultiplicativeLR" } else { "LambdaLR" };

    fn at(&self, group: usize, epoch: i64) -> f64 {
        (self.lambdas[group.min(self.lambdas.len() - 1)])(epoch)
    }
}

impl<const MULTIPLY: bool> std::fmt::Debug for Lambdas<MULTIPLY> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({} functions)", Self::NAME, self.lambdas.len())
    }
}

impl<const MULTIPLY: bool> Schedule for Lambdas<MULTIPLY> {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        if !MULTIPLY {
            let lrs = base.base_lrs.iter().enumerate();
            return Ok(lrs.map(|(g, b)| b * self.at(g, base.last_epoch)).collect());
        }
        let lrs = opt.lrs();
        if base.last_epoch <= 0 {
            return Ok(lrs);
        }
        Ok(lrs
            .iter()
            .enumerate()
            .map(|(g, lr)| lr * self.at(g, base.last_epoch))
            .collect())
    }

    fn state(&self) -> Vec<(String, Hyper)> {
        // PyTorch saves only callable objects' state; a function saves nothing.
        vec![]
    }

    /// The functions stay (PyTorch's `load_state_dict` keeps plain functions too).
    fn load(&self, _state: &SchedulerState) -> Result<Lambdas<MULTIPLY>> {
        Ok(self.clone())
    }
}

impl<const MULTIPLY: bool> Scheduler<Lambdas<MULTIPLY>> {
    /// `LambdaLR(optimizer, lr_lambda)` or `MultiplicativeLR(optimizer, lr_lambda)` with one function for every
    /// group.
    ///
    /// ```
    /// use nn::optim::lr_scheduler::{LrScheduler, MultiplicativeLR};
    /// use nn::optim::{Optimizer, SGD, SgdOptions};
    /// use nn::prelude::*;
    /// let fc = Linear::new(2, 1, true);
    /// let mut opt = SGD::new(fc.parameters(), SgdOptions { lr: 1.0, ..Default::default() })?;
    /// let mut sched = MultiplicativeLR::new(&mut opt, |_| 0.5)?;
    /// sched.step(&mut opt)?;
    /// sched.step(&mut opt)?;
    /// assert_eq!(opt.lrs(), [0.25]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn new(
        opt: &mut dyn Optimizer,
        lr_lambda: impl Fn(i64) -> f64 + Send + Sync + 'static,
    ) -> Result<Scheduler<Lambdas<MULTIPLY>>> {
        let lambdas = vec![Arc::new(lr_lambda) as LrLambda];
        Scheduler::with_schedule(opt, Lambdas { lambdas })
    }

    /// One function per group: `LambdaLR(optimizer, [f, g, …])`, `MultiplicativeLR(optimizer, [f, g, …])`.
    pub fn per_group(opt: &mut dyn Optimizer, lambdas: Vec<LrLambda>) -> Result<Scheduler<Lambdas<MULTIPLY>>> {
        let groups = opt.lrs().len();
        if lambdas.len() != groups {
            return Err(Error::invalid(
                Lambdas::<MULTIPLY>::NAME,
                format!("expected {groups} lr_lambdas, but got {}", lambdas.len()),
            ));
        }
        Scheduler::with_schedule(opt, Lambdas { lambdas })
    }
}

/// How [`OneCycle`] interpolates within a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anneal {
    /// `'cos'`.
    Cos,
    /// `'linear'`.
    Linear,
}

impl Anneal {
    fn at(self, start: f64, end: f64, pct: f64) -> f64 {
        match self {
            Anneal::Cos => end + (start - end) / 2.0 * ((PI * pct).cos() + 1.0),
            Anneal::Linear => (end - start) * pct + start,
        }
    }
}

/// OneCycleLR's options, with PyTorch's defaults except `max_lr` and `total_steps`, which have none.
#[derive(Clone, Debug)]
pub struct OneCycleOptions {
    /// The peak rate of each group (one value for all, or one per group).
    pub max_lr: Vec<f64>,
    /// Steps in the cycle (PyTorch's `total_steps`, or `epochs · steps_per_epoch`).
    pub total_steps: i64,
    /// The share of the cycle spent rising: 0.3.
    pub pct_start: f64,
    /// The interpolation: cosine.
    pub anneal_strategy: Anneal,
    /// Cycle the momentum inversely to the rate: true.
    pub cycle_momentum: bool,
    /// The lowest momentum: 0.85.
    pub base_momentum: f64,
    /// The highest momentum: 0.95.
    pub max_momentum: f64,
    /// `initial_lr = max_lr / div_factor`: 25.
    pub div_factor: f64,
    /// `min_lr = initial_lr / final_div_factor`: 1e4.
    pub final_div_factor: f64,
    /// Three phases (up, down to `initial_lr`, down to `min_lr`) instead of two: false.
    pub three_phase: bool,
}

impl OneCycleOptions {
    /// The defaults for a peak of `max_lr` over `total_steps`.
    pub fn new(max_lr: f64, total_steps: i64) -> OneCycleOptions {
        OneCycleOptions {
            max_lr: vec![max_lr],
            total_steps,
            pct_start: 0.3,
            anneal_strategy: Anneal::Cos,
            cycle_momentum: true,
            base_momentum: 0.85,
            max_momentum: 0.95,
            div_factor: 25.0,
            final_div_factor: 1e4,
            three_phase: false,
        }
    }
}

/// One phase: its last step, and which group values it goes from and to.
#[derive(Clone, Copy, Debug)]
struct Phase {
    end_step: f64,
    lr: (Level, Level),
    momentum: (Level, Level),
}

#[derive(Clone, Copy, Debug)]
enum Level {
    Initial,
    Max,
    Min,
    BaseMomentum,
    MaxMomentum,
}

/// OneCycleLR's schedule (per batch): the 1cycle policy of Smith & Topin.
#[derive(Clone, Debug)]
pub struct OneCycle {
    options: OneCycleOptions,
    /// Per group: initial, max and min rate.
    levels: Vec<(f64, f64, f64)>,
    phases: Vec<Phase>,
}

impl OneCycle {
    fn value(&self, group: usize, level: Level) -> f64 {
        let (initial, max, min) = self.levels[group];
        match level {
            Level::Initial => initial,
            Level::Max => max,
            Level::Min => min,
            Level::BaseMomentum => self.options.base_momentum,
            Level::MaxMomentum => self.options.max_momentum,
        }
    }
}

impl Schedule for OneCycle {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let step = base.last_epoch as f64;
        if base.last_epoch > self.options.total_steps {
            return Err(Error::invalid(
                "OneCycleLR",
                format!(
                    "tried to step {} times; the specified number of total steps is {}",
                    base.last_epoch, self.options.total_steps
                ),
            ));
        }
        let mut lrs = vec![];
        for g in 0..self.levels.len() {
            let mut start = 0.0;
            for (i, phase) in self.phases.iter().enumerate() {
                if step <= phase.end_step || i == self.phases.len() - 1 {
                    let pct = (step - start) / (phase.end_step - start);
                    let anneal = self.options.anneal_strategy;
                    lrs.push(anneal.at(self.value(g, phase.lr.0), self.value(g, phase.lr.1), pct));
                    if self.options.cycle_momentum {
                        let m = anneal.at(self.value(g, phase.momentum.0), self.value(g, phase.momentum.1), pct);
                        opt.set_momentum(g, m)?;
                    }
                    break;
                }
                start = phase.end_step;
            }
        }
        Ok(lrs)
    }

    fn state(&self) -> Vec<(String, Hyper)> {
        vec![
            ("total_steps".into(), Hyper::Int(self.options.total_steps)),
            ("pct_start".into(), Hyper::Float(self.options.pct_start)),
            ("cycle_momentum".into(), Hyper::Bool(self.options.cycle_momentum)),
        ]
    }

    fn load(&self, state: &SchedulerState) -> Result<OneCycle> {
        let total: i64 = read(state, "total_steps")?;
        if total != self.options.total_steps {
            return Err(Error::invalid(
                "load_state_dict",
                format!(
                    "the state is of a {total}-step cycle, this scheduler's has {}",
                    self.options.total_steps
                ),
            ));
        }
        Ok(self.clone())
    }
}

impl Scheduler<OneCycle> {
    /// `OneCycleLR(optimizer, max_lr, total_steps, …)`: sets each group's `initial_lr` (and rate) to
    /// `max_lr / div_factor` and, with `cycle_momentum`, its momentum to `max_momentum` (an error for an
    /// optimizer without momentum, as PyTorch's).
    pub fn new(opt: &mut dyn Optimizer, options: OneCycleOptions) -> Result<Scheduler<OneCycle>> {
        let op = "OneCycleLR";
        let total = options.total_steps;
        positive(op, "total_steps", total)?;
        if !(0.0..=1.0).contains(&options.pct_start) {
            return Err(Error::invalid(
                op,
                format!("pct_start is {}: it must be in [0, 1]", options.pct_start),
            ));
        }
        let groups = opt.lrs().len();
        let max_lrs = per_group(op, "max_lr", &options.max_lr, groups)?;
        let mut levels = vec![];
        for (g, max) in max_lrs.iter().enumerate() {
            let initial = max / options.div_factor;
            opt.set_initial_lr(g, initial)?;
            opt.set_lr(g, initial)?;
            levels.push((initial, *max, initial / options.final_div_factor));
        }
        if options.cycle_momentum {
            if opt.momentums().iter().any(Option::is_none) {
                return Err(Error::invalid(
                    op,
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled",
                ));
            }
            for g in 0..groups {
                opt.set_momentum(g, options.max_momentum)?;
            }
        }
        let (t, p) = (total as f64, options.pct_start);
        let phases = if options.three_phase {
            vec![
                Phase {
                    end_step: p * t - 1.0,
                    lr: (Level::Initial, Level::Max),
                    momentum: (Level::MaxMomentum, Level::BaseMomentum),
                },
                Phase {
                    end_step: 2.0 * p * t - 2.0,
                    lr: (Level::Max, Level::Initial),
                    momentum: (Level::BaseMomentum, Level::MaxMomentum),
                },
                Phase {
                    end_step: t - 1.0,
                    lr: (Level::Initial, Level::Min),
                    momentum: (Level::MaxMomentum, Level::MaxMomentum),
                },
            ]
        } else {
            vec![
                Phase {
                    end_step: p * t - 1.0,
                    lr: (Level::Initial, Level::Max),
                    momentum: (Level::MaxMomentum, Level::BaseMomentum),
                },
                Phase {
                    end_step: t - 1.0,
                    lr: (Level::Max, Level::Min),
                    momentum: (Level::BaseMomentum, Level::MaxMomentum),
                },
            ]
        };
        Scheduler::with_schedule(
            opt,
            OneCycle {
                options,
                levels,
                phases,
            },
        )
    }
}

/// ConstantLR's schedule: the rate times `factor` until epoch `total_iters`, then the base rate.
#[derive(Clone, Debug)]
pub struct Constant {
    /// The factor, in `[0, 1]`.
    pub factor: f64,
    /// The epoch the factor ends at.
    pub total_iters: i64,
}

impl Schedule for Constant {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let lrs = opt.lrs();
        if base.last_epoch == 0 {
            return Ok(lrs.into_iter().map(|lr| lr * self.factor).collect());
        }
        if base.last_epoch != self.total_iters {
            return Ok(lrs);
        }
        Ok(lrs.into_iter().map(|lr| lr * (1.0 / self.factor)).collect())
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        let done = if base.last_epoch >= self.total_iters { 1.0 } else { 0.0 };
        Some(
            base.base_lrs
                .iter()
                .map(|b| b * (self.factor + done * (1.0 - self.factor)))
                .collect(),
        )
    }

    schedule_state!(Constant { "factor" => factor, "total_iters" => total_iters });
}

impl Scheduler<Constant> {
    /// `ConstantLR(optimizer, factor, total_iters)` (PyTorch's defaults: 1/3, 5); `factor` must lie in `[0, 1]`.
    pub fn new(opt: &mut dyn Optimizer, factor: f64, total_iters: i64) -> Result<Scheduler<Constant>> {
        if !(0.0..=1.0).contains(&factor) {
            return Err(Error::invalid(
                "ConstantLR",
                "Constant multiplicative factor expected to be between 0 and 1.",
            ));
        }
        Scheduler::with_schedule(opt, Constant { factor, total_iters })
    }
}

/// PolynomialLR's schedule: the base rate times `(1 - epoch / total_iters)^power` until `total_iters`, then 0.
#[derive(Clone, Debug)]
pub struct Polynomial {
    /// Epochs of the decay.
    pub total_iters: i64,
    /// The polynomial's power.
    pub power: f64,
}

impl Schedule for Polynomial {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let lrs = opt.lrs();
        if base.last_epoch == 0 || base.last_epoch > self.total_iters {
            return Ok(lrs);
        }
        let (e, t) = (base.last_epoch as f64, self.total_iters as f64);
        let factor = ((1.0 - e / t) / (1.0 - (e - 1.0) / t)).powf(self.power);
        Ok(lrs.into_iter().map(|lr| lr * factor).collect())
    }

    fn closed_form(&self, base: &Base) -> Option<Vec<f64>> {
        let (e, t) = (self.total_iters.min(base.last_epoch) as f64, self.total_iters as f64);
        Some(
            base.base_lrs
                .iter()
                .map(|b| b * (1.0 - e / t).powf(self.power))
                .collect(),
        )
    }

    schedule_state!(Polynomial { "total_iters" => total_iters, "power" => power });
}

impl Scheduler<Polynomial> {
    /// `PolynomialLR(optimizer, total_iters, power)` (PyTorch's defaults: 5, 1.0).
    pub fn new(opt: &mut dyn Optimizer, total_iters: i64, power: f64) -> Result<Scheduler<Polynomial>> {
        positive("PolynomialLR", "total_iters", total_iters)?;
        Scheduler::with_schedule(opt, Polynomial { total_iters, power })
    }
}

/// CyclicLR's policy: how the amplitude scales from cycle to cycle.
#[derive(Clone)]
pub enum CyclicMode {
    /// `'triangular'`: the same amplitude every cycle.
    Triangular,
    /// `'triangular2'`: the amplitude halves every cycle.
    Triangular2,
    /// `'exp_range'`: the amplitude times `gamma^iteration`.
    ExpRange,
    /// A function of its own: of the cycle number (`by_iteration: false`) or of the iteration count.
    Custom {
        /// The amplitude's scale.
        scale_fn: Arc<dyn Fn(f64) -> f64 + Send + Sync>,
        /// Whether `scale_fn` reads the iteration count (`scale_mode='iterations'`) rather than the cycle.
        by_iteration: bool,
    },
}

impl std::fmt::Debug for CyclicMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CyclicMode::Triangular => "triangular",
            CyclicMode::Triangular2 => "triangular2",
            CyclicMode::ExpRange => "exp_range",
            CyclicMode::Custom { .. } => "scale_fn",
        })
    }
}

/// CyclicLR's options, with PyTorch's defaults but for `base_lr` and `max_lr`, which have none.
#[derive(Clone, Debug)]
pub struct CyclicOptions {
    /// The lowest rate of each group (one value for all, or one per group).
    pub base_lr: Vec<f64>,
    /// The highest rate of each group (one value for all, or one per group).
    pub max_lr: Vec<f64>,
    /// Iterations of the rising half: 2000.
    pub step_size_up: f64,
    /// Iterations of the falling half: `step_size_up`'s when `None`.
    pub step_size_down: Option<f64>,
    /// The policy: triangular.
    pub mode: CyclicMode,
    /// `exp_range`'s base: 1.0.
    pub gamma: f64,
    /// Cycle the momentum inversely to the rate: true.
    pub cycle_momentum: bool,
    /// The lowest momentum (one value, or one per group): 0.8.
    pub base_momentum: Vec<f64>,
    /// The highest momentum (one value, or one per group): 0.9.
    pub max_momentum: Vec<f64>,
}

impl CyclicOptions {
    /// The defaults for a cycle between `base_lr` and `max_lr`.
    pub fn new(base_lr: f64, max_lr: f64) -> CyclicOptions {
        CyclicOptions {
            base_lr: vec![base_lr],
            max_lr: vec![max_lr],
            step_size_up: 2000.0,
            step_size_down: None,
            mode: CyclicMode::Triangular,
            gamma: 1.0,
            cycle_momentum: true,
            base_momentum: vec![0.8],
            max_momentum: vec![0.9],
        }
    }
}

/// One value per group from `values` (one for all, or one per group), or `op`'s error naming `name`.
fn per_group(op: &'static str, name: &str, values: &[f64], groups: usize) -> Result<Vec<f64>> {
    match values.len() {
        1 => Ok(vec![values[0]; groups]),
        n if n == groups => Ok(values.to_vec()),
        n => Err(Error::invalid(
            op,
            format!("expected {groups} values for {name}, got {n}"),
        )),
    }
}

/// CyclicLR's schedule (per batch): the rate between `base_lr` and `max_lr` in triangles, the momentum
/// inversely.
#[derive(Clone, Debug)]
pub struct Cyclic {
    max_lrs: Vec<f64>,
    total_size: f64,
    step_ratio: f64,
    mode: CyclicMode,
    gamma: f64,
    cycle_momentum: bool,
    base_momentums: Vec<f64>,
    max_momentums: Vec<f64>,
}

impl Cyclic {
    /// The amplitude's scale at `cycle` and `iteration`.
    fn scale(&self, cycle: f64, iteration: f64) -> f64 {
        match &self.mode {
            CyclicMode::Triangular => 1.0,
            CyclicMode::Triangular2 => 1.0 / 2f64.powf(cycle - 1.0),
            CyclicMode::ExpRange => self.gamma.powf(iteration),
            CyclicMode::Custom { scale_fn, by_iteration } => scale_fn(if *by_iteration { iteration } else { cycle }),
        }
    }
}

impl Schedule for Cyclic {
    fn get_lr(&self, base: &Base, opt: &mut dyn Optimizer) -> Result<Vec<f64>> {
        let e = base.last_epoch as f64;
        let cycle = (1.0 + e / self.total_size).floor();
        let x = 1.0 + e / self.total_size - cycle;
        let scale_factor = if x <= self.step_ratio {
            x / self.step_ratio
        } else {
            (x - 1.0) / (self.step_ratio - 1.0)
        };
        let scale = self.scale(cycle, e);
        let lrs = base
            .base_lrs
            .iter()
            .zip(&self.max_lrs)
            .map(|(b, m)| b + (m - b) * scale_factor * scale)
            .collect();
        if self.cycle_momentum {
            for (g, (b, m)) in self.base_momentums.iter().zip(&self.max_momentums).enumerate() {
                opt.set_momentum(g, m - (m - b) * scale_factor * scale)?;
            }
        }
        Ok(lrs)
    }

    fn state(&self) -> Vec<(String, Hyper)> {
        vec![
            ("max_lrs".into(), Hyper::List(self.max_lrs.clone())),
            ("total_size".into(), Hyper::Float(self.total_size)),
            ("step_ratio".into(), Hyper::Float(self.step_ratio)),
            ("gamma".into(), Hyper::Float(self.gamma)),
            ("cycle_momentum".into(), Hyper::Bool(self.cycle_momentum)),
            ("base_momentums".into(), Hyper::List(self.base_momentums.clone())),
            ("max_momentums".into(), Hyper::List(self.max_momentums.clone())),
        ]
    }

    /// The numbers from `state`; the policy stays this scheduler's (PyTorch's state holds its name, and a
    /// function saves nothing).
    fn load(&self, state: &SchedulerState) -> Result<Cyclic> {
        let cycle_momentum = read(state, "cycle_momentum")?;
        let momenta = |key| if cycle_momentum { read(state, key) } else { Ok(vec![]) };
        Ok(Cyclic {
            max_lrs: read(state, "max_lrs")?,
            total_size: read(state, "total_size")?,
            step_ratio: read(state, "step_ratio")?,
            mode: self.mode.clone(),
            gamma: read(state, "gamma")?,
            cycle_momentum,
            base_momentums: momenta("base_momentums")?,
            max_momentums: momenta("max_momentums")?,
        })
    }
}

impl Scheduler<Cyclic> {
    /// `CyclicLR(optimizer, base_lr, max_lr, …)`: sets each group's rate to `base_lr` and, with
    /// `cycle_momentum`, its momentum to `max_momentum` (an error for an optimizer without momentum, as
    /// PyTorch's).
    ///
    /// ```
    /// use nn::optim::lr_scheduler::{CyclicLR, CyclicOptions, LrScheduler};
    /// use nn::optim::{Optimizer, SGD, SgdOptions};
    /// use nn::prelude::*;
    /// let fc = Linear::new(2, 1, true);
    /// let mut opt = SGD::new(fc.parameters(), SgdOptions { momentum: 0.9, ..Default::default() })?;
    /// let options = CyclicOptions { step_size_up: 2.0, ..CyclicOptions::new(0.1, 0.5) };
    /// let mut sched = CyclicLR::new(&mut opt, options)?;
    /// sched.step(&mut opt)?;
    /// assert!((opt.lrs()[0] - 0.3).abs() < 1e-12 && (opt.momentums()[0].unwrap() - 0.85).abs() < 1e-12);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn new(opt: &mut dyn Optimizer, options: CyclicOptions) -> Result<Scheduler<Cyclic>> {
        let op = "CyclicLR";
        let groups = opt.lrs().len();
        let base_lrs = per_group(op, "base_lr", &options.base_lr, groups)?;
        let max_lrs = per_group(op, "max_lr", &options.max_lr, groups)?;
        let (base_momentums, max_momentums) = if options.cycle_momentum {
            if opt.momentums().iter().any(Option::is_none) {
                return Err(Error::invalid(
                    op,
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled",
                ));
            }
            (
                per_group(op, "base_momentum", &options.base_momentum, groups)?,
                per_group(op, "max_momentum", &options.max_momentum, groups)?,
            )
        } else {
            (vec![], vec![])
        };
        let up = options.step_size_up;
        let down = options.step_size_down.unwrap_or(up);
        if up + down <= 0.0 || (up + down).is_nan() {
            return Err(Error::invalid(
                op,
                format!("step_size_up + step_size_down is {}: it must be positive", up + down),
            ));
        }
        for (g, lr) in base_lrs.iter().enumerate() {
            opt.set_lr(g, *lr)?;
        }
        for (g, m) in max_momentums.iter().enumerate() {
            opt.set_momentum(g, *m)?;
        }
        let schedule = Cyclic {
            max_lrs,
            total_size: up + down,
            step_ratio: up / (up + down),
            mode: options.mode,
            gamma: options.gamma,
            cycle_momentum: options.cycle_momentum,
            base_momentums,
            max_momentums,
        };
        let mut scheduler = Scheduler::with_schedule(opt, schedule)?;
        // PyTorch's constructor sets `base_lrs` after the initial step, which read the groups' `initial_lr`.
        scheduler.base.base_lrs = base_lrs;
        Ok(scheduler)
    }
}
