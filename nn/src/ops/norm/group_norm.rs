//! The group norm as one op and its backward as another: on the CPU the fused block loops of
//! `host_group_norm.rs`; on a device the layer norm over the `(N, groups, rest)` view with the per-channel scale
//! and shift as broadcast ops (each a device kernel), and its backward the layer norm's with the weight folded
//! into the output gradient.

use kernels::GpuDevice;

use super::host_group_norm::{self, Groups};
use super::{LayerNormGrad, affine_backward, gradient_tensors, layer_norm};
use crate::ops::float::with_float_type;
use crate::ops::{Op, probe_tensor, run, same_dtype, with_optional};
use crate::tensor::autograd::Backward;
use crate::{DType, Result, Shape, Tensor};

/// Runs the group norm of `x` (`(N, C, *)`, its channels in `groups` groups) with the per-channel `weight` and
/// `bias` (`(C,)`, `x`'s dtype): the caller ([`functional::group_norm`](crate::functional::group_norm)) has
/// checked the shapes and dtypes.
pub(crate) fn group_norm(
    x: &Tensor,
    groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let norm = GroupNorm {
        groups,
        weight: weight.is_some(),
        bias: bias.is_some(),
        eps,
    };
    run(&norm, &with_optional(&[x], &[weight, bias]))
}

/// `F.group_norm`; inputs `[x]`, then `weight` and `bias` where present.
struct GroupNorm {
    groups: usize,
    weight: bool,
    bias: bool,
    eps: f64,
}

/// The sizes of `x`'s group norm in `groups` groups.
fn sizes(x: &Tensor, groups: usize) -> Groups {
    Groups {
        channels: x.shape()[1],
        groups,
        positions: x.shape()[2..].iter().product(),
    }
}

/// `x` as `(N, groups, C / groups · positions)`: the view whose rows the device path layer-normalises.
fn grouped(x: &Tensor, groups: usize) -> Result<Tensor> {
    let n = x.shape()[0];
    x.reshape([n, groups, x.numel().checked_div(n * groups).unwrap_or(0)])
}

/// `t` (`(C,)`) shaped to broadcast over `x`'s channels: `(C, 1, …)`.
fn per_channel(t: &Tensor, x: &Tensor) -> Result<Tensor> {
    let mut shape = vec![1; x.rank() - 1];
    shape[0] = x.shape()[1];
    t.reshape(shape)
}

impl GroupNorm {
    /// `(x, weight, bias)`.
    fn operands<'a>(&self, inputs: &[&'a Tensor]) -> (&'a Tensor, Option<&'a Tensor>, Option<&'a Tensor>) {
        let mut rest = inputs[1..].iter().copied();
        let weight = if self.weight { rest.next() } else { None };
        let bias = if self.bias { rest.next() } else { None };
        (inputs[0], weight, bias)
    }
}

impl Op for GroupNorm {
    type Output = Tensor;
    const NAME: &'static str = "group_norm";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, weight, bias) = self.operands(inputs);
        let op = Self::NAME;
        with_float_type!(x.dtype(), T => {
            let xs = x.float_ref::<T>(op)?;
            let ws = weight.map(|w| w.float_ref::<T>(op)).transpose()?;
            let bs = bias.map(|b| b.float_ref::<T>(op)).transpose()?;
            let sizes = sizes(x, self.groups);
            let out = host_group_norm::forward::<T>(&xs, sizes, ws.as_deref(), bs.as_deref(), self.eps);
            Tensor::from_computed(out, x.shape().clone(), x.dtype())
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, weight, bias) = self.operands(inputs);
        same_dtype(Self::NAME, x, &[weight, bias])?;
        // Each step a device op of its own, not recorded: this op's backward is `GroupNormGrad`.
        let _no_grad = crate::no_grad();
        let groups = grouped(x, self.groups)?;
        let row = groups.shape()[2];
        let mut y = layer_norm(&groups, &[row], None, None, self.eps)?.reshape(x.shape().clone())?;
        if let Some(w) = weight {
            y = y.mul(&per_channel(w, x)?)?;
        }
        if let Some(b) = bias {
            y = y.add(&per_channel(b, x)?)?;
        }
        Ok(y)
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let x = probe_tensor(&[3, 4, 5], 0.0, dtype)?;
        let affine = GroupNorm {
            groups: 2,
            weight: true,
            bias: true,
            eps: 1e-5,
        };
        let plain = GroupNorm {
            groups: 4,
            weight: false,
            bias: false,
            eps: 1e-3,
        };
        let (w, b) = (probe_tensor(&[4], 1.0, dtype)?, probe_tensor(&[4], 2.0, dtype)?);
        Ok(vec![(affine, vec![x.clone(), w, b]), (plain, vec![x])])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (x, weight, _) = self.operands(inputs);
        let grad = GroupNormGrad {
            groups: self.groups,
            weight: self.weight,
            params: self.weight || self.bias,
            eps: self.eps,
        };
        Some(affine_backward(Self::NAME, x, weight, self.bias, grad))
    }
}

/// A group norm's gradients `(dx, dweight, dbias)` from inputs `[x, dy]`, then the weight when it has one; the
/// parameters' gradients only when `params`.
struct GroupNormGrad {
    groups: usize,
    weight: bool,
    params: bool,
    eps: f64,
}

impl Op for GroupNormGrad {
    /// `[dx]`, or `[dx, dweight, dbias]` with `params`.
    type Output = Vec<Tensor>;
    const NAME: &'static str = "group_norm_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Self::Output> {
        let (x, dy, op) = (inputs[0], inputs[1], Self::NAME);
        let weight = self.weight.then(|| inputs[2]);
        let sizes = sizes(x, self.groups);
        let per_channel = Shape::from([sizes.channels]);
        with_float_type!(x.dtype(), T => {
            let (xs, gs) = (x.float_ref::<T>(op)?, dy.float_ref::<T>(op)?);
            let ws = weight.map(|w| w.float_ref::<T>(op)).transpose()?;
            let (dx, sums) = host_group_norm::backward::<T>(&xs, &gs, sizes, ws.as_deref(), self.eps, self.params);
            gradient_tensors(x, dx, sums, &per_channel)
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Self::Output> {
        let (x, dy) = (inputs[0], inputs[1]);
        let weight = self.weight.then(|| inputs[2]);
        let _no_grad = crate::no_grad();
        // The input's gradient: the layer norm's over the grouped view, of the output gradient times the weight.
        let scaled = match weight {
            Some(w) => dy.mul(&per_channel(w, x)?)?,
            None => dy.clone(),
        };
        let rows = LayerNormGrad {
            dims: 1,
            weight: false,
            params: false,
            eps: self.eps,
        };
        let groups = grouped(x, self.groups)?;
        let dx = run(&rows, &[&groups, &grouped(&scaled, self.groups)?])?.remove(0);
        let mut grads = vec![dx.reshape(x.shape().clone())?];
        if self.params {
            // Σ dy · x̂ and Σ dy over every dimension but the channels.
            let row = groups.shape()[2];
            let normalised = layer_norm(&groups, &[row], None, None, self.eps)?.reshape(x.shape().clone())?;
            let others: Vec<isize> = (0..x.rank() as isize).filter(|&d| d != 1).collect();
            grads.push(dy.mul(&normalised)?.sum_dims(&others, false)?);
            grads.push(dy.sum_dims(&others, false)?);
        }
        Ok(grads)
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let x = probe_tensor(&[3, 4, 5], 0.0, dtype)?;
        let dy = probe_tensor(&[3, 4, 5], 1.0, dtype)?;
        let w = probe_tensor(&[4], 2.0, dtype)?;
        let case = |groups, weight, params| GroupNormGrad {
            groups,
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
