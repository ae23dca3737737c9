//! [`ConvTranspose1d`], [`ConvTranspose2d`]: transposed convolution layers, with PyTorch's `output_size`
//! argument of `forward`.

use crate::functional::{ConvTranspose1dOptions, ConvTranspose2dOptions, conv_transpose1d, conv_transpose2d};
use crate::ops::conv::smallest_output;
use crate::{Error, Module, Param, Result, Tensor};

conv_layer!(
/// PyTorch's `ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
/// groups=1, bias=True, dilation=1)`: weight `(in, out / groups, kH, kW)` initialised
/// `kaiming_uniform_(a=sqrt(5))`, bias uniform in `±1/sqrt(fan_in)` (fan-in `out / groups · kH · kW`, as
/// PyTorch reads it off the weight).
///
/// ```
/// use nn::prelude::*;
/// use nn::functional::ConvTranspose2dOptions;
/// let up = ConvTranspose2d::new(8, 4, [4, 4], ConvTranspose2dOptions { stride: [2, 2], padding: [1, 1], ..Default::default() }, false).unwrap();
/// assert_eq!(up.to_string(), "ConvTranspose2d(8, 4, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1), bias=False)");
/// let y = up.forward(Tensor::zeros([2, 8, 5, 5], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[2, 4, 10, 10]);
/// ```
    ConvTranspose2d,
    kernel: [usize; 2],
    options: ConvTranspose2dOptions,
    function: conv_transpose2d,
    weight: "`(in_channels, out_channels / groups, kH, kW)`."
);

impl ConvTranspose2d {
    /// The forward pass to an output of spatial size `output_size` (`(H, W)`, or the output's whole shape),
    /// which picks the output padding: PyTorch's `forward(input, output_size)`. The sizes one input can give
    /// differ by less than the stride.
    pub fn forward_with_output_size(&self, x: &Tensor, output_size: &[usize]) -> Result<Tensor> {
        let o = &self.options;
        let output_padding = output_padding(
            ("ConvTranspose2d", 2),
            x,
            output_size,
            |input| smallest_output([input[0], input[1]], self.kernel_size, o).to_vec(),
            &o.stride,
        )?;
        let opts = ConvTranspose2dOptions {
            output_padding: [output_padding[0], output_padding[1]],
            ..*o
        };
        let bias = self.bias.as_ref().map(Param::data);
        conv_transpose2d(x, &self.weight.data(), bias.as_ref(), &opts)
    }
}

conv_layer!(
/// PyTorch's `ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
/// groups=1, bias=True, dilation=1)`: weight `(in, out / groups, k)`, initialised as [`ConvTranspose2d`]'s.
///
/// ```
/// use nn::prelude::*;
/// use nn::functional::ConvTranspose1dOptions;
/// let up = ConvTranspose1d::new(16, 32, 3, ConvTranspose1dOptions { stride: 2, output_padding: 1, groups: 16, ..Default::default() }, true).unwrap();
/// assert_eq!(up.to_string(), "ConvTranspose1d(16, 32, kernel_size=(3,), stride=(2,), output_padding=(1,), groups=16)");
/// let y = up.forward(Tensor::zeros([2, 16, 10], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[2, 32, 22]);
/// ```
    ConvTranspose1d,
    kernel: usize,
    options: ConvTranspose1dOptions,
    function: conv_transpose1d,
    weight: "`(in_channels, out_channels / groups, k)`."
);

impl ConvTranspose1d {
    /// The forward pass to an output of length `output_size` (`[L]`, or the output's whole shape), which picks
    /// the output padding: PyTorch's `forward(input, output_size)`.
    pub fn forward_with_output_size(&self, x: &Tensor, output_size: &[usize]) -> Result<Tensor> {
        let o = &self.options;
        let two = o.as_2d();
        let output_padding = output_padding(
            ("ConvTranspose1d", 1),
            x,
            output_size,
            |input| vec![smallest_output([1, input[0]], [1, self.kernel_size], &two)[1]],
            &[o.stride],
        )?;
        let opts = ConvTranspose1dOptions {
            output_padding: output_padding[0],
            ..*o
        };
        let bias = self.bias.as_ref().map(Param::data);
        conv_transpose1d(x, &self.weight.data(), bias.as_ref(), &opts)
    }
}

/// PyTorch's `_ConvTransposeNd._output_padding`: the output padding that makes the output of `x` (batched or
/// not, `dims` spatial dimensions) `output_size` (its spatial sizes, or all its sizes), given the smallest
/// output `smallest(spatial input sizes)`; each size must lie within `stride - 1` above the smallest.
fn output_padding(
    (layer, dims): (&'static str, usize),
    x: &Tensor,
    output_size: &[usize],
    smallest: impl Fn(&[usize]) -> Vec<i64>,
    stride: &[usize],
) -> Result<Vec<usize>> {
    let leading = if x.rank() == dims + 2 { 2 } else { 1 };
    if x.rank() < leading + dims {
        return Err(Error::invalid(
            layer,
            format!(
                "Expected {}D (unbatched) or {}D (batched) input, but got input of size: {}",
                dims + 1,
                dims + 2,
                x.shape()
            ),
        ));
    }
    let output_size = if output_size.len() == leading + dims {
        &output_size[leading..]
    } else {
        output_size
    };
    if output_size.len() != dims {
        return Err(Error::invalid(
            layer,
            format!(
                "ConvTranspose{dims}D: for {}D input, output_size must have {dims} or {} elements (got {})",
                x.rank(),
                leading + dims,
                output_size.len()
            ),
        ));
    }
    let spatial = &x.shape().dims()[leading..];
    let min = smallest(spatial);
    let max: Vec<i64> = min.iter().zip(stride).map(|(m, &s)| m + s as i64 - 1).collect();
    let list = |v: &[i64]| format!("[{}]", v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "));
    let wanted: Vec<i64> = output_size.iter().map(|&s| s as i64).collect();
    if wanted
        .iter()
        .zip(min.iter().zip(&max))
        .any(|(w, (lo, hi))| w < lo || w > hi)
    {
        let input: Vec<i64> = x.shape().dims()[2.min(x.rank())..].iter().map(|&s| s as i64).collect();
        return Err(Error::invalid(
            layer,
            format!(
                "requested an output size of {}, but valid sizes range from {} to {} (for an input of torch.Size({}))",
                list(&wanted),
                list(&min),
                list(&max),
                list(&input)
            ),
        ));
    }
    Ok(wanted.iter().zip(&min).map(|(w, m)| (w - m) as usize).collect())
}
