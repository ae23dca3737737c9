//! The transposed 2-d convolution (PyTorch's `conv_transpose2d`): the input's gradient of the convolution that
//! maps its output to its input, run forward; its own gradients are that convolution (the input's) and the
//! convolution's weight gradient (the weight's).

use super::{Conv2dGrad, Geometry, check_dtypes, check_weight};
use crate::ops::run;
use crate::{Error, Result, Tensor};

/// The arguments of a transposed 2-d convolution besides its tensors (PyTorch's `conv_transpose2d` keywords).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvTranspose2dOptions {
    /// Step between applications, `(height, width)`.
    pub stride: [usize; 2],
    /// `dilation · (kernel - 1) - padding` zeros around the input: the padding of the convolution it
    /// transposes, `(height, width)`.
    pub padding: [usize; 2],
    /// Rows and columns added to one side of the output, each below the stride or the dilation.
    pub output_padding: [usize; 2],
    /// Number of blocked groups of channels.
    pub groups: usize,
    /// Spacing between kernel elements, `(height, width)`.
    pub dilation: [usize; 2],
}

impl Default for ConvTranspose2dOptions {
    fn default() -> Self {
        ConvTranspose2dOptions {
            stride: [1, 1],
            padding: [0, 0],
            output_padding: [0, 0],
            groups: 1,
            dilation: [1, 1],
        }
    }
}

/// PyTorch's `F.conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation)` on
/// `(N, C_in, H, W)` or `(C_in, H, W)`, weight `(C_in, C_out / groups, kH, kW)`: the output is
/// `(N, C_out, (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1, …)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{ConvTranspose2dOptions, conv_transpose2d};
/// let x = Tensor::ones([1, 1, 2, 2], nn::DType::F32);
/// let w = Tensor::ones([1, 1, 2, 2], nn::DType::F32);
/// let opts = ConvTranspose2dOptions { stride: [2, 2], ..Default::default() };
/// let y = conv_transpose2d(&x, &w, None, &opts).unwrap();
/// assert_eq!(y.shape(), &[1, 1, 4, 4]);
/// assert_eq!(y.sum_all().unwrap().item().unwrap(), 16.0);
/// ```
pub fn conv_transpose2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    opts: &ConvTranspose2dOptions,
) -> Result<Tensor> {
    let op = "conv_transpose2d";
    if x.rank() == 3 {
        return conv_transpose2d(&x.unsqueeze(0)?, weight, bias, opts)?.squeeze(0);
    }
    if x.rank() != 4 {
        return Err(Error::invalid(
            op,
            format!(
                "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: {}",
                x.shape()
            ),
        ));
    }
    let geo = transposed_geometry(x, weight, bias, opts)?;
    let y = run(&Conv2dGrad::input(geo), &[x, weight])?;
    match bias {
        Some(b) => y.add(&b.reshape([1, geo.c, 1, 1])?),
        None => Ok(y),
    }
}

/// The smallest output size `(H, W)` of [`conv_transpose2d`] of an input of spatial size `input` by a kernel
/// of size `kernel` (its size at `output_padding` 0), below 1 where the padding takes more than there is.
pub(crate) fn smallest_output(input: [usize; 2], kernel: [usize; 2], opts: &ConvTranspose2dOptions) -> [i64; 2] {
    [0, 1].map(|d| {
        let reach = (opts.dilation[d] * (kernel[d].max(1) - 1)) as i64;
        (input[d] as i64 - 1) * opts.stride[d] as i64 - 2 * opts.padding[d] as i64 + reach + 1
    })
}

/// PyTorch's checks of a transposed convolution's tensors, for any number of spatial dimensions: the weight's
/// rank the input's ([`check_weight`]), its first dimension the input's channels, the bias one value per output
/// channel (`weight[1] · groups`), matching dtypes.
pub(super) fn check_transposed(
    op: &'static str,
    (x, weight, bias): (&Tensor, &Tensor, Option<&Tensor>),
    groups: usize,
) -> Result<()> {
    let (xs, ws) = (x.shape(), weight.shape());
    check_weight(op, xs, ws, groups)?;
    if xs[1] != ws[0] {
        return Err(Error::invalid(
            op,
            format!(
                "Given transposed=1, weight of size {ws}, expected input{xs} to have {} channels, but got {} channels instead",
                ws[0], xs[1]
            ),
        ));
    }
    let c_out = ws[1] * groups;
    if let Some(b) = bias
        && b.shape() != &[c_out]
    {
        return Err(Error::invalid(
            op,
            format!(
                "Given transposed=1, weight of size {ws}, expected bias to be 1-dimensional with {c_out} elements, but got bias of size {} instead",
                b.shape()
            ),
        ));
    }
    check_dtypes(op, x, [Some(weight), bias])
}

/// Checks a transposed convolution's arguments (`x` of rank 4) and works out the sizes of the convolution it
/// is the input gradient of: that convolution's input is the output here, its output the input here.
fn transposed_geometry(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    opts: &ConvTranspose2dOptions,
) -> Result<Geometry> {
    let op = "conv_transpose2d";
    check_transposed(op, (x, weight, bias), opts.groups)?;
    let [n, c_in, h, w] = [0, 1, 2, 3].map(|d| x.shape()[d]);
    let [_, og, kh, kw] = [0, 1, 2, 3].map(|d| weight.shape()[d]);
    let (g, c_out) = (opts.groups, og * opts.groups);
    if x.numel() == 0 && n != 0 && c_in != 0 {
        return Err(Error::invalid(
            op,
            format!(
                "Only zero batch or zero channel inputs are supported, but got input shape: {}",
                x.shape()
            ),
        ));
    }
    if opts.stride.contains(&0) {
        return Err(Error::invalid(op, "non-positive stride is not supported"));
    }
    if opts.dilation.contains(&0) {
        return Err(Error::invalid(op, "non-positive dilation is not supported"));
    }
    let [oph, opw] = opts.output_padding;
    let [sh, sw] = opts.stride;
    let [dh, dw] = opts.dilation;
    if (oph >= sh && oph >= dh) || (opw >= sw && opw >= dw) {
        return Err(Error::invalid(
            op,
            format!(
                "output padding must be smaller than either stride or dilation, but got output_padding_height: {oph} \
                 output_padding_width: {opw} stride_height: {sh} stride_width: {sw} dilation_height: {dh} \
                 dilation_width: {dw}"
            ),
        ));
    }
    let [a, b] = smallest_output([h, w], [kh, kw], opts);
    let (a, b) = (a + oph as i64, b + opw as i64);
    if a < 1 || b < 1 {
        return Err(Error::invalid(
            op,
            format!(
                "Given input size per channel: ({h} x {w}). Calculated output size per channel: ({a} x {b}). \
                 Output size is too small"
            ),
        ));
    }
    // The convolution transposed: input (n, c_out, a, b), weight (c_in, c_out / g, kh, kw), output
    // (n, c_in, h, w).
    Ok(Geometry {
        n,
        c: c_out,
        h: a as usize,
        w: b as usize,
        o: c_in,
        g,
        kh,
        kw,
        ho: h,
        wo: w,
        pt: opts.padding[0],
        pl: opts.padding[1],
        stride: opts.stride,
        dilation: opts.dilation,
    })
}
