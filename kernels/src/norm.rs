//! Batch and layer normalisation: per-channel (or per-row) mean and biased variance reduced by one cube
//! each in shared memory (two passes: the mean, then the squared deviations from it; a long channel in
//! slices merged by a second kernel), then `y = x·scale + shift`. Statistics are kept in the compute type (`f32`
//! for the half types).

use cubecl::prelude::*;

use crate::activation::{Compute, FromF64};
use crate::dtype::with_float_type;
use crate::launch::{CUBE_SIZE, arg, check_operands, elements, launch};
use crate::moments::{self, Channels, moments};
use crate::reduce::channel_moments;
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// A tensor seen as `[outer, channels, inner]` around its channel dimension (dim 1 for a batch norm): the
/// layout PReLU's per-channel weights and softmax use too.
pub use crate::layout::Layout;

/// `scale[c] = w[c] / sqrt(var[c] + eps)`, `shift[c] = b[c] - mean[c]·scale[c]` into `affine` (`scale` then
/// `shift`), from statistics of type `S` (the batch's, in the compute type, or the running ones).
#[cube(launch_unchecked)]
fn scale_shift_kernel<F: Float, S: Float, C: Float + LaunchArg>(
    mean: &[S],
    var: &[S],
    weight: &[F],
    bias: &[F],
    affine: &mut [C],
    channels: usize,
    eps: C,
    #[comptime] has_weight: bool,
    #[comptime] has_bias: bool,
) {
    let c = ABSOLUTE_POS;
    if c < channels {
        let mut scale = C::new(1.0) / (C::cast_from(var[c]) + eps).sqrt();
        if has_weight {
            scale *= C::cast_from(weight[c]);
        }
        let mut shift = -C::cast_from(mean[c]) * scale;
        if has_bias {
            shift += C::cast_from(bias[c]);
        }
        affine[c] = scale;
        affine[channels + c] = shift;
    }
}

/// `y = x·scale[c] + shift[c]` for the channel `c` of each element.
#[cube(launch_unchecked)]
fn apply_kernel<F: Float, C: Float>(x: &[F], affine: &[C], y: &mut [F], channels: usize, inner: usize) {
    if ABSOLUTE_POS < y.len() {
        let c = (ABSOLUTE_POS / inner) % channels;
        y[ABSOLUTE_POS] = F::cast_from(C::cast_from(x[ABSOLUTE_POS]) * affine[c] + affine[channels + c]);
    }
}

/// `running = (1 - momentum)·running + momentum·batch`, the variance made unbiased by `correction`.
#[cube(launch_unchecked)]
fn running_update_kernel<F: Float, C: Float + LaunchArg>(
    mean: &[C],
    var: &[C],
    running_mean: &mut [F],
    running_var: &mut [F],
    channels: usize,
    momentum: C,
    correction: C,
) {
    let c = ABSOLUTE_POS;
    if c < channels {
        let keep = C::new(1.0) - momentum;
        running_mean[c] = F::cast_from(keep * C::cast_from(running_mean[c]) + momentum * mean[c]);
        running_var[c] = F::cast_from(keep * C::cast_from(running_var[c]) + momentum * var[c] * correction);
    }
}

/// `(x - mean)·rstd`, times the weight and plus the bias where present: one element of a layer norm.
#[cube]
#[allow(clippy::too_many_arguments)]
fn layer_normalized<F: Float, C: Float>(
    x: F,
    mean: C,
    rstd: C,
    weight: &[F],
    bias: &[F],
    k: usize,
    #[comptime] has_weight: bool,
    #[comptime] has_bias: bool,
) -> F {
    let mut v = (C::cast_from(x) - mean) * rstd;
    if has_weight {
        v *= C::cast_from(weight[k]);
    }
    if has_bias {
        v += C::cast_from(bias[k]);
    }
    F::cast_from(v)
}

/// Layer norm of each row of `inner` elements (cube `r` normalises row `r`), for rows of at most
/// [`moments::SLICE`] elements (three passes per unit).
#[cube(launch_unchecked)]
fn layer_norm_kernel<F: Float, C: Float + LaunchArg>(
    x: &[F],
    weight: &[F],
    bias: &[F],
    y: &mut [F],
    rows: usize,
    inner: usize,
    eps: C,
    #[comptime] has_weight: bool,
    #[comptime] has_bias: bool,
) {
    let r = CUBE_POS;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let base = r * inner;
    // Row `r` is channel `r` of `rows` channels of `inner` elements each.
    let (mean, var) = channel_moments::<F, C>(x, r, rows, inner, 0, inner, &mut partial, true);
    let rstd = C::new(1.0) / (var + eps).sqrt();
    if r < rows {
        let mut k = UNIT_POS as usize;
        while k < inner {
            y[base + k] = layer_normalized::<F, C>(x[base + k], mean, rstd, weight, bias, k, has_weight, has_bias);
            k += CUBE_SIZE as usize;
        }
    }
}

/// Layer norm of each element from its row's statistics (rows longer than [`moments::SLICE`]).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn layer_norm_apply_kernel<F: Float, C: Float + LaunchArg>(
    x: &[F],
    mean: &[C],
    var: &[C],
    weight: &[F],
    bias: &[F],
    y: &mut [F],
    inner: usize,
    eps: C,
    #[comptime] has_weight: bool,
    #[comptime] has_bias: bool,
) {
    let i = ABSOLUTE_POS;
    if i < y.len() {
        let (r, k) = (i / inner, i % inner);
        let rstd = C::new(1.0) / (var[r] + eps).sqrt();
        y[i] = layer_normalized::<F, C>(x[i], mean[r], rstd, weight, bias, k, has_weight, has_bias);
    }
}

/// Where a batch norm's statistics come from.
pub enum Statistics<'a> {
    /// The batch's own, optionally folded into running statistics (`running_mean`, `running_var`) with
    /// `momentum`.
    Batch {
        /// Running statistics to update, with the momentum.
        running: Option<(&'a GpuBuffer, &'a GpuBuffer, f64)>,
    },
    /// Running statistics (evaluation).
    Running {
        /// Per-channel mean.
        mean: &'a GpuBuffer,
        /// Per-channel variance.
        var: &'a GpuBuffer,
    },
}

/// PyTorch's `F.batch_norm` over `[outer, channels, inner]`, in a new buffer; the running statistics of
/// [`Statistics::Batch`] are updated in place (variance made unbiased).
///
/// ```no_run
/// use kernels::norm::{batch_norm, Layout, Statistics};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 3.0]));
/// let layout = Layout { outer: 2, channels: 1, inner: 1 };
/// let y = batch_norm(FloatType::F32, &x, layout, Statistics::Batch { running: None }, None, None, 0.0)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[-1.0, 1.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn batch_norm(
    dtype: FloatType,
    x: &GpuBuffer,
    layout: Layout,
    stats: Statistics<'_>,
    weight: Option<&GpuBuffer>,
    bias: Option<&GpuBuffer>,
    eps: f64,
) -> Result<GpuBuffer> {
    let op = "batch_norm";
    x.device().check_dtype(op, dtype)?;
    let channels = layout.channels;
    let mut operands = vec![(x, layout.len(), "input")];
    for (b, name) in [(weight, "weight"), (bias, "bias")] {
        operands.extend(b.map(|b| (b, channels, name)));
    }
    match &stats {
        Statistics::Batch {
            running: Some((m, v, _)),
        }
        | Statistics::Running { mean: m, var: v } => {
            operands.extend([(*m, channels, "running mean"), (*v, channels, "running variance")]);
        }
        Statistics::Batch { running: None } => {}
    }
    check_operands(op, dtype, x, &operands)?;
    if matches!(stats, Statistics::Batch { .. }) && layout.per_channel() == 0 {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("no values per channel to take statistics of in {layout:?}"),
        });
    }
    let y = GpuBuffer::uninit(x.device(), x.len());
    if channels == 0 {
        return Ok(y);
    }
    with_float_type!(dtype, F => launch_batch_norm::<F>(x, &y, layout, stats, weight, bias, eps));
    Ok(y)
}

fn launch_batch_norm<F: Compute>(
    x: &GpuBuffer,
    y: &GpuBuffer,
    layout: Layout,
    stats: Statistics<'_>,
    weight: Option<&GpuBuffer>,
    bias: Option<&GpuBuffer>,
    eps: f64,
) {
    let channels = layout.channels;
    let c_size = size_of::<F::C>();
    let affine = GpuBuffer::uninit(x.device(), 2 * channels * c_size);
    let w = weight.unwrap_or(x);
    let b = bias.unwrap_or(x);
    let (w_len, b_len) = (
        if weight.is_some() { channels } else { 1 },
        if bias.is_some() { channels } else { 1 },
    );
    let eps = F::C::from_f64(eps);
    // SAFETY (every launch below): `x` and `y` hold `layout.len()` elements of `F`, the weight, bias and
    // running statistics `channels` each (checked by `batch_norm`), the optional ones read only when present;
    // the batch statistics (`channels` each) and `affine` (`2·channels`) are allocated here in `F::C`
    // (`per_channel() ≥ 1`, checked, as `moments` needs); element-wise kernels guard their index.
    unsafe {
        match stats {
            Statistics::Batch { running } => {
                let batch_mean = GpuBuffer::uninit(x.device(), channels * c_size);
                let batch_var = GpuBuffer::uninit(x.device(), channels * c_size);
                let at = Channels {
                    channels,
                    inner: layout.inner,
                    count: layout.per_channel(),
                    rows: false,
                };
                moments::<F>(x, at, &batch_mean, &batch_var);
                if let Some((mean, var, momentum)) = running {
                    let count = layout.per_channel() as f64;
                    let correction = if count > 1.0 {
                        count / (count - 1.0)
                    } else {
                        f64::INFINITY
                    };
                    launch!(
                        running_update_kernel::<F, F::C>,
                        x,
                        channels,
                        arg(&batch_mean, channels),
                        arg(&batch_var, channels),
                        arg(mean, channels),
                        arg(var, channels),
                        channels,
                        F::C::from_f64(momentum),
                        F::C::from_f64(correction),
                    );
                }
                launch!(
                    scale_shift_kernel::<F, F::C, F::C>,
                    x,
                    channels,
                    arg(&batch_mean, channels),
                    arg(&batch_var, channels),
                    arg(w, w_len),
                    arg(b, b_len),
                    arg(&affine, 2 * channels),
                    channels,
                    eps,
                    weight.is_some(),
                    bias.is_some(),
                );
            }
            Statistics::Running { mean, var } => {
                launch!(
                    scale_shift_kernel::<F, F, F::C>,
                    x,
                    channels,
                    arg(mean, channels),
                    arg(var, channels),
                    arg(w, w_len),
                    arg(b, b_len),
                    arg(&affine, 2 * channels),
                    channels,
                    eps,
                    weight.is_some(),
                    bias.is_some(),
                );
            }
        }
        let len = layout.len();
        if len > 0 {
            launch!(
                apply_kernel::<F, F::C>,
                x,
                len,
                arg(x, len),
                arg(&affine, 2 * channels),
                arg(y, len),
                channels,
                layout.inner.max(1),
            );
        }
    }
}

/// PyTorch's `F.layer_norm` over rows of `inner` elements (the normalised shape's size), with an optional
/// element-wise weight and bias of `inner` elements, in a new buffer.
pub fn layer_norm(
    dtype: FloatType,
    x: &GpuBuffer,
    inner: usize,
    weight: Option<&GpuBuffer>,
    bias: Option<&GpuBuffer>,
    eps: f64,
) -> Result<GpuBuffer> {
    let op = "layer_norm";
    x.device().check_dtype(op, dtype)?;
    let len = elements(op, x, dtype)?;
    if inner == 0 || !len.is_multiple_of(inner) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{len} elements are not rows of {inner}"),
        });
    }
    let mut operands = Vec::new();
    for (b, name) in [(weight, "weight"), (bias, "bias")] {
        operands.extend(b.map(|b| (b, inner, name)));
    }
    check_operands(op, dtype, x, &operands)?;
    let y = GpuBuffer::uninit(x.device(), x.len());
    let rows = len / inner;
    if rows == 0 {
        return Ok(y);
    }
    with_float_type!(dtype, F => launch_layer_norm::<F>(x, &y, rows, inner, [weight, bias], eps));
    Ok(y)
}

fn launch_layer_norm<F: Compute>(
    x: &GpuBuffer,
    y: &GpuBuffer,
    rows: usize,
    inner: usize,
    [weight, bias]: [Option<&GpuBuffer>; 2],
    eps: f64,
) {
    let len = rows * inner;
    let (w, b) = (weight.unwrap_or(x), bias.unwrap_or(x));
    let (w_len, b_len) = (
        if weight.is_some() { inner } else { 1 },
        if bias.is_some() { inner } else { 1 },
    );
    let eps = F::C::from_f64(eps);
    // SAFETY: `x` and `y` hold `rows·inner` elements of `F`, weight and bias `inner` (checked by `layer_norm`)
    // and are read only when present; cube `r` touches row `r < rows` only; the statistics (`rows` of `F::C`
    // each) are allocated here, `inner ≥ 1` (checked), and the element-wise kernel guards its index.
    unsafe {
        if inner <= moments::SLICE {
            launch!(
                layer_norm_kernel::<F, F::C>,
                x,
                rows * CUBE_SIZE as usize,
                arg(x, len),
                arg(w, w_len),
                arg(b, b_len),
                arg(y, len),
                rows,
                inner,
                eps,
                weight.is_some(),
                bias.is_some(),
            )
        } else {
            let c_size = size_of::<F::C>();
            let (mean, var) = (
                GpuBuffer::uninit(x.device(), rows * c_size),
                GpuBuffer::uninit(x.device(), rows * c_size),
            );
            let at = Channels {
                channels: rows,
                inner,
                count: inner,
                rows: true,
            };
            moments::<F>(x, at, &mean, &var);
            launch!(
                layer_norm_apply_kernel::<F, F::C>,
                x,
                len,
                arg(x, len),
                arg(&mean, rows),
                arg(&var, rows),
                arg(w, w_len),
                arg(b, b_len),
                arg(y, len),
                inner,
                eps,
                weight.is_some(),
                bias.is_some(),
            )
        }
    }
}
