//! [`ParameterDict`]: parameters keyed by name.

use indexmap::IndexMap;

use crate::module::check_name;
use crate::{Module, Param};

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

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }
}

impl Default for ParameterDict {
    fn default() -> Self {
        ParameterDict::new()
    }
}
