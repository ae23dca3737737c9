//! PyTorch's 1-d pooling: `max_pool1d` (with or without its indices), `avg_pool1d` and `adaptive_avg_pool1d`,
//! which PyTorch computes as its 2-d pooling of the input with a height of 1, and so does this (after PyTorch's
//! own 1-d checks, with its sentences).

use super::pooling::{
    AvgPool2dOptions, MaxPool2dOptions, OutputSize2d, adaptive_avg_pool2d, avg_pool2d, max_pool2d_with_indices,
};
use crate::{Error, Result, Tensor};

/// The arguments of [`max_pool1d`] besides the input and the window: PyTorch's defaults (`stride` = the
/// window, no padding, dilation 1, floor mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxPool1dOptions {
    /// Step between windows; `None`: the window's size.
    pub stride: Option<usize>,
    /// Implicit `-inf` on both sides, at most half the window.
    pub padding: usize,
    /// Spacing between a window's taps; `None`: 1.
    pub dilation: Option<usize>,
    /// Whether a last, partial window counts.
    pub ceil_mode: bool,
}

/// The arguments of [`avg_pool1d`] besides the input and the window: PyTorch's defaults by [`Default`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgPool1dOptions {
    /// Step between windows; `None`: the window's size.
    pub stride: Option<usize>,
    /// Implicit zeros on both sides, at most half the window.
    pub padding: usize,
    /// Whether a last, partial window counts.
    pub ceil_mode: bool,
    /// Whether the padding counts in a window's divisor.
    pub count_include_pad: bool,
}

impl Default for AvgPool1dOptions {
    fn default() -> Self {
        AvgPool1dOptions {
            stride: None,
            padding: 0,
            ceil_mode: false,
            count_include_pad: true,
        }
    }
}

/// PyTorch's `pooling_output_shape`: the number of windows along a dimension of `size`.
fn windows(size: usize, kernel: usize, pad: usize, stride: usize, dilation: usize, ceil: bool) -> i64 {
    let (size, kernel, pad, stride, dilation) =
        (size as i64, kernel as i64, pad as i64, stride as i64, dilation as i64);
    let span = size + 2 * pad - dilation * (kernel - 1) - 1 + if ceil { stride - 1 } else { 0 };
    let mut out = span.div_euclid(stride) + 1;
    if ceil && (out - 1) * stride >= size + pad {
        out -= 1;
    }
    out
}

/// `x` `(N, C, L)` or `(C, L)` with a height of 1: `(N, C, 1, L)` or `(C, 1, L)`.
fn with_height(op: &'static str, x: &Tensor) -> Result<Tensor> {
    if !matches!(x.rank(), 2 | 3) {
        return Err(Error::invalid(
            op,
            format!(
                "Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' (while checking \
                 arguments for {op})",
                x.rank()
            ),
        ));
    }
    x.unsqueeze(-2)
}

/// PyTorch's `F.max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)` on `(N, C, L)` or `(C, L)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{MaxPool1dOptions, max_pool1d};
/// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0, 4.0], [1, 1, 4])?;
/// assert_eq!(max_pool1d(&x, 2, MaxPool1dOptions::default())?.to_vec::<f32>()?, vec![5.0, 4.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn max_pool1d(x: &Tensor, kernel_size: usize, options: MaxPool1dOptions) -> Result<Tensor> {
    Ok(max_pool1d_with_indices(x, kernel_size, options)?.0)
}

/// PyTorch's `F.max_pool1d(..., return_indices=True)`: [`max_pool1d`]'s output and each maximum's position
/// along `L` (`int64`).
pub fn max_pool1d_with_indices(x: &Tensor, kernel_size: usize, options: MaxPool1dOptions) -> Result<(Tensor, Tensor)> {
    let op = "max_pool1d";
    let fail = |m: String| Err(Error::invalid(op, m));
    let empty = x.shape().iter().skip(x.rank().saturating_sub(2)).any(|&d| d == 0);
    if !matches!(x.rank(), 2 | 3) || (x.rank() == 3 && empty) || (x.rank() == 2 && x.shape()[1] == 0) {
        return fail(format!(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but \
             got:{}",
            x.shape()
        ));
    }
    let stride = options.stride.unwrap_or(kernel_size);
    let dilation = options.dilation.unwrap_or(1);
    if kernel_size == 0 {
        return fail(format!(
            "max_pool1d() kernel_size must be greater than zero, but got {kernel_size}"
        ));
    }
    if stride == 0 {
        return fail(format!(
            "max_pool1d() stride must be greater than zero, but got {stride}"
        ));
    }
    if options.padding > kernel_size / 2 {
        return fail(format!(
            "max_pool1d() padding should be at most half of kernel size, but got padding={} and kernel_size={kernel_size}",
            options.padding
        ));
    }
    if dilation == 0 {
        return fail(format!(
            "max_pool1d() dilation must be greater than zero, but got {dilation}"
        ));
    }
    let length = x.shape()[x.rank() - 1];
    let out = windows(
        length,
        kernel_size,
        options.padding,
        stride,
        dilation,
        options.ceil_mode,
    );
    if out <= 0 {
        return fail(format!("max_pool1d() Invalid computed output size: {out}"));
    }
    let options2 = MaxPool2dOptions {
        stride: Some((1, stride).into()),
        padding: Some((0, options.padding).into()),
        dilation: Some((1, dilation).into()),
        ceil_mode: options.ceil_mode,
    };
    let (y, at) = max_pool2d_with_indices(&with_height(op, x)?, (1, kernel_size), options2)?;
    Ok((y.squeeze(-2)?, at.squeeze(-2)?))
}

/// PyTorch's `F.avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)` on `(N, C, L)` or
/// `(C, L)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{AvgPool1dOptions, avg_pool1d};
/// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0, 4.0], [1, 4])?;
/// assert_eq!(avg_pool1d(&x, 2, AvgPool1dOptions::default())?.to_vec::<f32>()?, vec![3.0, 3.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn avg_pool1d(x: &Tensor, kernel_size: usize, options: AvgPool1dOptions) -> Result<Tensor> {
    let op = "avg_pool1d";
    let x2 = with_height(op, x)?;
    let stride = options.stride.unwrap_or(kernel_size);
    let options2 = AvgPool2dOptions {
        stride: Some((1, stride).into()),
        padding: Some((0, options.padding).into()),
        ceil_mode: options.ceil_mode,
        count_include_pad: options.count_include_pad,
        divisor_override: None,
    };
    avg_pool2d(&x2, (1, kernel_size), options2)?.squeeze(-2)
}

/// PyTorch's `F.adaptive_avg_pool1d(x, output_size)` on `(N, C, L)` or `(C, L)`: output `i` is the mean of
/// `⌊i·L/O⌋..⌈(i+1)·L/O⌉`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::adaptive_avg_pool1d;
/// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0], [1, 3])?;
/// assert_eq!(adaptive_avg_pool1d(&x, 1)?.to_vec::<f32>()?, vec![8.0 / 3.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn adaptive_avg_pool1d(x: &Tensor, output_size: usize) -> Result<Tensor> {
    let x2 = with_height("adaptive_avg_pool1d", x)?;
    adaptive_avg_pool2d(&x2, OutputSize2d::Each(Some(1), Some(output_size)))?.squeeze(-2)
}
