//! [`LSTM`]: a multi-layer long short-term memory, PyTorch's gate order and keys.

use indexmap::IndexMap;

use crate::module::{ExtraRepr, py_bool, py_float};
use crate::ops::lstm::{CellTensors, Lstm};
use crate::random;
use crate::{DType, Error, Forward, Module, Param, Result, Shape, Tensor};

/// Everything of PyTorch's `nn.LSTM` constructor but the sizes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LstmOptions {
    /// Stacked layers.
    pub num_layers: usize,
    /// Whether the layers have `bias_ih` and `bias_hh`.
    pub bias: bool,
    /// Whether inputs and outputs are `(batch, seq, feature)` rather than `(seq, batch, feature)`.
    pub batch_first: bool,
    /// Dropout on the outputs of every layer but the last, in training.
    pub dropout: f64,
    /// Whether each layer also runs backwards in time (`_reverse` parameters).
    pub bidirectional: bool,
    /// Features of the projected hidden state, below `hidden_size`; 0 for no projection. With a projection each
    /// cell's output `o ⊙ tanh(c)` is multiplied by `weight_hr` `(proj_size, hidden_size)`, and that is the
    /// hidden state `h`, the output and the next layer's input (PyTorch's LSTM with projections).
    pub proj_size: usize,
}

impl Default for LstmOptions {
    fn default() -> Self {
        LstmOptions {
            num_layers: 1,
            bias: true,
            batch_first: false,
            dropout: 0.0,
            bidirectional: false,
            proj_size: 0,
        }
    }
}

/// PyTorch's `nn.LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
/// bidirectional=False, proj_size=0)`.
///
/// Keys `weight_ih_l{k}` `(4H, in)`, `weight_hh_l{k}` `(4H, H)`, `bias_ih_l{k}`, `bias_hh_l{k}` (`(4H)`), with a
/// `_reverse` suffix for the backward direction; gates in PyTorch's order i, f, g, o; every parameter uniform
/// in `±1/sqrt(H)`. Forward takes `(input, Option<(h0, c0)>)` and returns `(output, (h_n, c_n))`. With a
/// `proj_size` P, each cell also has `weight_hr_l{k}` `(P, H)` after its biases, `weight_hh` is `(4H, P)`, and
/// the outputs and `h` have P features (`c` keeps H).
///
/// ```
/// use nn::prelude::*;
/// let lstm = LSTM::new(36, 32);
/// assert_eq!(lstm.to_string(), "LSTM(36, 32)");
/// assert_eq!(lstm.state_dict().keys().collect::<Vec<_>>(), ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]);
/// let (out, (h, c)) = lstm.forward((Tensor::zeros([5, 3, 36], DType::F32), None)).unwrap();
/// assert_eq!((out.shape(), h.shape(), c.shape()), (&[5, 3, 32].into(), &[1, 3, 32].into(), &[1, 3, 32].into()));
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct LSTM {
    #[members]
    params: IndexMap<String, Param>,
    /// Features of the input.
    pub input_size: usize,
    /// Features of the hidden state.
    pub hidden_size: usize,
    /// Layers, bias, layout, dropout, direction.
    #[module(skip)]
    pub options: LstmOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl LSTM {
    /// One layer, with biases, `(seq, batch, feature)`.
    pub fn new(input_size: usize, hidden_size: usize) -> LSTM {
        LSTM::with_options(input_size, hidden_size, LstmOptions::default()).expect("the default options are valid")
    }

    /// Every constructor argument; `num_layers` must be positive, `dropout` in `[0, 1]` and `proj_size` below
    /// `hidden_size`. Weights the allocator refuses are an [`Error::Allocation`].
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::layers::LstmOptions;
    /// let lstm = LSTM::with_options(3, 5, LstmOptions { proj_size: 2, ..Default::default() })?;
    /// assert_eq!(lstm.to_string(), "LSTM(3, 5, proj_size=2)");
    /// let (out, (h, c)) = lstm.forward((Tensor::zeros([4, 3], DType::F32), None))?;
    /// assert_eq!((out.shape(), h.shape(), c.shape()), (&[4, 2].into(), &[1, 2].into(), &[1, 5].into()));
    /// assert!(LSTM::with_options(3, 5, LstmOptions { proj_size: 5, ..Default::default() }).is_err());
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn with_options(input_size: usize, hidden_size: usize, options: LstmOptions) -> Result<LSTM> {
        if options.num_layers == 0 || hidden_size == 0 {
            return Err(Error::invalid("LSTM", "num_layers and hidden_size must be positive"));
        }
        if options.proj_size >= hidden_size {
            return Err(Error::invalid(
                "LSTM",
                format!(
                    "proj_size has to be smaller than hidden_size (proj_size {}, hidden_size {hidden_size})",
                    options.proj_size
                ),
            ));
        }
        if !(0.0..=1.0).contains(&options.dropout) {
            return Err(Error::invalid(
                "LSTM",
                format!("dropout must lie in [0, 1], got {}", options.dropout),
            ));
        }
        let bound = 1.0 / (hidden_size as f64).sqrt();
        let directions = if options.bidirectional { 2 } else { 1 };
        if hidden_size.checked_mul(4 * directions).is_none() {
            return Err(Error::invalid(
                "LSTM",
                format!("hidden_size {hidden_size} is too large: its 4 gates' rows overflow usize"),
            ));
        }
        let real_hidden = if options.proj_size > 0 {
            options.proj_size
        } else {
            hidden_size
        };
        let mut params = IndexMap::new();
        for layer in 0..options.num_layers {
            let layer_in = if layer == 0 {
                input_size
            } else {
                real_hidden * directions
            };
            for direction in 0..directions {
                let suffix = if direction == 1 { "_reverse" } else { "" };
                let mut shapes = vec![
                    ("weight_ih", vec![4 * hidden_size, layer_in]),
                    ("weight_hh", vec![4 * hidden_size, real_hidden]),
                ];
                if options.bias {
                    shapes.push(("bias_ih", vec![4 * hidden_size]));
                    shapes.push(("bias_hh", vec![4 * hidden_size]));
                }
                if options.proj_size > 0 {
                    shapes.push(("weight_hr", vec![options.proj_size, hidden_size]));
                }
                for (name, shape) in shapes {
                    let t = random::with_global(|g| Tensor::try_uniform_with(shape, -bound, bound, DType::F32, g))?;
                    params.insert(format!("{name}_l{layer}{suffix}"), Param::new(t));
                }
            }
        }
        Ok(LSTM {
            params,
            input_size,
            hidden_size,
            options,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }

    /// `t` from the layer's input layout to `(seq, batch, feature)` (`to`), or back: an unbatched sequence
    /// gains or loses its batch dimension, a `batch_first` one is transposed.
    fn sequence_major(&self, t: Tensor, unbatched: bool, to: bool) -> Result<Tensor> {
        match (unbatched, to) {
            (true, true) => t.unsqueeze(1),
            (true, false) => t.squeeze(1),
            (false, _) if self.options.batch_first => t.transpose(0, 1),
            (false, _) => Ok(t),
        }
    }

    /// The parameter named `name` (`weight_ih_l0`, …).
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.get(name)
    }

    fn directions(&self) -> usize {
        if self.options.bidirectional { 2 } else { 1 }
    }

    /// The features of `h` and of each direction's output: `proj_size`, or `hidden_size` without a projection.
    fn real_hidden(&self) -> usize {
        if self.options.proj_size > 0 {
            self.options.proj_size
        } else {
            self.hidden_size
        }
    }

    /// `(w_ih, w_hh, b_ih, b_hh, w_hr)` of one layer and direction.
    fn weights(&self, layer: usize, direction: usize) -> CellTensors {
        let (bias, proj) = (self.options.bias, self.options.proj_size > 0);
        let per = 2 + if bias { 2 } else { 0 } + usize::from(proj);
        let base = (layer * self.directions() + direction) * per;
        let p = |i: usize| self.params[base + i].data();
        let (b_ih, b_hh) = if bias { (Some(p(2)), Some(p(3))) } else { (None, None) };
        let w_hr = proj.then(|| p(per - 1));
        (p(0), p(1), b_ih, b_hh, w_hr)
    }
}

impl ExtraRepr for LSTM {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if o.proj_size != 0 {
            s.push_str(&format!(", proj_size={}", o.proj_size));
        }
        if o.num_layers != 1 {
            s.push_str(&format!(", num_layers={}", o.num_layers));
        }
        if !o.bias {
            s.push_str(", bias=False");
        }
        if o.batch_first {
            s.push_str(", batch_first=True");
        }
        if o.dropout != 0.0 {
            s.push_str(&format!(", dropout={}", py_float(o.dropout)));
        }
        if o.bidirectional {
            s.push_str(&format!(", bidirectional={}", py_bool(true)));
        }
        s
    }
}

impl Forward for LSTM {
    type Input = (Tensor, Option<(Tensor, Tensor)>);
    type Output = (Tensor, (Tensor, Tensor));

    fn forward(&self, (input, state): Self::Input) -> Result<Self::Output> {
        let op = "LSTM";
        let unbatched = input.rank() == 2;
        if !(input.rank() == 2 || input.rank() == 3) || input.shape()[input.rank() - 1] != self.input_size {
            return Err(Error::invalid(
                op,
                format!(
                    "expected input (seq, batch, {0}) or (seq, {0}), got shape {1}",
                    self.input_size,
                    input.shape()
                ),
            ));
        }
        let x = self.sequence_major(input, unbatched, true)?;
        if x.shape()[0] == 0 {
            return Err(Error::invalid(
                op,
                "Expected sequence length to be larger than 0 in RNN",
            ));
        }
        let batch = x.shape()[1];
        let (layers, dirs, hid) = (self.options.num_layers, self.directions(), self.hidden_size);
        let h_shape = Shape::from([layers * dirs, batch, self.real_hidden()]);
        let c_shape = Shape::from([layers * dirs, batch, hid]);
        let (h0, c0) = match state {
            Some((h, c)) => {
                let batched = |t: Tensor| if unbatched { t.unsqueeze(1) } else { Ok(t) };
                let (h, c) = (batched(h)?, batched(c)?);
                for (name, t, state_shape) in [("h0", &h, &h_shape), ("c0", &c, &c_shape)] {
                    if t.shape() != state_shape {
                        return Err(Error::invalid(
                            op,
                            format!("expected {name} of shape {state_shape}, got {}", t.shape()),
                        ));
                    }
                    if t.dtype() != x.dtype() {
                        return Err(Error::DTypeMismatch {
                            op,
                            expected: x.dtype(),
                            got: t.dtype(),
                        });
                    }
                }
                (h, c)
            }
            None => (
                Tensor::zeros(h_shape, x.dtype()).to_device(x.device())?,
                Tensor::zeros(c_shape, x.dtype()).to_device(x.device())?,
            ),
        };
        let cells: Vec<CellTensors> = (0..layers)
            .flat_map(|layer| (0..dirs).map(move |d| (layer, d)))
            .map(|(layer, d)| self.weights(layer, d))
            .collect();
        let recurrence = Lstm {
            layers,
            dirs,
            bias: self.options.bias,
            dropout: (self.training && self.options.dropout > 0.0 && layers > 1).then_some(self.options.dropout),
        };
        let (out, h_n, c_n) = recurrence.run(&x, &h0, &c0, &cells)?;
        let out = self.sequence_major(out, unbatched, false)?;
        let (h_n, c_n) = if unbatched {
            (h_n.squeeze(1)?, c_n.squeeze(1)?)
        } else {
            (h_n, c_n)
        };
        Ok((out, (h_n, c_n)))
    }
}
