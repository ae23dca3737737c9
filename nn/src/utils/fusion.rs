//! PyTorch's `torch.nn.utils.fusion`: a convolution or linear layer followed by a batch norm, in eval, folded
//! into one layer of the first kind. With `s = γ / √(running_var + ε)`, the fused weight is the weight scaled by
//! `s` per output channel and the fused bias is `(bias − running_mean)·s + β`, computed with PyTorch's operations
//! in PyTorch's order, in the tensors' dtype and on their device.
//!
//! ```
//! use nn::functional::Conv2dOptions;
//! use nn::prelude::*;
//! use nn::utils::fuse_conv_bn_eval;
//! let mut conv = Conv2d::new(3, 8, [3, 3], Conv2dOptions::default(), false).unwrap();
//! let mut bn = BatchNorm2d::new(8);
//! bn.running_var = Some(Tensor::full([8], 4.0, DType::F32));
//! conv.eval();
//! bn.eval();
//! let fused = fuse_conv_bn_eval(&conv, &bn).unwrap();
//! let x = Tensor::randn([1, 3, 5, 5], DType::F32);
//! let want = bn.forward(conv.forward(x.clone()).unwrap()).unwrap().to_vec_f64().unwrap();
//! let got = fused.forward(x).unwrap().to_vec_f64().unwrap();
//! assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-5));
//! assert!(fused.bias.is_some());
//! ```

use crate::layers::{BatchNorm1d, BatchNorm2d, Conv2d, Linear};
use crate::{Error, Module, Param, Result, Tensor};

/// A batch norm layer ([`BatchNorm1d`], [`BatchNorm2d`]), as the fusions read it: its running statistics,
/// `eps` and affine parameters.
///
/// ```
/// use nn::prelude::*;
/// use nn::utils::BatchNorm;
/// let bn = BatchNorm1d::with_options(3, 1e-3, Some(0.1), false, true);
/// assert_eq!((bn.num_features(), bn.eps()), (3, 1e-3));
/// assert!(bn.affine_params().0.is_none() && bn.running_stats().is_some());
/// ```
pub trait BatchNorm: Module {
    /// `(running_mean, running_var)`, when the layer tracks them.
    fn running_stats(&self) -> Option<(&Tensor, &Tensor)>;
    /// The `eps` added to the variance.
    fn eps(&self) -> f64;
    /// `(weight, bias)`: `γ` and `β`, when the layer is affine.
    fn affine_params(&self) -> (Option<&Param>, Option<&Param>);
    /// The number of features (channels) it normalises.
    fn num_features(&self) -> usize;
}

macro_rules! batch_norm {
    ($($t:ty),*) => {$(
        impl BatchNorm for $t {
            fn running_stats(&self) -> Option<(&Tensor, &Tensor)> {
                self.running_mean.as_ref().zip(self.running_var.as_ref())
            }
            fn eps(&self) -> f64 {
                self.eps
            }
            fn affine_params(&self) -> (Option<&Param>, Option<&Param>) {
                (self.weight.as_ref(), self.bias.as_ref())
            }
            fn num_features(&self) -> usize {
                self.num_features
            }
        }
    )*};
}
batch_norm!(BatchNorm1d, BatchNorm2d);

/// PyTorch's `fuse_conv_bn_eval(conv, bn)`: a new convolution computing `bn(conv(x))` of the two layers in
/// eval, with `conv`'s configuration, mode and hooks (PyTorch deep-copies `conv`) and a bias even where `conv`
/// had none (of `out_channels` values also where `bn` has one feature). An error if either layer is training
/// ("Fusion only for eval!"), if `bn` keeps no running statistics, or if its features are neither `conv`'s
/// output channels nor 1.
pub fn fuse_conv_bn_eval(conv: &Conv2d, bn: &impl BatchNorm) -> Result<Conv2d> {
    const OP: &str = "fuse_conv_bn_eval";
    let (rm, rv) = eval_stats(OP, conv, bn, conv.out_channels, "conv.out_channels")?;
    let (w, b) = bn.affine_params();
    let (weight, bias) = fuse_conv_bn_weights(
        &conv.weight.data(),
        conv.bias.as_ref().map(Param::data).as_ref(),
        rm,
        rv,
        bn.eps(),
        w.map(Param::data).as_ref(),
        b.map(Param::data).as_ref(),
        false,
    )?;
    Ok(conv.with_params(weight, Some(per_output(bias, conv.out_channels)?)))
}

/// PyTorch's `fuse_conv_bn_weights`: the fused convolution's `(weight, bias)` as new parameters, which require
/// gradients where `conv_w` and `conv_b` do (a missing `conv_b`, taken as zeros, does not). `transpose` scales
/// the weight's second dimension instead of its first (a transposed convolution's output channels). A
/// missing `bn_w` counts as ones and a missing `bn_b` as zeros. The weight keeps `conv_w`'s dtype and the bias
/// `conv_b`'s (`conv_w`'s without one).
///
/// ```
/// use nn::{DType, Tensor};
/// let w = Tensor::ones([2, 1, 1, 1], DType::F32);
/// let (rm, rv) = (Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap(), Tensor::from_vec(vec![4.0f32, 0.25], [2]).unwrap());
/// let (fw, fb) = nn::utils::fuse_conv_bn_weights(&w, None, &rm, &rv, 0.0, None, None, false).unwrap();
/// assert_eq!(fw.data().to_vec_f64().unwrap(), [0.5, 2.0]);
/// assert_eq!(fb.data().to_vec_f64().unwrap(), [-0.5, -4.0]);
/// ```
#[allow(clippy::too_many_arguments)] // PyTorch's signature, argument for argument.
pub fn fuse_conv_bn_weights(
    conv_w: &Tensor,
    conv_b: Option<&Tensor>,
    bn_rm: &Tensor,
    bn_rv: &Tensor,
    bn_eps: f64,
    bn_w: Option<&Tensor>,
    bn_b: Option<&Tensor>,
    transpose: bool,
) -> Result<(Param, Param)> {
    let _no_grad = crate::no_grad();
    if conv_w.rank() < 2 {
        return Err(Error::invalid(
            "fuse_conv_bn_weights",
            format!("conv_w must have at least 2 dimensions (got shape {})", conv_w.shape()),
        ));
    }
    let (weight_dtype, bias_dtype) = (conv_w.dtype(), conv_b.map_or(conv_w.dtype(), Tensor::dtype));
    let conv_b = conv_b.cloned().map_or_else(|| bn_rm.zeros_like(), Ok)?;
    let bn_w = bn_w.cloned().map_or_else(|| bn_rm.ones_like(), Ok)?;
    let bn_b = bn_b.cloned().map_or_else(|| bn_rm.zeros_like(), Ok)?;
    let var_rsqrt = bn_rv.add_scalar(bn_eps)?.sqrt()?.recip()?;
    let mut shape = vec![1; conv_w.rank()];
    shape[usize::from(transpose)] = bn_w.numel();
    let scale = bn_w.mul(&var_rsqrt)?.reshape(shape.as_slice())?;
    let weight = conv_w.mul(&scale)?.to_dtype(weight_dtype)?;
    let bias = conv_b
        .sub(bn_rm)?
        .mul(&var_rsqrt)?
        .mul(&bn_w)?
        .add(&bn_b)?
        .to_dtype(bias_dtype)?;
    Ok((
        Param::with_requires_grad(weight, conv_w.requires_grad()),
        Param::with_requires_grad(bias, conv_b.requires_grad()),
    ))
}

/// PyTorch's `fuse_linear_bn_eval(linear, bn)`: a new linear layer computing `bn(linear(x))` of the two layers
/// in eval, with `linear`'s configuration, mode and hooks and a bias even where `linear` had none (of
/// `out_features` values also where `bn` has one feature, where PyTorch's has one). An error if either layer
/// is training ("Fusion only for eval!"), if `bn` keeps no running statistics, or if its features are neither
/// `linear.out_features` nor 1. A non-affine `bn` counts as `γ = 1`, `β = 0` (PyTorch
/// fails on it with a `TypeError`).
///
/// ```
/// use nn::prelude::*;
/// let (mut fc, mut bn) = (Linear::new(4, 3, true), BatchNorm1d::new(3));
/// bn.running_mean = Some(Tensor::from_vec(vec![0.5f32, -1.0, 2.0], [3]).unwrap());
/// assert!(nn::utils::fuse_linear_bn_eval(&fc, &bn).is_err()); // both still training
/// fc.eval();
/// bn.eval();
/// let fused = nn::utils::fuse_linear_bn_eval(&fc, &bn).unwrap();
/// let x = Tensor::randn([2, 4], DType::F32);
/// let want = bn.forward(fc.forward(x.clone()).unwrap()).unwrap().to_vec_f64().unwrap();
/// let got = fused.forward(x).unwrap().to_vec_f64().unwrap();
/// assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-5));
/// ```
pub fn fuse_linear_bn_eval(linear: &Linear, bn: &impl BatchNorm) -> Result<Linear> {
    const OP: &str = "fuse_linear_bn_eval";
    let (rm, rv) = eval_stats(OP, linear, bn, linear.out_features, "linear.out_features")?;
    let (w, b) = bn.affine_params();
    let bn_w = w.map_or_else(|| rm.ones_like(), |w| Ok(w.data()))?;
    let bn_b = b.map_or_else(|| rm.zeros_like(), |b| Ok(b.data()))?;
    let (weight, bias) = fuse_linear_bn_weights(
        &linear.weight.data(),
        linear.bias.as_ref().map(Param::data).as_ref(),
        rm,
        rv,
        bn.eps(),
        &bn_w,
        &bn_b,
    )?;
    Ok(linear.with_params(weight, Some(per_output(bias, linear.out_features)?)))
}

/// The fused bias with one value per output: a batch norm of one feature gives a bias of one element, which
/// PyTorch keeps as it is (its `linear` broadcasts it; its `conv2d` refuses it); nn's layers take a bias of
/// their outputs' size, so the value is repeated to it.
fn per_output(bias: Param, outputs: usize) -> Result<Param> {
    if bias.numel() == outputs {
        return Ok(bias);
    }
    let _no_grad = crate::no_grad();
    let repeated = bias.data().expand(&[outputs as isize])?;
    Ok(Param::with_requires_grad(repeated, bias.requires_grad()))
}

/// PyTorch's `fuse_linear_bn_weights`: the fused linear layer's `(weight, bias)` as new parameters, which
/// require gradients where `linear_w` and `linear_b` do (a missing `linear_b`, taken as zeros, does not). The
/// weight keeps `linear_w`'s dtype and the bias `linear_b`'s (`linear_w`'s without one).
///
/// ```
/// use nn::{DType, Tensor};
/// let w = Tensor::ones([2, 3], DType::F32);
/// let (rm, rv) = (Tensor::from_vec(vec![1.0f32, 0.0], [2]).unwrap(), Tensor::from_vec(vec![0.25f32, 4.0], [2]).unwrap());
/// let (g, b) = (Tensor::ones([2], DType::F32), Tensor::zeros([2], DType::F32));
/// let (fw, fb) = nn::utils::fuse_linear_bn_weights(&w, None, &rm, &rv, 0.0, &g, &b).unwrap();
/// assert_eq!(fw.data().to_vec_f64().unwrap(), [2.0, 2.0, 2.0, 0.5, 0.5, 0.5]);
/// assert_eq!(fb.data().to_vec_f64().unwrap(), [-2.0, 0.0]);
/// ```
pub fn fuse_linear_bn_weights(
    linear_w: &Tensor,
    linear_b: Option<&Tensor>,
    bn_rm: &Tensor,
    bn_rv: &Tensor,
    bn_eps: f64,
    bn_w: &Tensor,
    bn_b: &Tensor,
) -> Result<(Param, Param)> {
    let _no_grad = crate::no_grad();
    let (weight_dtype, bias_dtype) = (linear_w.dtype(), linear_b.map_or(linear_w.dtype(), Tensor::dtype));
    let linear_b = linear_b.cloned().map_or_else(|| bn_rm.zeros_like(), Ok)?;
    let scale = bn_w.mul(&bn_rv.add_scalar(bn_eps)?.sqrt()?.recip()?)?;
    let weight = linear_w.mul(&scale.unsqueeze(-1)?.to_dtype(weight_dtype)?)?;
    let bias = linear_b.sub(bn_rm)?.mul(&scale)?.add(bn_b)?.to_dtype(bias_dtype)?;
    Ok((
        Param::with_requires_grad(weight, linear_w.requires_grad()),
        Param::with_requires_grad(bias, linear_b.requires_grad()),
    ))
}

/// `bn`'s running statistics, after the checks both fusions make: both layers in eval, statistics kept, and
/// `bn`'s features `channels` (the first layer's outputs, named `what`) or 1.
fn eval_stats<'a>(
    op: &'static str,
    layer: &impl Module,
    bn: &'a impl BatchNorm,
    channels: usize,
    what: &str,
) -> Result<(&'a Tensor, &'a Tensor)> {
    if layer.is_training() || bn.is_training() {
        return Err(Error::invalid(
            op,
            "Fusion only for eval! Both layers must be in eval mode (call `.eval()` on them first)",
        ));
    }
    let features = bn.num_features();
    if features != channels && features != 1 {
        return Err(Error::invalid(
            op,
            format!(
                "To fuse, {what} ({channels}) must equal bn.num_features ({features}) or bn.num_features must be 1"
            ),
        ));
    }
    bn.running_stats().ok_or_else(|| {
        Error::invalid(
            op,
            "the batch norm keeps no running statistics (track_running_stats=False): nothing to fold",
        )
    })
}
