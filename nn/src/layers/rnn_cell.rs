//! [`RNNCell`], [`GRUCell`] and [`LSTMCell`]: one step of PyTorch's recurrent cells, for loops written by hand.

use super::recurrent::CellSpec;
use super::rnn::Nonlinearity;
use crate::ops::recurrent::CellMode;
use crate::{Error, Forward, Module, Result, Tensor};

recurrent_module!(
    /// PyTorch's `nn.RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh')`:
    /// `h' = tanh(W_ih x + b_ih + W_hh h + b_hh)` (or relu).
    ///
    /// Keys `weight_ih` `(H, in)`, `weight_hh` `(H, H)`, `bias_ih`, `bias_hh`, uniform in `±1/sqrt(H)`. Forward
    /// takes `(input, Option<h>)`, batched `(batch, in)` or unbatched `(in)`, and returns `h'`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::layers::Nonlinearity;
    /// let cell = RNNCell::with_options(3, 5, true, Nonlinearity::Relu)?;
    /// assert_eq!(cell.to_string(), "RNNCell(3, 5, nonlinearity=relu)");
    /// let h = cell.forward((Tensor::zeros([2, 3], DType::F32), None))?;
    /// assert_eq!(h.shape(), &[2, 5]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    RNNCell {
        /// Whether the cell has `bias_ih` and `bias_hh`.
        bias: bool,
        /// `tanh` or `relu`.
        nonlinearity: Nonlinearity,
    }
);

recurrent_module!(
    /// PyTorch's `nn.GRUCell(input_size, hidden_size, bias=True)`, gates r, z, n as in [`GRU`](super::GRU).
    ///
    /// Keys `weight_ih` `(3H, in)`, `weight_hh` `(3H, H)`, `bias_ih`, `bias_hh`, uniform in `±1/sqrt(H)`. Forward
    /// takes `(input, Option<h>)`, batched `(batch, in)` or unbatched `(in)`, and returns `h'`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let cell = GRUCell::new(3, 5);
    /// assert_eq!(cell.to_string(), "GRUCell(3, 5)");
    /// let h = cell.forward((Tensor::zeros([3], DType::F32), None))?;
    /// assert_eq!(h.shape(), &[5]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    GRUCell {
        /// Whether the cell has `bias_ih` and `bias_hh`.
        bias: bool,
    }
);

recurrent_module!(
    /// PyTorch's `nn.LSTMCell(input_size, hidden_size, bias=True)`, gates i, f, g, o as in
    /// [`LSTM`](super::LSTM).
    ///
    /// Keys `weight_ih` `(4H, in)`, `weight_hh` `(4H, H)`, `bias_ih`, `bias_hh`, uniform in `±1/sqrt(H)`. Forward
    /// takes `(input, Option<(h, c)>)`, batched `(batch, in)` or unbatched `(in)`, and returns `(h', c')`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let cell = LSTMCell::with_options(3, 5, false)?;
    /// assert_eq!(cell.to_string(), "LSTMCell(3, 5, bias=False)");
    /// let (h, c) = cell.forward((Tensor::zeros([2, 3], DType::F32), None))?;
    /// assert_eq!((h.shape(), c.shape()), (&[2, 5].into(), &[2, 5].into()));
    /// # Ok::<(), nn::Error>(())
    /// ```
    LSTMCell {
        /// Whether the cell has `bias_ih` and `bias_hh`.
        bias: bool,
    }
);

impl RNNCell {
    /// With a bias, `tanh`.
    pub fn new(input_size: usize, hidden_size: usize) -> RNNCell {
        RNNCell::with_options(input_size, hidden_size, true, Nonlinearity::Tanh).expect("the defaults are valid")
    }

    /// Every constructor argument. Weights the allocator refuses are an [`Error::Allocation`].
    pub fn with_options(
        input_size: usize,
        hidden_size: usize,
        bias: bool,
        nonlinearity: Nonlinearity,
    ) -> Result<RNNCell> {
        RNNCell::build(input_size, hidden_size, bias, nonlinearity)
    }

    fn spec(&self) -> CellSpec {
        CellSpec {
            mode: self.nonlinearity.mode(),
            input_size: self.input_size,
            hidden_size: self.hidden_size,
            bias: self.bias,
        }
    }
}

impl GRUCell {
    /// With a bias.
    pub fn new(input_size: usize, hidden_size: usize) -> GRUCell {
        GRUCell::with_options(input_size, hidden_size, true).expect("the defaults are valid")
    }

    /// Every constructor argument. Weights the allocator refuses are an [`Error::Allocation`].
    pub fn with_options(input_size: usize, hidden_size: usize, bias: bool) -> Result<GRUCell> {
        GRUCell::build(input_size, hidden_size, bias)
    }

    fn spec(&self) -> CellSpec {
        CellSpec {
            mode: CellMode::Gru,
            input_size: self.input_size,
            hidden_size: self.hidden_size,
            bias: self.bias,
        }
    }
}

impl LSTMCell {
    /// With a bias.
    pub fn new(input_size: usize, hidden_size: usize) -> LSTMCell {
        LSTMCell::with_options(input_size, hidden_size, true).expect("the defaults are valid")
    }

    /// Every constructor argument. Weights the allocator refuses are an [`Error::Allocation`].
    pub fn with_options(input_size: usize, hidden_size: usize, bias: bool) -> Result<LSTMCell> {
        LSTMCell::build(input_size, hidden_size, bias)
    }

    fn spec(&self) -> CellSpec {
        CellSpec {
            mode: CellMode::Lstm,
            input_size: self.input_size,
            hidden_size: self.hidden_size,
            bias: self.bias,
        }
    }
}

impl Forward for RNNCell {
    type Input = (Tensor, Option<Tensor>);
    type Output = Tensor;

    fn forward(&self, (input, h): Self::Input) -> Result<Tensor> {
        Ok(self.spec().forward(&self.params, input, h.map(|h| (h, None)))?.0)
    }
}

impl Forward for GRUCell {
    type Input = (Tensor, Option<Tensor>);
    type Output = Tensor;

    fn forward(&self, (input, h): Self::Input) -> Result<Tensor> {
        Ok(self.spec().forward(&self.params, input, h.map(|h| (h, None)))?.0)
    }
}

impl Forward for LSTMCell {
    type Input = (Tensor, Option<(Tensor, Tensor)>);
    type Output = (Tensor, Tensor);

    fn forward(&self, (input, state): Self::Input) -> Result<(Tensor, Tensor)> {
        let (h, c) = self
            .spec()
            .forward(&self.params, input, state.map(|(h, c)| (h, Some(c))))?;
        let c = c.ok_or_else(|| Error::invalid("LSTMCell", "the cell returned no cell state"))?;
        Ok((h, c))
    }
}
