//! An optimizer's state in PyTorch's layout: per-parameter tensors by name, and the groups' hyperparameters.

use std::collections::BTreeMap;

use indexmap::IndexMap;

use super::HyperValue;
use crate::io::StateDict;
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
    /// The value of type `T`, or an error naming `key` and the kind expected.
    pub fn get<T: HyperValue>(&self, key: &str) -> Result<T> {
        T::from_hyper(self)
            .ok_or_else(|| Error::invalid("load_state_dict", format!("{key} is {self:?}: expected {}", T::KIND)))
    }

    /// The number, or an error naming `key`.
    pub fn float(&self, key: &str) -> Result<f64> {
        self.get(key)
    }

    /// The flag, or an error naming `key`.
    pub fn bool(&self, key: &str) -> Result<bool> {
        self.get(key)
    }

    /// The count, or an error naming `key`.
    pub fn int(&self, key: &str) -> Result<i64> {
        self.get(key)
    }

    /// The list, or an error naming `key`.
    pub fn list(&self, key: &str) -> Result<Vec<f64>> {
        self.get(key)
    }

    /// The pair, or an error naming `key`.
    pub fn pair(&self, key: &str) -> Result<(f64, f64)> {
        self.get(key)
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

    /// The scalar tensor `name` (NAdam's `mu_product`, ASGD's `eta` and `mu`), made on first use as a float32
    /// scalar on the CPU holding `initial`, as PyTorch makes it. Updates through its in-place ops
    /// (`mul_scalar_`, `fill_`) then round in its dtype: float32, or the parameter's after a load, as in
    /// PyTorch.
    pub fn scalar(&mut self, name: &str, initial: f64) -> Result<Tensor> {
        if let Some(t) = self.get(name) {
            return Ok(t.clone());
        }
        let t = Tensor::full(Vec::<usize>::new(), initial, DType::F32);
        self.insert(name, t.clone());
        Ok(t)
    }

    /// Counts one more step and returns its number (from 1): what every update does first.
    pub fn next_step(&mut self) -> Result<f64> {
        let step = self.step()? + 1.0;
        self.set_step(step)?;
        Ok(step)
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

    /// [`zeros_like`](Self::zeros_like) where `wanted` (a buffer only some options use: AMSGrad's maximum, a
    /// momentum buffer), else `None`.
    pub fn zeros_like_if(&mut self, wanted: bool, name: &str, like: &Tensor) -> Result<Option<Tensor>> {
        wanted.then(|| self.zeros_like(name, like)).transpose()
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

impl OptimizerState {
    /// The state as tensors, to save beside a model's weights: `state.{index}.{name}` for every state tensor,
    /// `param_groups.{group}.params` (int64 indices) and `param_groups.{group}.{hyperparameter}` (a float64 or
    /// bool scalar, `betas` a float64 pair, a count an int64 scalar, a list a float64 vector).
    ///
    /// ```
    /// use nn::optim::{Optimizer, OptimizerState, SGD, SgdOptions};
    /// use nn::prelude::*;
    /// let fc = Linear::new(2, 1, true);
    /// let opt = SGD::new(fc.parameters(), SgdOptions::default())?;
    /// let tensors = opt.state_dict()?.to_state_dict()?;
    /// assert_eq!(tensors["param_groups.0.lr"].item()?, 1e-3);
    /// let back = OptimizerState::from_state_dict(&tensors)?;
    /// assert_eq!(back.param_groups, opt.state_dict()?.param_groups);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn to_state_dict(&self) -> Result<StateDict> {
        let mut out = StateDict::new();
        for (index, state) in &self.state {
            for (name, t) in state.iter() {
                out.insert(format!("state.{index}.{name}"), t.clone());
            }
        }
        for (g, group) in self.param_groups.iter().enumerate() {
            let indices: Vec<i64> = group.params.iter().map(|i| *i as i64).collect();
            let n = indices.len();
            out.insert(format!("param_groups.{g}.params"), Tensor::from_vec(indices, [n])?);
            for (key, value) in &group.options {
                let t = match value {
                    Hyper::Float(v) => Tensor::from_vec(vec![*v], Vec::<usize>::new())?,
                    Hyper::Bool(v) => Tensor::from_vec(vec![*v], Vec::<usize>::new())?,
                    Hyper::Int(v) => Tensor::from_vec(vec![*v], Vec::<usize>::new())?,
                    Hyper::Pair(a, b) => Tensor::from_vec(vec![*a, *b], [2])?,
                    Hyper::List(v) => Tensor::from_vec(v.clone(), [v.len()])?,
                };
                out.insert(format!("param_groups.{g}.{key}"), t);
            }
        }
        Ok(out)
    }

    /// The state [`OptimizerState::to_state_dict`] wrote (a float64 vector of two is read as a pair, as the
    /// optimizers' only vector hyperparameter is `betas`). A key of another form is an error naming it.
    pub fn from_state_dict(tensors: &StateDict) -> Result<OptimizerState> {
        let bad = |key: &str, why: &str| Error::invalid("OptimizerState::from_state_dict", format!("{key}: {why}"));
        let mut out = OptimizerState::default();
        for (key, t) in tensors.iter() {
            let parts: Vec<&str> = key.splitn(3, '.').collect();
            let [kind, index, name] = parts[..] else {
                return Err(bad(key, "expected state.{index}.{name} or param_groups.{group}.{key}"));
            };
            let index: usize = index.parse().map_err(|_| bad(key, "the index is not a number"))?;
            match kind {
                "state" => {
                    out.state.entry(index).or_default().insert(name, t.clone());
                }
                "param_groups" => {
                    if index > out.param_groups.len() + 64 {
                        return Err(bad(key, "group index out of range"));
                    }
                    while out.param_groups.len() <= index {
                        out.param_groups.push(GroupState::default());
                    }
                    let group = &mut out.param_groups[index];
                    let values = t.to_vec_f64()?;
                    if name == "params" {
                        group.params = values.iter().map(|v| *v as usize).collect();
                        continue;
                    }
                    let value = match (t.dtype(), t.rank(), values.as_slice()) {
                        (DType::F64, 0, [v]) => Hyper::Float(*v),
                        (DType::Bool, 0, [v]) => Hyper::Bool(*v != 0.0),
                        (DType::I64, 0, [v]) => Hyper::Int(*v as i64),
                        (DType::F64, 1, [a, b]) => Hyper::Pair(*a, *b),
                        (DType::F64, 1, v) => Hyper::List(v.to_vec()),
                        _ => {
                            return Err(bad(
                                key,
                                "not a hyperparameter tensor (f64, bool or i64 scalar, f64 vector)",
                            ));
                        }
                    };
                    group.options.insert(name.to_owned(), value);
                }
                _ => return Err(bad(key, "expected state.{index}.{name} or param_groups.{group}.{key}")),
            }
        }
        Ok(out)
    }

    /// Saves [`OptimizerState::to_state_dict`] as a safetensors file.
    pub fn save_safetensors(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::io::save_safetensors(&self.to_state_dict()?, path.as_ref())
    }

    /// Reads a file [`OptimizerState::save_safetensors`] wrote.
    pub fn load_safetensors(path: impl AsRef<std::path::Path>) -> Result<OptimizerState> {
        OptimizerState::from_state_dict(&crate::io::load_safetensors(path.as_ref())?)
    }
}
