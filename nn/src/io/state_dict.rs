//! [`StateDict`]: PyTorch's `OrderedDict` of parameters and persistent buffers, keyed by dotted path.

use std::ops::{Deref, DerefMut};

use indexmap::IndexMap;

use crate::Tensor;

/// Tensors keyed by dotted path, in PyTorch's order. The tensors share storage with the module they came
/// from (as PyTorch's `state_dict()` does); [`StateDict::deep_copy`] detaches them.
///
/// It dereferences to an [`IndexMap`], so `get`, `insert`, `shift_remove`, `keys` and `iter` are at hand.
///
/// ```
/// use nn::prelude::*;
/// let fc = Linear::new(3, 2, true);
/// let sd = fc.state_dict();
/// assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight", "bias"]);
/// assert_eq!(sd["weight"].shape(), &[2, 3]);
/// ```
#[derive(Clone, Default, Debug)]
pub struct StateDict(IndexMap<String, Tensor>);

impl StateDict {
    /// An empty state dict.
    pub fn new() -> StateDict {
        StateDict(IndexMap::new())
    }

    /// A copy whose tensors have storage of their own.
    pub fn deep_copy(&self) -> crate::Result<StateDict> {
        self.0.iter().map(|(k, t)| Ok((k.clone(), t.deep_copy()?))).collect()
    }

    /// The entries, consumed.
    pub fn into_inner(self) -> IndexMap<String, Tensor> {
        self.0
    }
}

impl Deref for StateDict {
    type Target = IndexMap<String, Tensor>;
    fn deref(&self) -> &IndexMap<String, Tensor> {
        &self.0
    }
}

impl DerefMut for StateDict {
    fn deref_mut(&mut self) -> &mut IndexMap<String, Tensor> {
        &mut self.0
    }
}

impl FromIterator<(String, Tensor)> for StateDict {
    fn from_iter<I: IntoIterator<Item = (String, Tensor)>>(iter: I) -> StateDict {
        StateDict(iter.into_iter().collect())
    }
}

impl IntoIterator for StateDict {
    type Item = (String, Tensor);
    type IntoIter = indexmap::map::IntoIter<String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a StateDict {
    type Item = (&'a String, &'a Tensor);
    type IntoIter = indexmap::map::Iter<'a, String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
