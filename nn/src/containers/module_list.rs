//! [`ModuleList`]: modules of any types in a list.

use super::{py_index, py_slice, py_slice_step};
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

    /// PyTorch's `list[start:stop]`: a new list holding the same modules, keyed `0`, `1`, … Python's slice
    /// bounds (negative counts from the end, out-of-range bounds clamped). The modules it takes become
    /// [`Shared`](crate::Shared) here too, so both lists hold one module each, as in PyTorch; an `Option` item
    /// cannot be shared and makes the slice an error, with the list unchanged.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut list = ModuleList::new().append(Linear::new(2, 2, true)).append(ReLU::new(false));
    /// let head = list.slice(None, Some(-1)).unwrap();
    /// assert_eq!(head.to_string(), "ModuleList(\n  (0): Linear(in_features=2, out_features=2, bias=True)\n)");
    /// head.get_parameter("0.weight").unwrap().data().fill_(1.0).unwrap();
    /// assert_eq!(list.get_parameter("0.weight").unwrap().data().to_vec::<f32>().unwrap(), vec![1.0; 4]);
    /// ```
    pub fn slice(&mut self, start: Option<isize>, stop: Option<isize>) -> Result<ModuleList> {
        let range = py_slice(start, stop, self.len());
        if let Some(i) = range.clone().find(|&i| !self.items[i].can_share()) {
            return Err(crate::Error::invalid(
                "ModuleList[start:stop]",
                format!("item {i} is an Option slot, which cannot be held in two lists"),
            ));
        }
        let mut taken = ModuleList::new();
        let items = std::mem::take(&mut self.items);
        for (i, item) in items.into_iter().enumerate() {
            let item = if range.contains(&i) {
                match item.share() {
                    Ok((here, there)) => {
                        taken.items.push(there);
                        here
                    }
                    Err(item) => item,
                }
            } else {
                item
            };
            self.items.push(item);
        }
        Ok(taken)
    }

    /// PyTorch's `del list[start:stop:step]`: drops the modules at those positions (Python's slice rules, a
    /// negative step included); later modules move down. A step of 0 is an error.
    pub fn remove_slice(&mut self, start: Option<isize>, stop: Option<isize>, step: isize) -> Result<()> {
        let dropped = py_slice_step("del ModuleList[start:stop:step]", start, stop, step, self.len())?;
        let items = std::mem::take(&mut self.items).into_iter().enumerate();
        self.items = items.filter(|(i, _)| !dropped.contains(i)).map(|(_, m)| m).collect();
        Ok(())
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

default_is!(ModuleList => ModuleList::new());
