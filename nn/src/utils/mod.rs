//! PyTorch's `torch.nn.utils`: gradient clipping ([`clip_grad_norm_`], [`clip_grad_value_`]), flattening
//! parameters ([`parameters_to_vector`], [`vector_to_parameters`]) and folding a batch norm into the layer
//! before it for eval ([`fusion`]: [`fuse_conv_bn_eval`], [`fuse_linear_bn_eval`]; in a whole model:
//! [`fuse_modules`]). Each runs under `no_grad`
//! with the tensors' ops, on the parameters' device.

mod fuse_modules;
pub mod fusion;

pub use fuse_modules::fuse_modules;
pub use fusion::{BatchNorm, fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights};

use crate::io::StateDict;
use crate::{Error, Param, Result, Tensor};

/// PyTorch's `torch.nn.modules.utils.consume_prefix_in_state_dict_if_present`: strips `prefix` from every key
/// (and recorded version) that has it, e.g. `DataParallel`'s `module.`; see
/// [`StateDict::consume_prefix_if_present`].
///
/// ```
/// use nn::prelude::*;
/// let mut sd = Linear::new(2, 2, true).state_dict_with_prefix("module.");
/// nn::utils::consume_prefix_in_state_dict_if_present(&mut sd, "module.");
/// let mut fc = Linear::new(2, 2, true);
/// assert!(fc.load_state_dict(&sd, true, false).is_ok());
/// ```
pub fn consume_prefix_in_state_dict_if_present(state_dict: &mut StateDict, prefix: &str) {
    state_dict.consume_prefix_if_present(prefix);
}

/// The `norm_type`-norm of `t`'s elements (`f64::INFINITY`: the largest magnitude), a 0-dimensional tensor.
fn vector_norm(t: &Tensor, norm_type: f64) -> Result<Tensor> {
    let flat = t.abs()?.reshape([t.numel()])?;
    if norm_type == f64::INFINITY {
        if t.numel() == 0 {
            return Tensor::zeros(Vec::<usize>::new(), t.dtype()).to_device(t.device());
        }
        return Ok(flat.max_dim(0, false)?.0);
    }
    if norm_type == 2.0 {
        return flat.mul(&flat)?.sum_all()?.sqrt();
    }
    if norm_type == 1.0 {
        return flat.sum_all();
    }
    flat.pow_scalar(norm_type)?.sum_all()?.pow_scalar(1.0 / norm_type)
}

/// PyTorch's `clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)`: the total norm of the
/// gradients (the norm of their norms), returned as a 0-dimensional tensor; every gradient is multiplied by
/// `min(max_norm / (total + 1e-6), 1)`. With `error_if_nonfinite`, a NaN or infinite total is an error and no
/// gradient changes. Parameters without a gradient are skipped; with none at all the total is 0. It runs where
/// the gradients are (the infinity norm through `max_dim`).
///
/// ```
/// use nn::{Param, Tensor, DType};
/// let p = Param::new(Tensor::zeros([2], DType::F32));
/// p.set_grad(Some(Tensor::from_vec(vec![3.0f32, 4.0], [2])?))?;
/// let total = nn::utils::clip_grad_norm_(&[p.clone()], 1.0, 2.0, false)?;
/// assert_eq!(total.item()?, 5.0);
/// let g = p.grad().unwrap().to_vec::<f32>()?;
/// assert!((g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn clip_grad_norm_(params: &[Param], max_norm: f64, norm_type: f64, error_if_nonfinite: bool) -> Result<Tensor> {
    let _no_grad = crate::no_grad();
    let grads: Vec<Tensor> = params.iter().filter_map(Param::grad).collect();
    if grads.is_empty() {
        return Ok(Tensor::zeros(Vec::<usize>::new(), crate::DType::F32));
    }
    if norm_type.is_nan() || norm_type <= 0.0 {
        return Err(Error::invalid(
            "clip_grad_norm_",
            format!("norm_type is {norm_type}: it must be positive (or infinite)"),
        ));
    }
    let norms = grads
        .iter()
        .map(|g| vector_norm(g, norm_type))
        .collect::<Result<Vec<_>>>()?;
    let total = vector_norm(&Tensor::stack(&norms.iter().collect::<Vec<_>>(), 0)?, norm_type)?;
    let value = total.item()?;
    if error_if_nonfinite && !value.is_finite() {
        return Err(Error::invalid(
            "clip_grad_norm_",
            format!(
                "the total norm of order {norm_type} for gradients from `parameters` is non-finite ({value}), so it \
                 cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, \
                 set `error_if_nonfinite=false`"
            ),
        ));
    }
    // clip_coef = max_norm / (total + 1e-6), clamped at 1, in the gradients' dtype as PyTorch computes it.
    let coef = total
        .add_scalar(1e-6)?
        .recip()?
        .mul_scalar(max_norm)?
        .clamp(f64::NEG_INFINITY, 1.0)?;
    for g in &grads {
        g.mul_(&coef.to_dtype(g.dtype())?.to_device(g.device())?)?;
    }
    Ok(total)
}

/// PyTorch's `clip_grad_value_(parameters, clip_value)`: every gradient element limited to
/// `[-clip_value, clip_value]`.
pub fn clip_grad_value_(params: &[Param], clip_value: f64) -> Result<()> {
    let _no_grad = crate::no_grad();
    for g in params.iter().filter_map(Param::grad) {
        g.copy_(&g.clamp(-clip_value, clip_value)?)?;
    }
    Ok(())
}

/// PyTorch's `parameters_to_vector`: every parameter flattened and concatenated, in order, into one 1-D tensor
/// (a copy). The parameters must share a device and dtype.
pub fn parameters_to_vector(params: &[Param]) -> Result<Tensor> {
    let _no_grad = crate::no_grad();
    let flat = params
        .iter()
        .map(|p| p.data().reshape([p.numel()]))
        .collect::<Result<Vec<_>>>()?;
    if flat.is_empty() {
        return Err(Error::invalid("parameters_to_vector", "no parameters"));
    }
    Tensor::cat(&flat.iter().collect::<Vec<_>>(), 0)
}

/// PyTorch's `vector_to_parameters`: slices of the 1-D `vector`, in order, become the parameters' data (each
/// reshaped to its parameter); a vector of another length is an error and changes nothing.
pub fn vector_to_parameters(vector: &Tensor, params: &[Param]) -> Result<()> {
    let total: usize = params.iter().map(Param::numel).sum();
    if vector.rank() != 1 || vector.numel() != total {
        return Err(Error::invalid(
            "vector_to_parameters",
            format!(
                "expected a 1-D vector of {total} elements (the parameters' count), got shape {}",
                vector.shape()
            ),
        ));
    }
    let _no_grad = crate::no_grad();
    let mut slices = vec![];
    let mut at = 0;
    for p in params {
        slices.push(vector.narrow(0, at, p.numel())?.reshape(p.shape())?);
        at += p.numel();
    }
    for (p, s) in params.iter().zip(slices) {
        p.set_data(s);
    }
    Ok(())
}
