//! Batch and layer normalisation, accumulated in `f64` (PyTorch accumulates `f32` in `double` on the CPU).

use crate::tensor::float::{Float, with_float_type};
use crate::{DType, Error, Result, Tensor};

/// Running statistics a batch norm reads (evaluation) or updates (training).
pub struct RunningStats<'a> {
    /// Per-channel mean.
    pub mean: &'a Tensor,
    /// Per-channel variance.
    pub var: &'a Tensor,
}

/// The arguments of a batch norm besides its input, as the device path takes them.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))] // read by the device path only
pub(crate) struct BatchNormArgs<'a> {
    pub(crate) running: Option<RunningStats<'a>>,
    pub(crate) weight: Option<&'a Tensor>,
    pub(crate) bias: Option<&'a Tensor>,
    pub(crate) training: bool,
    pub(crate) momentum: f64,
    pub(crate) eps: f64,
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
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let inner: usize = x.shape()[2..].iter().product();
    let count = n * inner;
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
    if !x.device().is_cpu() {
        let args = BatchNormArgs {
            running,
            weight,
            bias,
            training,
            momentum,
            eps,
        };
        return crate::gpu::batch_norm(x, args);
    }
    let xs = x.to_dtype(DType::F64)?.to_vec::<f64>()?;
    let (mean, var) = if training {
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
            let old_mean = r.mean.to_vec_f64()?;
            let old_var = r.var.to_vec_f64()?;
            let new_mean: Vec<f64> = old_mean
                .iter()
                .zip(&mean)
                .map(|(o, b)| (1.0 - momentum) * o + momentum * b)
                .collect();
            let new_var: Vec<f64> = old_var
                .iter()
                .zip(&var)
                .map(|(o, b)| (1.0 - momentum) * o + momentum * b * unbiased)
                .collect();
            r.mean.copy_(&Tensor::from_vec(new_mean, r.mean.shape().clone())?)?;
            r.var.copy_(&Tensor::from_vec(new_var, r.var.shape().clone())?)?;
        }
        (mean, var)
    } else {
        let r = running.ok_or_else(|| Error::invalid(op, "evaluation needs running statistics (or training=true)"))?;
        (r.mean.to_vec_f64()?, r.var.to_vec_f64()?)
    };
    let w = weight.map(Tensor::to_vec_f64).transpose()?;
    let b = bias.map(Tensor::to_vec_f64).transpose()?;
    let mut out = xs;
    for ch in 0..c {
        let scale = w.as_ref().map_or(1.0, |w| w[ch]) / (var[ch] + eps).sqrt();
        let shift = b.as_ref().map_or(0.0, |b| b[ch]) - mean[ch] * scale;
        for ni in 0..n {
            for v in &mut out[(ni * c + ch) * inner..(ni * c + ch + 1) * inner] {
                *v = *v * scale + shift;
            }
        }
    }
    Tensor::from_vec(out, x.shape().clone())?.to_dtype(x.dtype())
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
    let inner: usize = normalized_shape.iter().product();
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
    if !x.device().is_cpu() {
        return crate::gpu::layer_norm(x, inner, weight, bias, eps);
    }
    with_float_type!(x.dtype(), T => {
        let xs = x.float_ref::<T>(op)?;
        let ws = weight.map(|w| w.float_ref::<T>(op)).transpose()?;
        let bs = bias.map(|b| b.float_ref::<T>(op)).transpose()?;
        let out = layer_norm_rows::<T>(&xs, inner, ws.as_deref(), bs.as_deref(), eps);
        Tensor::from_computed(out, x.shape().clone(), x.dtype())
    })
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
