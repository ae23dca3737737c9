//! Dropout: a mask drawn from the global generator, then a recorded multiplication, so it runs (and its
//! gradient runs) where the input is.
//!
//! The mask is drawn on the host, from the one global generator ([`crate::manual_seed`]), whatever the device,
//! as PyTorch's CPU draws it: a seed gives PyTorch's mask, on the CPU and on a device. On a device the mask is uploaded (one transfer of the
//! mask into device memory); the input never leaves the device, and the backward multiplies by the same mask
//! there.

use crate::{DType, Device, Error, Result, Shape, Tensor, random};

/// PyTorch's `F.dropout(x, p, training)`: in training, each element zeroed with probability `p` and the others
/// scaled by `1 / (1 - p)`; otherwise `x` itself. `p` must lie in `[0, 1]`.
///
/// ```
/// use nn::{DType, Tensor, functional::dropout};
/// nn::manual_seed(0);
/// let x = Tensor::ones([1000], DType::F32);
/// let y = dropout(&x, 0.5, true)?.to_vec::<f32>()?;
/// assert!(y.iter().all(|&v| v == 0.0 || v == 2.0));
/// assert_eq!(dropout(&x, 0.5, false)?.to_vec::<f32>()?, vec![1.0; 1000]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn dropout(x: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    Dropout::Elements.apply(x, p, training, false)
}

/// PyTorch's `F.dropout1d(x, p, training)`: each channel of an `(N, C, L)` or unbatched `(C, L)` input zeroed
/// whole with probability `p`, the others scaled by `1 / (1 - p)`.
///
/// ```
/// use nn::{DType, Tensor, functional::dropout1d};
/// nn::manual_seed(0);
/// let x = Tensor::ones([2, 8, 5], DType::F32);
/// let y = dropout1d(&x, 0.5, true)?.to_vec::<f32>()?;
/// // A channel is all zeros or all twos.
/// assert!(y.chunks(5).all(|c| c.iter().all(|&v| v == c[0]) && (c[0] == 0.0 || c[0] == 2.0)));
/// assert!(dropout1d(&Tensor::ones([2, 3, 4, 5], DType::F32), 0.5, true).is_err());
/// # Ok::<(), nn::Error>(())
/// ```
pub fn dropout1d(x: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    Dropout::OneD.apply(x, p, training, false)
}

/// PyTorch's `F.dropout2d(x, p, training)`: each feature map (dims 0 and 1 index them) zeroed whole with
/// probability `p`, the others scaled by `1 / (1 - p)`. As in PyTorch 2.5.1, a 3-d input is taken as
/// `(N, C, L)` (PyTorch warns that this will change), and the input needs 2 dims or more.
pub fn dropout2d(x: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    Dropout::TwoD.apply(x, p, training, false)
}

/// PyTorch's `F.dropout3d(x, p, training)`: each channel of an `(N, C, D, H, W)` or unbatched `(C, D, H, W)`
/// input zeroed whole with probability `p`, the others scaled by `1 / (1 - p)`. Other ranks are taken as
/// unbatched, as PyTorch 2.5.1 takes them (with a deprecation warning there).
pub fn dropout3d(x: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    Dropout::ThreeD.apply(x, p, training, false)
}

/// PyTorch's `F.alpha_dropout(x, p, training)`: SELU's dropout, which keeps the mean and variance of
/// standard-normal inputs: a dropped element becomes `-α'·a + b`, a kept one `x·a + b` (`α' = 1.7581`,
/// `a = 1 / √((α'²·p + 1)(1 - p))`, `b = α'·a·p`).
pub fn alpha_dropout(x: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    Dropout::Alpha.apply(x, p, training, false)
}

/// PyTorch's `F.feature_alpha_dropout(x, p, training)`: [`alpha_dropout`] of whole feature maps (dims 0 and 1
/// index them).
pub fn feature_alpha_dropout(x: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    Dropout::FeatureAlpha.apply(x, p, training, false)
}

/// Which dropout: of elements or of feature maps, plain or alpha.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dropout {
    /// `F.dropout`.
    Elements,
    /// `F.dropout1d`.
    OneD,
    /// `F.dropout2d`.
    TwoD,
    /// `F.dropout3d`.
    ThreeD,
    /// `F.alpha_dropout`.
    Alpha,
    /// `F.feature_alpha_dropout`.
    FeatureAlpha,
}

impl Dropout {
    /// This dropout of `x` with probability `p` (checked) in training, into `x` with `inplace`.
    pub(crate) fn apply(self, x: &Tensor, p: f64, training: bool, inplace: bool) -> Result<Tensor> {
        check_p(p)?;
        let dims = x.shape().len();
        let batched = match self {
            Dropout::OneD if !(2..=3).contains(&dims) => {
                return Err(Error::invalid(
                    "dropout1d",
                    format!(
                        "dropout1d: Expected 2D or 3D input, but received a {dims}D input. Note that dropout1d \
                         exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel \
                         dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
                    ),
                ));
            }
            Dropout::OneD => dims == 3,
            Dropout::ThreeD => dims == 5,
            _ => true,
        };
        if !batched {
            let x = x.unsqueeze(0)?;
            return self.apply(&x, p, training, inplace)?.squeeze(0);
        }
        let (noise, alpha) = match self {
            Dropout::Elements => (x.shape().clone(), false),
            Dropout::Alpha => (x.shape().clone(), true),
            Dropout::FeatureAlpha => (feature_shape(x)?, true),
            Dropout::OneD | Dropout::TwoD | Dropout::ThreeD => (feature_shape(x)?, false),
        };
        dropout_of(x, p, training, noise, alpha, inplace)
    }
}

/// The shape of a feature noise: `x`'s first two sizes, then 1 for each other dim (PyTorch's
/// `make_feature_noise`, which needs 2 dims or more).
fn feature_shape(x: &Tensor) -> Result<Shape> {
    let dims = x.shape().dims();
    if dims.len() < 2 {
        return Err(Error::invalid(
            "feature_dropout",
            format!(
                "Feature dropout requires at least 2 dimensions in the input, got {:?}",
                x.shape()
            ),
        ));
    }
    let mut sizes = vec![dims[0], dims[1]];
    sizes.resize(dims.len(), 1);
    Ok(Shape::from(sizes))
}

/// The `1.7580993408473766` of SELU's negative saturation, `-λ·α`, that alpha dropout sets a dropped element to.
const ALPHA: f64 = 1.758_099_340_847_376_6;

/// PyTorch's `_dropout_impl`: nothing for `p = 0`, outside training or for an empty input; `x · 0` for `p = 1`;
/// else `bernoulli_(1 - p)` of a noise of `noise` shape (broadcast over `x`), as plain dropout
/// (`x·noise / (1 - p)`) or alpha dropout (`x·(noise·a) + b`), each step in the dtype's arithmetic as PyTorch's;
/// into `x` with `inplace`.
fn dropout_of(x: &Tensor, p: f64, training: bool, noise: Shape, alpha: bool, inplace: bool) -> Result<Tensor> {
    if !training || p == 0.0 || x.shape().numel() == 0 {
        return Ok(x.clone());
    }
    let multiply = |by: &Tensor| -> Result<Tensor> {
        if !inplace {
            return x.mul(by);
        }
        x.mul_(by)?;
        Ok(x.clone())
    };
    if p == 1.0 {
        return multiply(&Tensor::zeros([], x.dtype()).to_device(x.device())?);
    }
    if !alpha {
        return multiply(&mask(&noise, p, x.dtype(), x.device())?);
    }
    let noise = kept_as(&noise, p, 1.0, x.dtype(), x.device())?;
    let a = 1.0 / ((ALPHA * ALPHA * p + 1.0) * (1.0 - p)).sqrt();
    let b = noise
        .add_scalar(-1.0)?
        .mul_scalar(ALPHA * a)?
        .add_scalar(ALPHA * a * p)?;
    let y = multiply(&noise.mul_scalar(a)?)?;
    if !inplace {
        return y.add(&b);
    }
    y.add_(&b)?;
    Ok(y)
}

/// Checks that `p` is a probability, with PyTorch's message.
pub(crate) fn check_p(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid(
            "dropout",
            format!(
                "dropout probability has to be between 0 and 1, but got {}",
                crate::error::py_float(p)
            ),
        ));
    }
    Ok(())
}

/// A dropout mask of `shape` in `dtype` on `device`, as PyTorch's `bernoulli_(1 - p).div_(1 - p)` forms it:
/// [`mask_scale`] where an element is kept (probability `1 - p`), zero elsewhere, drawn from the global
/// generator as PyTorch draws `bernoulli_`; p = 1 draws nothing (all zeros), as in PyTorch.
pub(crate) fn mask(shape: &Shape, p: f64, dtype: DType, device: Device) -> Result<Tensor> {
    kept_as(shape, p, mask_scale(p, dtype), dtype, device)
}

/// A noise of `shape` in `dtype` on `device`: `value` where [`kept`] keeps an element, zero elsewhere (dropout's
/// mask with its scale, alpha dropout's with 1).
fn kept_as(shape: &Shape, p: f64, value: f64, dtype: DType, device: Device) -> Result<Tensor> {
    let values: Vec<f64> = kept(shape.numel(), p)
        .into_iter()
        .map(|keep| if keep { value } else { 0.0 })
        .collect();
    Tensor::from_vec(values, shape.clone())?
        .to_dtype(dtype)?
        .to_device(device)
}

/// Which of `n` elements dropout keeps (PyTorch's `bernoulli_(1 - p)`, from the global generator), for a host
/// path that multiplies by [`mask_scale`] itself (the fused LSTM's dropout between layers); for p = 1 (or no
/// element) none, with no draw.
pub(crate) fn kept(n: usize, p: f64) -> Vec<bool> {
    if p >= 1.0 || n == 0 {
        return vec![false; n];
    }
    let mut keep = Vec::with_capacity(n);
    random::with_global(|g| crate::random::mcg31::bernoulli(g, &mut keep, n, 1.0 - p));
    keep
}

/// A kept element's factor `1 / (1 - p)` as PyTorch's `div_(1 - p)` computes it in `dtype`: in `f64` for
/// `f64`, else `1 / (1 - p)` in `f32` (the divisor rounded to `f32` first), rounded to the dtype; 0 for p = 1.
pub(crate) fn mask_scale(p: f64, dtype: DType) -> f64 {
    let keep = 1.0 - p;
    if keep <= 0.0 {
        return 0.0;
    }
    match dtype {
        DType::F64 => 1.0 / keep,
        DType::F16 => f64::from(half::f16::from_f32(1.0 / keep as f32).to_f32()),
        DType::BF16 => f64::from(half::bf16::from_f32(1.0 / keep as f32).to_f32()),
        _ => f64::from(1.0 / keep as f32),
    }
}
