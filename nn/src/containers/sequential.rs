//! [`Sequential`]: layers called one after another.

use indexmap::IndexMap;

use crate::module::Layer;
use crate::module::check_name;
use crate::{Forward, Module, Result, Tensor};

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
#[derive(Module)]
pub struct Sequential {
    #[members]
    layers: IndexMap<String, Layer>,
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
    pub fn append(mut self, layer: impl Into<Layer>) -> Sequential {
        self.push(layer);
        self
    }

    /// Appends `layer` under the next index (its position).
    pub fn push(&mut self, layer: impl Into<Layer>) {
        let key = self.layers.len().to_string();
        self.layers.insert(key, layer.into());
    }

    /// Appends `layer` under `name` (PyTorch's `add_module`); a name already present is replaced in place.
    pub fn add_module(&mut self, name: &str, layer: impl Into<Layer>) -> Result<()> {
        check_name("Sequential::add_module", name)?;
        self.layers.insert(name.to_owned(), layer.into());
        Ok(())
    }

    /// PyTorch's `register_module`: [`add_module`](Self::add_module).
    pub fn register_module(&mut self, name: &str, layer: impl Into<Layer>) -> Result<()> {
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

    /// The layer at `index`.
    pub fn get(&self, index: usize) -> Option<&Layer> {
        self.layers.get_index(index).map(|(_, l)| l)
    }
}

impl Forward for Sequential {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, input: Tensor) -> Result<Tensor> {
        self.layers.values().try_fold(input, |x, layer| layer.call(x))
    }
}

impl Default for Sequential {
    fn default() -> Self {
        Sequential::new()
    }
}
