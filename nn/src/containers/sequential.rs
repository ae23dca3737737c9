//! [`Sequential`]: layers called one after another.

use indexmap::IndexMap;

use super::{py_index, py_slice, py_slice_step};
use crate::module::tensor_module::Flow;
use crate::module::{Layer, check_name};
use crate::{Error, Forward, Module, Result, Tensor};

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

    /// PyTorch's `del seq[start:stop:step]`: drops the layers at those positions (Python's slice rules, a
    /// negative step included); the rest are keyed `0`, `1`, … again. A step of 0 is an error.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut seq = Sequential::new().append(ReLU::new(false)).append(Tanh::new()).append(Sigmoid::new());
    /// seq.remove_slice(Some(1), None, 2).unwrap();
    /// assert_eq!(seq.to_string(), "Sequential(\n  (0): ReLU()\n  (1): Sigmoid()\n)");
    /// ```
    pub fn remove_slice(&mut self, start: Option<isize>, stop: Option<isize>, step: isize) -> Result<()> {
        let dropped = py_slice_step("del Sequential[start:stop:step]", start, stop, step, self.len())?;
        let layers = std::mem::take(&mut self.layers).into_values().enumerate();
        self.renumber(layers.filter(|(i, _)| !dropped.contains(i)).map(|(_, l)| l).collect());
        Ok(())
    }

    /// PyTorch's `extend`: appends every layer of `layers` (`+=` with a sequential does the same).
    pub fn extend<L: Into<Layer>>(&mut self, layers: impl IntoIterator<Item = L>) {
        for layer in layers {
            self.push(layer);
        }
    }

    /// PyTorch's `seq[start:stop]`: a new sequential holding the same modules, under the same keys. Python's
    /// slice bounds (negative counts from the end, out-of-range bounds clamped). The layers it takes become
    /// [`Shared`](crate::Shared) here too, so that both sequentials hold one module each: a change of weights,
    /// mode or dtype through one is seen through the other, as in PyTorch.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut seq = Sequential::new().append(Linear::new(2, 2, true)).append(ReLU::new(false)).append(Tanh::new());
    /// let mut tail = seq.slice(Some(-2), None).unwrap();
    /// assert_eq!(tail.to_string(), "Sequential(\n  (1): ReLU()\n  (2): Tanh()\n)");
    /// tail.eval();
    /// assert!(!seq.get_submodule("2").unwrap().is_training(), "the same module");
    /// ```
    pub fn slice(&mut self, start: Option<isize>, stop: Option<isize>) -> Result<Sequential> {
        let range = py_slice(start, stop, self.len());
        let mut taken = Sequential::new();
        let mut kept = IndexMap::with_capacity(self.len());
        for (i, (key, layer)) in std::mem::take(&mut self.layers).into_iter().enumerate() {
            if range.contains(&i) {
                let (here, there) = layer.share()?;
                kept.insert(key.clone(), here);
                taken.layers.insert(key, there);
            } else {
                kept.insert(key, layer);
            }
        }
        self.layers = kept;
        Ok(taken)
    }

    /// PyTorch's `seq * times`: a new sequential holding this one's modules `times` times in a row, keyed `0`,
    /// `1`, … (each module is held once per repetition, as [`Shared`](crate::Shared)); `times` must be positive.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut seq = Sequential::new().append(Linear::new(2, 2, true)).append(ReLU::new(false));
    /// let twice = seq.repeat(2).unwrap();
    /// assert_eq!(twice.len(), 4);
    /// assert_eq!(twice.named_parameters().len(), 2, "one Linear, held twice");
    /// assert!(seq.repeat(0).is_err());
    /// ```
    pub fn repeat(&mut self, times: usize) -> Result<Sequential> {
        if times == 0 {
            return Err(Error::invalid(
                "Sequential * times",
                "non-positive multiplication factor 0 for Sequential",
            ));
        }
        let mut out = Sequential::new();
        for _ in 0..times {
            out.extend(self.slice(None, None)?.into_layers());
        }
        Ok(out)
    }

    /// PyTorch's `seq *= times`: this sequential's layers repeated `times` times in a row, keyed `0`, `1`, …
    /// (each module held once per repetition, as [`Shared`](crate::Shared)); `times` must be positive.
    pub fn repeat_in_place(&mut self, times: usize) -> Result<()> {
        *self = Sequential {
            layers: self.repeat(times)?.layers,
            training: self.training,
            hooks: std::mem::take(&mut self.hooks),
        };
        Ok(())
    }

    /// The forward of a sequential whose input or output is not a tensor (layers made with
    /// [`Layer::any`]): `input` goes to the first layer, each output to the next; a value that is not the next
    /// layer's input type, or a last output that is not an `O`, is a typed error naming both types.
    pub fn forward_as<I: Send + 'static, O: 'static>(&self, input: I) -> Result<O> {
        self.run(Flow::of(input))?
            .into_value("the caller of Sequential::forward_as")
    }

    /// Runs every layer in order.
    fn run(&self, input: Flow) -> Result<Flow> {
        self.layers.values().try_fold(input, |x, layer| layer.run(x))
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

impl std::ops::Mul<usize> for Sequential {
    type Output = Result<Sequential>;
    /// PyTorch's `seq * times`: [`repeat`](Sequential::repeat) (`times` must be positive).
    fn mul(mut self, times: usize) -> Result<Sequential> {
        self.repeat(times)
    }
}

impl std::ops::Mul<Sequential> for usize {
    type Output = Result<Sequential>;
    /// PyTorch's `times * seq`: [`repeat`](Sequential::repeat).
    fn mul(self, mut seq: Sequential) -> Result<Sequential> {
        seq.repeat(self)
    }
}

impl Forward for Sequential {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, input: Tensor) -> Result<Tensor> {
        match self.run(Flow::Tensor(input))? {
            Flow::Tensor(output) => Ok(output),
            other => other.into_value("Sequential::forward's caller"),
        }
    }
}

default_is!(Sequential => Sequential::new());
