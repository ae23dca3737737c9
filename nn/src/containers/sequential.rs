//! [`Sequential`]: layers called one after another.

use indexmap::IndexMap;

use super::py_index;
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

    /// `seq[index]`, a negative index counting from the end; out of range is an error.
    pub fn at(&self, index: isize) -> Result<&Layer> {
        let i = py_index("Sequential[index]", index, self.len())?;
        Ok(&self.layers[i])
    }

    /// PyTorch's `insert(index, module)`: `index` in `-len..=len` (negative counts from the end); the layers
    /// are keyed `0`, `1`, … again.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut seq = Sequential::new().append(ReLU::new(false)).append(Tanh::new());
    /// seq.insert(-1, GELU::new("none").unwrap()).unwrap();
    /// assert_eq!(seq.to_string(), "Sequential(\n  (0): ReLU()\n  (1): GELU(approximate='none')\n  (2): Tanh()\n)");
    /// ```
    pub fn insert(&mut self, index: isize, layer: impl Into<Layer>) -> Result<()> {
        let n = self.len();
        let i = if index == n as isize {
            n
        } else {
            py_index("Sequential::insert", index, n)?
        };
        let mut layers: Vec<Layer> = std::mem::take(&mut self.layers).into_values().collect();
        layers.insert(i, layer.into());
        self.renumber(layers);
        Ok(())
    }

    /// PyTorch's `pop(index)`: removes and returns the layer at `index`; the rest are keyed `0`, `1`, … again.
    pub fn pop(&mut self, index: isize) -> Result<Layer> {
        let i = py_index("Sequential::pop", index, self.len())?;
        let mut layers: Vec<Layer> = std::mem::take(&mut self.layers).into_values().collect();
        let layer = layers.remove(i);
        self.renumber(layers);
        Ok(layer)
    }

    /// PyTorch's `del seq[index]`: [`pop`](Self::pop), dropping the layer.
    pub fn remove(&mut self, index: isize) -> Result<()> {
        self.pop(index).map(drop)
    }

    /// PyTorch's `extend`: appends every layer of `layers` (`+=` with a sequential does the same).
    pub fn extend<L: Into<Layer>>(&mut self, layers: impl IntoIterator<Item = L>) {
        for layer in layers {
            self.push(layer);
        }
    }

    /// The layers, consumed, in order.
    pub fn into_layers(self) -> impl Iterator<Item = Layer> {
        self.layers.into_values()
    }

    /// Keys the layers `0`, `1`, … in order (PyTorch renumbers after `insert` and `del`).
    fn renumber(&mut self, layers: Vec<Layer>) {
        self.layers = layers
            .into_iter()
            .enumerate()
            .map(|(i, l)| (i.to_string(), l))
            .collect();
    }
}

impl std::ops::AddAssign<Sequential> for Sequential {
    /// PyTorch's `+=`: appends `other`'s layers.
    fn add_assign(&mut self, other: Sequential) {
        self.extend(other.into_layers());
    }
}

impl std::ops::Add<Sequential> for Sequential {
    type Output = Sequential;
    /// PyTorch's `+`: the layers of both, in order (here moved: a Rust module has one owner).
    fn add(mut self, other: Sequential) -> Sequential {
        self += other;
        self
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
