//! The layers' computations on a device: linear, conv2d, batch norm (with the running statistics updated on
//! the device), layer norm and the LSTM. Each checks devices and dtypes, passes its parity probe against the
//! CPU once per (device, dtype), then launches its kernels on the tensors' own memory.

use kernels::GpuBuffer;

use super::memory::{buffer_of, float_type, kernel_error, open};
use super::probe::{self, wave};
use crate::functional::conv::{Conv2dOptions, Geometry, Padding2d, geometry};
use crate::functional::norm::{BatchNormArgs, RunningStats};
use crate::layers::lstm::{CellTensors, LstmSizes, run_cpu};
use crate::tensor::storage::Buffer;
use crate::{DType, Device, Error, Result, Shape, Tensor};

/// A new tensor of `shape` on `like`'s device and in its dtype, holding `buffer`.
fn tensor_of(buffer: GpuBuffer, like: &Tensor, shape: Shape) -> Tensor {
    Tensor::from_parts(Buffer::Device(buffer), like.dtype(), like.device(), shape)
}

/// Checks that every operand is on `x`'s device in `x`'s dtype, and that the device computes that dtype.
fn admit(op: &'static str, x: &Tensor, operands: &[&Tensor]) -> Result<()> {
    for t in operands {
        if t.device() != x.device() {
            return Err(Error::DeviceMismatch {
                op,
                lhs: x.device(),
                rhs: t.device(),
            });
        }
        if t.dtype() != x.dtype() {
            return Err(Error::DTypeMismatch {
                op,
                expected: x.dtype(),
                got: t.dtype(),
            });
        }
    }
    let dtype = float_type(op, x.dtype())?;
    open(x.device())?
        .check_dtype(op, dtype)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))
}

/// A CPU tensor of `shape` with deterministic values, in `dtype`.
fn probe_tensor(shape: &[usize], phase: f64, dtype: DType) -> Result<Tensor> {
    Tensor::from_vec(wave(shape.iter().product(), phase), shape.to_vec())?.to_dtype(dtype)
}

// ---------------------------------------------------------------- linear

fn linear_unchecked(x: &Tensor, w: &Tensor, b: Option<&Tensor>, out_shape: Shape) -> Result<Tensor> {
    let op = "linear";
    let (outputs, inputs) = (w.shape()[0], w.shape()[1]);
    let rows = x.numel().checked_div(inputs).unwrap_or(0);
    let bias = b.map(|b| buffer_of(b, op)).transpose()?;
    let out = kernels::linear::linear(
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        &buffer_of(w, op)?,
        bias.as_ref(),
        rows,
        inputs,
        outputs,
    )
    .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(tensor_of(out, x, out_shape))
}

fn verify_linear(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "linear", dtype, || {
        let x = probe_tensor(&[3, 5], 0.0, dtype)?;
        let w = probe_tensor(&[4, 5], 1.0, dtype)?;
        let b = probe_tensor(&[4], 2.0, dtype)?;
        let (xd, wd, bd) = (x.to_device(device)?, w.to_device(device)?, b.to_device(device)?);
        probe::measure(&[
            (
                linear_unchecked(&xd, &wd, Some(&bd), [3, 4].into())?,
                x.linear(&w, Some(&b))?,
            ),
            (linear_unchecked(&xd, &wd, None, [3, 4].into())?, x.linear(&w, None)?),
        ])
    })
}

/// `x·wᵀ + b` on a device (shapes checked by the caller; `out_shape` is `(*, out_features)`).
pub(crate) fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>, out_shape: Shape) -> Result<Tensor> {
    let mut operands = vec![w];
    operands.extend(b);
    admit("linear", x, &operands)?;
    verify_linear(x.device(), x.dtype())?;
    linear_unchecked(x, w, b, out_shape)
}

// ---------------------------------------------------------------- conv2d

fn conv2d_unchecked(x: &Tensor, w: &Tensor, b: Option<&Tensor>, g: &Geometry) -> Result<Tensor> {
    let op = "conv2d";
    let geometry = kernels::conv2d::Geometry {
        batch: g.n,
        channels: g.c,
        height: g.h,
        width: g.w,
        out_channels: g.o,
        groups: g.g,
        kernel: [g.kh, g.kw],
        out_size: [g.ho, g.wo],
        padding: [g.pt, g.pl],
        stride: g.stride,
        dilation: g.dilation,
    };
    let bias = b.map(|b| buffer_of(b, op)).transpose()?;
    let out = kernels::conv2d::conv2d(
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        &buffer_of(w, op)?,
        bias.as_ref(),
        geometry,
    )
    .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(tensor_of(out, x, Shape::from([g.n, g.o, g.ho, g.wo])))
}

fn verify_conv2d(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "conv2d", dtype, || {
        let x = probe_tensor(&[2, 4, 5, 6], 0.0, dtype)?;
        let w = probe_tensor(&[6, 2, 3, 2], 1.0, dtype)?;
        let b = probe_tensor(&[6], 2.0, dtype)?;
        let opts = Conv2dOptions {
            stride: [2, 1],
            padding: Padding2d::Explicit(1, 1),
            dilation: [1, 2],
            groups: 2,
        };
        let g = geometry(&x, &w, Some(&b), &opts)?;
        let (xd, wd, bd) = (x.to_device(device)?, w.to_device(device)?, b.to_device(device)?);
        probe::measure(&[(
            conv2d_unchecked(&xd, &wd, Some(&bd), &g)?,
            crate::functional::conv2d(&x, &w, Some(&b), &opts)?,
        )])
    })
}

/// The convolution on a device, its geometry checked by the caller.
pub(crate) fn conv2d(x: &Tensor, w: &Tensor, b: Option<&Tensor>, g: &Geometry) -> Result<Tensor> {
    let mut operands = vec![w];
    operands.extend(b);
    admit("conv2d", x, &operands)?;
    verify_conv2d(x.device(), x.dtype())?;
    conv2d_unchecked(x, w, b, g)
}

// ---------------------------------------------------------------- batch norm

fn batch_norm_unchecked(x: &Tensor, a: &BatchNormArgs<'_>) -> Result<Tensor> {
    use kernels::norm::{Layout, Statistics};
    let op = "batch_norm";
    let layout = Layout {
        outer: x.shape()[0],
        channels: x.shape()[1],
        inner: x.shape()[2..].iter().product(),
    };
    let running = a
        .running
        .as_ref()
        .map(|r| Ok::<_, Error>((buffer_of(r.mean, op)?, buffer_of(r.var, op)?)))
        .transpose()?;
    let stats = match (&running, a.training) {
        (Some((mean, var)), true) => Statistics::Batch {
            running: Some((mean, var, a.momentum)),
        },
        (None, true) => Statistics::Batch { running: None },
        (Some((mean, var)), false) => Statistics::Running { mean, var },
        (None, false) => {
            return Err(Error::invalid(
                op,
                "evaluation needs running statistics (or training=true)",
            ));
        }
    };
    let weight = a.weight.map(|t| buffer_of(t, op)).transpose()?;
    let bias = a.bias.map(|t| buffer_of(t, op)).transpose()?;
    let y = kernels::norm::batch_norm(
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        layout,
        stats,
        weight.as_ref(),
        bias.as_ref(),
        a.eps,
    )
    .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(tensor_of(y, x, x.shape().clone()))
}

fn verify_batch_norm(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "batch_norm", dtype, || {
        let x = probe_tensor(&[3, 4, 5], 0.0, dtype)?;
        let w = probe_tensor(&[4], 1.0, dtype)?;
        let b = probe_tensor(&[4], 2.0, dtype)?;
        let mean = probe_tensor(&[4], 3.0, dtype)?;
        let var = probe_tensor(&[4], 4.0, dtype)?.affine(0.3, 1.0)?;
        let dev = |t: &Tensor| t.to_device(device);
        let (xd, wd, bd) = (dev(&x)?, dev(&w)?, dev(&b)?);
        let mut pairs = Vec::new();
        for training in [true, false] {
            let (mean_cpu, var_cpu) = (mean.deep_copy()?, var.deep_copy()?);
            let (mean_dev, var_dev) = (dev(&mean)?, dev(&var)?);
            let want = crate::functional::batch_norm(
                &x,
                Some(RunningStats {
                    mean: &mean_cpu,
                    var: &var_cpu,
                }),
                Some(&w),
                Some(&b),
                training,
                0.3,
                1e-5,
            )?;
            let device_args = BatchNormArgs {
                running: Some(RunningStats {
                    mean: &mean_dev,
                    var: &var_dev,
                }),
                weight: Some(&wd),
                bias: Some(&bd),
                training,
                momentum: 0.3,
                eps: 1e-5,
            };
            let got = batch_norm_unchecked(&xd, &device_args)?;
            pairs.extend([(got, want), (mean_dev, mean_cpu), (var_dev, var_cpu)]);
        }
        probe::measure(&pairs)
    })
}

/// PyTorch's `F.batch_norm` on a device (arguments checked by the caller); running statistics are updated
/// in place on the device in training.
pub(crate) fn batch_norm(x: &Tensor, args: BatchNormArgs<'_>) -> Result<Tensor> {
    let mut operands: Vec<&Tensor> = args.weight.into_iter().chain(args.bias).collect();
    if let Some(r) = &args.running {
        operands.extend([r.mean, r.var]);
    }
    admit("batch_norm", x, &operands)?;
    verify_batch_norm(x.device(), x.dtype())?;
    batch_norm_unchecked(x, &args)
}

// ---------------------------------------------------------------- layer norm

fn layer_norm_unchecked(x: &Tensor, inner: usize, w: Option<&Tensor>, b: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    let op = "layer_norm";
    let weight = w.map(|t| buffer_of(t, op)).transpose()?;
    let bias = b.map(|t| buffer_of(t, op)).transpose()?;
    let y = kernels::norm::layer_norm(
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        inner,
        weight.as_ref(),
        bias.as_ref(),
        eps,
    )
    .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(tensor_of(y, x, x.shape().clone()))
}

fn verify_layer_norm(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "layer_norm", dtype, || {
        let x = probe_tensor(&[3, 2, 7], 0.0, dtype)?;
        let w = probe_tensor(&[2, 7], 1.0, dtype)?;
        let b = probe_tensor(&[2, 7], 2.0, dtype)?;
        let dev = |t: &Tensor| t.to_device(device);
        let want = crate::functional::layer_norm(&x, &[2, 7], Some(&w), Some(&b), 1e-5)?;
        let got = layer_norm_unchecked(&dev(&x)?, 14, Some(&dev(&w)?), Some(&dev(&b)?), 1e-5)?;
        let want_plain = crate::functional::layer_norm(&x, &[7], None, None, 1e-3)?;
        let got_plain = layer_norm_unchecked(&dev(&x)?, 7, None, None, 1e-3)?;
        probe::measure(&[(got, want), (got_plain, want_plain)])
    })
}

/// PyTorch's `F.layer_norm` on a device over rows of `inner` elements (arguments checked by the caller).
pub(crate) fn layer_norm(x: &Tensor, inner: usize, w: Option<&Tensor>, b: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    let operands: Vec<&Tensor> = w.into_iter().chain(b).collect();
    admit("layer_norm", x, &operands)?;
    verify_layer_norm(x.device(), x.dtype())?;
    layer_norm_unchecked(x, inner, w, b, eps)
}

// ---------------------------------------------------------------- LSTM

fn lstm_unchecked(
    x: &Tensor,
    h0: &Tensor,
    c0: &Tensor,
    cells: &[CellTensors],
    sizes: LstmSizes,
) -> Result<(Tensor, Tensor, Tensor)> {
    let op = "lstm";
    let mut held = Vec::with_capacity(cells.len());
    for (w_ih, w_hh, b_ih, b_hh) in cells {
        let biases = match (b_ih, b_hh) {
            (Some(a), Some(b)) => Some((buffer_of(a, op)?, buffer_of(b, op)?)),
            _ => None,
        };
        held.push((buffer_of(w_ih, op)?, buffer_of(w_hh, op)?, biases));
    }
    let spec = kernels::lstm::Lstm {
        seq: sizes.seq,
        batch: sizes.batch,
        input_size: sizes.input_size,
        hidden: sizes.hidden,
        layers: sizes.layers,
        bidirectional: sizes.dirs == 2,
        weights: held
            .iter()
            .map(|(w_ih, w_hh, biases)| kernels::lstm::CellWeights {
                w_ih,
                w_hh,
                biases: biases.as_ref().map(|(a, b)| (a, b)),
            })
            .collect(),
    };
    let (xb, h0b, c0b) = (buffer_of(x, op)?, buffer_of(h0, op)?, buffer_of(c0, op)?);
    let (out, h_n, c_n) = kernels::lstm::lstm(float_type(op, x.dtype())?, &spec, &xb, &h0b, &c0b)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    let out_shape = Shape::from([sizes.seq, sizes.batch, sizes.dirs * sizes.hidden]);
    Ok((
        tensor_of(out, x, out_shape),
        tensor_of(h_n, x, h0.shape().clone()),
        tensor_of(c_n, x, c0.shape().clone()),
    ))
}

fn verify_lstm(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "lstm", dtype, || {
        let sizes = LstmSizes {
            seq: 3,
            batch: 2,
            input_size: 3,
            hidden: 4,
            layers: 2,
            dirs: 2,
        };
        let x = probe_tensor(&[3, 2, 3], 0.0, dtype)?;
        let h0 = probe_tensor(&[4, 2, 4], 1.0, dtype)?;
        let c0 = probe_tensor(&[4, 2, 4], 2.0, dtype)?.mul_scalar(4.0)?;
        let mut cells = Vec::new();
        for cell in 0..4 {
            let inputs = if cell < 2 { 3 } else { 8 };
            let phase = 10.0 * cell as f64;
            cells.push((
                probe_tensor(&[16, inputs], phase + 3.0, dtype)?,
                probe_tensor(&[16, 4], phase + 4.0, dtype)?,
                Some(probe_tensor(&[16], phase + 5.0, dtype)?),
                Some(probe_tensor(&[16], phase + 6.0, dtype)?),
            ));
        }
        let (out, h_n, c_n) = run_cpu(&x, &h0, &c0, &cells, sizes, None)?;
        let dev = |t: &Tensor| t.to_device(device);
        let mut cells_dev = Vec::new();
        for (a, b, c, d) in &cells {
            let opt = |t: &Option<Tensor>| t.as_ref().map(dev).transpose();
            cells_dev.push((dev(a)?, dev(b)?, opt(c)?, opt(d)?));
        }
        let (out_d, h_d, c_d) = lstm_unchecked(&dev(&x)?, &dev(&h0)?, &dev(&c0)?, &cells_dev, sizes)?;
        probe::measure(&[(out_d, out), (h_d, h_n), (c_d, c_n)])
    })
}

/// The LSTM on a device: input `(seq, batch, input_size)`, state `(layers·dirs, batch, hidden)`, weights
/// layer-major (checked by the caller).
pub(crate) fn lstm(
    x: &Tensor,
    h0: &Tensor,
    c0: &Tensor,
    cells: &[CellTensors],
    sizes: LstmSizes,
) -> Result<(Tensor, Tensor, Tensor)> {
    let mut operands = vec![h0, c0];
    for (a, b, c, d) in cells {
        operands.extend([a, b]);
        operands.extend(c.iter().chain(d));
    }
    admit("lstm", x, &operands)?;
    verify_lstm(x.device(), x.dtype())?;
    lstm_unchecked(x, h0, c0, cells, sizes)
}
