//! Parameter initialisation, as `torch.nn.init`, drawing from the global generator ([`crate::manual_seed`]).

use crate::random;
use crate::{Error, Result, Tensor};

/// `(fan_in, fan_out)` of a weight of shape `(out, in, *kernel)`, as PyTorch computes them.
///
/// ```
/// assert_eq!(nn::init::fans(&[16, 8, 3, 3]).unwrap(), (72, 144));
/// ```
pub fn fans(shape: &[usize]) -> Result<(usize, usize)> {
    if shape.len() < 2 {
        return Err(Error::invalid(
            "init",
            format!("fan in and fan out need a tensor of 2 or more dimensions; got shape {shape:?}"),
        ));
    }
    let receptive: usize = shape[2..].iter().product();
    Ok((shape[1] * receptive, shape[0] * receptive))
}

/// Fills `t` with samples uniform in `[low, high)`.
pub fn uniform_(t: &Tensor, low: f64, high: f64) -> Result<()> {
    let values = random::with_global(|g| Tensor::uniform_with(t.shape().clone(), low, high, t.dtype(), g));
    t.copy_(&values)
}

/// Fills `t` with samples of `N(mean, std²)`.
pub fn normal_(t: &Tensor, mean: f64, std: f64) -> Result<()> {
    let values = random::with_global(|g| Tensor::randn_with(t.shape().clone(), t.dtype(), g)).affine(std, mean)?;
    t.copy_(&values)
}

/// Fills `t` with `value`.
pub fn constant_(t: &Tensor, value: f64) -> Result<()> {
    t.fill_(value)
}

/// Fills `t` with zeros.
pub fn zeros_(t: &Tensor) -> Result<()> {
    t.fill_(0.0)
}

/// Fills `t` with ones.
pub fn ones_(t: &Tensor) -> Result<()> {
    t.fill_(1.0)
}

/// `kaiming_uniform_(t, a, mode='fan_in', nonlinearity='leaky_relu')`: uniform in `±gain * sqrt(3 / fan_in)`
/// with `gain = sqrt(2 / (1 + a²))` — PyTorch's default for `Linear` and `Conv2d` weights (`a = sqrt(5)`).
pub fn kaiming_uniform_(t: &Tensor, a: f64) -> Result<()> {
    let (fan_in, _) = fans(t.shape())?;
    let gain = (2.0 / (1.0 + a * a)).sqrt();
    let bound = if fan_in == 0 {
        0.0
    } else {
        gain * (3.0 / fan_in as f64).sqrt()
    };
    uniform_(t, -bound, bound)
}

/// `xavier_uniform_(t, gain)`: uniform in `±gain * sqrt(6 / (fan_in + fan_out))`.
pub fn xavier_uniform_(t: &Tensor, gain: f64) -> Result<()> {
    let (fan_in, fan_out) = fans(t.shape())?;
    let bound = gain * (6.0 / (fan_in + fan_out).max(1) as f64).sqrt();
    uniform_(t, -bound, bound)
}

/// PyTorch's bias initialisation for `Linear` and `Conv2d`: uniform in `±1 / sqrt(fan_in)` (0 when empty).
pub fn bias_uniform_(bias: &Tensor, fan_in: usize) -> Result<()> {
    let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
    uniform_(bias, -bound, bound)
}
