//! PyTorch's 2-d pooling: `max_pool2d` (with or without its indices), `avg_pool2d` and `adaptive_avg_pool2d`.
//!
//! Each checks PyTorch's arguments and turns them into a table of windows per axis (`kernels::pool2d::Pooling`:
//! which input positions each output reads, and the mean's divisor), which the pooling ops of `ops::pooling`
//! run on the CPU and on devices, with their gradients.
//!
//! On a device, a window row of more than 16,384 taps (or an input column read by more than 16,384 windows) is
//! refused with a typed error: the kernels' units would pass the loop iterations lavapipe allows.

use std::sync::Arc;

use kernels::pool2d::{self, Divisor, Pooling, Windows};

use crate::ops::pooling::{AvgPool2d, MaxPool2d};
use crate::ops::run;
use crate::{Error, Result, Shape, Tensor};

/// A pooling window's size, stride, padding or dilation: one number for both dimensions, or `(height, width)`.
/// The layers print it as it was given, as PyTorch's do.
///
/// ```
/// use nn::functional::Size2d;
/// assert_eq!(Size2d::from(3).pair(), [3, 3]);
/// assert_eq!(Size2d::from((2, 4)).to_string(), "(2, 4)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size2d {
    /// The same for height and width (printed `3`).
    Both(usize),
    /// `(height, width)` (printed `(3, 2)`).
    Each(usize, usize),
}

impl Size2d {
    /// `[height, width]`.
    pub fn pair(self) -> [usize; 2] {
        match self {
            Size2d::Both(n) => [n, n],
            Size2d::Each(h, w) => [h, w],
        }
    }
}

impl From<usize> for Size2d {
    fn from(n: usize) -> Size2d {
        Size2d::Both(n)
    }
}

impl From<(usize, usize)> for Size2d {
    fn from((h, w): (usize, usize)) -> Size2d {
        Size2d::Each(h, w)
    }
}

impl From<[usize; 2]> for Size2d {
    fn from([h, w]: [usize; 2]) -> Size2d {
        Size2d::Each(h, w)
    }
}

impl std::fmt::Display for Size2d {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Size2d::Both(n) => write!(f, "{n}"),
            Size2d::Each(h, w) => write!(f, "({h}, {w})"),
        }
    }
}

/// The arguments of [`max_pool2d`] besides the input and the window: PyTorch's defaults (`stride` = the
/// window, no padding, dilation 1, floor mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxPool2dOptions {
    /// Step between windows; `None`: the window's size.
    pub stride: Option<Size2d>,
    /// Implicit `-inf` added on both sides, at most half the dilated window.
    pub padding: Option<Size2d>,
    /// Spacing between a window's taps.
    pub dilation: Option<Size2d>,
    /// Sizes the output rounding up, so a last partial window that starts inside the input (or the left
    /// padding) counts.
    pub ceil_mode: bool,
}

/// The arguments of [`avg_pool2d`] besides the input and the window: PyTorch's defaults (`stride` = the
/// window, no padding, floor mode, padding counted in the divisor, no divisor override).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgPool2dOptions {
    /// Step between windows; `None`: the window's size.
    pub stride: Option<Size2d>,
    /// Implicit zeros added on both sides, at most half the window.
    pub padding: Option<Size2d>,
    /// As in [`MaxPool2dOptions::ceil_mode`].
    pub ceil_mode: bool,
    /// Whether the zero padding counts in a window's divisor.
    pub count_include_pad: bool,
    /// A divisor for every window instead of its size; positive.
    pub divisor_override: Option<usize>,
}

impl Default for AvgPool2dOptions {
    fn default() -> Self {
        AvgPool2dOptions {
            stride: None,
            padding: None,
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        }
    }
}

/// One spatial dimension of a pooling: input size, window, stride, padding, dilation, and the output size.
#[derive(Clone, Copy, Debug)]
struct Axis {
    input: usize,
    kernel: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
    output: usize,
}

impl Axis {
    /// PyTorch's `pooling_output_shape`: floor (or ceil) of the windows that fit, the last window in ceil mode
    /// starting inside the input or the left padding. `None` when no window fits.
    fn new(input: usize, kernel: usize, stride: usize, pad: usize, dilation: usize, ceil: bool) -> Option<Axis> {
        let span = (dilation * (kernel - 1) + 1) as i64;
        let room = (input + 2 * pad) as i64 - span + if ceil { stride as i64 - 1 } else { 0 };
        let mut output = room.div_euclid(stride as i64) + 1;
        if ceil && (output - 1) * stride as i64 >= (input + pad) as i64 {
            output -= 1;
        }
        (output >= 1).then_some(Axis {
            input,
            kernel,
            stride,
            pad,
            dilation,
            output: output as usize,
        })
    }

    /// The windows along this axis as the pooling ops read them (PyTorch's `max_pool2d` / `avg_pool2d` CPU
    /// kernels': the taps inside the input), each output's divisor factor `divisor(with padding, held)`.
    fn windows(&self, divisor: impl Fn(usize, usize) -> usize) -> Windows {
        let (d, input) = (self.dilation as i64, self.input as i64);
        let mut w = Windows {
            input: self.input,
            step: self.dilation,
            first: Vec::with_capacity(self.output),
            count: Vec::with_capacity(self.output),
            divisor: Vec::with_capacity(self.output),
        };
        for o in 0..self.output {
            let start = (o * self.stride) as i64 - self.pad as i64;
            let skipped = if start < 0 { (-start + d - 1) / d } else { 0 };
            let inside = ((input - start + d - 1) / d).clamp(0, self.kernel as i64);
            let count = (inside - skipped).max(0);
            w.first.push(if count > 0 { (start + skipped * d) as usize } else { 0 });
            w.count.push(count as usize);
            let (with_pad, held) = self.window(o);
            w.divisor.push(divisor(with_pad, held).max(1));
        }
        w
    }

    /// PyTorch's average-pooling window of output `o`: the window clipped to `input + pad` (its size with the
    /// padding), and clipped to the input (what it holds).
    fn window(&self, o: usize) -> (usize, usize) {
        let start = (o * self.stride) as i64 - self.pad as i64;
        let end = (start + self.kernel as i64).min((self.input + self.pad) as i64);
        let with_pad = (end - start) as usize;
        let held = (end.min(self.input as i64) - start.max(0)).max(0) as usize;
        (with_pad, held)
    }
}

/// `x` as `(N, C, H, W)`, checked as PyTorch's `pool2d_shape_check` does (a float tensor of rank 3 or 4 with
/// no empty dimension but the batch), and whether it was unbatched.
fn batched(op: &'static str, x: &Tensor) -> Result<(Tensor, bool)> {
    let adaptive = op.starts_with("adaptive");
    if !matches!(x.rank(), 3 | 4) {
        return Err(Error::invalid(
            op,
            if adaptive {
                format!("{op}(): Expected 3D or 4D tensor, but got {}", x.shape())
            } else {
                "non-empty 3D or 4D (batch mode) tensor expected for input".to_string()
            },
        ));
    }
    if let Some(d) = (x.rank() - 3..x.rank()).find(|&d| x.shape()[d] == 0) {
        return Err(Error::invalid(
            op,
            if adaptive {
                format!(
                    "{op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} \
                     with dimension {d} being empty",
                    x.shape()
                )
            } else {
                format!(
                    "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:{}",
                    x.shape()
                )
            },
        ));
    }
    Error::check_float(op, x.dtype())?;
    if x.rank() == 3 {
        Ok((x.unsqueeze(0)?, true))
    } else {
        Ok((x.clone(), false))
    }
}

/// Checks the window's arguments as PyTorch does and sizes the output: the two [`Axis`].
fn axes(
    op: &'static str,
    x: &Tensor,
    kernel: [usize; 2],
    stride: [usize; 2],
    pad: [usize; 2],
    dilation: [usize; 2],
    ceil: bool,
) -> Result<[Axis; 2]> {
    let refuse = |message: String| Err(Error::invalid(op, message));
    if [kernel, stride, pad, dilation]
        .iter()
        .flatten()
        .any(|&v| v > i32::MAX as usize)
    {
        return refuse(format!(
            "kernel_size {kernel:?}, stride {stride:?}, padding {pad:?} and dilation {dilation:?}: each must be \
             below 2^31"
        ));
    }
    if stride.contains(&0) {
        return refuse("stride should not be zero".into());
    }
    if kernel.contains(&0) {
        return refuse(format!(
            "kernel size should be greater than zero, but got kH: {} kW: {}",
            kernel[0], kernel[1]
        ));
    }
    if dilation.contains(&0) {
        return refuse(format!(
            "dilation should be greater than zero, but got dilationH: {} dilationW: {}",
            dilation[0], dilation[1]
        ));
    }
    for d in 0..2 {
        if pad[d] > (dilation[d] * (kernel[d] - 1)).div_ceil(2) {
            return refuse(format!(
                "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and \
                 dilation={}",
                pad[d], kernel[d], dilation[d]
            ));
        }
    }
    if (0..2).any(|d| pad[d] > kernel[d] / 2) {
        return refuse(format!(
            "pad should be smaller than or equal to half of kernel size, but got padW = {}, padH = {}, kW = {}, \
             kH = {}",
            pad[1], pad[0], kernel[1], kernel[0]
        ));
    }
    let (h, w) = (x.shape()[2], x.shape()[3]);
    let axis = |d: usize, input: usize| Axis::new(input, kernel[d], stride[d], pad[d], dilation[d], ceil);
    match (axis(0, h), axis(1, w)) {
        (Some(a), Some(b)) => Ok([a, b]),
        _ => {
            let out = |d: usize, input: usize| {
                let span = (dilation[d] * (kernel[d] - 1) + 1) as i64;
                ((input + 2 * pad[d]) as i64 - span).div_euclid(stride[d] as i64) + 1
            };
            refuse(format!(
                "Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is too small",
                x.shape()[1],
                h,
                w,
                x.shape()[1],
                out(0, h),
                out(1, w)
            ))
        }
    }
}

/// PyTorch's `F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)` on `(N, C, H, W)` or
/// `(C, H, W)`: the largest entry of every window (NaN counts as the largest), the gradient going to the first
/// largest in the window's row-major order.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{MaxPool2dOptions, max_pool2d};
/// let x = Tensor::arange(0.0, 16.0, 1.0, nn::DType::F32)?.reshape([1, 1, 4, 4])?;
/// let y = max_pool2d(&x, 2, MaxPool2dOptions::default())?;
/// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn max_pool2d(x: &Tensor, kernel_size: impl Into<Size2d>, options: MaxPool2dOptions) -> Result<Tensor> {
    let (x4, unbatched, axes) = max_pool_axes(x, kernel_size.into(), options)?;
    let pooling = pooling(&x4, axes, |_, _| 1, |_, _| 1);
    check_device("max_pool2d", &x4, &pooling)?;
    let y = run(&MaxPool2d { pooling }, &[&x4])?.0;
    if unbatched { y.squeeze(0) } else { Ok(y) }
}

/// PyTorch's `F.max_pool2d(..., return_indices=True)`: [`max_pool2d`]'s output and each maximum's position in
/// its `H·W` plane (`int64`, row-major; the first of equal values, the last NaN), the indices
/// `F.max_unpool2d` takes.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{MaxPool2dOptions, max_pool2d_with_indices};
/// let x = Tensor::from_vec(vec![1.0f32, 4.0, 3.0, 2.0, 0.0, 4.0, 6.0, 5.0], [1, 2, 4])?;
/// let (y, at) = max_pool2d_with_indices(&x, (2, 2), MaxPool2dOptions::default())?;
/// assert_eq!(y.to_vec::<f32>()?, vec![4.0, 6.0]);
/// assert_eq!(at.to_vec::<i64>()?, vec![1, 6]); // the first of the two 4s
/// # Ok::<(), nn::Error>(())
/// ```
pub fn max_pool2d_with_indices(
    x: &Tensor,
    kernel_size: impl Into<Size2d>,
    options: MaxPool2dOptions,
) -> Result<(Tensor, Tensor)> {
    let op = "max_pool2d_with_indices";
    let (x4, unbatched, axes) = max_pool_axes(x, kernel_size.into(), options)?;
    let pooling = pooling(&x4, axes, |_, _| 1, |_, _| 1);
    check_device(op, &x4, &pooling)?;
    let (y, at) = run(&MaxPool2d { pooling }, &[&x4])?;
    if unbatched {
        Ok((y.squeeze(0)?, at.squeeze(0)?))
    } else {
        Ok((y, at))
    }
}

/// [`max_pool2d`]'s input as `(N, C, H, W)`, whether it was unbatched, and its axes, checked as PyTorch does.
fn max_pool_axes(x: &Tensor, kernel: Size2d, options: MaxPool2dOptions) -> Result<(Tensor, bool, [Axis; 2])> {
    let op = "max_pool2d";
    let kernel = kernel.pair();
    let (x4, unbatched) = batched(op, x)?;
    let stride = options.stride.map_or(kernel, Size2d::pair);
    let pad = options.padding.map_or([0, 0], Size2d::pair);
    let dilation = options.dilation.map_or([1, 1], Size2d::pair);
    let axes = axes(op, &x4, kernel, stride, pad, dilation, options.ceil_mode)?;
    Ok((x4, unbatched, axes))
}

/// The pooling of `x4`'s planes over `axes`, the rows' and columns' divisor factors given by `divisor(with
/// padding, held)` each.
fn pooling(
    x4: &Tensor,
    [h, w]: [Axis; 2],
    rows: impl Fn(usize, usize) -> usize,
    cols: impl Fn(usize, usize) -> usize,
) -> Arc<Pooling> {
    Arc::new(Pooling {
        planes: x4.shape()[0] * x4.shape()[1],
        rows: h.windows(rows),
        cols: w.windows(cols),
    })
}

/// Fails for `x4` on a device whose pooling kernels cannot take these windows ([`pool2d::fits`]: a row of more
/// than 16,384 taps, or an input column read by more than 16,384 windows).
fn check_device(op: &'static str, x4: &Tensor, pooling: &Pooling) -> Result<()> {
    if x4.device().is_cpu() || pool2d::fits(pooling) {
        return Ok(());
    }
    Err(Error::UnsupportedOnDevice {
        op,
        dtype: x4.dtype(),
        device: x4.device(),
        reason: format!(
            "windows of {} columns, or an input column read by {} windows, pass the 16,384 one device unit takes; \
             pool on the CPU (.cpu())",
            pooling.cols.widest(),
            pooling.cols.most_readers()
        ),
    })
}

/// PyTorch's `F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)` on
/// `(N, C, H, W)` or `(C, H, W)`: every window's sum (taps added in row-major order) over its size (with the
/// padding when `count_include_pad`, never past `input + padding`), or over `divisor_override`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{AvgPool2dOptions, avg_pool2d};
/// let x = Tensor::arange(0.0, 16.0, 1.0, nn::DType::F32)?.reshape([1, 1, 4, 4])?;
/// let y = avg_pool2d(&x, 2, AvgPool2dOptions::default())?;
/// assert_eq!(y.to_vec::<f32>()?, vec![2.5, 4.5, 10.5, 12.5]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn avg_pool2d(x: &Tensor, kernel_size: impl Into<Size2d>, options: AvgPool2dOptions) -> Result<Tensor> {
    let op = "avg_pool2d";
    let kernel = kernel_size.into().pair();
    let (x4, unbatched) = batched(op, x)?;
    if options.divisor_override == Some(0) {
        return Err(Error::invalid(op, "divisor must be not zero"));
    }
    let stride = options.stride.map_or(kernel, Size2d::pair);
    let pad = options.padding.map_or([0, 0], Size2d::pair);
    let axes = axes(op, &x4, kernel, stride, pad, [1, 1], options.ceil_mode)?;
    // PyTorch's divisor: the override, or the window's size with (or without) the padding.
    let pooling = match options.divisor_override {
        Some(d) => pooling(&x4, axes, |_, _| d, |_, _| 1),
        None if options.count_include_pad => pooling(&x4, axes, |with_pad, _| with_pad, |with_pad, _| with_pad),
        None => pooling(&x4, axes, |_, held| held, |_, held| held),
    };
    check_device(op, &x4, &pooling)?;
    let y = run(
        &AvgPool2d {
            pooling,
            divisor: Divisor::Product,
        },
        &[&x4],
    )?;
    if unbatched { y.squeeze(0) } else { Ok(y) }
}

/// An adaptive pooling's output size: one number for both dimensions, or `(height, width)` where `None` keeps
/// the input's size (PyTorch's `output_size=(None, 7)`).
///
/// ```
/// use nn::functional::OutputSize2d;
/// assert_eq!(OutputSize2d::from(1).to_string(), "1");
/// assert_eq!(OutputSize2d::Each(None, Some(7)).to_string(), "(None, 7)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputSize2d {
    /// The same for height and width.
    Both(usize),
    /// `(height, width)`, `None` keeping the input's.
    Each(Option<usize>, Option<usize>),
}

impl From<usize> for OutputSize2d {
    fn from(n: usize) -> OutputSize2d {
        OutputSize2d::Both(n)
    }
}

impl From<(usize, usize)> for OutputSize2d {
    fn from((h, w): (usize, usize)) -> OutputSize2d {
        OutputSize2d::Each(Some(h), Some(w))
    }
}

impl std::fmt::Display for OutputSize2d {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let one = |v: Option<usize>| v.map_or("None".to_string(), |n| n.to_string());
        match self {
            OutputSize2d::Both(n) => write!(f, "{n}"),
            OutputSize2d::Each(h, w) => write!(f, "({}, {})", one(*h), one(*w)),
        }
    }
}

/// PyTorch's `F.adaptive_avg_pool2d(x, output_size)` on `(N, C, H, W)` or `(C, H, W)`: output `(i, j)` is the
/// mean of rows `⌊i·H/OH⌋..⌈(i+1)·H/OH⌉` and the same columns.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::adaptive_avg_pool2d;
/// let x = Tensor::arange(0.0, 6.0, 1.0, nn::DType::F32)?.reshape([1, 2, 3])?;
/// let y = adaptive_avg_pool2d(&x, (1, 2))?; // columns 0..2 and 1..3
/// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 3.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn adaptive_avg_pool2d(x: &Tensor, output_size: impl Into<OutputSize2d>) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d";
    let (x4, unbatched) = batched(op, x)?;
    let (h, w) = (x4.shape()[2], x4.shape()[3]);
    let [oh, ow] = match output_size.into() {
        OutputSize2d::Both(n) => [n, n],
        OutputSize2d::Each(a, b) => [a.unwrap_or(h), b.unwrap_or(w)],
    };
    let (n, c) = (x4.shape()[0], x4.shape()[1]);
    let out = Shape::from(vec![n, c, oh, ow]);
    let bytes = out.numel().saturating_mul(x4.dtype().size_in_bytes());
    if bytes > isize::MAX as usize {
        return Err(Error::Allocation {
            op,
            shape: out,
            dtype: x4.dtype(),
            bytes,
        });
    }
    let y = if out.numel() == 0 {
        // An empty output, still recorded from the input.
        let sizes: Vec<isize> = out.iter().map(|&s| s as isize).collect();
        x4.sum_dims(&[2, 3], true)?.expand(&sizes)?
    } else if oh == 1 && ow == 1 {
        x4.mean_dims(&[2, 3], true)?
    } else {
        // Rows `⌊i·H/OH⌋..⌈(i+1)·H/OH⌉`, each sum divided by the rows' count, then by the columns'.
        let windows = |out: usize, input: usize| {
            let first: Vec<usize> = (0..out).map(|i| i * input / out).collect();
            let count: Vec<usize> = (0..out).map(|i| ((i + 1) * input).div_ceil(out) - first[i]).collect();
            Windows {
                input,
                step: 1,
                first,
                divisor: count.clone(),
                count,
            }
        };
        let pooling = Arc::new(Pooling {
            planes: n * c,
            rows: windows(oh, h),
            cols: windows(ow, w),
        });
        check_device(op, &x4, &pooling)?;
        let divisor = Divisor::PerAxis;
        run(&AvgPool2d { pooling, divisor }, &[&x4])?
    };
    if unbatched { y.squeeze(0) } else { Ok(y) }
}
