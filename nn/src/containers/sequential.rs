//! [`Sequential`]: layers called one after another.

use indexmap::IndexMap;

use super::Layer;
use crate::module::{Child, ChildMut, Module, Replacement, Visitor, VisitorMut};
use crate::{Error, Forward, Result, Tensor};

/// PyTorch's `nn.Sequential`: layers of any types, keyed `0`, `1`, … (or by name with
/// [`add_module`](Self::add_module)), each called (with its hooks) on the previous one's output.
///
/// ```
/// use nn::prelude::*;
/// let seq = Sequential::new().append(Linear::new(2, 3, false)).append(Tanh::new());
/// assert_eq!(seq.to_string(), "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=False)\n  (1): Tanh()\n)");
/// let y = seq.forward(Tensor::zeros([1, 2], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[1, 3]);
/// ```
pub struct Sequential {
    layers: IndexMap<String, Box<dyn Layer>>,
    training: bool,
    hooks: crate::Hooks,
}

impl Sequential {
    /// An empty sequential, in training mode.
    pub fn new() -> Sequential {
        Sequential {
            layers: IndexMap::new(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// Appends `layer` under the next index and returns the sequential (PyTorch's `append`).
    pub fn append(mut self, layer: impl Layer) -> Sequential {
        self.push(layer);
        self
    }

    /// Appends `layer` under the next index (its position).
    pub fn push(&mut self, layer: impl Layer) {
        let key = self.layers.len().to_string();
        self.layers.insert(key, Box::new(layer));
    }

    /// Appends `layer` under `name` (PyTorch's `add_module`); a name already present is replaced in place.
    pub fn add_module(&mut self, name: &str, layer: impl Layer) -> Result<()> {
        check_name("Sequential::add_module", name)?;
        self.layers.insert(name.to_owned(), Box::new(layer));
        Ok(())
    }

    /// PyTorch's `register_module`: [`add_module`](Self::add_module).
    pub fn register_module(&mut self, name: &str, layer: impl Layer) -> Result<()> {
        self.add_module(name, layer)
    }

    /// Number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether there are no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The layer at `index`, as a module.
    pub fn get(&self, index: usize) -> Option<&dyn Layer> {
        self.layers.get_index(index).map(|(_, l)| &**l)
    }
}

/// A member name must be non-empty and free of `.` (PyTorch's rule for `add_module`).
pub(crate) fn check_name(op: &'static str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('.') {
        return Err(Error::invalid(
            op,
            format!("member name {name:?} must be non-empty and contain no \".\""),
        ));
    }
    Ok(())
}

impl Module for Sequential {
    fn type_name(&self) -> &'static str {
        "Sequential"
    }
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        for (name, layer) in &self.layers {
            if let Some(child) = layer.as_child() {
                visitor.child(name, child);
            }
        }
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        for (name, layer) in self.layers.iter_mut() {
            if let Some(child) = layer.as_child_mut() {
                visitor.child(name, child);
            }
        }
    }
    fn child(&self, name: &str) -> Option<Child<'_>> {
        self.layers.get(name)?.as_child()
    }
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        self.layers.get_mut(name)?.as_child_mut()
    }
    fn set_child(&mut self, name: &str, value: Replacement) -> std::result::Result<(), (Replacement, String)> {
        if !self.layers.contains_key(name) {
            return Err((value, format!("Sequential has no item `{name}`")));
        }
        let layer = value.into_layer()?;
        self.layers.insert(name.to_owned(), layer);
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

impl crate::HasHooks for Sequential {
    fn hook_storage(&self) -> &crate::Hooks {
        &self.hooks
    }
    fn hook_storage_mut(&mut self) -> &mut crate::Hooks {
        &mut self.hooks
    }
}

impl Forward for Sequential {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, input: Tensor) -> Result<Tensor> {
        self.layers.values().try_fold(input, |x, layer| layer.call_layer(x))
    }
}

impl std::fmt::Display for Sequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

impl Default for Sequential {
    fn default() -> Self {
        Sequential::new()
    }
}
