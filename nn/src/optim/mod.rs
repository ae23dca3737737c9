//! PyTorch's `torch.optim`: [`SGD`], [`Adam`], [`AdamW`], [`RMSprop`], [`Adagrad`], [`Adadelta`],
//! [`Adafactor`], [`Adamax`], [`NAdam`], [`RAdam`], [`Rprop`], [`ASGD`], with parameter groups of their own
//! options, `zero_grad(set_to_none)`, and a state dict in PyTorch's layout ([`OptimizerState`]: `state` keyed
//! by parameter index, `param_groups` with their hyperparameters and indices). A new algorithm is its options
//! ([`group_options!`](crate::group_options)) and an [`Algorithm`].
//!
//! Each algorithm is PyTorch 2.5.1's single-tensor implementation, operation for operation (`lerp`, `addcmul`,
//! `addcdiv` in its order), run under `no_grad` with the tensors' own ops, so a step runs where the parameters
//! are. A parameter without a gradient is skipped and gets no state, as in PyTorch.
//!
//! ```
//! use nn::optim::{Optimizer, SGD, SgdOptions};
//! use nn::prelude::*;
//! let fc = Linear::new(3, 1, true);
//! let mut opt = SGD::new(fc.parameters(), SgdOptions { lr: 0.1, momentum: 0.9, ..Default::default() })?;
//! let loss = fc.forward(Tensor::ones([4, 3], DType::F32))?.sum_all()?;
//! loss.backward()?;
//! opt.step()?;
//! opt.zero_grad(true)?;
//! assert!(fc.weight.grad().is_none());
//! assert_eq!(opt.state_dict()?.state.len(), 2);
//! # Ok::<(), nn::Error>(())
//! ```

mod adadelta;
mod adafactor;
mod adagrad;
mod adam;
mod adamax;
mod asgd;
pub mod lr_scheduler;
mod nadam;
mod options;
mod radam;
mod rmsprop;
mod rprop;
mod sgd;
mod state;

pub use crate::group_options;
pub use adadelta::{Adadelta, AdadeltaAlgorithm, AdadeltaOptions};
pub use adafactor::{Adafactor, AdafactorAlgorithm, AdafactorOptions};
pub use adagrad::{Adagrad, AdagradAlgorithm, AdagradOptions};
pub use adam::{Adam, AdamAlgorithm, AdamOptions, AdamUpdate, AdamW, AdamWAlgorithm};
pub use adamax::{Adamax, AdamaxAlgorithm, AdamaxOptions};
pub use asgd::{ASGD, ASGDAlgorithm, ASGDOptions};
pub use nadam::{NAdam, NAdamAlgorithm, NAdamOptions};
pub use options::HyperValue;
pub use radam::{RAdam, RAdamAlgorithm, RAdamOptions};
pub use rmsprop::{RMSprop, RMSpropAlgorithm, RMSpropOptions};
pub use rprop::{Rprop, RpropAlgorithm, RpropOptions};
pub use sgd::{SGD, SgdAlgorithm, SgdOptions};
pub use state::{GroupState, Hyper, OptimizerState, ParamState};

use std::collections::{BTreeMap, HashMap};

use crate::{Error, Param, Result, Tensor};

/// What every optimizer does, object-safe so a scheduler or a training loop can hold any of them.
pub trait Optimizer {
    /// One update of every parameter that has a gradient.
    fn step(&mut self) -> Result<()>;

    /// Clears the gradients: to `None` with `set_to_none` (PyTorch's default), else zeroed in place.
    fn zero_grad(&self, set_to_none: bool) -> Result<()>;

    /// The learning rate of each group.
    fn lrs(&self) -> Vec<f64>;

    /// Sets the learning rate of group `group` (what a scheduler does).
    fn set_lr(&mut self, group: usize, lr: f64) -> Result<()>;

    /// Each group's `initial_lr`: the learning rate when the first scheduler attached (PyTorch keeps it in the
    /// group, and its state dict), `None` before.
    fn initial_lrs(&self) -> Vec<Option<f64>>;

    /// Sets group `group`'s `initial_lr`.
    fn set_initial_lr(&mut self, group: usize, lr: f64) -> Result<()>;

    /// Each group's momentum as a scheduler cycles it: SGD's and RMSprop's `momentum`, Adam's first beta;
    /// `None` for an algorithm without one.
    fn momentums(&self) -> Vec<Option<f64>>;

    /// Sets group `group`'s momentum (see [`Optimizer::momentums`]); an error for an algorithm without one.
    fn set_momentum(&mut self, group: usize, momentum: f64) -> Result<()>;

    /// The state in PyTorch's layout: copies of the state tensors, the groups' hyperparameters and indices.
    fn state_dict(&self) -> Result<OptimizerState>;

    /// Loads a state dict of the same layout (group count and sizes, state shapes); all or nothing: on an error
    /// the optimizer is unchanged.
    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()>;
}

/// The options of one algorithm's parameter group, convertible to and from PyTorch's `param_groups` entries.
pub trait GroupOptions: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The learning rate.
    fn lr(&self) -> f64;
    /// Sets the learning rate.
    fn set_lr(&mut self, lr: f64);
    /// The momentum a scheduler may cycle (SGD's `momentum`, Adam's first beta), if the algorithm has one.
    fn momentum(&self) -> Option<f64> {
        None
    }
    /// Sets that momentum; `false` when the algorithm has none.
    fn set_momentum(&mut self, _momentum: f64) -> bool {
        false
    }
    /// `Ok` when the options are valid (PyTorch's constructor checks), else an error naming the option.
    fn validate(&self) -> Result<()>;
    /// The hyperparameters by PyTorch's names, in its order.
    fn to_hypers(&self) -> Vec<(&'static str, Hyper)>;
    /// These options with the entries of `hypers` that name one of them (each of the right kind, else an error).
    fn with_hypers(&self, hypers: &BTreeMap<String, Hyper>) -> Result<Self>;
}

/// One algorithm: its options and its update of one parameter.
pub trait Algorithm: Send + Sync + 'static {
    /// The options of a group.
    type Options: GroupOptions;
    /// PyTorch's class name.
    const NAME: &'static str;

    /// Updates `param` in place from `grad`, reading and writing this parameter's `state` (empty before its
    /// first step). Runs under `no_grad`.
    fn update(options: &Self::Options, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()>;

    /// The state a parameter gets when it joins the optimizer (Adagrad's `sum`); none by default.
    fn initial_state(_options: &Self::Options, _param: &Tensor) -> Result<Option<ParamState>> {
        Ok(None)
    }
}

/// Declares a single-tensor algorithm: a unit struct implementing [`Algorithm`] for its options under
/// PyTorch's class name, its update the function named last (`fn(&Options, param, grad, &mut ParamState)`).
macro_rules! algorithm {
    ($(#[$meta:meta])* $name:ident: $options:ty, $class:literal, $update:path) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name;

        impl $crate::optim::Algorithm for $name {
            type Options = $options;
            const NAME: &'static str = $class;

            fn update(o: &$options, param: &Tensor, grad: &Tensor, state: &mut ParamState) -> Result<()> {
                $update(o, param, grad, state)
            }
        }
    };
}

pub(crate) use algorithm;

/// Parameters with their options.
#[derive(Clone, Debug)]
pub struct ParamGroup<O> {
    /// The parameters, in order (their indices in the state dict run over the groups in order).
    pub params: Vec<Param>,
    /// Their options.
    pub options: O,
}

/// An optimizer running algorithm `A` over parameter groups; [`SGD`], [`Adam`] and the others are this type.
pub struct Optim<A: Algorithm> {
    groups: Vec<ParamGroup<A::Options>>,
    /// Per group, `initial_lr` once a scheduler set it.
    initial_lrs: Vec<Option<f64>>,
    /// Per parameter (by `Param::id`).
    state: HashMap<usize, ParamState>,
}

impl<A: Algorithm> std::fmt::Debug for Optim<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(A::NAME).field("groups", &self.groups.len()).finish()
    }
}

impl<A: Algorithm> Optim<A> {
    /// Group `group`, or an error of `op` naming the group count.
    fn group_mut(&mut self, op: &'static str, group: usize) -> Result<&mut ParamGroup<A::Options>> {
        let count = self.groups.len();
        self.groups
            .get_mut(group)
            .ok_or_else(|| Error::invalid(op, format!("no group {group}: the optimizer has {count}")))
    }

    /// An optimizer over `params` with `options` (checked); a parameter listed twice is an error, as in
    /// PyTorch.
    pub fn new(params: Vec<Param>, options: A::Options) -> Result<Optim<A>> {
        let mut optim = Optim {
            groups: vec![],
            initial_lrs: vec![],
            state: HashMap::new(),
        };
        optim.add_param_group(params, options)?;
        Ok(optim)
    }

    /// Adds a group with its own options (PyTorch's `add_param_group`); a parameter already in a group is an
    /// error and nothing is added.
    pub fn add_param_group(&mut self, params: Vec<Param>, options: A::Options) -> Result<()> {
        options.validate()?;
        let mut seen: Vec<usize> = self
            .groups
            .iter()
            .flat_map(|g| g.params.iter().map(Param::id))
            .collect();
        for p in &params {
            if seen.contains(&p.id()) {
                return Err(Error::invalid(
                    "add_param_group",
                    "some parameters appear in more than one parameter group (or twice in one)",
                ));
            }
            seen.push(p.id());
        }
        let mut initial = vec![];
        for p in &params {
            if let Some(s) = A::initial_state(&options, &p.data())? {
                initial.push((p.id(), s));
            }
        }
        self.state.extend(initial);
        self.groups.push(ParamGroup { params, options });
        self.initial_lrs.push(None);
        Ok(())
    }

    /// The groups.
    pub fn param_groups(&self) -> &[ParamGroup<A::Options>] {
        &self.groups
    }

    /// The options of group `index` to change (PyTorch's `opt.param_groups[i]['momentum'] = …`), checked at the
    /// next step.
    pub fn options_mut(&mut self, index: usize) -> Option<&mut A::Options> {
        self.groups.get_mut(index).map(|g| &mut g.options)
    }

    /// The state of `param`, if it has any.
    pub fn state_of(&self, param: &Param) -> Option<&ParamState> {
        self.state.get(&param.id())
    }
}

impl<A: Algorithm> Optimizer for Optim<A> {
    fn step(&mut self) -> Result<()> {
        let _no_grad = crate::no_grad();
        for group in &self.groups {
            group.options.validate()?;
            for p in &group.params {
                let Some(grad) = p.grad() else { continue };
                let state = self.state.entry(p.id()).or_default();
                A::update(&group.options, &p.data(), &grad, state)?;
            }
        }
        Ok(())
    }

    fn zero_grad(&self, set_to_none: bool) -> Result<()> {
        let _no_grad = crate::no_grad();
        for p in self.groups.iter().flat_map(|g| &g.params) {
            match p.grad() {
                Some(_) if set_to_none => p.set_grad(None)?,
                Some(g) => g.detach().zero_()?,
                None => {}
            }
        }
        Ok(())
    }

    fn lrs(&self) -> Vec<f64> {
        self.groups.iter().map(|g| g.options.lr()).collect()
    }

    fn set_lr(&mut self, group: usize, lr: f64) -> Result<()> {
        self.group_mut("set_lr", group)?.options.set_lr(lr);
        Ok(())
    }

    fn initial_lrs(&self) -> Vec<Option<f64>> {
        self.initial_lrs.clone()
    }

    fn set_initial_lr(&mut self, group: usize, lr: f64) -> Result<()> {
        let count = self.initial_lrs.len();
        *self.initial_lrs.get_mut(group).ok_or_else(|| {
            Error::invalid("set_initial_lr", format!("no group {group}: the optimizer has {count}"))
        })? = Some(lr);
        Ok(())
    }

    fn momentums(&self) -> Vec<Option<f64>> {
        self.groups.iter().map(|g| g.options.momentum()).collect()
    }

    fn set_momentum(&mut self, group: usize, momentum: f64) -> Result<()> {
        if self.group_mut("set_momentum", group)?.options.set_momentum(momentum) {
            Ok(())
        } else {
            Err(Error::invalid(
                "set_momentum",
                format!("{} has no momentum or beta1 to set", A::NAME),
            ))
        }
    }

    fn state_dict(&self) -> Result<OptimizerState> {
        let mut out = OptimizerState::default();
        let mut index = 0;
        for group in &self.groups {
            let mut indices = vec![];
            for p in &group.params {
                if let Some(s) = self.state.get(&p.id()) {
                    out.state.insert(index, s.deep_copy()?);
                }
                indices.push(index);
                index += 1;
            }
            let mut options: BTreeMap<String, Hyper> = group
                .options
                .to_hypers()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            if let Some(lr) = self.initial_lrs[out.param_groups.len()] {
                options.insert("initial_lr".into(), Hyper::Float(lr));
            }
            out.param_groups.push(GroupState {
                options,
                params: indices,
            });
        }
        Ok(out)
    }

    fn load_state_dict(&mut self, saved: &OptimizerState) -> Result<()> {
        let op = "load_state_dict";
        if saved.param_groups.len() != self.groups.len() {
            return Err(Error::invalid(
                op,
                format!(
                    "loaded state dict has a different number of parameter groups ({}, the optimizer has {})",
                    saved.param_groups.len(),
                    self.groups.len()
                ),
            ));
        }
        // Check and build everything first, then assign: all or nothing.
        let mut options = vec![];
        let mut initial_lrs = vec![];
        let mut state = HashMap::new();
        for (g, (group, saved_group)) in self.groups.iter().zip(&saved.param_groups).enumerate() {
            if saved_group.params.len() != group.params.len() {
                return Err(Error::invalid(
                    op,
                    format!(
                        "loaded state dict contains a parameter group ({g}) that doesn't match the size of \
                         optimizer's group ({} parameters, the optimizer's has {})",
                        saved_group.params.len(),
                        group.params.len()
                    ),
                ));
            }
            let o = group.options.with_hypers(&saved_group.options)?;
            o.validate()?;
            options.push(o);
            initial_lrs.push(match saved_group.options.get("initial_lr") {
                Some(v) => Some(v.float("initial_lr")?),
                None => None,
            });
            for (p, index) in group.params.iter().zip(&saved_group.params) {
                let Some(s) = saved.state.get(index) else { continue };
                state.insert(p.id(), s.matched_to(&p.data(), *index)?);
            }
        }
        for (group, o) in self.groups.iter_mut().zip(options) {
            group.options = o;
        }
        self.initial_lrs = initial_lrs;
        self.state = state;
        Ok(())
    }
}

/// `Ok` when every value is a finite number at least 0, else `op`'s error naming the first that is not
/// (PyTorch's "Invalid … value"); what [`group_options!`](crate::group_options) checks for the fields it marks.
pub fn check_non_negative(op: &'static str, values: &[(&str, f64)]) -> Result<()> {
    match values.iter().find(|(_, v)| !(*v >= 0.0 && v.is_finite())) {
        None => Ok(()),
        Some((what, value)) => Err(Error::invalid(
            op,
            format!(
                "invalid {what}: {} (it must be a finite number >= 0)",
                crate::error::py_float(*value)
            ),
        )),
    }
}
