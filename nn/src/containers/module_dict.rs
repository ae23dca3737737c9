//! [`ModuleDict`]: modules of any types, keyed by name.

use indexmap::IndexMap;

use super::sequential::check_name;
use crate::module::{Child, ChildMut, Module, ModuleField, Replacement, Visitor, VisitorMut};

/// PyTorch's `nn.ModuleDict`: modules keyed by name, in insertion order.
///
/// ```
/// use nn::prelude::*;
/// let mut heads = ModuleDict::new();
/// heads.insert("policy", Linear::new(4, 3, true)).unwrap();
/// heads.insert("value", Linear::new(4, 1, true)).unwrap();
/// assert_eq!(heads.state_dict().keys().collect::<Vec<_>>(), ["policy.weight", "policy.bias", "value.weight", "value.bias"]);
/// ```
pub struct ModuleDict {
    items: IndexMap<String, Box<dyn ModuleField>>,
    training: bool,
    hooks: crate::Hooks,
}

impl ModuleDict {
    /// An empty dict, in training mode.
    pub fn new() -> ModuleDict {
        ModuleDict {
            items: IndexMap::new(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// Adds (or replaces in place) the module under `key`.
    pub fn insert(&mut self, key: &str, module: impl ModuleField) -> crate::Result<()> {
        check_name("ModuleDict::insert", key)?;
        self.items.insert(key.to_owned(), Box::new(module));
        Ok(())
    }

    /// PyTorch's `add_module`: [`insert`](Self::insert).
    pub fn add_module(&mut self, key: &str, module: impl ModuleField) -> crate::Result<()> {
        self.insert(key, module)
    }

    /// PyTorch's `register_module`: [`insert`](Self::insert).
    pub fn register_module(&mut self, key: &str, module: impl ModuleField) -> crate::Result<()> {
        self.insert(key, module)
    }

    /// Removes the module under `key` (PyTorch's `pop`), keeping the others' order.
    pub fn remove(&mut self, key: &str) -> Option<Box<dyn ModuleField>> {
        self.items.shift_remove(key)
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }

    /// Number of modules.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The module under `key` as a `T`, if it is one.
    pub fn get<T: ModuleField>(&self, key: &str) -> Option<&T> {
        let item: &dyn std::any::Any = &**self.items.get(key)?;
        item.downcast_ref::<T>()
    }
}

impl Module for ModuleDict {
    fn type_name(&self) -> &'static str {
        "ModuleDict"
    }
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        for (name, item) in &self.items {
            if let Some(child) = item.as_child() {
                visitor.child(name, child);
            }
        }
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        for (name, item) in self.items.iter_mut() {
            if let Some(child) = item.as_child_mut() {
                visitor.child(name, child);
            }
        }
    }
    fn child(&self, name: &str) -> Option<Child<'_>> {
        self.items.get(name)?.as_child()
    }
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        self.items.get_mut(name)?.as_child_mut()
    }
    fn set_child(&mut self, name: &str, value: Replacement) -> Result<(), (Replacement, String)> {
        if check_name("ModuleDict::set_child", name).is_err() {
            return Err((value, format!("{name:?} is not a valid key")));
        }
        self.items.insert(name.to_owned(), value.into_field());
        Ok(())
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

impl crate::HasHooks for ModuleDict {
    fn hook_storage(&self) -> &crate::Hooks {
        &self.hooks
    }
    fn hook_storage_mut(&mut self) -> &mut crate::Hooks {
        &mut self.hooks
    }
}

impl std::fmt::Display for ModuleDict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

impl Default for ModuleDict {
    fn default() -> Self {
        ModuleDict::new()
    }
}
