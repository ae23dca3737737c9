//! What PyTorch's `RNNBase` shares between [`RNN`](super::RNN), [`GRU`](super::GRU) and [`LSTM`](super::LSTM):
//! the parameters and their keys, the argument checks, the `repr`, and the forward's layouts and state checks.

use indexmap::IndexMap;

use crate::module::{py_bool, py_float};
use crate::ops::recurrent::lstm::{CellTensors, Lstm};
use crate::ops::recurrent::{CellMode, Recurrence};
use crate::random;
use crate::{DType, Error, Param, Result, Shape, Tensor};

/// One recurrent layer's constructor arguments, whatever its cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RecurrentSpec {
    pub(crate) mode: CellMode,
    pub(crate) input_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_layers: usize,
    pub(crate) bias: bool,
    pub(crate) batch_first: bool,
    pub(crate) dropout: f64,
    pub(crate) bidirectional: bool,
    pub(crate) proj_size: usize,
}

impl RecurrentSpec {
    /// The layer's name, as errors and the `repr` give it.
    pub(crate) fn name(&self) -> &'static str {
        match self.mode {
            CellMode::RnnTanh | CellMode::RnnRelu => "RNN",
            CellMode::Gru => "GRU",
            CellMode::Lstm => "LSTM",
        }
    }

    fn directions(&self) -> usize {
        if self.bidirectional { 2 } else { 1 }
    }

    /// The features of `h` and of each direction's output: `proj_size`, or `hidden_size` without a projection.
    fn real_hidden(&self) -> usize {
        if self.proj_size > 0 {
            self.proj_size
        } else {
            self.hidden_size
        }
    }

    /// Checks the arguments as PyTorch's constructor does, then draws the parameters in PyTorch's order and
    /// keys (`weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}`, `weight_hr_l{k}`, with a
    /// `_reverse` suffix for the backward direction), each uniform in `±1/sqrt(hidden_size)`.
    pub(crate) fn params(&self) -> Result<IndexMap<String, Param>> {
        let op = self.name();
        for (name, value) in [("hidden_size", self.hidden_size), ("num_layers", self.num_layers)] {
            if value == 0 {
                return Err(Error::invalid(op, format!("{name} must be greater than zero")));
            }
        }
        if self.proj_size > 0 && self.mode != CellMode::Lstm {
            return Err(Error::invalid(
                op,
                "proj_size argument is only supported for LSTM, not RNN or GRU",
            ));
        }
        if self.proj_size >= self.hidden_size {
            return Err(Error::invalid(
                op,
                format!(
                    "proj_size has to be smaller than hidden_size (proj_size {}, hidden_size {})",
                    self.proj_size, self.hidden_size
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.dropout) {
            return Err(Error::invalid(
                op,
                format!(
                    "dropout should be a number in range [0, 1] representing the probability of an element being \
                     zeroed, got {}",
                    self.dropout
                ),
            ));
        }
        let gates = self.mode.gates();
        let directions = self.directions();
        let gate_rows = self.hidden_size.checked_mul(gates * directions).ok_or_else(|| {
            Error::invalid(
                op,
                format!(
                    "hidden_size {} is too large: its {gates} gates' rows overflow usize",
                    self.hidden_size
                ),
            )
        })? / directions;
        let bound = 1.0 / (self.hidden_size as f64).sqrt();
        let real_hidden = self.real_hidden();
        let mut params = IndexMap::new();
        for layer in 0..self.num_layers {
            let layer_in = if layer == 0 {
                self.input_size
            } else {
                real_hidden * directions
            };
            for direction in 0..directions {
                let suffix = if direction == 1 { "_reverse" } else { "" };
                let mut shapes = vec![
                    ("weight_ih", vec![gate_rows, layer_in]),
                    ("weight_hh", vec![gate_rows, real_hidden]),
                ];
                if self.bias {
                    shapes.push(("bias_ih", vec![gate_rows]));
                    shapes.push(("bias_hh", vec![gate_rows]));
                }
                if self.proj_size > 0 {
                    shapes.push(("weight_hr", vec![self.proj_size, self.hidden_size]));
                }
                for (name, shape) in shapes {
                    let t = random::with_global(|g| Tensor::try_uniform_with(shape, -bound, bound, DType::F32, g))?;
                    params.insert(format!("{name}_l{layer}{suffix}"), Param::new(t));
                }
            }
        }
        Ok(params)
    }

    /// PyTorch's `RNNBase.extra_repr`: the sizes, then each argument that is not its default (the RNN's
    /// nonlinearity is not printed, as in PyTorch).
    pub(crate) fn extra_repr(&self) -> String {
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if self.proj_size != 0 {
            s.push_str(&format!(", proj_size={}", self.proj_size));
        }
        if self.num_layers != 1 {
            s.push_str(&format!(", num_layers={}", self.num_layers));
        }
        if !self.bias {
            s.push_str(", bias=False");
        }
        if self.batch_first {
            s.push_str(", batch_first=True");
        }
        if self.dropout != 0.0 {
            s.push_str(&format!(", dropout={}", py_float(self.dropout)));
        }
        if self.bidirectional {
            s.push_str(&format!(", bidirectional={}", py_bool(true)));
        }
        s
    }

    /// `(w_ih, w_hh, b_ih, b_hh, w_hr)` of one layer and direction, from `params` in [`Self::params`]' order.
    fn cell(&self, params: &IndexMap<String, Param>, layer: usize, direction: usize) -> CellTensors {
        let (bias, proj) = (self.bias, self.proj_size > 0);
        let per = 2 + if bias { 2 } else { 0 } + usize::from(proj);
        let base = (layer * self.directions() + direction) * per;
        let p = |i: usize| params[base + i].data();
        let (b_ih, b_hh) = if bias { (Some(p(2)), Some(p(3))) } else { (None, None) };
        let w_hr = proj.then(|| p(per - 1));
        (p(0), p(1), b_ih, b_hh, w_hr)
    }

    /// PyTorch's `RNNBase.forward`: `input` `(seq, batch, in)` (`(batch, seq, in)` with `batch_first`) or an
    /// unbatched `(seq, in)`; the states `h0` (and `c0` for the LSTM) `(layers·dirs, batch, H)` or, unbatched,
    /// `(layers·dirs, H)`, zeros when absent. Returns the output in the input's layout, `h_n` and the LSTM's `c_n`.
    pub(crate) fn forward(
        &self,
        params: &IndexMap<String, Param>,
        training: bool,
        input: Tensor,
        state: Option<(Tensor, Option<Tensor>)>,
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let op = self.name();
        let lstm = self.mode == CellMode::Lstm;
        if !(input.rank() == 2 || input.rank() == 3) {
            return Err(Error::invalid(
                op,
                format!(
                    "{op}: Expected input to be 2D or 3D, got {}D tensor instead",
                    input.rank()
                ),
            ));
        }
        if input.shape()[input.rank() - 1] != self.input_size {
            return Err(Error::invalid(
                op,
                format!(
                    "input.size(-1) must be equal to input_size. Expected {}, got {} (input of shape {})",
                    self.input_size,
                    input.shape()[input.rank() - 1],
                    input.shape()
                ),
            ));
        }
        let unbatched = input.rank() == 2;
        if let Some((h, c)) = &state {
            let ranks: Vec<usize> = std::iter::once(h).chain(c).map(Tensor::rank).collect();
            let (want, which) = if unbatched {
                (2, "unbatched 2-D")
            } else {
                (3, "batched 3-D")
            };
            if ranks.iter().any(|&r| r != want) {
                let got: Vec<String> = ranks.iter().map(|r| format!("{r}-D")).collect();
                return Err(Error::invalid(
                    op,
                    if lstm {
                        format!(
                            "For {which} input, hx and cx should also be {want}-D but got ({}) tensors",
                            got.join(", ")
                        )
                    } else {
                        format!(
                            "For {which} input, hx should also be {want}-D but got {} tensor",
                            got[0]
                        )
                    },
                ));
            }
        }
        let x = self.sequence_major(input, unbatched, true)?;
        if x.shape()[0] == 0 {
            return Err(Error::invalid(
                op,
                "Expected sequence length to be larger than 0 in RNN",
            ));
        }
        let (layers, dirs, batch) = (self.num_layers, self.directions(), x.shape()[1]);
        let h_shape = Shape::from([layers * dirs, batch, self.real_hidden()]);
        let c_shape = Shape::from([layers * dirs, batch, self.hidden_size]);
        let zeros = |shape: &Shape| Tensor::zeros(shape.clone(), x.dtype()).to_device(x.device());
        let (h0, c0) = match state {
            Some((h, c)) => {
                let batched = |t: Tensor| if unbatched { t.unsqueeze(1) } else { Ok(t) };
                let h = batched(h)?;
                let c = c.map(batched).transpose()?;
                let named = [
                    ("hidden[0]", "h0", Some(&h), &h_shape),
                    ("hidden[1]", "c0", c.as_ref(), &c_shape),
                ];
                for (pytorch, name, t, want) in named {
                    let Some(t) = t else { continue };
                    if t.shape() != want {
                        let pytorch = if lstm { pytorch } else { "hidden" };
                        return Err(Error::invalid(
                            op,
                            format!("Expected {pytorch} size {want}, got {} ({name})", t.shape()),
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
            None => (zeros(&h_shape)?, if lstm { Some(zeros(&c_shape)?) } else { None }),
        };
        let cells: Vec<CellTensors> = (0..layers)
            .flat_map(|layer| (0..dirs).map(move |d| (layer, d)))
            .map(|(layer, d)| self.cell(params, layer, d))
            .collect();
        let dropout = (training && self.dropout > 0.0 && layers > 1).then_some(self.dropout);
        let (out, h_n, c_n) = match c0 {
            Some(c0) => {
                let fused = Lstm {
                    layers,
                    dirs,
                    bias: self.bias,
                    dropout,
                };
                let (out, h_n, c_n) = fused.run(&x, &h0, &c0, &cells)?;
                (out, h_n, Some(c_n))
            }
            None => Recurrence {
                mode: self.mode,
                layers,
                dirs,
                dropout,
            }
            .run(&x, &h0, None, &cells)?,
        };
        let out = self.sequence_major(out, unbatched, false)?;
        let unbatch = |t: Tensor| if unbatched { t.squeeze(1) } else { Ok(t) };
        Ok((out, unbatch(h_n)?, c_n.map(unbatch).transpose()?))
    }

    /// `t` from the layer's input layout to `(seq, batch, feature)` (`to`), or back: an unbatched sequence
    /// gains or loses its batch dimension, a `batch_first` one is transposed.
    fn sequence_major(&self, t: Tensor, unbatched: bool, to: bool) -> Result<Tensor> {
        match (unbatched, to) {
            (true, true) => t.unsqueeze(1),
            (true, false) => t.squeeze(1),
            (false, _) if self.batch_first => t.transpose(0, 1),
            (false, _) => Ok(t),
        }
    }
}

/// One recurrent cell layer's constructor arguments (PyTorch's `RNNCellBase`): one step, no sequence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CellSpec {
    pub(crate) mode: CellMode,
    pub(crate) input_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) bias: bool,
}

impl CellSpec {
    /// The layer's name, as errors give it.
    pub(crate) fn name(&self) -> &'static str {
        match self.mode {
            CellMode::RnnTanh | CellMode::RnnRelu => "RNNCell",
            CellMode::Gru => "GRUCell",
            CellMode::Lstm => "LSTMCell",
        }
    }

    /// PyTorch's keys `weight_ih` `(G·H, in)`, `weight_hh` `(G·H, H)`, `bias_ih`, `bias_hh` (`(G·H)`), G the
    /// cell's gates, each uniform in `±1/sqrt(hidden_size)`.
    pub(crate) fn params(&self) -> Result<IndexMap<String, Param>> {
        let op = self.name();
        let gates = self.mode.gates();
        let rows = self.hidden_size.checked_mul(gates).ok_or_else(|| {
            Error::invalid(
                op,
                format!(
                    "hidden_size {} is too large: its {gates} gates' rows overflow usize",
                    self.hidden_size
                ),
            )
        })?;
        let bound = 1.0 / (self.hidden_size as f64).sqrt();
        let mut shapes = vec![
            ("weight_ih", vec![rows, self.input_size]),
            ("weight_hh", vec![rows, self.hidden_size]),
        ];
        if self.bias {
            shapes.push(("bias_ih", vec![rows]));
            shapes.push(("bias_hh", vec![rows]));
        }
        let mut params = IndexMap::new();
        for (name, shape) in shapes {
            let t = random::with_global(|g| Tensor::try_uniform_with(shape, -bound, bound, DType::F32, g))?;
            params.insert(name.to_string(), Param::new(t));
        }
        Ok(params)
    }

    /// PyTorch's `RNNCellBase.extra_repr`: the sizes, `bias=False`, and an RNN cell's `nonlinearity=relu`.
    pub(crate) fn extra_repr(&self) -> String {
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if !self.bias {
            s.push_str(", bias=False");
        }
        if self.mode == CellMode::RnnRelu {
            s.push_str(", nonlinearity=relu");
        }
        s
    }

    /// PyTorch's cell forward: `input` `(batch, in)` or unbatched `(in)`; the state `h` (and the LSTM's `c`)
    /// `(batch, H)` or `(H)`, zeros when absent. Returns the new `h` (and `c`), batched as the input.
    pub(crate) fn forward(
        &self,
        params: &IndexMap<String, Param>,
        input: Tensor,
        state: Option<(Tensor, Option<Tensor>)>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let op = self.name();
        let lstm = self.mode == CellMode::Lstm;
        if !(input.rank() == 1 || input.rank() == 2) {
            return Err(Error::invalid(
                op,
                format!("{op}: Expected input to be 1D or 2D, got {}D instead", input.rank()),
            ));
        }
        let unbatched = input.rank() == 1;
        let x = if unbatched { input.unsqueeze(0)? } else { input };
        let batch = x.shape()[0];
        if x.shape()[1] != self.input_size {
            return Err(Error::invalid(
                op,
                format!(
                    "input has inconsistent input_size: got {} expected {}",
                    x.shape()[1],
                    self.input_size
                ),
            ));
        }
        let checked = |t: Tensor, label: &str| -> Result<Tensor> {
            let which = if lstm { format!("hx[{label}]") } else { "hidden".into() };
            if !(t.rank() == 1 || t.rank() == 2) {
                return Err(Error::invalid(
                    op,
                    format!("{op}: Expected {which} to be 1D or 2D, got {}D instead", t.rank()),
                ));
            }
            let t = if unbatched { t.unsqueeze(0)? } else { t };
            if t.rank() != 2 || t.shape()[0] != batch {
                return Err(Error::invalid(
                    op,
                    format!(
                        "Input batch size {batch} doesn't match hidden{label} batch size {} (hidden{label} of \
                         shape {}, for an input of shape {})",
                        t.shape()[0],
                        t.shape(),
                        x.shape()
                    ),
                ));
            }
            if t.shape()[1] != self.hidden_size {
                return Err(Error::invalid(
                    op,
                    format!(
                        "hidden{label} has inconsistent hidden_size: got {}, expected {}",
                        t.shape()[1],
                        self.hidden_size
                    ),
                ));
            }
            if t.dtype() != x.dtype() {
                return Err(Error::DTypeMismatch {
                    op,
                    expected: x.dtype(),
                    got: t.dtype(),
                });
            }
            Ok(t)
        };
        let zeros = || Tensor::zeros([batch, self.hidden_size], x.dtype()).to_device(x.device());
        let (h, c) = match state {
            Some((h, c)) => (checked(h, "0")?, c.map(|c| checked(c, "1")).transpose()?),
            None => (zeros()?, if lstm { Some(zeros()?) } else { None }),
        };
        let p = |name: &str| params.get(name).map(Param::data);
        let weight = |name: &str| p(name).ok_or_else(|| Error::invalid(op, format!("the cell has no {name}")));
        let cell = (
            weight("weight_ih")?,
            weight("weight_hh")?,
            p("bias_ih"),
            p("bias_hh"),
            None,
        );
        let (h, c) = self.mode.step(&x, &h, c.as_ref(), &cell)?;
        let unbatch = |t: Tensor| if unbatched { t.squeeze(0) } else { Ok(t) };
        Ok((unbatch(h)?, c.map(unbatch).transpose()?))
    }
}
