//! PyTorch's four recurrent cells (`RNN_TANH`, `RNN_RELU`, `GRU`, `LSTM`) as recorded operations, and a
//! multi-layer, bidirectional recurrence over a sequence built from them.
//!
//! Every step is `linear`, then the cell's pointwise update: `add` and tanh / relu for the RNN, one fused op
//! for the GRU ([`gru_cell`]), `chunk`, sigmoid / tanh, `mul` and `add` for the LSTM. Autograd
//! differentiates it through the graph, on any device those ops run on. A recurrence projects its
//! whole input sequence in one `linear` and `unbind`s it into steps, so its backward grows linearly with the
//! sequence. The LSTM's fused recurrences
//! ([`lstm`]) fall back to this one where they do not serve; `RNN`, `GRU` and the cell layers run it.

mod gru_cell;
pub(crate) mod lstm;

use super::activation::Activation;
use crate::{Error, Result, Tensor};
use gru_cell::gru_cell;
use lstm::CellTensors;

/// A recurrent cell's formula, PyTorch's `mode` of `RNNBase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CellMode {
    /// `h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`.
    RnnTanh,
    /// `h' = relu(W_ih x + b_ih + W_hh h + b_hh)`.
    RnnRelu,
    /// Gates r, z, n: `n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))`, `h' = (h − n) ⊙ z + n`.
    Gru,
    /// Gates i, f, g, o: `c' = f ⊙ c + i ⊙ g`, `h' = o ⊙ tanh(c')` (then `W_hr h'` with a projection).
    Lstm,
}

impl CellMode {
    /// Rows of `weight_ih` per hidden feature: PyTorch's `gate_size / hidden_size`.
    pub(crate) fn gates(self) -> usize {
        match self {
            CellMode::RnnTanh | CellMode::RnnRelu => 1,
            CellMode::Gru => 3,
            CellMode::Lstm => 4,
        }
    }

    /// One step: from the step's input `x` `(batch, in)` and the state `h` `(batch, H or P)` (and, for the LSTM,
    /// `c` `(batch, H)`) to the new state, with the cell's weights.
    pub(crate) fn step(
        self,
        x: &Tensor,
        h: &Tensor,
        c: Option<&Tensor>,
        cell: &CellTensors,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let (w_ih, _, b_ih, _, _) = cell;
        self.step_projected(&x.linear(w_ih, b_ih.as_ref())?, h, c, cell)
    }

    /// [`step`](Self::step) from the input's projection `W_ih x + b_ih` `(batch, gates·H)`, which a recurrence
    /// computes for every step at once.
    fn step_projected(
        self,
        input: &Tensor,
        h: &Tensor,
        c: Option<&Tensor>,
        cell: &CellTensors,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let (_, w_hh, _, b_hh, w_hr) = cell;
        let hidden = h.linear(w_hh, b_hh.as_ref())?;
        match self {
            CellMode::RnnTanh => Ok((Activation::Tanh.forward(&hidden.add(input)?)?, None)),
            CellMode::RnnRelu => Ok((Activation::Relu.forward(&hidden.add(input)?)?, None)),
            CellMode::Gru => Ok((gru_cell(input, &hidden, h)?, None)),
            CellMode::Lstm => {
                let gates = input.add(&hidden)?.chunk(4, 1)?;
                let gate = |k: usize, act: Activation| act.forward(&gates[k]);
                let (i, f) = (gate(0, Activation::Sigmoid)?, gate(1, Activation::Sigmoid)?);
                let (g, o) = (gate(2, Activation::Tanh)?, gate(3, Activation::Sigmoid)?);
                let c = c.ok_or_else(|| Error::invalid("LSTM", "an LSTM step needs its cell state"))?;
                let c = f.mul(c)?.add(&i.mul(&g)?)?;
                let mut h = o.mul(&Activation::Tanh.forward(&c)?)?;
                if let Some(w_hr) = w_hr {
                    h = h.linear(w_hr, None)?;
                }
                Ok((h, Some(c)))
            }
        }
    }
}

/// A multi-layer recurrence of `mode` cells over `x` `(seq, batch, input)`, from `h0` `(layers·dirs, batch, H or
/// P)` (and, for the LSTM, `c0` `(layers·dirs, batch, H)`), with each layer and direction's weights in `cells`,
/// layer-major. Returns the outputs `(seq, batch, dirs·(H or P))`, `h_n` and, for the LSTM, `c_n`. `dropout`
/// multiplies the outputs of every layer but the last by a mask drawn from the global generator, layer by layer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recurrence {
    pub(crate) mode: CellMode,
    pub(crate) layers: usize,
    pub(crate) dirs: usize,
    pub(crate) dropout: Option<f64>,
}

impl Recurrence {
    /// Runs the recurrence (shapes checked by the caller).
    pub(crate) fn run(
        &self,
        x: &Tensor,
        h0: &Tensor,
        c0: Option<&Tensor>,
        cells: &[CellTensors],
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let seq = x.shape()[0];
        let (h0, c0) = (h0.unbind(0)?, c0.map(|c0| c0.unbind(0)).transpose()?);
        let (mut layer_in, mut h_n, mut c_n) = (x.clone(), Vec::new(), Vec::new());
        for layer in 0..self.layers {
            let mut outputs = Vec::with_capacity(self.dirs);
            for d in 0..self.dirs {
                let slot = layer * self.dirs + d;
                let mut h = h0[slot].clone();
                let mut c = c0.as_ref().map(|c0| c0[slot].clone());
                // The input's projection for every step in one product (as PyTorch's CPU recurrences do), cut
                // into its steps by one op, whose backward joins the steps' gradients once.
                let (w_ih, _, b_ih, _, _) = &cells[slot];
                let inputs = layer_in.linear(w_ih, b_ih.as_ref())?.unbind(0)?;
                let mut steps: Vec<Option<Tensor>> = vec![None; seq];
                let order: Vec<usize> = if d == 1 {
                    (0..seq).rev().collect()
                } else {
                    (0..seq).collect()
                };
                for t in order {
                    (h, c) = self.mode.step_projected(&inputs[t], &h, c.as_ref(), &cells[slot])?;
                    steps[t] = Some(h.unsqueeze(0)?);
                }
                let steps: Vec<&Tensor> = steps.iter().flatten().collect();
                outputs.push(Tensor::cat(&steps, 0)?);
                h_n.push(h.unsqueeze(0)?);
                if let Some(c) = c {
                    c_n.push(c.unsqueeze(0)?);
                }
            }
            layer_in = Tensor::cat(&outputs.iter().collect::<Vec<_>>(), 2)?;
            if let Some(p) = self.dropout.filter(|_| layer + 1 < self.layers) {
                let mask = super::dropout::mask(layer_in.shape(), p, layer_in.dtype(), layer_in.device())?;
                layer_in = layer_in.mul(&mask)?;
            }
        }
        let joined = |v: &[Tensor]| Tensor::cat(&v.iter().collect::<Vec<_>>(), 0);
        let c_n = if c0.is_some() { Some(joined(&c_n)?) } else { None };
        Ok((layer_in, joined(&h_n)?, c_n))
    }
}
