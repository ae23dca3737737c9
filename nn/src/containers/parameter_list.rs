//! [`ParameterList`]: parameters in a list.

use crate::{Module, Param, Tensor};

/// PyTorch's `nn.ParameterList`: parameters keyed `0`, `1`, …
///
/// ```
/// use nn::prelude::*;
/// let mut alphas = ParameterList::new();
/// alphas.push(Param::new(Tensor::zeros([3], DType::F32)));
/// alphas.push(Param::new(Tensor::zeros([2, 2], DType::F32)));
/// assert_eq!(
///     alphas.to_string(),
///     "ParameterList(\n    (0): Parameter containing: [torch.float32 of size 3]\n    (1): Parameter containing: [torch.float32 of size 2x2]\n)"
/// );
/// ```
#[derive(Module)]
pub struct ParameterList {
    #[members]
    params: Vec<Param>,
    training: bool,
    hooks: crate::Hooks,
}

impl ParameterList {
    /// An empty list, in training mode.
    pub fn new() -> ParameterList {
        ParameterList {
            params: Vec::new(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// A list of `params`.
    pub fn from_params(params: Vec<Param>) -> ParameterList {
        ParameterList {
            params,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// Appends a parameter (PyTorch's `append`; a tensor becomes a new parameter).
    pub fn push(&mut self, param: impl Into<Param>) {
        self.params.push(param.into());
    }

    /// PyTorch's `register_parameter` with the next index as name.
    pub fn register_parameter(&mut self, param: impl Into<Param>) {
        self.push(param)
    }

    /// The parameter at `index`.
    pub fn get(&self, index: usize) -> Option<&Param> {
        self.params.get(index)
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// The parameters, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Param> {
        self.params.iter()
    }
}

impl std::ops::Index<usize> for ParameterList {
    type Output = Param;
    fn index(&self, index: usize) -> &Param {
        &self.params[index]
    }
}

impl From<Vec<Tensor>> for ParameterList {
    fn from(tensors: Vec<Tensor>) -> ParameterList {
        ParameterList::from_params(tensors.into_iter().map(Param::new).collect())
    }
}

impl Default for ParameterList {
    fn default() -> Self {
        ParameterList::new()
    }
}
