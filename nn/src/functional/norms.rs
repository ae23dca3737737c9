//! The normalisations PyTorch composes of others: `F.instance_norm` (a batch norm of the input seen as one
//! batch of `N·C` channels, as PyTorch's), `F.rms_norm` and `F.local_response_norm`.

use super::{AvgPool2dOptions, PadMode, RunningStats, avg_pool2d, batch_norm, pad};
use crate::{DType, Error, Result, Tensor, no_grad};

/// `t` `(C)` repeated `n` times: `(n·C)`, differentiable.
fn repeated(t: &Tensor, n: usize) -> Result<Tensor> {
    let c = t.numel();
    t.reshape([1, c])?.expand(&[n as isize, c as isize])?.reshape([n * c])
}

/// PyTorch's `F.instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
/// use_input_stats=True, momentum=0.1, eps=1e-5)` on `(N, C, ...)`: each `(n, c)` normalised over its spatial
/// elements. With `use_input_stats` the running statistics (where given) move towards the batch's by
/// `momentum`, averaged over the batch; without, they normalise.
///
/// ```
/// use nn::{Tensor, functional::instance_norm};
/// let x = Tensor::from_vec(vec![1.0f64, 3.0, 10.0, 30.0], [1, 2, 2])?;
/// let y = instance_norm(&x, None, None, None, true, 0.1, 0.0)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, 1.0, -1.0, 1.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn instance_norm(
    input: &Tensor,
    running: Option<RunningStats<'_>>,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    use_input_stats: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    let op = "instance_norm";
    if input.rank() < 2 {
        return Err(Error::invalid(
            op,
            format!(
                "expected an input of 2 or more dimensions (N, C, ...), got shape {}",
                input.shape()
            ),
        ));
    }
    let (n, c) = (input.shape()[0], input.shape()[1]);
    // PyTorch's `_verify_spatial_size`: the spatial sizes alone.
    if use_input_stats && input.shape()[2..].iter().product::<usize>() == 1 {
        return Err(Error::invalid(
            op,
            format!(
                "Expected more than 1 spatial element when training, got input size torch.Size({})",
                input.shape()
            ),
        ));
    }
    let mut flat = vec![1, n * c];
    flat.extend_from_slice(&input.shape()[2..]);
    let x = input.reshape(flat)?;
    let weight = weight.map(|w| repeated(w, n)).transpose()?;
    let bias = bias.map(|b| repeated(b, n)).transpose()?;
    let stats = match &running {
        Some(r) => {
            let _no_grad = no_grad();
            Some((repeated(r.mean, n)?, repeated(r.var, n)?))
        }
        None => None,
    };
    let y = batch_norm(
        &x,
        stats.as_ref().map(|(mean, var)| RunningStats { mean, var }),
        weight.as_ref(),
        bias.as_ref(),
        use_input_stats,
        momentum,
        eps,
    )?;
    if let (Some(r), Some((mean, var))) = (running, stats) {
        let _no_grad = no_grad();
        r.mean.copy_(&mean.reshape([n, c])?.mean_dims(&[0], false)?)?;
        r.var.copy_(&var.reshape([n, c])?.mean_dims(&[0], false)?)?;
    }
    y.reshape(input.shape())
}

/// PyTorch's `F.rms_norm(input, normalized_shape, weight=None, eps=None)`: `x / sqrt(mean(x²) + eps) · weight`
/// over the last `normalized_shape` dimensions, computed in `f32` for the half types; `eps` by default the
/// machine epsilon of that type (`f64`'s for `f64`).
///
/// ```
/// use nn::{Tensor, functional::rms_norm};
/// let x = Tensor::from_vec(vec![3.0f64, 4.0], [1, 2])?;
/// let y = rms_norm(&x, &[2], None, Some(0.0))?;
/// assert_eq!(y.to_vec::<f64>()?, vec![3.0 / 12.5f64.sqrt(), 4.0 / 12.5f64.sqrt()]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn rms_norm(
    input: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: Option<f64>,
) -> Result<Tensor> {
    let op = "rms_norm";
    let k = normalized_shape.len();
    if let Some(w) = weight
        && w.shape() != normalized_shape
    {
        return Err(Error::invalid(
            op,
            format!(
                "Expected weight to be of same shape as normalized_shape, but got weight of shape {} and \
                 normalized_shape = {normalized_shape:?}",
                w.shape()
            ),
        ));
    }
    if k == 0 || input.rank() < k || &input.shape()[input.rank() - k..] != normalized_shape {
        return Err(Error::invalid(
            op,
            format!(
                "Given normalized_shape={normalized_shape:?}, expected input with shape [*{}], but got input of \
                 size{}",
                normalized_shape.iter().map(|d| format!(", {d}")).collect::<String>(),
                input.shape()
            ),
        ));
    }
    Error::check_float(op, input.dtype())?;
    let wide = match input.dtype() {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    };
    let eps = eps.unwrap_or(if wide == DType::F64 {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    });
    let x = if wide == input.dtype() {
        input.clone()
    } else {
        input.to_dtype(wide)?
    };
    let dims: Vec<isize> = (0..k).map(|i| (input.rank() - 1 - i) as isize).collect();
    let scale = x.mul(&x)?.mean_dims(&dims, true)?.add_scalar(eps)?.sqrt()?.recip()?;
    let y = x.mul(&scale)?;
    let y = if wide == input.dtype() {
        y
    } else {
        y.to_dtype(input.dtype())?
    };
    match weight {
        Some(w) => y.mul(w),
        None => Ok(y),
    }
}

/// PyTorch's `F.local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0)` on `(N, C, ...)`:
/// `x / (k + alpha · mean of x² over the `size` channels around each)^beta`, the window zero-padded.
///
/// ```
/// use nn::{Tensor, functional::local_response_norm};
/// let x = Tensor::from_vec(vec![2.0f64, 2.0], [1, 2, 1])?;
/// let y = local_response_norm(&x, 1, 1.0, 1.0, 1.0)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.4, 0.4]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn local_response_norm(input: &Tensor, size: usize, alpha: f64, beta: f64, k: f64) -> Result<Tensor> {
    let op = "local_response_norm";
    let dim = input.rank();
    if dim < 3 {
        return Err(Error::invalid(
            op,
            // PyTorch's sentence, with the run of spaces its source's line continuation leaves.
            format!(
                "Expected 3D or higher dimensionality{}input (got {dim} dimensions)",
                " ".repeat(26)
            ),
        ));
    }
    if size == 0 {
        return Err(Error::invalid(op, "size must be positive"));
    }
    if input.numel() == 0 {
        return Ok(input.clone());
    }
    let shape = input.shape();
    let (n, c) = (shape[0], shape[1]);
    let rest = input.numel() / (n * c);
    // The squares as one plane per sample, `(N, 1, C, rest)`, padded along the channels and averaged over
    // windows of `size` channels: PyTorch's `avg_pool2d` (3-d input) or `avg_pool3d` over `(size, 1, 1)`.
    let div = input.mul(input)?.reshape([n, 1, c, rest])?;
    let before = (size / 2) as i64;
    let after = ((size - 1) / 2) as i64;
    let div = pad(&div, &[0, 0, before, after], PadMode::Constant(0.0))?;
    let window = AvgPool2dOptions {
        stride: Some((1, 1).into()),
        ..Default::default()
    };
    let div = avg_pool2d(&div, (size, 1), window)?.reshape(shape)?;
    let div = div.affine(alpha, k)?.pow_scalar(beta)?;
    input.div(&div)
}
