//! [`ParameterDict`]: parameters keyed by name.

use indexmap::IndexMap;

use crate::module::check_name;
use crate::{Module, Param, Result};

/// PyTorch's `nn.ParameterDict`: parameters keyed by name, in insertion order.
///
/// ```
/// use nn::prelude::*;
/// let mut d = ParameterDict::new();
/// d.insert("a", Param::new(Tensor::zeros([2, 3], DType::F32))).unwrap();
/// assert_eq!(d.to_string(), "ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2x3])");
/// ```
#[derive(Module)]
pub struct ParameterDict {
    #[members]
    params: IndexMap<String, Param>,
    training: bool,
    hooks: crate::Hooks,
}

impl ParameterDict {
    /// An empty dict, in training mode.
    pub fn new() -> ParameterDict {
        ParameterDict {
            params: IndexMap::new(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// Adds (or replaces in place) the parameter under `key`.
    pub fn insert(&mut self, key: &str, param: impl Into<Param>) -> crate::Result<()> {
        check_name("ParameterDict::insert", key)?;
        self.params.insert(key.to_owned(), param.into());
        Ok(())
    }

    /// PyTorch's `register_parameter`: [`insert`](Self::insert).
    pub fn register_parameter(&mut self, key: &str, param: impl Into<Param>) -> crate::Result<()> {
        self.insert(key, param)
    }

    /// The parameter under `key`.
    pub fn get(&self, key: &str) -> Option<&Param> {
        self.params.get(key)
    }

    /// Removes the parameter under `key`, keeping the others' order.
    pub fn remove(&mut self, key: &str) -> Option<Param> {
        self.params.shift_remove(key)
    }

    /// PyTorch's `pop(key)`: [`remove`](Self::remove).
    pub fn pop(&mut self, key: &str) -> Option<Param> {
        self.remove(key)
    }

    /// PyTorch's `popitem()`: removes and returns the last inserted entry.
    pub fn popitem(&mut self) -> Option<(String, Param)> {
        self.params.pop()
    }

    /// PyTorch's `setdefault(key, default)`: the parameter under `key`, inserting `default` first when there is
    /// none.
    pub fn setdefault(&mut self, key: &str, default: impl Into<Param>) -> Result<&Param> {
        if !self.params.contains_key(key) {
            self.insert(key, default)?;
        }
        Ok(&self.params[key])
    }

    /// PyTorch's `update(other)`: inserts each entry (replacing in place those whose key is present), in order.
    pub fn update<K: AsRef<str>>(&mut self, entries: impl IntoIterator<Item = (K, Param)>) -> Result<()> {
        for (key, param) in entries {
            self.insert(key.as_ref(), param)?;
        }
        Ok(())
    }

    /// PyTorch's `copy()`: a new dict holding the same parameters (shared).
    pub fn copy(&self) -> ParameterDict {
        let mut out = ParameterDict::new();
        out.params = self.params.clone();
        out
    }

    /// PyTorch's `fromkeys(keys, default)`: every key holding the same parameter.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let d = ParameterDict::fromkeys(["a", "b"], Param::new(Tensor::zeros([1], DType::F32))).unwrap();
    /// d.get("a").unwrap().data().fill_(2.0).unwrap();
    /// assert_eq!(d.get("b").unwrap().data().to_vec::<f32>().unwrap(), [2.0]);
    /// ```
    pub fn fromkeys<K: AsRef<str>>(
        keys: impl IntoIterator<Item = K>,
        default: impl Into<Param>,
    ) -> Result<ParameterDict> {
        let default = default.into();
        let mut out = ParameterDict::new();
        out.update(keys.into_iter().map(|k| (k, default.clone())))?;
        Ok(out)
    }

    /// PyTorch's `clear()`.
    pub fn clear(&mut self) {
        self.params.clear();
    }

    /// The keys, in order (PyTorch's iteration over the dict).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.params.keys().map(String::as_str)
    }

    /// The parameters, in order.
    pub fn values(&self) -> impl Iterator<Item = &Param> {
        self.params.values()
    }

    /// `(key, parameter)` pairs, in order.
    pub fn items(&self) -> impl Iterator<Item = (&str, &Param)> {
        self.params.iter().map(|(k, p)| (k.as_str(), p))
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }
}

impl std::ops::BitOr<&ParameterDict> for &ParameterDict {
    type Output = ParameterDict;
    /// PyTorch's `|`: a copy of `self` updated with `other` (parameters shared).
    fn bitor(self, other: &ParameterDict) -> ParameterDict {
        let mut out = self.copy();
        for (k, p) in &other.params {
            out.params.insert(k.clone(), p.clone());
        }
        out
    }
}

default_is!(ParameterDict => ParameterDict::new());
