//! [`ModuleDict`]: modules of any types, keyed by name.

use indexmap::IndexMap;

use crate::Module;
use crate::module::{ModuleField, check_name};

/// PyTorch's `nn.ModuleDict`: modules keyed by name, in insertion order.
///
/// ```
/// use nn::prelude::*;
/// let mut heads = ModuleDict::new();
/// heads.insert("policy", Linear::new(4, 3, true)).unwrap();
/// heads.insert("value", Linear::new(4, 1, true)).unwrap();
/// assert_eq!(heads.state_dict().keys().collect::<Vec<_>>(), ["policy.weight", "policy.bias", "value.weight", "value.bias"]);
/// ```
#[derive(Module)]
pub struct ModuleDict {
    #[members]
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

    /// PyTorch's `pop(key)`: [`remove`](Self::remove).
    pub fn pop(&mut self, key: &str) -> Option<Box<dyn ModuleField>> {
        self.remove(key)
    }

    /// PyTorch's `clear()`.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// PyTorch's `update(other)`: moves every module of `other` in, in its order (a key already present is
    /// replaced in place).
    pub fn update(&mut self, other: ModuleDict) {
        for (key, module) in other.items {
            self.items.insert(key, module);
        }
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }

    /// The modules, in order.
    pub fn values(&self) -> impl Iterator<Item = &dyn ModuleField> {
        self.items.values().map(|m| &**m)
    }

    /// `(key, module)` pairs, in order.
    pub fn items(&self) -> impl Iterator<Item = (&str, &dyn ModuleField)> {
        self.items.iter().map(|(k, m)| (k.as_str(), &**m))
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

default_is!(ModuleDict => ModuleDict::new());
