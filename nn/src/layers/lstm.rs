//! [`LSTM`]: a multi-layer long short-term memory, PyTorch's gate order and keys.

use super::recurrent::RecurrentSpec;
use crate::ops::recurrent::CellMode;
use crate::{Error, Forward, Module, Result, Tensor};

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

recurrent_module!(
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
LSTM {
    /// Layers, bias, layout, dropout, direction, projection.
    options: LstmOptions,
});

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
        LSTM::build(input_size, hidden_size, options)
    }

    fn spec(&self) -> RecurrentSpec {
        let o = &self.options;
        RecurrentSpec {
            mode: CellMode::Lstm,
            input_size: self.input_size,
            hidden_size: self.hidden_size,
            num_layers: o.num_layers,
            bias: o.bias,
            batch_first: o.batch_first,
            dropout: o.dropout,
            bidirectional: o.bidirectional,
            proj_size: o.proj_size,
        }
    }
}

impl Forward for LSTM {
    type Input = (Tensor, Option<(Tensor, Tensor)>);
    type Output = (Tensor, (Tensor, Tensor));

    fn forward(&self, (input, state): Self::Input) -> Result<Self::Output> {
        let state = state.map(|(h, c)| (h, Some(c)));
        let (out, h_n, c_n) = self.spec().forward(&self.params, self.training, input, state)?;
        let c_n = c_n.ok_or_else(|| Error::invalid("LSTM", "the recurrence returned no cell state"))?;
        Ok((out, (h_n, c_n)))
    }
}
