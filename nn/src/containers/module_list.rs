//! [`ModuleList`]: modules of any types in a list.

use super::py_index;
use crate::module::ModuleField;
use crate::{Module, Result};

/// PyTorch's `nn.ModuleList` with modules of any types (a `Vec<M>` field is the typed, static form).
///
/// ```
/// use nn::prelude::*;
/// let mut list = ModuleList::new();
/// list.push(ReLU::new(false));
/// list.push(ReLU::new(false));
/// list.push(Tanh::new());
/// assert_eq!(list.to_string(), "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)");
/// ```
#[derive(Module)]
pub struct ModuleList {
    #[members]
    items: Vec<Box<dyn ModuleField>>,
    training: bool,
    hooks: crate::Hooks,
}

impl ModuleList {
    /// An empty list, in training mode.
    pub fn new() -> ModuleList {
        ModuleList {
            items: Vec::new(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// Appends a module (PyTorch's `append`).
    pub fn push(&mut self, module: impl ModuleField) {
        self.items.push(Box::new(module));
    }

    /// Appends a module and returns the list (PyTorch's `append`).
    pub fn append(mut self, module: impl ModuleField) -> ModuleList {
        self.push(module);
        self
    }

    /// Inserts a module at `index` (PyTorch's `insert`); later modules move up one key.
    pub fn insert(&mut self, index: usize, module: impl ModuleField) -> crate::Result<()> {
        if index > self.items.len() {
            return Err(crate::Error::invalid(
                "ModuleList::insert",
                format!("index {index} is past the end ({})", self.items.len()),
            ));
        }
        self.items.insert(index, Box::new(module));
        Ok(())
    }

    /// Number of modules.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The module at `index` as a `T`, if it is one.
    pub fn get<T: ModuleField>(&self, index: usize) -> Option<&T> {
        let item: &dyn std::any::Any = &**self.items.get(index)?;
        item.downcast_ref::<T>()
    }

    /// PyTorch's `pop(index)`: removes and returns the module at `index` (negative counts from the end); later
    /// modules move down one key.
    pub fn pop(&mut self, index: isize) -> Result<Box<dyn ModuleField>> {
        let i = py_index("ModuleList::pop", index, self.len())?;
        Ok(self.items.remove(i))
    }

    /// PyTorch's `del list[index]`: [`pop`](Self::pop), dropping the module.
    pub fn remove(&mut self, index: isize) -> Result<()> {
        self.pop(index).map(drop)
    }

    /// PyTorch's `extend`: appends every module of `other`, in order (`+=` does the same, `+` makes a new list).
    pub fn extend(&mut self, other: ModuleList) {
        self.items.extend(other.items);
    }
}

impl std::ops::AddAssign<ModuleList> for ModuleList {
    fn add_assign(&mut self, other: ModuleList) {
        self.extend(other);
    }
}

impl std::ops::Add<ModuleList> for ModuleList {
    type Output = ModuleList;
    /// PyTorch's `+`: the modules of both, in order (here moved: a Rust module has one owner).
    fn add(mut self, other: ModuleList) -> ModuleList {
        self.extend(other);
        self
    }
}

impl Default for ModuleList {
    fn default() -> Self {
        ModuleList::new()
    }
}
