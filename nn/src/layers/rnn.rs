//! [`RNN`] (Elman, tanh or relu) and [`GRU`]: PyTorch's multi-layer recurrent layers besides the LSTM, with its
//! keys, gate order, initialisation and `repr`.

use super::recurrent::RecurrentSpec;
use crate::ops::recurrent::CellMode;
use crate::{Forward, Module, Result, Tensor};

/// The nonlinearity of an [`RNN`] or an [`RNNCell`](super::RNNCell): PyTorch's `nonlinearity='tanh'` or
/// `'relu'`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nonlinearity {
    /// `tanh`, PyTorch's default.
    #[default]
    Tanh,
    /// `relu`.
    Relu,
}

impl Nonlinearity {
    /// PyTorch's name: `tanh` or `relu`.
    pub fn name(self) -> &'static str {
        match self {
            Nonlinearity::Tanh => "tanh",
            Nonlinearity::Relu => "relu",
        }
    }

    pub(crate) fn mode(self) -> CellMode {
        match self {
            Nonlinearity::Tanh => CellMode::RnnTanh,
            Nonlinearity::Relu => CellMode::RnnRelu,
        }
    }
}

/// Everything of PyTorch's `nn.RNN` constructor but the sizes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RnnOptions {
    /// Stacked layers.
    pub num_layers: usize,
    /// `tanh` or `relu`.
    pub nonlinearity: Nonlinearity,
    /// Whether the layers have `bias_ih` and `bias_hh`.
    pub bias: bool,
    /// Whether inputs and outputs are `(batch, seq, feature)` rather than `(seq, batch, feature)`.
    pub batch_first: bool,
    /// Dropout on the outputs of every layer but the last, in training.
    pub dropout: f64,
    /// Whether each layer also runs backwards in time (`_reverse` parameters).
    pub bidirectional: bool,
}

impl Default for RnnOptions {
    fn default() -> Self {
        RnnOptions {
            num_layers: 1,
            nonlinearity: Nonlinearity::Tanh,
            bias: true,
            batch_first: false,
            dropout: 0.0,
            bidirectional: false,
        }
    }
}

/// Everything of PyTorch's `nn.GRU` constructor but the sizes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GruOptions {
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
}

impl Default for GruOptions {
    fn default() -> Self {
        GruOptions {
            num_layers: 1,
            bias: true,
            batch_first: false,
            dropout: 0.0,
            bidirectional: false,
        }
    }
}

/// A recurrent layer whose state is `h` alone: its struct and `repr` (`recurrent_module!`), constructors and
/// forward.
macro_rules! recurrent_layer {
    ($(#[$doc:meta])* $name:ident, $options:ident, |$o:ident| $mode:expr) => {
        recurrent_module!(
            $(#[$doc])*
            $name {
                /// Layers, bias, layout, dropout, direction.
                options: $options,
            }
        );

        impl $name {
            /// One layer, with biases, `(seq, batch, feature)`.
            pub fn new(input_size: usize, hidden_size: usize) -> $name {
                $name::with_options(input_size, hidden_size, $options::default())
                    .expect("the default options are valid")
            }

            /// Every constructor argument: `num_layers` and `hidden_size` must be positive, `dropout` in
            /// `[0, 1]`. Weights the allocator refuses are an [`Error::Allocation`](crate::Error::Allocation).
            pub fn with_options(input_size: usize, hidden_size: usize, options: $options) -> Result<$name> {
                $name::build(input_size, hidden_size, options)
            }

            fn spec(&self) -> RecurrentSpec {
                let $o = &self.options;
                RecurrentSpec {
                    mode: $mode,
                    input_size: self.input_size,
                    hidden_size: self.hidden_size,
                    num_layers: $o.num_layers,
                    bias: $o.bias,
                    batch_first: $o.batch_first,
                    dropout: $o.dropout,
                    bidirectional: $o.bidirectional,
                    proj_size: 0,
                }
            }
        }

        impl Forward for $name {
            type Input = (Tensor, Option<Tensor>);
            type Output = (Tensor, Tensor);

            fn forward(&self, (input, h0): Self::Input) -> Result<Self::Output> {
                let state = h0.map(|h| (h, None));
                let (out, h_n, _) = self.spec().forward(&self.params, self.training, input, state)?;
                Ok((out, h_n))
            }
        }
    };
}

recurrent_layer!(
    /// PyTorch's `nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    /// batch_first=False, dropout=0.0, bidirectional=False)`: `h_t = tanh(W_ih x_t + b_ih + W_hh h_{t−1} + b_hh)`
    /// (or relu).
    ///
    /// Keys `weight_ih_l{k}` `(H, in)`, `weight_hh_l{k}` `(H, H)`, `bias_ih_l{k}`, `bias_hh_l{k}` (`(H)`), with a
    /// `_reverse` suffix for the backward direction; every parameter uniform in `±1/sqrt(H)`. Forward takes
    /// `(input, Option<h0>)` and returns `(output, h_n)`. The recurrence runs as recorded operations on every
    /// device, so autograd differentiates it. As in PyTorch the `repr` does not print the nonlinearity.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::layers::{Nonlinearity, RnnOptions};
    /// let rnn = RNN::with_options(10, 20, RnnOptions { num_layers: 2, nonlinearity: Nonlinearity::Relu, ..Default::default() })?;
    /// assert_eq!(rnn.to_string(), "RNN(10, 20, num_layers=2)");
    /// assert_eq!(rnn.state_dict().keys().next().map(String::as_str), Some("weight_ih_l0"));
    /// let (out, h) = rnn.forward((Tensor::zeros([5, 3, 10], DType::F32), None))?;
    /// assert_eq!((out.shape(), h.shape()), (&[5, 3, 20].into(), &[2, 3, 20].into()));
    /// # Ok::<(), nn::Error>(())
    /// ```
    RNN,
    RnnOptions,
    |o| o.nonlinearity.mode()
);

recurrent_layer!(
    /// PyTorch's `nn.GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    /// bidirectional=False)`, gates in PyTorch's order r, z, n:
    /// `n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t−1} + b_hn))`, `h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1}`.
    ///
    /// Keys `weight_ih_l{k}` `(3H, in)`, `weight_hh_l{k}` `(3H, H)`, `bias_ih_l{k}`, `bias_hh_l{k}` (`(3H)`), with a
    /// `_reverse` suffix for the backward direction; every parameter uniform in `±1/sqrt(H)`. Forward takes
    /// `(input, Option<h0>)` and returns `(output, h_n)`; the recurrence runs as recorded operations on every
    /// device, so autograd differentiates it.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let gru = GRU::new(8, 16);
    /// assert_eq!(gru.to_string(), "GRU(8, 16)");
    /// assert_eq!(gru.param("weight_ih_l0").unwrap().shape().to_vec(), [48, 8]);
    /// let (out, h) = gru.forward((Tensor::zeros([4, 8], DType::F32), None))?;
    /// assert_eq!((out.shape(), h.shape()), (&[4, 16].into(), &[1, 16].into()));
    /// # Ok::<(), nn::Error>(())
    /// ```
    GRU,
    GruOptions,
    |_o| CellMode::Gru
);
