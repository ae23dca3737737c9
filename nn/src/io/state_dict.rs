//! [`StateDict`]: PyTorch's `OrderedDict` of parameters and persistent buffers, keyed by dotted path.

use std::ops::{Deref, DerefMut};

use indexmap::IndexMap;

use crate::Tensor;

/// Tensors keyed by dotted path, in PyTorch's order. The tensors share storage with the module they came
/// from (as PyTorch's `state_dict()` does); [`StateDict::deep_copy`] detaches them.
///
/// It dereferences to an [`IndexMap`], so `get`, `insert`, `shift_remove`, `keys` and `iter` are at hand.
///
/// Beside the tensors it carries PyTorch's `_metadata` versions: the layout version of the module at each
/// path ([`Module::state_dict_version`](crate::Module::state_dict_version)), recorded by `state_dict()` and
/// read by `load_state_dict`. A dict from a file has none, as PyTorch's from safetensors has none; one from
/// `state_dict()` stores the versions other than 1 (the default), and reports 1 for every other path.
///
/// ```
/// use nn::prelude::*;
/// let fc = Linear::new(3, 2, true);
/// let sd = fc.state_dict();
/// assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight", "bias"]);
/// assert_eq!(sd["weight"].shape(), &[2, 3]);
/// ```
#[derive(Clone, Default, Debug)]
pub struct StateDict {
    entries: IndexMap<String, Tensor>,
    /// `None`: no versions (a dict from a file). Else the versions other than 1, by path.
    versions: Option<IndexMap<String, u32>>,
}

impl StateDict {
    /// An empty state dict.
    pub fn new() -> StateDict {
        StateDict::default()
    }

    /// A copy whose tensors have storage of their own.
    pub fn deep_copy(&self) -> crate::Result<StateDict> {
        let entries = self.entries.iter().map(|(k, t)| Ok((k.clone(), t.deep_copy()?)));
        Ok(StateDict {
            entries: entries.collect::<crate::Result<_>>()?,
            versions: self.versions.clone(),
        })
    }

    /// A PyTorch checkpoint's state dict (`torch.save(model.state_dict(), path)`), in its saved order:
    /// [`io::load_pt`](crate::io::load_pt) with the default options.
    ///
    /// ```no_run
    /// let sd = nn::StateDict::from_pt("model.pt")?;
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn from_pt(path: impl AsRef<std::path::Path>) -> crate::Result<StateDict> {
        super::load_pt(path.as_ref(), &super::PtOptions::new())
    }

    /// The entries, consumed.
    pub fn into_inner(self) -> IndexMap<String, Tensor> {
        self.entries
    }

    /// The layout version recorded for the module at `path` (PyTorch's `_metadata[path]["version"]`; the root's
    /// path is `""`), if any.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let sd = Sequential::new().append(BatchNorm1d::new(2)).state_dict();
    /// assert_eq!(sd.version("0"), Some(2));
    /// assert_eq!(sd.version(""), Some(1));
    /// ```
    pub fn version(&self, path: &str) -> Option<u32> {
        let versions = self.versions.as_ref()?;
        Some(versions.get(path).copied().unwrap_or(1))
    }

    /// Records `version` for the module at `path` (the dict then has versions: 1 for every other path).
    pub fn set_version(&mut self, path: impl Into<String>, version: u32) {
        let versions = self.versions.get_or_insert_with(IndexMap::new);
        let path = path.into();
        if version == 1 {
            versions.shift_remove(&path);
        } else {
            versions.insert(path, version);
        }
    }

    /// Marks the dict as carrying versions (every path at 1 until [`set_version`](Self::set_version)).
    pub(crate) fn mark_versioned(&mut self) {
        self.versions.get_or_insert_with(IndexMap::new);
    }

    /// Forgets every version: the dict is then as one from a file (PyTorch's without `_metadata`).
    pub fn clear_versions(&mut self) {
        self.versions = None;
    }

    /// PyTorch's `consume_prefix_in_state_dict_if_present(state_dict, prefix)`: every key that starts with
    /// `prefix` loses it (moved to the end, as PyTorch's pop and set move it; replacing an entry already under
    /// the new key in place), and so do the recorded versions (the one recorded for the prefix's module itself
    /// becomes the root's). Strips `DataParallel`'s `module.`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut sd = Linear::new(2, 2, true).state_dict_with_prefix("module.");
    /// sd.consume_prefix_if_present("module.");
    /// assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight", "bias"]);
    /// ```
    pub fn consume_prefix_if_present(&mut self, prefix: &str) {
        let keys: Vec<String> = self.entries.keys().filter(|k| k.starts_with(prefix)).cloned().collect();
        for key in keys {
            if let Some(t) = self.entries.shift_remove(&key) {
                self.entries.insert(key[prefix.len()..].to_owned(), t);
            }
        }
        let Some(versions) = &mut self.versions else { return };
        let bare = prefix.replace('.', "");
        let paths: Vec<String> = versions
            .keys()
            .filter(|k| !k.is_empty() && (**k == bare || k.starts_with(prefix)))
            .cloned()
            .collect();
        for path in paths {
            if let Some(v) = versions.shift_remove(&path) {
                versions.insert(path.get(prefix.len()..).unwrap_or("").to_owned(), v);
            }
        }
    }

    /// Every recorded version other than 1, `(path, version)`, in the order recorded.
    pub fn versions(&self) -> impl Iterator<Item = (&str, u32)> {
        self.versions.iter().flatten().map(|(k, v)| (k.as_str(), *v))
    }
}

impl Deref for StateDict {
    type Target = IndexMap<String, Tensor>;
    fn deref(&self) -> &IndexMap<String, Tensor> {
        &self.entries
    }
}

impl DerefMut for StateDict {
    fn deref_mut(&mut self) -> &mut IndexMap<String, Tensor> {
        &mut self.entries
    }
}

impl FromIterator<(String, Tensor)> for StateDict {
    fn from_iter<I: IntoIterator<Item = (String, Tensor)>>(iter: I) -> StateDict {
        StateDict {
            entries: iter.into_iter().collect(),
            versions: None,
        }
    }
}

impl IntoIterator for StateDict {
    type Item = (String, Tensor);
    type IntoIter = indexmap::map::IntoIter<String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a StateDict {
    type Item = (&'a String, &'a Tensor);
    type IntoIter = indexmap::map::Iter<'a, String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}
