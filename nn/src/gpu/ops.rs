//! The activations on a device: each call checks its arguments, makes sure the operation passed its parity
//! probe in that dtype on that device, and launches the cubecl kernel on the tensor's own memory.

use kernels::activation::Kind;

use super::memory::{buffer_of, float_type, kernel_error, open};
use super::probe::{self, Measured};
use crate::functional::Activation;
use crate::functional::derivative::PreluLayout;
use crate::tensor::storage::Buffer;
use crate::{DType, Device, Error, Result, Tensor};

/// The kernel and its two constants for an activation.
fn kind(act: &Activation) -> (Kind, [f64; 2]) {
    match *act {
        Activation::Relu => (Kind::Relu, [0.0; 2]),
        Activation::Relu6 => (Kind::Relu6, [0.0; 2]),
        Activation::LeakyRelu { negative_slope } => (Kind::LeakyRelu, [negative_slope, 0.0]),
        Activation::Threshold { threshold, value } => (Kind::Threshold, [threshold, value]),
        Activation::Hardtanh { min_val, max_val } => (Kind::Hardtanh, [min_val, max_val]),
        Activation::Elu { alpha } => (Kind::Elu, [alpha, 0.0]),
        Activation::Selu => (Kind::Selu, [0.0; 2]),
        Activation::Celu { alpha } => (Kind::Celu, [alpha, 0.0]),
        Activation::Gelu => (Kind::Gelu, [0.0; 2]),
        Activation::GeluTanh => (Kind::GeluTanh, [0.0; 2]),
        Activation::Silu => (Kind::Silu, [0.0; 2]),
        Activation::Mish => (Kind::Mish, [0.0; 2]),
        Activation::Softplus { beta, threshold } => (Kind::Softplus, [beta, threshold]),
        Activation::Softsign => (Kind::Softsign, [0.0; 2]),
        Activation::Sigmoid => (Kind::Sigmoid, [0.0; 2]),
        Activation::Tanh => (Kind::Tanh, [0.0; 2]),
        Activation::Hardsigmoid => (Kind::Hardsigmoid, [0.0; 2]),
        Activation::Hardswish => (Kind::Hardswish, [0.0; 2]),
        Activation::Tanhshrink => (Kind::Tanhshrink, [0.0; 2]),
        Activation::Hardshrink { lambd } => (Kind::Hardshrink, [lambd, 0.0]),
        Activation::Softshrink { lambd } => (Kind::Softshrink, [lambd, 0.0]),
        Activation::LogSigmoid => (Kind::LogSigmoid, [0.0; 2]),
    }
}

/// A new tensor like `like` (shape, dtype, device) holding `buffer`.
fn on_device(buffer: kernels::GpuBuffer, like: &Tensor) -> Tensor {
    Tensor::from_buffer(Buffer::Device(buffer), like)
}

/// The probe inputs as a tensor of `dtype` on `device` and on the CPU (`shape` must hold them).
fn probe_pair(values: Vec<f64>, shape: &[usize], dtype: DType, device: Device) -> Result<(Tensor, Tensor)> {
    let cpu = Tensor::from_vec(values, shape.to_vec())?.to_dtype(dtype)?;
    let dev = cpu.to_device(device)?;
    Ok((cpu, dev))
}

/// The worst of several `(error, index)` measurements, with the probe input at that index.
fn worst_of(results: &[(f64, usize)], xs: &[f64]) -> Measured {
    let (error, i) = results
        .iter()
        .copied()
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
    Measured {
        error,
        at: format!("x = {}", xs[i % xs.len()]),
    }
}

/// Fails unless `act` in `dtype` passed its probe on `device`: forward and backward on the probe inputs,
/// against the CPU.
fn verify_activation(act: &Activation, device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, act.name(), dtype, || {
        let xs = probe::inputs();
        let n = xs.len();
        let (x_cpu, x_dev) = probe_pair(xs.clone(), &[n], dtype, device)?;
        let (dy_cpu, dy_dev) = probe_pair(probe::gradients(n), &[n], dtype, device)?;
        let y = probe::worst(&forward_unchecked(act, &x_dev)?, &act.forward(&x_cpu)?)?;
        let dx = probe::worst(
            &backward_unchecked(act, &x_dev, &dy_dev)?,
            &act.backward(&x_cpu, &dy_cpu)?,
        )?;
        Ok(worst_of(&[y, dx], &xs))
    })
}

fn forward_unchecked(act: &Activation, x: &Tensor) -> Result<Tensor> {
    let (kind, scalars) = kind(act);
    let fail = |e| kernel_error(e, act.name(), x.dtype(), x.device());
    let out = kernels::activation::forward(
        kind,
        scalars,
        float_type(act.name(), x.dtype())?,
        &buffer_of(x, act.name())?,
    )
    .map_err(fail)?;
    Ok(on_device(out, x))
}

fn backward_unchecked(act: &Activation, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let op = act.backward_name();
    let (kind, scalars) = kind(act);
    let dtype = float_type(op, x.dtype())?;
    let fail = |e| kernel_error(e, op, x.dtype(), x.device());
    let saved = if kind.grad_from_output() {
        forward_unchecked(act, x)?
    } else {
        x.clone()
    };
    let dx = kernels::activation::backward(kind, scalars, dtype, &buffer_of(&saved, op)?, &buffer_of(dy, op)?)
        .map_err(fail)?;
    Ok(on_device(dx, x))
}

/// Checks the dtype (a floating-point one the device stores) and the probe before a launch.
fn admit(act: &Activation, x: &Tensor) -> Result<()> {
    let dtype = float_type(act.name(), x.dtype())?;
    open(x.device())?
        .check_dtype(act.name(), dtype)
        .map_err(|e| kernel_error(e, act.name(), x.dtype(), x.device()))?;
    verify_activation(act, x.device(), x.dtype())
}

/// `act(x)` for `x` on a device.
pub(crate) fn activation_forward(act: &Activation, x: &Tensor) -> Result<Tensor> {
    admit(act, x)?;
    forward_unchecked(act, x)
}

/// `act(x)` in place for `x` on a device.
pub(crate) fn activation_forward_(act: &Activation, x: &Tensor) -> Result<()> {
    admit(act, x)?;
    let (kind, scalars) = kind(act);
    kernels::activation::forward_in_place(
        kind,
        scalars,
        float_type(act.name(), x.dtype())?,
        &buffer_of(x, act.name())?,
    )
    .map_err(|e| kernel_error(e, act.name(), x.dtype(), x.device()))
}

/// `act(x)` written into `out`, both on one device.
pub(crate) fn activation_forward_into(act: &Activation, x: &Tensor, out: &Tensor) -> Result<()> {
    let op = act.name();
    if x.device() != out.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: x.device(),
            rhs: out.device(),
        });
    }
    if x.shape() != out.shape() {
        return Err(Error::shapes(
            op,
            x.shape(),
            out.shape(),
            "an output of the input's shape",
        ));
    }
    if x.dtype() != out.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            expected: x.dtype(),
            got: out.dtype(),
        });
    }
    admit(act, x)?;
    let (kind, scalars) = kind(act);
    kernels::activation::forward_into(
        kind,
        scalars,
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        &buffer_of(out, op)?,
    )
    .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))
}

/// `dx` of `act` for `x` and `dy` on one device (checked by the caller).
pub(crate) fn activation_backward(act: Activation, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
    admit(&act, x)?;
    backward_unchecked(&act, x, dy)
}

/// Checks that PReLU's weight is on the input's device, in its dtype.
fn check_weight(op: &'static str, x: &Tensor, weight: &Tensor) -> Result<()> {
    if weight.device() != x.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: x.device(),
            rhs: weight.device(),
        });
    }
    if weight.dtype() != x.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            expected: x.dtype(),
            got: weight.dtype(),
        });
    }
    Ok(())
}

fn prelu_kernel_layout(x: &Tensor, layout: PreluLayout) -> kernels::prelu::Layout {
    let per_outer = layout.channels * layout.inner;
    kernels::prelu::Layout {
        outer: x.numel().checked_div(per_outer).unwrap_or(0),
        channels: layout.channels,
        inner: layout.inner,
    }
}

/// Fails unless PReLU in `dtype` passed its probe on `device` (forward, `dx` and `dweight`).
fn verify_prelu(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "prelu", dtype, || {
        let xs = probe::inputs();
        let n = xs.len();
        let (x_cpu, x_dev) = probe_pair(xs.clone(), &[1, n, 1], dtype, device)?;
        let weights: Vec<f64> = (0..n).map(|i| 0.25 - 0.01 * i as f64).collect();
        let (w_cpu, w_dev) = probe_pair(weights, &[n], dtype, device)?;
        let (dy_cpu, dy_dev) = probe_pair(probe::gradients(n), &[1, n, 1], dtype, device)?;
        let layout = PreluLayout { channels: n, inner: 1 };
        let y = probe::worst(
            &prelu_unchecked(&x_dev, &w_dev, layout)?,
            &crate::functional::prelu(&x_cpu, &w_cpu)?,
        )?;
        let (dx_dev, dw_dev) = prelu_backward_unchecked(&x_dev, &w_dev, &dy_dev, layout)?;
        let (dx_cpu, dw_cpu) = crate::functional::derivative::prelu_backward(&x_cpu, &w_cpu, &dy_cpu)?;
        let dx = probe::worst(&dx_dev, &dx_cpu)?;
        let dw = probe::worst(&dw_dev, &dw_cpu)?;
        Ok(worst_of(&[y, dx, dw], &xs))
    })
}

fn prelu_unchecked(x: &Tensor, weight: &Tensor, layout: PreluLayout) -> Result<Tensor> {
    let fail = |e| kernel_error(e, "prelu", x.dtype(), x.device());
    let out = kernels::prelu::forward(
        float_type("prelu", x.dtype())?,
        &buffer_of(x, "prelu")?,
        &buffer_of(weight, "prelu")?,
        prelu_kernel_layout(x, layout),
    )
    .map_err(fail)?;
    Ok(on_device(out, x))
}

fn prelu_backward_unchecked(x: &Tensor, weight: &Tensor, dy: &Tensor, layout: PreluLayout) -> Result<(Tensor, Tensor)> {
    let op = "prelu_backward";
    let fail = |e| kernel_error(e, op, x.dtype(), x.device());
    let (dx, dw) = kernels::prelu::backward(
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        &buffer_of(weight, op)?,
        &buffer_of(dy, op)?,
        prelu_kernel_layout(x, layout),
    )
    .map_err(fail)?;
    Ok((on_device(dx, x), on_device(dw, weight)))
}

/// Checks dtype and probe for PReLU.
fn admit_prelu(op: &'static str, x: &Tensor, weight: &Tensor) -> Result<()> {
    check_weight(op, x, weight)?;
    let dtype = float_type(op, x.dtype())?;
    open(x.device())?
        .check_dtype(op, dtype)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    verify_prelu(x.device(), x.dtype())
}

/// `prelu(x, weight)` for `x` and `weight` on one device.
pub(crate) fn prelu_forward(x: &Tensor, weight: &Tensor, layout: PreluLayout) -> Result<Tensor> {
    admit_prelu("prelu", x, weight)?;
    prelu_unchecked(x, weight, layout)
}

/// `prelu(x, weight)` written into `out`, all three on one device (shapes and dtypes checked by the caller).
pub(crate) fn prelu_forward_into(x: &Tensor, weight: &Tensor, out: &Tensor, layout: PreluLayout) -> Result<()> {
    let op = "prelu";
    admit_prelu(op, x, weight)?;
    kernels::prelu::forward_into(
        float_type(op, x.dtype())?,
        &buffer_of(x, op)?,
        &buffer_of(weight, op)?,
        &buffer_of(out, op)?,
        prelu_kernel_layout(x, layout),
    )
    .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))
}

/// `(dx, dweight)` of PReLU on one device.
pub(crate) fn prelu_backward(
    x: &Tensor,
    weight: &Tensor,
    dy: &Tensor,
    layout: PreluLayout,
) -> Result<(Tensor, Tensor)> {
    admit_prelu("prelu_backward", x, weight)?;
    prelu_backward_unchecked(x, weight, dy, layout)
}

fn softmax_name(log: bool) -> &'static str {
    if log { "log_softmax" } else { "softmax" }
}

fn softmax_unchecked(x: &Tensor, [outer, size, inner]: [usize; 3], log: bool) -> Result<Tensor> {
    let op = softmax_name(log);
    let layout = kernels::softmax::Layout { outer, size, inner };
    let out = kernels::softmax::forward(float_type(op, x.dtype())?, &buffer_of(x, op)?, layout, log)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(on_device(out, x))
}

fn softmax_backward_unchecked(y: &Tensor, dy: &Tensor, [outer, size, inner]: [usize; 3], log: bool) -> Result<Tensor> {
    let op = if log {
        "log_softmax_backward"
    } else {
        "softmax_backward"
    };
    let layout = kernels::softmax::Layout { outer, size, inner };
    let dx = kernels::softmax::backward(
        float_type(op, y.dtype())?,
        &buffer_of(y, op)?,
        &buffer_of(dy, op)?,
        layout,
        log,
    )
    .map_err(|e| kernel_error(e, op, y.dtype(), y.device()))?;
    Ok(on_device(dx, y))
}

/// Fails unless (log-)softmax in `dtype` passed its probe on `device`, forward and backward, over a middle
/// dimension.
fn verify_softmax(device: Device, dtype: DType, log: bool) -> Result<()> {
    let op = softmax_name(log);
    probe::ensure(device, op, dtype, || {
        let xs = probe::inputs();
        let n = xs.len();
        let (x_cpu, x_dev) = probe_pair(xs.clone(), &[1, n, 1], dtype, device)?;
        let (dy_cpu, dy_dev) = probe_pair(probe::gradients(n), &[1, n, 1], dtype, device)?;
        let layout = [1, n, 1];
        let y_cpu = if log { x_cpu.log_softmax(1)? } else { x_cpu.softmax(1)? };
        let y_dev = softmax_unchecked(&x_dev, layout, log)?;
        let y = probe::worst(&y_dev, &y_cpu)?;
        let dx_cpu = y_cpu.softmax_backward_impl(&dy_cpu, 1, log)?;
        let dx = probe::worst(
            &softmax_backward_unchecked(&y_cpu.to_device(device)?, &dy_dev, layout, log)?,
            &dx_cpu,
        )?;
        Ok(worst_of(&[y, dx], &xs))
    })
}

fn admit_softmax(op: &'static str, x: &Tensor, log: bool) -> Result<()> {
    let dtype = float_type(op, x.dtype())?;
    open(x.device())?
        .check_dtype(op, dtype)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    verify_softmax(x.device(), x.dtype(), log)
}

/// Softmax (or log-softmax) of `x` on a device, over the middle of `layout` (`[outer, size, inner]`).
pub(crate) fn softmax(x: &Tensor, layout: [usize; 3], log: bool) -> Result<Tensor> {
    admit_softmax(softmax_name(log), x, log)?;
    softmax_unchecked(x, layout, log)
}

/// The input gradient of softmax (or log-softmax) from its output `y` and `dy`, on one device.
pub(crate) fn softmax_backward(y: &Tensor, dy: &Tensor, layout: [usize; 3], log: bool) -> Result<Tensor> {
    admit_softmax(softmax_name(log), y, log)?;
    softmax_backward_unchecked(y, dy, layout, log)
}
