//! 1-d convolutions (PyTorch's `conv1d`, `conv_transpose1d`): the 2-d ones on inputs of one row, a kernel of
//! one row, checked first with PyTorch's 1-d sentences.

use super::transposed::check_transposed;
use super::{Conv2dOptions, ConvTranspose2dOptions, Padding2d, check_convolution, conv_transpose2d, conv2d, pads};
use crate::{Error, Result, Tensor};

/// How a 1-d convolution pads its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding1d {
    /// Zeros added on both sides.
    Explicit(usize),
    /// No padding (PyTorch's `padding='valid'`).
    Valid,
    /// Padding that keeps the length at stride 1 (PyTorch's `padding='same'`); an odd total puts the extra
    /// zero at the end, as PyTorch does.
    Same,
}

/// The arguments of a 1-d convolution besides its tensors (PyTorch's `conv1d` keywords).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv1dOptions {
    /// Step between applications.
    pub stride: usize,
    /// Padding of the input.
    pub padding: Padding1d,
    /// Spacing between kernel elements.
    pub dilation: usize,
    /// Number of blocked groups of channels.
    pub groups: usize,
}

impl Default for Conv1dOptions {
    fn default() -> Self {
        Conv1dOptions {
            stride: 1,
            padding: Padding1d::Explicit(0),
            dilation: 1,
            groups: 1,
        }
    }
}

impl Conv1dOptions {
    /// The same convolution on inputs of height 1.
    pub(crate) fn as_2d(&self) -> Conv2dOptions {
        Conv2dOptions {
            stride: [1, self.stride],
            padding: match self.padding {
                Padding1d::Explicit(p) => Padding2d::Explicit(0, p),
                Padding1d::Valid => Padding2d::Valid,
                Padding1d::Same => Padding2d::Same,
            },
            dilation: [1, self.dilation],
            groups: self.groups,
        }
    }
}

/// The arguments of a transposed 1-d convolution besides its tensors (PyTorch's `conv_transpose1d` keywords).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvTranspose1dOptions {
    /// Step between applications.
    pub stride: usize,
    /// `dilation · (kernel - 1) - padding` zeros on both sides of the input.
    pub padding: usize,
    /// Zeros added to one side of the output, below the stride or the dilation.
    pub output_padding: usize,
    /// Number of blocked groups of channels.
    pub groups: usize,
    /// Spacing between kernel elements.
    pub dilation: usize,
}

impl Default for ConvTranspose1dOptions {
    fn default() -> Self {
        ConvTranspose1dOptions {
            stride: 1,
            padding: 0,
            output_padding: 0,
            groups: 1,
            dilation: 1,
        }
    }
}

impl ConvTranspose1dOptions {
    /// The same convolution on inputs of height 1.
    pub(crate) fn as_2d(&self) -> ConvTranspose2dOptions {
        ConvTranspose2dOptions {
            stride: [1, self.stride],
            padding: [0, self.padding],
            output_padding: [0, self.output_padding],
            groups: self.groups,
            dilation: [1, self.dilation],
        }
    }
}

/// Fails unless `x` is `(C, L)` or `(N, C, L)` (PyTorch's sentence, naming `op`).
fn check_rank(op: &'static str, x: &Tensor) -> Result<()> {
    if matches!(x.rank(), 2 | 3) {
        return Ok(());
    }
    Err(Error::invalid(
        op,
        format!(
            "Expected 2D (unbatched) or 3D (batched) input to {op}, but got input of size: {}",
            x.shape()
        ),
    ))
}

/// PyTorch's `F.conv1d(x, weight, bias, stride, padding, dilation, groups)` on `(N, C, L)` or `(C, L)`, weight
/// `(O, C / groups, k)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Conv1dOptions, Padding1d, conv1d};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [1, 1, 3]).unwrap();
/// let w = Tensor::ones([1, 1, 2], nn::DType::F32);
/// let opts = Conv1dOptions { padding: Padding1d::Explicit(1), ..Default::default() };
/// let y = conv1d(&x, &w, None, &opts).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 5.0, 3.0]);
/// ```
pub fn conv1d(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>, opts: &Conv1dOptions) -> Result<Tensor> {
    let op = "conv1d";
    check_rank(op, x)?;
    if x.rank() == 2 {
        return conv1d(&x.unsqueeze(0)?, weight, bias, opts)?.squeeze(0);
    }
    let two = opts.as_2d();
    if two.stride[1] == 0 || two.dilation[1] == 0 || (opts.padding == Padding1d::Same && opts.stride != 1) {
        // conv2d's sentences for these do not depend on the rank.
        return conv2d(&x.unsqueeze(2)?, weight, bias, &two);
    }
    let padding = |k: &[usize]| vec![pads(&two, [1, k[0]])[1]];
    check_convolution(op, (x, weight, bias), opts.groups, padding, &[opts.dilation])?;
    conv2d(&x.unsqueeze(2)?, &weight.unsqueeze(2)?, bias, &two)?.squeeze(2)
}

/// PyTorch's `F.conv_transpose1d(x, weight, bias, stride, padding, output_padding, groups, dilation)` on
/// `(N, C_in, L)` or `(C_in, L)`, weight `(C_in, C_out / groups, k)`: the output's length is
/// `(L - 1)·stride - 2·padding + dilation·(k - 1) + output_padding + 1`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{ConvTranspose1dOptions, conv_transpose1d};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], [1, 1, 2]).unwrap();
/// let w = Tensor::from_vec(vec![1.0f32, 10.0], [1, 1, 2]).unwrap();
/// let opts = ConvTranspose1dOptions { stride: 2, ..Default::default() };
/// let y = conv_transpose1d(&x, &w, None, &opts).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 10.0, 2.0, 20.0]);
/// ```
pub fn conv_transpose1d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    opts: &ConvTranspose1dOptions,
) -> Result<Tensor> {
    let op = "conv_transpose1d";
    check_rank(op, x)?;
    if x.rank() == 2 {
        return conv_transpose1d(&x.unsqueeze(0)?, weight, bias, opts)?.squeeze(0);
    }
    check_transposed(op, (x, weight, bias), opts.groups)?;
    conv_transpose2d(&x.unsqueeze(2)?, &weight.unsqueeze(2)?, bias, &opts.as_2d())?.squeeze(2)
}
