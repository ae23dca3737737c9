//! Batch and layer normalisation, on the CPU accumulated in `f64` (PyTorch accumulates `f32` in `double` on the
//! CPU), on a device with the norm kernels (batch norm's running statistics updated there).

pub(crate) mod group_norm;
mod host_group_norm;
mod host_layer_norm;

use kernels::GpuDevice;
use kernels::norm::{Layout, Statistics};
use smallvec::SmallVec;

use super::arith::Affine;
use super::float::{Float, with_float_type};
use super::map::multiversion;
use super::{Op, Outputs, probe_tensor, run, same_dtype, with_optional};
use crate::tensor::autograd::{Backward, Saved};
use crate::{DType, Error, Result, Shape, Tensor};
use host_layer_norm::ParamSums;

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
                "Expected more than 1 value per channel when training, got input size torch.Size({})",
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
    Ok(run(&norm, &with_optional(&[x], &[weight, bias, stats[0], stats[1]]))?.y)
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

/// What [`BatchNorm`] returns: its output and, from the CPU in training, the batch's statistics it normalised
/// by (the mean and the biased variance per channel, `f64`), which its backward reads instead of recomputing.
struct Normalized {
    y: Tensor,
    batch_stats: Option<(Tensor, Tensor)>,
}

impl Outputs for Normalized {
    fn tensors(&self) -> SmallVec<[&Tensor; 3]> {
        SmallVec::from_slice(&[&self.y])
    }
    fn tensors_mut(&mut self) -> SmallVec<[&mut Tensor; 3]> {
        SmallVec::from_iter([&mut self.y])
    }
}

/// The mean and the biased variance of each channel of `x` read as `(n, c, inner)`, summed in `f64`: over the
/// images first, position by position (a vectorised pass), then over each channel's positions.
fn channel_stats<T: Float>(x: &[T], n: usize, c: usize, inner: usize) -> (Vec<f64>, Vec<f64>) {
    let count = (n * inner) as f64;
    if c * inner == 0 {
        return (vec![0.0 / count; c], vec![0.0 / count; c]);
    }
    let mut acc = vec![0.0f64; c * inner];
    add_images(x, &mut acc);
    let mean: Vec<f64> = per_channel(&acc, inner).map(|s| s / count).collect();
    let centre = spread(&mean, inner);
    acc.fill(0.0);
    add_squares(x, &centre, &mut acc);
    let var = per_channel(&acc, inner).map(|s| s / count).collect();
    (mean, var)
}

/// The sum of each channel's `inner` positions of `acc` (`(c, inner)`).
fn per_channel(acc: &[f64], inner: usize) -> impl Iterator<Item = f64> + '_ {
    acc.chunks(inner).map(|p| p.iter().sum::<f64>())
}

/// Each channel's value repeated over its `inner` positions: `(c, inner)`.
fn spread<V: Copy>(per_channel: &[V], inner: usize) -> Vec<V> {
    per_channel
        .iter()
        .flat_map(|&v| std::iter::repeat_n(v, inner))
        .collect()
}

multiversion! {
    fn add_images<T: Float>(x: &[T], acc: &mut [f64]) {
        for image in x.chunks(acc.len()) {
            for (a, v) in acc.iter_mut().zip(image) {
                *a += v.f64();
            }
        }
    }
}

multiversion! {
    fn add_squares<T: Float>(x: &[T], centre: &[f64], acc: &mut [f64]) {
        for image in x.chunks(acc.len()) {
            for ((a, v), m) in acc.iter_mut().zip(image).zip(centre) {
                let d = v.f64() - m;
                *a += d * d;
            }
        }
    }
}

multiversion! {
    fn add_gradient_sums<T: Float>(x: &[T], dy: &[T], centre: &[f64], sum_dy: &mut [f64], sum_dy_xc: &mut [f64]) {
        let image = sum_dy.len();
        for (xi, gi) in x.chunks(image).zip(dy.chunks(image)) {
            let sums = sum_dy.iter_mut().zip(sum_dy_xc.iter_mut());
            for (((a, b), (x, g)), m) in sums.zip(xi.iter().zip(gi)).zip(centre) {
                *a += g.f64();
                *b += g.f64() * (x.f64() - m);
            }
        }
    }
}

// `dx = k · dy + slope · (x − centre) + shift` element by element, with the four coefficients given for one
// image's positions (`(c, inner)`) and `x`, `dy` and `dx` whole images of that size.
multiversion! {
    fn normalized_gradient<T: Float>(x: &[T], dy: &[T], coefficients: [&[T]; 4], dx: &mut [T]) {
        let [k, slope, shift, centre] = coefficients;
        let image = k.len();
        if image == 0 {
            return;
        }
        for ((xi, gi), di) in x.chunks(image).zip(dy.chunks(image)).zip(dx.chunks_mut(image)) {
            let coefficients = k.iter().zip(slope).zip(shift.iter().zip(centre));
            for (((d, &x), &g), ((&k, &slope), (&shift, &m))) in di.iter_mut().zip(xi).zip(gi).zip(coefficients) {
                *d = k * g + slope * (x - m) + shift;
            }
        }
    }
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
    type Output = Normalized;
    const NAME: &'static str = "batch_norm";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Normalized> {
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
        let (mean, var) = if self.training {
            let (mean, var) = with_float_type!(x.dtype(), T => {
                channel_stats(&x.float_ref::<T>(Self::NAME)?, n, c, inner)
            });
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
        // y = x·scale + shift per channel, in x's own float type (as PyTorch's CPU kernel computes it).
        let affine: Vec<Affine> = (0..c)
            .map(|ch| {
                let scale = w.as_ref().map_or(1.0, |w| w[ch]) / (var[ch] + self.eps).sqrt();
                let shift = b.as_ref().map_or(0.0, |b| b[ch]) - mean[ch] * scale;
                Affine::new(Self::NAME, scale, shift)
            })
            .collect();
        let y = x.map_float_blocks(Self::NAME, inner, &affine)?;
        let batch_stats = match self.training {
            true => Some((Tensor::from_vec(mean, [c])?, Tensor::from_vec(var, [c])?)),
            false => None,
        };
        Ok(Normalized { y, batch_stats })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Normalized> {
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
        let y = x.map_gpu(op, |dtype, x| {
            kernels::norm::batch_norm(dtype, x, layout, stats, weight.as_ref(), bias.as_ref(), self.eps)
        })?;
        Ok(Normalized { y, batch_stats: None })
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

    fn gradient(&self, inputs: &[&Tensor], output: &Normalized) -> Option<Box<dyn Backward>> {
        let ops = self.operands(inputs);
        let x = Saved::new(ops.x);
        let weight = ops.weight.map(Saved::new);
        // In evaluation the running statistics are constants of the forward; in training they are written,
        // and the batch's own statistics are the forward's (the CPU's), or recomputed from x (a device's).
        let fixed = match (self.training, &ops.running) {
            (false, Some(r)) => Some((Saved::new(r.mean), Saved::new(r.var))),
            _ => None,
        };
        let batch_stats = output.batch_stats.clone();
        let (n_inputs, eps, op) = (inputs.len(), self.eps, "batch_norm");
        let (has_weight, has_bias) = (self.weight, self.bias);
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let x = x.get(op)?;
            let w = weight.as_ref().map(|w| w.get(op)).transpose()?;
            let mut operands = vec![x, &g[0]];
            operands.extend(w);
            let stats = match (&fixed, &batch_stats) {
                (Some((m, v)), _) => {
                    operands.extend([m.get(op)?, v.get(op)?]);
                    Stats::Fixed
                }
                (None, Some((m, v))) => {
                    operands.extend([m, v]);
                    Stats::Batch
                }
                (None, None) => Stats::Recompute,
            };
            let grad = BatchNormGrad {
                weight: w.is_some(),
                stats,
                eps,
            };
            let (dx, dw, db) = run(&grad, &operands)?;
            let mut grads = vec![needs[0].then_some(dx)];
            if has_weight {
                grads.push(Some(dw));
            }
            if has_bias {
                grads.push(Some(db));
            }
            grads.resize(n_inputs, None);
            Ok(grads)
        }))
    }
}

/// A batch norm's gradients `(dx, dweight, dbias)` from inputs `[x, dy]`, then the weight when it has one,
/// then the statistics the forward normalised by, as [`Stats`] says. On the CPU one fused pass (per-channel
/// sums in `f64`, then `dx` as an affine function of `dy` and `x` per channel); on a device the same formulas
/// composed of tensor ops ([`Normalization`]).
struct BatchNormGrad {
    weight: bool,
    stats: Stats,
    eps: f64,
}

/// Which statistics a batch norm's forward normalised by, for [`BatchNormGrad`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stats {
    /// The running mean and variance (evaluation), operands: constants of the forward.
    Fixed,
    /// The batch's, as the forward computed them (`f64` mean and biased variance per channel), operands.
    Batch,
    /// The batch's, computed again from `x` (no operands).
    Recompute,
}

/// [`BatchNormGrad`]'s operands: `x`, `dy`, the weight, the statistics' mean and variance.
type GradOperands<'a> = (
    &'a Tensor,
    &'a Tensor,
    Option<&'a Tensor>,
    Option<(&'a Tensor, &'a Tensor)>,
);

impl BatchNormGrad {
    /// `(x, dy, weight, (mean, variance))`.
    fn operands<'a>(&self, inputs: &[&'a Tensor]) -> GradOperands<'a> {
        let mut rest = inputs[2..].iter().copied();
        let weight = if self.weight { rest.next() } else { None };
        let stats = match (self.stats, rest.next(), rest.next()) {
            (Stats::Fixed | Stats::Batch, Some(mean), Some(var)) => Some((mean, var)),
            _ => None,
        };
        (inputs[0], inputs[1], weight, stats)
    }
}

impl Op for BatchNormGrad {
    type Output = (Tensor, Tensor, Tensor);
    const NAME: &'static str = "batch_norm_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<(Tensor, Tensor, Tensor)> {
        let (x, dy, weight, given) = self.operands(inputs);
        let (n, c) = (x.shape()[0], x.shape()[1]);
        let inner: usize = x.shape()[2..].iter().product();
        let (dtype, op) = (x.dtype(), Self::NAME);
        let per_channel = Shape::from([c]);
        with_float_type!(dtype, T => {
            let (xs, gs) = (x.float_ref::<T>(op)?, dy.float_ref::<T>(op)?);
            let w = weight.map(Tensor::to_vec_f64).transpose()?;
            let stats = match given {
                Some((m, v)) => (m.to_vec_f64()?, v.to_vec_f64()?),
                None => channel_stats(&xs, n, c, inner),
            };
            let fixed = self.stats == Stats::Fixed;
            let (dx, dw, db) = batch_norm_grads::<T>(&xs, &gs, w.as_deref(), stats, fixed, [n, c, inner], self.eps);
            Ok((
                Tensor::from_computed(dx, x.shape().clone(), dtype)?,
                Tensor::from_computed(dw, per_channel.clone(), dtype)?,
                Tensor::from_computed(db, per_channel, dtype)?,
            ))
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<(Tensor, Tensor, Tensor)> {
        let (x, dy, weight, given) = self.operands(inputs);
        // A device's forward keeps no batch statistics: only the running ones are given here.
        let fixed = given.filter(|_| self.stats == Stats::Fixed);
        let rank = x.rank();
        let mut around = vec![1; rank];
        around[1] = x.shape()[1];
        let dims: Vec<isize> = (0..rank as isize).filter(|&d| d != 1).collect();
        let norm = Normalization {
            dims: &dims,
            param_dims: &dims,
            around: &around.into(),
            param: &[x.shape()[1]].into(),
            eps: self.eps,
        };
        norm.grads(x, dy, weight, fixed)
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let x = probe_tensor(&[3, 4, 5], 0.0, dtype)?;
        let dy = probe_tensor(&[3, 4, 5], 1.0, dtype)?;
        let w = probe_tensor(&[4], 2.0, dtype)?;
        let (mean, var) = (
            probe_tensor(&[4], 3.0, dtype)?,
            probe_tensor(&[4], 4.0, dtype)?.affine(0.3, 1.0)?,
        );
        let case = |weight, stats| BatchNormGrad {
            weight,
            stats,
            eps: 1e-5,
        };
        Ok(vec![
            (case(true, Stats::Recompute), vec![x.clone(), dy.clone(), w]),
            (case(false, Stats::Fixed), vec![x, dy, mean, var]),
        ])
    }
}

/// The host half of [`BatchNormGrad`] on `x` and `dy` read as `[n, c, inner]`, with the statistics the
/// forward normalised by (`(mean, biased variance)` per channel): `dbias = Σ dy`, `dweight = Σ dy · x̂` and
/// `dx = w · rstd · (dy − Σ dy / m − x̂ · Σ dy · x̂ / m)` (`dx = w · rstd · dy` when the statistics are fixed),
/// with `x̂ = (x − mean) · rstd`, `rstd = 1 / √(var + eps)` and `m = n · inner`.
fn batch_norm_grads<T: Float>(
    x: &[T],
    dy: &[T],
    weight: Option<&[f64]>,
    (mean, var): (Vec<f64>, Vec<f64>),
    fixed: bool,
    [_, c, inner]: [usize; 3],
    eps: f64,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let rstd: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
    // Σ dy and Σ dy · (x − mean) per channel: over the images position by position, then per channel.
    let (mut sum_dy, mut sum_dy_xc) = (vec![0.0f64; c], vec![0.0f64; c]);
    if inner > 0 && c > 0 {
        let (mut acc_dy, mut acc_dy_xc) = (vec![0.0f64; c * inner], vec![0.0f64; c * inner]);
        add_gradient_sums(x, dy, &spread(&mean, inner), &mut acc_dy, &mut acc_dy_xc);
        sum_dy = per_channel(&acc_dy, inner).collect();
        sum_dy_xc = per_channel(&acc_dy_xc, inner).collect();
    }
    let count = (x.len() / c.max(1)) as f64;
    // dx = k · dy + slope · (x − mean) + shift, per channel.
    let coefficients: Vec<[T; 4]> = (0..c)
        .map(|ch| {
            let k = weight.map_or(1.0, |w| w[ch]) * rstd[ch];
            let (slope, shift) = if fixed {
                (0.0, 0.0)
            } else {
                (
                    -k * rstd[ch] * rstd[ch] * sum_dy_xc[ch] / count,
                    -k * sum_dy[ch] / count,
                )
            };
            [T::of(k), T::of(slope), T::of(shift), T::of(mean[ch])]
        })
        .collect();
    // Spread over an image's positions (as the sums above), so that the loop runs over whole images: a
    // channel's positions alone are too few for vectors in small maps (9 in the reference model's 3 × 3).
    let column = |i: usize| spread(&coefficients.iter().map(|cs| cs[i]).collect::<Vec<T>>(), inner);
    let [k, slope, shift, centre] = [0, 1, 2, 3].map(column);
    let mut dx = vec![T::ZERO; x.len()];
    normalized_gradient(x, dy, [&k, &slope, &shift, &centre], &mut dx);
    let dweight = (0..c).map(|ch| T::of(sum_dy_xc[ch] * rstd[ch])).collect();
    let dbias = sum_dy.iter().map(|&s| T::of(s)).collect();
    (dx, dweight, dbias)
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
                "Given normalized_shape={normalized_shape:?}, expected input with shape [*{}], but got input of \
                 size{}",
                normalized_shape.iter().map(|d| format!(", {d}")).collect::<String>(),
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
            let out = host_layer_norm::forward::<T>(&xs, inner, ws.as_deref(), bs.as_deref(), self.eps);
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

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (x, weight, _, _) = self.operands(inputs);
        let grad = LayerNormGrad {
            dims: self.dims,
            weight: self.weight,
            params: self.weight || self.bias,
            eps: self.eps,
        };
        Some(affine_backward(Self::NAME, x, weight, self.bias, grad))
    }
}

/// The backward of a normalisation with an optional weight and bias, inputs `[x, weight?, bias?]`: it runs
/// `grad`, a gradient op of inputs `[x, dy, weight?]` returning `[dx]`, or `[dx, dweight, dbias]` when either
/// parameter is present, and hands out the gradients of the inputs present.
pub(super) fn affine_backward<G>(
    op: &'static str,
    x: &Tensor,
    weight: Option<&Tensor>,
    has_bias: bool,
    grad: G,
) -> Box<dyn Backward>
where
    G: Op<Output = Vec<Tensor>> + Send + Sync + 'static,
{
    let (x, weight) = (Saved::new(x), weight.map(Saved::new));
    Box::new(move |g: &[Tensor], needs: &[bool]| {
        let w = weight.as_ref().map(|w| w.get(op)).transpose()?;
        let has_weight = w.is_some();
        let mut operands = vec![x.get(op)?, &g[0]];
        operands.extend(w);
        let mut computed = run(&grad, &operands)?.into_iter();
        let mut grads = vec![computed.next().filter(|_| needs[0])];
        let (dw, db) = (computed.next(), computed.next());
        if has_weight {
            grads.push(dw);
        }
        if has_bias {
            grads.push(db);
        }
        Ok(grads)
    })
}

/// A layer norm's gradients `(dx, dweight, dbias)` over the last `dims` dimensions from inputs `[x, dy]`, then
/// the weight when it has one; the parameters' gradients only when `params`. On the CPU the fused loops of
/// `host_layer_norm.rs`; on a device the same formulas composed of tensor ops ([`Normalization`]).
pub(super) struct LayerNormGrad {
    pub dims: usize,
    pub weight: bool,
    pub params: bool,
    pub eps: f64,
}

impl Op for LayerNormGrad {
    /// `[dx]`, or `[dx, dweight, dbias]` with `params`.
    type Output = Vec<Tensor>;
    const NAME: &'static str = "layer_norm_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Self::Output> {
        let (x, dy, op) = (inputs[0], inputs[1], Self::NAME);
        let weight = self.weight.then(|| inputs[2]);
        let around: Shape = x.shape()[x.rank() - self.dims..].iter().copied().collect();
        let inner = around.numel();
        with_float_type!(x.dtype(), T => {
            let (xs, gs) = (x.float_ref::<T>(op)?, dy.float_ref::<T>(op)?);
            let ws = weight.map(|w| w.float_ref::<T>(op)).transpose()?;
            let (dx, sums) = host_layer_norm::backward::<T>(&xs, &gs, inner, ws.as_deref(), self.eps, self.params);
            gradient_tensors(x, dx, sums, &around)
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Self::Output> {
        let (x, dy) = (inputs[0], inputs[1]);
        let weight = self.weight.then(|| inputs[2]);
        let rank = x.rank() as isize;
        let dims: Vec<isize> = (rank - self.dims as isize..rank).collect();
        let rows: Vec<isize> = (0..rank - self.dims as isize).collect();
        let around: Shape = x.shape()[x.rank() - self.dims..].iter().copied().collect();
        let norm = Normalization {
            dims: &dims,
            param_dims: &rows,
            around: &around,
            param: &around,
            eps: self.eps,
        };
        let (dx, dw, db) = norm.grads(x, dy, weight, None)?;
        Ok(if self.params { vec![dx, dw, db] } else { vec![dx] })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let x = probe_tensor(&[3, 2, 7], 0.0, dtype)?;
        let dy = probe_tensor(&[3, 2, 7], 1.0, dtype)?;
        let w = probe_tensor(&[2, 7], 2.0, dtype)?;
        let case = |dims, weight, params| LayerNormGrad {
            dims,
            weight,
            params,
            eps: 1e-5,
        };
        Ok(vec![
            (case(2, true, true), vec![x.clone(), dy.clone(), w]),
            (case(1, false, false), vec![x, dy]),
        ])
    }
}

/// A normalisation's host gradients as tensors: `[dx]` in `x`'s shape and dtype, then with `sums` the weight's
/// and bias' gradients in `param`'s shape, rounded once from `f64`.
pub(super) fn gradient_tensors<T: Float>(
    x: &Tensor,
    dx: Vec<T>,
    sums: Option<ParamSums>,
    param: &Shape,
) -> Result<Vec<Tensor>> {
    let param = |sums: Vec<f64>| {
        Tensor::from_computed(
            sums.into_iter().map(T::of).collect::<Vec<T>>(),
            param.clone(),
            x.dtype(),
        )
    };
    let mut grads = vec![Tensor::from_computed(dx, x.shape().clone(), x.dtype())?];
    if let Some((dw, db)) = sums {
        grads.extend([param(dw)?, param(db)?]);
    }
    Ok(grads)
}

/// The backward of a normalisation `y = (x − μ) / √(σ² + eps) · w + b`, with `μ`, `σ²` the mean and biased
/// variance of `x` over `dims` (or given: running statistics, constants of the forward), and `w`, `b` of shape
/// `around` broadcast over `x`.
struct Normalization<'a> {
    /// The dimensions the statistics are taken over.
    dims: &'a [isize],
    /// The dimensions the affine parameters' gradients sum over.
    param_dims: &'a [isize],
    /// The shape the parameters and statistics broadcast from.
    around: &'a Shape,
    /// The parameters' own shape.
    param: &'a Shape,
    eps: f64,
}

impl Normalization<'_> {
    /// `(dx, dw, db)` from the output gradient `g` (`dw` and `db` in `around`'s shape).
    fn grads(
        &self,
        x: &Tensor,
        g: &Tensor,
        w: Option<&Tensor>,
        fixed: Option<(&Tensor, &Tensor)>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (mean, var) = match fixed {
            Some((m, v)) => (m.reshape(self.around.clone())?, v.reshape(self.around.clone())?),
            None => {
                let mean = x.mean_dims(self.dims, true)?;
                let centered = x.sub(&mean)?;
                let var = centered.mul(&centered)?.mean_dims(self.dims, true)?;
                (mean, var)
            }
        };
        let rstd = var.add_scalar(self.eps)?.sqrt()?.recip()?;
        let xhat = x.sub(&mean)?.mul(&rstd)?;
        let dxhat = match w {
            Some(w) => g.mul(&w.reshape(self.around.clone())?)?,
            None => g.clone(),
        };
        let dx = match fixed {
            Some(_) => dxhat.mul(&rstd)?,
            None => {
                let m1 = dxhat.mean_dims(self.dims, true)?;
                let m2 = dxhat.mul(&xhat)?.mean_dims(self.dims, true)?;
                dxhat.sub(&m1)?.sub(&xhat.mul(&m2)?)?.mul(&rstd)?
            }
        };
        let summed = |t: Tensor| -> Result<Tensor> {
            let t = if self.param_dims.is_empty() {
                t
            } else {
                t.sum_dims(self.param_dims, true)?
            };
            t.reshape(self.param.clone())
        };
        Ok((dx, summed(g.mul(&xhat)?)?, summed(g.clone())?))
    }
}
