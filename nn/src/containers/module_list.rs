//! [`ModuleList`]: modules of any types in a list.

use crate::module::{Child, ChildMut, Module, ModuleField, Replacement, Visitor, VisitorMut};
use crate::module::{child_reprs_of, list_repr, parse_index};

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
pub struct ModuleList {
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
}

impl Module for ModuleList {
    fn type_name(&self) -> &'static str {
        "ModuleList"
    }
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        let mut index = itoa::Buffer::new();
        for (i, item) in self.items.iter().enumerate() {
            if let Some(child) = item.as_child() {
                visitor.child(index.format(i), child);
            }
        }
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        let mut index = itoa::Buffer::new();
        for (i, item) in self.items.iter_mut().enumerate() {
            if let Some(child) = item.as_child_mut() {
                visitor.child(index.format(i), child);
            }
        }
    }
    fn child(&self, name: &str) -> Option<Child<'_>> {
        self.items.get(parse_index(name)?)?.as_child()
    }
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        self.items.get_mut(parse_index(name)?)?.as_child_mut()
    }
    fn set_child(&mut self, name: &str, value: Replacement) -> Result<(), (Replacement, String)> {
        match parse_index(name).filter(|&i| i < self.items.len()) {
            Some(i) => {
                self.items[i] = value.into_field();
                Ok(())
            }
            None => Err((value, format!("`{name}` is not an index below {}", self.items.len()))),
        }
    }
    fn repr(&self) -> String {
        list_repr("ModuleList", &child_reprs_of(self))
    }
    fn is_training(&self) -> bool {
        self.training
    }
    fn set_training(&mut self, mode: bool) {
        self.training = mode;
    }
    fn hooks(&self) -> Option<&crate::Hooks> {
        Some(&self.hooks)
    }
    fn hooks_mut(&mut self) -> Option<&mut crate::Hooks> {
        Some(&mut self.hooks)
    }
}

impl crate::HasHooks for ModuleList {
    fn hook_storage(&self) -> &crate::Hooks {
        &self.hooks
    }
    fn hook_storage_mut(&mut self) -> &mut crate::Hooks {
        &mut self.hooks
    }
}

impl std::fmt::Display for ModuleList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

impl Default for ModuleList {
    fn default() -> Self {
        ModuleList::new()
    }
}
