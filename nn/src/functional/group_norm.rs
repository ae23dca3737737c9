//! `F.group_norm`: each sample's channels normalised in groups.

use super::widened;
use crate::{DType, Error, Result, Tensor, ops};

/// PyTorch's `F.group_norm(input, num_groups, weight=None, bias=None, eps=1e-5)`.
///
/// `x` is `(N, C, *)`; its `C` channels split into `num_groups` groups of consecutive channels, and each
/// sample's group (its channels and positions together) is normalised by its own mean and biased variance.
/// `weight` and `bias`, of shape `(C,)`, then scale and shift each channel. Half-precision inputs compute in
/// `f32` and round once, as PyTorch's kernel does; `weight` and `bias` have `x`'s dtype, or `f32` beside a
/// half-precision `x` (PyTorch's mixed types).
///
/// One op with its own backward: on the CPU fused loops over each sample's groups; on a device a layer norm over
/// the `(N, num_groups, C / num_groups · positions)` view, then the per-channel scale and shift.
///
/// ```
/// use nn::functional::group_norm;
/// use nn::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 3.0, 10.0, 30.0], [1, 4]).unwrap();
/// let y = group_norm(&x, 2, None, None, 0.0).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, 1.0, -1.0, 1.0]);
/// assert!(group_norm(&x, 3, None, None, 1e-5).is_err()); // 4 channels in 3 groups
/// ```
pub fn group_norm(
    x: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let op = "group_norm";
    let shape = x.shape();
    if x.rank() < 2 {
        return Err(Error::invalid(
            op,
            format!(
                "Expected at least 2 dimensions for input tensor but received {}",
                x.rank()
            ),
        ));
    }
    let (n, c) = (shape[0], shape[1]);
    if num_groups == 0 || !c.is_multiple_of(num_groups) {
        return Err(Error::invalid(
            op,
            format!(
                "Expected number of channels in input to be divisible by num_groups, but got input of shape \
                 {shape} and num_groups={num_groups}"
            ),
        ));
    }
    let positions: usize = shape[2..].iter().product();
    let per_group = c / num_groups * positions;
    if n * per_group == 1 {
        // PyTorch's `_verify_batch_size` on `[N·C / G, G, *]`: a single value to normalise.
        let mut size = vec![n * c / num_groups, num_groups];
        size.extend_from_slice(&shape[2..]);
        return Err(Error::invalid(
            op,
            format!("Expected more than 1 value per channel when training, got input size {size:?}"),
        ));
    }
    let compute = widened(x)?;
    let affine = |name: &str, t: Option<&Tensor>| -> Result<Option<Tensor>> {
        let Some(t) = t else { return Ok(None) };
        if t.shape().dims() != [c] {
            return Err(Error::invalid(
                op,
                format!(
                    "Expected {name} to be a vector of size equal to the number of channels in input, but got \
                     {name} of shape {} and input of shape {shape}",
                    t.shape()
                ),
            ));
        }
        let mixed = matches!(x.dtype(), DType::F16 | DType::BF16) && t.dtype() == DType::F32;
        if t.dtype() != x.dtype() && !mixed {
            return Err(Error::invalid(
                op,
                format!("{name} is {:?}, expected the input's dtype {:?}", t.dtype(), x.dtype()),
            ));
        }
        Ok(Some(t.to_dtype(compute.dtype())?))
    };
    let (weight, bias) = (affine("weight", weight)?, affine("bias", bias)?);
    ops::norm::group_norm::group_norm(&compute, num_groups, weight.as_ref(), bias.as_ref(), eps)?.to_dtype(x.dtype())
}
