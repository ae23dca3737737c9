//! An optimizer's state in PyTorch's layout: per-parameter tensors by name, and the groups' hyperparameters.

use std::collections::BTreeMap;

use indexmap::IndexMap;

use crate::{DType, Error, Result, Tensor};

/// A hyperparameter of a group, as PyTorch's `param_groups` holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Hyper {
    /// A number (`lr`, `momentum`, `eps`…).
    Float(f64),
    /// A flag (`nesterov`, `amsgrad`…).
    Bool(bool),
    /// A pair (`betas`).
    Pair(f64, f64),
    /// A count (a scheduler's `last_epoch`, `step_size`).
    Int(i64),
    /// A list (a scheduler's `base_lrs`, `milestones`).
    List(Vec<f64>),
}

impl Hyper {
    /// The number, or an error naming `key`.
    pub fn float(&self, key: &str) -> Result<f64> {
        match self {
            Hyper::Float(v) => Ok(*v),
            other => Err(Error::invalid(
                "load_state_dict",
                format!("{key} is {other:?}: expected a number"),
            )),
        }
    }

    /// The flag, or an error naming `key`.
    pub fn bool(&self, key: &str) -> Result<bool> {
        match self {
            Hyper::Bool(v) => Ok(*v),
            other => Err(Error::invalid(
                "load_state_dict",
                format!("{key} is {other:?}: expected a bool"),
            )),
        }
    }

    /// The count, or an error naming `key`.
    pub fn int(&self, key: &str) -> Result<i64> {
        match self {
            Hyper::Int(v) => Ok(*v),
            other => Err(Error::invalid(
                "load_state_dict",
                format!("{key} is {other:?}: expected an integer"),
            )),
        }
    }

    /// The list, or an error naming `key`.
    pub fn list(&self, key: &str) -> Result<Vec<f64>> {
        match self {
            Hyper::List(v) => Ok(v.clone()),
            other => Err(Error::invalid(
                "load_state_dict",
                format!("{key} is {other:?}: expected a list"),
            )),
        }
    }

    /// The pair, or an error naming `key`.
    pub fn pair(&self, key: &str) -> Result<(f64, f64)> {
        match self {
            Hyper::Pair(a, b) => Ok((*a, *b)),
            other => Err(Error::invalid(
                "load_state_dict",
                format!("{key} is {other:?}: expected a pair"),
            )),
        }
    }
}

/// One group of a state dict: its hyperparameters and the indices of its parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupState {
    /// Hyperparameters by PyTorch's name.
    pub options: BTreeMap<String, Hyper>,
    /// The indices of the group's parameters (counted over all groups, in order).
    pub params: Vec<usize>,
}

/// PyTorch's optimizer `state_dict()`: `state` keyed by parameter index, and `param_groups`.
#[derive(Clone, Debug, Default)]
pub struct OptimizerState {
    /// Per parameter index, the parameter's state tensors (only parameters that have state).
    pub state: BTreeMap<usize, ParamState>,
    /// Per group, its hyperparameters and parameter indices.
    pub param_groups: Vec<GroupState>,
}

/// One parameter's state: tensors by PyTorch's name (`step`, `exp_avg`, `momentum_buffer`…), in its order.
#[derive(Clone, Debug, Default)]
pub struct ParamState {
    entries: IndexMap<String, Tensor>,
}

impl ParamState {
    /// The tensor named `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.entries.get(name)
    }

    /// Sets `name` (keeping its place when it exists).
    pub fn insert(&mut self, name: &str, t: Tensor) {
        self.entries.insert(name.to_owned(), t);
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The step count (PyTorch keeps it as a float32 scalar tensor, `step`), 0 when absent.
    pub fn step(&self) -> Result<f64> {
        match self.get("step") {
            Some(t) => t.item(),
            None => Ok(0.0),
        }
    }

    /// Stores `step` as PyTorch does (a float32 scalar tensor on the CPU).
    pub fn set_step(&mut self, step: f64) -> Result<()> {
        self.insert("step", Tensor::full(Vec::<usize>::new(), step, DType::F32));
        Ok(())
    }

    /// The tensor `name`, made on first use as zeros like `like` (the buffers PyTorch creates lazily).
    pub fn zeros_like(&mut self, name: &str, like: &Tensor) -> Result<Tensor> {
        if let Some(t) = self.get(name) {
            return Ok(t.clone());
        }
        let t = like.zeros_like()?;
        self.insert(name, t.clone());
        Ok(t)
    }

    /// A copy with storage of its own.
    pub fn deep_copy(&self) -> Result<ParamState> {
        let mut out = ParamState::default();
        for (k, v) in &self.entries {
            out.insert(k, v.deep_copy()?);
        }
        Ok(out)
    }

    /// A copy fitted to `param` (PyTorch's load: every tensor but `step` cast to the parameter's dtype and
    /// moved to its device), after checking that those tensors have the parameter's shape.
    pub(crate) fn matched_to(&self, param: &Tensor, index: usize) -> Result<ParamState> {
        let mut out = ParamState::default();
        for (k, v) in &self.entries {
            if k == "step" {
                out.insert(k, v.deep_copy()?);
                continue;
            }
            if v.shape() != param.shape() {
                return Err(Error::invalid(
                    "load_state_dict",
                    format!(
                        "state {k:?} of parameter {index} has shape {}, the parameter {}",
                        v.shape(),
                        param.shape()
                    ),
                ));
            }
            out.insert(k, v.to_dtype(param.dtype())?.to_device(param.device())?.deep_copy()?);
        }
        Ok(out)
    }
}
