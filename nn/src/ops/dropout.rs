//! Dropout: a mask drawn from the global generator, then a recorded multiplication, so it runs (and its
//! gradient runs) where the input is.
//!
//! The mask is drawn on the host, from the one global generator ([`crate::manual_seed`]), whatever the device: a
//! seed gives the same mask on the CPU and on a device. On a device the mask is uploaded (one transfer of the
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

/// A dropout mask of `shape` in `dtype` on `device`: `1 / (1 - p)` where an element is kept (probability
/// `1 - p`), zero elsewhere; drawn from the global generator, one draw per element in row-major order.
pub(crate) fn mask(shape: &Shape, p: f64, dtype: DType, device: Device) -> Result<Tensor> {
    Tensor::from_vec(mask_values(shape.numel(), p), shape.clone())?
        .to_dtype(dtype)?
        .to_device(device)
}

/// The values of a dropout mask of `n` elements ([`mask`]'s, one draw per element from the global generator):
/// for a host path that multiplies by it itself (the fused LSTM's dropout between layers).
pub(crate) fn mask_values(n: usize, p: f64) -> Vec<f64> {
    let keep = 1.0 - p;
    let scale = if keep > 0.0 { 1.0 / keep } else { 0.0 };
    random::with_global(|g| (0..n).map(|_| if g.unit() < keep { scale } else { 0.0 }).collect())
}
