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
    check_p(p)?;
    if !training || p == 0.0 {
        return Ok(x.clone());
    }
    x.mul(&mask(x.shape(), p, x.dtype(), x.device())?)
}

/// Checks that `p` is a probability, with PyTorch's message.
pub(crate) fn check_p(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid(
            "dropout",
            format!("dropout probability has to be between 0 and 1, but got {p}"),
        ));
    }
    Ok(())
}

/// A dropout mask of `shape` in `dtype` on `device`, as PyTorch's `bernoulli_(1 - p).div_(1 - p)` forms it:
/// [`mask_scale`] where an element is kept (probability `1 - p`), zero elsewhere, drawn from the global
/// generator as PyTorch draws `bernoulli_`; p = 1 draws nothing (all zeros), as in PyTorch.
pub(crate) fn mask(shape: &Shape, p: f64, dtype: DType, device: Device) -> Result<Tensor> {
    let scale = mask_scale(p, dtype);
    let values: Vec<f64> = kept(shape.numel(), p)
        .into_iter()
        .map(|keep| if keep { scale } else { 0.0 })
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
