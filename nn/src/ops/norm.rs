//! Batch and layer normalisation, on the CPU accumulated in `f64` (PyTorch accumulates `f32` in `double` on the
//! CPU), on a device with the norm kernels (batch norm's running statistics updated there).

use kernels::GpuDevice;
use kernels::norm::{Layout, Statistics};

use super::float::{Float, with_float_type};
use super::{Op, probe_tensor, run, same_dtype, with_optional};
use crate::{DType, Error, Result, Tensor};

/// Running statistics a batch norm reads (evaluation) or updates (training).
pub struct RunningStats<'a> {
    /// Per-channel mean.
    pub mean: &'a Tensor,
    /// Per-channel variance.
    pub var: &'a Tensor,
}

/// PyTorch's `F.batch_norm`: normalises each channel (dimension 1) over the batch and spatial dimensions.
///
/// In `training`, the batch's statistics are used and, when `running` is given, it is updated in place:
/// `running = (1 - momentum) * running + momentum * batch` with the unbiased variance. Otherwise the running
/// statistics are used.
pub fn batch_norm(
    x: &Tensor,
    running: Option<RunningStats<'_>>,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    let op = "batch_norm";
    if x.rank() < 2 {
        return Err(Error::invalid(
            op,
            format!(
                "expected an input of 2 or more dimensions (N, C, ...), got shape {}",
                x.shape()
            ),
        ));
    }
    let c = x.shape()[1];
    let count = x.numel().checked_div(c).unwrap_or(0);
    for (name, t) in [
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running.as_ref().map(|r| r.mean)),
        ("running_var", running.as_ref().map(|r| r.var)),
    ] {
        if let Some(t) = t
            && t.numel() != c
        {
            return Err(Error::invalid(
                op,
                format!(
                    "{name} has shape {}, but the input has {c} channels (shape {})",
                    t.shape(),
                    x.shape()
                ),
            ));
        }
    }
    if training && count <= 1 {
        return Err(Error::invalid(
            op,
            format!(
                "expected more than 1 value per channel when training, got input shape {}",
                x.shape()
            ),
        ));
    }
    if !training && running.is_none() {
        return Err(Error::invalid(
            op,
            "evaluation needs running statistics (or training=true)",
        ));
    }
    let norm = BatchNorm {
        weight: weight.is_some(),
        bias: bias.is_some(),
        running: running.is_some(),
        training,
        momentum,
        eps,
    };
    let stats = running.as_ref().map_or([None, None], |r| [Some(r.mean), Some(r.var)]);
    run(&norm, &with_optional(&[x], &[weight, bias, stats[0], stats[1]]))
}

/// `F.batch_norm`; inputs `[x]`, then `weight`, `bias` and the running mean and variance where present.
#[derive(Clone, Copy)]
struct BatchNorm {
    weight: bool,
    bias: bool,
    running: bool,
    training: bool,
    momentum: f64,
    eps: f64,
}

/// A batch norm's operands, by name.
struct Operands<'a> {
    x: &'a Tensor,
    weight: Option<&'a Tensor>,
    bias: Option<&'a Tensor>,
    running: Option<RunningStats<'a>>,
}

impl BatchNorm {
    fn operands<'a>(&self, inputs: &[&'a Tensor]) -> Operands<'a> {
        let mut rest = inputs[1..].iter().copied();
        let weight = if self.weight { rest.next() } else { None };
        let bias = if self.bias { rest.next() } else { None };
        let running = match (self.running, rest.next(), rest.next()) {
            (true, Some(mean), Some(var)) => Some(RunningStats { mean, var }),
            _ => None,
        };
        Operands {
            x: inputs[0],
            weight,
            bias,
            running,
        }
    }
}

impl Op for BatchNorm {
    type Output = Tensor;
    const NAME: &'static str = "batch_norm";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let Operands {
            x,
            weight,
            bias,
            running,
        } = self.operands(inputs);
        let (n, c) = (x.shape()[0], x.shape()[1]);
        let inner: usize = x.shape()[2..].iter().product();
        let count = n * inner;
        let momentum = self.momentum;
        let xs = x.to_vec_f64()?;
        let (mean, var) = if self.training {
            let mut mean = vec![0.0; c];
            let mut var = vec![0.0; c];
            for ch in 0..c {
                let values = (0..n).flat_map(|ni| xs[(ni * c + ch) * inner..(ni * c + ch + 1) * inner].iter());
                let m = values.clone().sum::<f64>() / count as f64;
                mean[ch] = m;
                var[ch] = values.map(|v| (v - m) * (v - m)).sum::<f64>() / count as f64;
            }
            if let Some(r) = &running {
                let unbiased = count as f64 / (count as f64 - 1.0);
                let blend = |old: &Tensor, batch: &[f64], scale: f64| -> Result<()> {
                    let new: Vec<f64> = old
                        .to_vec_f64()?
                        .iter()
                        .zip(batch)
                        .map(|(o, b)| (1.0 - momentum) * o + momentum * b * scale)
                        .collect();
                    old.copy_(&Tensor::from_vec(new, old.shape().clone())?)
                };
                blend(r.mean, &mean, 1.0)?;
                blend(r.var, &var, unbiased)?;
            }
            (mean, var)
        } else {
            let r = running.ok_or_else(|| Error::invalid("batch_norm", "evaluation needs running statistics"))?;
            (r.mean.to_vec_f64()?, r.var.to_vec_f64()?)
        };
        let w = weight.map(Tensor::to_vec_f64).transpose()?;
        let b = bias.map(Tensor::to_vec_f64).transpose()?;
        let mut out = xs;
        for ch in 0..c {
            let scale = w.as_ref().map_or(1.0, |w| w[ch]) / (var[ch] + self.eps).sqrt();
            let shift = b.as_ref().map_or(0.0, |b| b[ch]) - mean[ch] * scale;
            for ni in 0..n {
                for v in &mut out[(ni * c + ch) * inner..(ni * c + ch + 1) * inner] {
                    *v = *v * scale + shift;
                }
            }
        }
        Tensor::from_vec(out, x.shape().clone())?.to_dtype(x.dtype())
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let op = "batch_norm";
        let Operands {
            x,
            weight,
            bias,
            running,
        } = self.operands(inputs);
        same_dtype(op, x, &inputs[1..].iter().map(|t| Some(*t)).collect::<Vec<_>>())?;
        let layout = Layout::around(x.shape(), 1);
        let running = running
            .map(|r| Ok::<_, Error>((r.mean.gpu_buffer(op)?, r.var.gpu_buffer(op)?)))
            .transpose()?;
        let stats = match (&running, self.training) {
            (Some((mean, var)), true) => Statistics::Batch {
                running: Some((mean, var, self.momentum)),
            },
            (None, true) => Statistics::Batch { running: None },
            (Some((mean, var)), false) => Statistics::Running { mean, var },
            (None, false) => return Err(Error::invalid(op, "evaluation needs running statistics")),
        };
        let weight = Tensor::gpu_buffer_of(weight, op)?;
        let bias = Tensor::gpu_buffer_of(bias, op)?;
        x.map_gpu(op, |dtype, x| {
            kernels::norm::batch_norm(dtype, x, layout, stats, weight.as_ref(), bias.as_ref(), self.eps)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Both modes, every operand present; the running statistics are compared after the update too.
        let mut cases = Vec::new();
        for training in [true, false] {
            let case = BatchNorm {
                weight: true,
                bias: true,
                running: true,
                training,
                momentum: 0.3,
                eps: 1e-5,
            };
            let inputs = vec![
                probe_tensor(&[3, 4, 5], 0.0, dtype)?,
                probe_tensor(&[4], 1.0, dtype)?,
                probe_tensor(&[4], 2.0, dtype)?,
                probe_tensor(&[4], 3.0, dtype)?,
                probe_tensor(&[4], 4.0, dtype)?.affine(0.3, 1.0)?,
            ];
            cases.push((case, inputs));
        }
        Ok(cases)
    }
}

/// PyTorch's `F.layer_norm`: normalises over the last dimensions, which must equal `normalized_shape`.
pub fn layer_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let op = "layer_norm";
    let k = normalized_shape.len();
    if k == 0 || x.rank() < k || &x.shape()[x.rank() - k..] != normalized_shape {
        return Err(Error::invalid(
            op,
            format!(
                "the input's last dimensions must be {normalized_shape:?}; got shape {}",
                x.shape()
            ),
        ));
    }
    for (name, t) in [("weight", weight), ("bias", bias)] {
        if let Some(t) = t
            && t.shape() != normalized_shape
        {
            return Err(Error::invalid(
                op,
                format!("{name} has shape {}, expected {normalized_shape:?}", t.shape()),
            ));
        }
    }
    let norm = LayerNorm {
        dims: k,
        weight: weight.is_some(),
        bias: bias.is_some(),
        eps,
    };
    run(&norm, &with_optional(&[x], &[weight, bias]))
}

/// `F.layer_norm` over the last `dims` dimensions; inputs `[x]`, then `weight` and `bias` where present.
struct LayerNorm {
    dims: usize,
    weight: bool,
    bias: bool,
    eps: f64,
}

impl LayerNorm {
    /// `(x, weight, bias, elements per row)`.
    fn operands<'a>(&self, inputs: &[&'a Tensor]) -> (&'a Tensor, Option<&'a Tensor>, Option<&'a Tensor>, usize) {
        let x = inputs[0];
        let mut rest = inputs[1..].iter().copied();
        let weight = if self.weight { rest.next() } else { None };
        let bias = if self.bias { rest.next() } else { None };
        let inner = x.shape()[x.rank() - self.dims..].iter().product();
        (x, weight, bias, inner)
    }
}

impl Op for LayerNorm {
    type Output = Tensor;
    const NAME: &'static str = "layer_norm";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let op = "layer_norm";
        let (x, weight, bias, inner) = self.operands(inputs);
        with_float_type!(x.dtype(), T => {
            let xs = x.float_ref::<T>(op)?;
            let ws = weight.map(|w| w.float_ref::<T>(op)).transpose()?;
            let bs = bias.map(|b| b.float_ref::<T>(op)).transpose()?;
            let out = layer_norm_rows::<T>(&xs, inner, ws.as_deref(), bs.as_deref(), self.eps);
            Tensor::from_computed(out, x.shape().clone(), x.dtype())
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let op = "layer_norm";
        let (x, weight, bias, inner) = self.operands(inputs);
        same_dtype(op, x, &[weight, bias])?;
        let weight = Tensor::gpu_buffer_of(weight, op)?;
        let bias = Tensor::gpu_buffer_of(bias, op)?;
        x.map_gpu(op, |dtype, x| {
            kernels::norm::layer_norm(dtype, x, inner, weight.as_ref(), bias.as_ref(), self.eps)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let x = probe_tensor(&[3, 2, 7], 0.0, dtype)?;
        let affine = LayerNorm {
            dims: 2,
            weight: true,
            bias: true,
            eps: 1e-5,
        };
        let plain = LayerNorm {
            dims: 1,
            weight: false,
            bias: false,
            eps: 1e-3,
        };
        let (w, b) = (probe_tensor(&[2, 7], 1.0, dtype)?, probe_tensor(&[2, 7], 2.0, dtype)?);
        Ok(vec![(affine, vec![x.clone(), w, b]), (plain, vec![x])])
    }
}

fn layer_norm_rows<T: Float>(x: &[T], inner: usize, w: Option<&[T]>, b: Option<&[T]>, eps: f64) -> Vec<T> {
    let mut out = vec![T::ZERO; x.len()];
    if inner == 0 {
        return out;
    }
    for (row, dst) in x.chunks(inner).zip(out.chunks_mut(inner)) {
        let mean = row.iter().map(|v| v.f64()).sum::<f64>() / inner as f64;
        let var = row.iter().map(|v| (v.f64() - mean) * (v.f64() - mean)).sum::<f64>() / inner as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for (i, (d, v)) in dst.iter_mut().zip(row).enumerate() {
            let mut y = (v.f64() - mean) * rstd;
            if let Some(w) = w {
                y *= w[i].f64();
            }
            if let Some(b) = b {
                y += b[i].f64();
            }
            *d = T::of(y);
        }
    }
    out
}
