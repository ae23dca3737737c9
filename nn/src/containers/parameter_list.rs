//! [`ParameterList`]: parameters in a list.

use super::{py_index, py_slice};
use crate::{Module, Param, Result, Tensor};

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

    /// `params[index]`, a negative index counting from the end; out of range is an error.
    pub fn at(&self, index: isize) -> Result<&Param> {
        Ok(&self.params[py_index("ParameterList[index]", index, self.len())?])
    }

    /// `params[index] = param` (PyTorch's `__setitem__`), a negative index counting from the end.
    pub fn set(&mut self, index: isize, param: impl Into<Param>) -> Result<()> {
        let i = py_index("ParameterList[index] =", index, self.len())?;
        self.params[i] = param.into();
        Ok(())
    }

    /// `params[start:stop]`: a new list holding the same parameters (shared, as PyTorch's slice shares them),
    /// bounds as Python's.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let list = ParameterList::from((0..3).map(|_| Tensor::zeros([1], DType::F32)).collect::<Vec<_>>());
    /// let tail = list.slice(Some(-2), None);
    /// assert_eq!(tail.len(), 2);
    /// tail[0].data().fill_(5.0).unwrap();
    /// assert_eq!(list[1].data().to_vec::<f32>().unwrap(), [5.0]);
    /// ```
    pub fn slice(&self, start: Option<isize>, stop: Option<isize>) -> ParameterList {
        ParameterList::from_params(self.params[py_slice(start, stop, self.len())].to_vec())
    }

    /// Appends every parameter of `params` (PyTorch's `extend`; `+=` does the same).
    pub fn extend(&mut self, params: impl IntoIterator<Item = impl Into<Param>>) {
        self.params.extend(params.into_iter().map(Into::into));
    }
}

impl std::ops::AddAssign<ParameterList> for ParameterList {
    /// PyTorch's `+=`: [`extend`](ParameterList::extend).
    fn add_assign(&mut self, other: ParameterList) {
        self.extend(other.params);
    }
}

impl<'a> IntoIterator for &'a ParameterList {
    type Item = &'a Param;
    type IntoIter = std::slice::Iter<'a, Param>;
    fn into_iter(self) -> Self::IntoIter {
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

default_is!(ParameterList => ParameterList::new());
