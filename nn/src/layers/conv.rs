//! [`Conv1d`], [`Conv2d`]: convolution layers, and what they share with the transposed ones
//! (`conv_transpose.rs`): the checks of the sizes, the initialisation, the `repr`.

use crate::functional::{Conv1dOptions, Conv2dOptions, Padding1d, Padding2d, conv1d, conv2d};
use crate::module::ExtraRepr;
use crate::{DType, Error, Module, Param, Result, Tensor, init};

/// PyTorch's `_ConvNd` checks of a layer's sizes: `groups` positive and dividing both channel counts; a
/// kernel, stride and dilation of positive sizes.
pub(super) fn check_sizes(
    layer: &'static str,
    (in_channels, out_channels, groups): (usize, usize, usize),
    kernel: &[usize],
    stride: &[usize],
    dilation: &[usize],
) -> Result<()> {
    if groups == 0 {
        return Err(Error::invalid(layer, "groups must be a positive integer"));
    }
    if !in_channels.is_multiple_of(groups) {
        return Err(Error::invalid(layer, "in_channels must be divisible by groups"));
    }
    if !out_channels.is_multiple_of(groups) {
        return Err(Error::invalid(layer, "out_channels must be divisible by groups"));
    }
    if [kernel, stride, dilation].iter().any(|sizes| sizes.contains(&0)) {
        return Err(Error::invalid(
            layer,
            "kernel size, stride and dilation must be positive",
        ));
    }
    Ok(())
}

/// A weight of `shape` (in `f32`) initialised `kaiming_uniform_(a=sqrt(5))` and, when `bias`, a bias of
/// `channels` uniform in `±1/sqrt(fan_in)`, the weight's fan-in (`shape[1] · kernel`): PyTorch's
/// `_ConvNd.reset_parameters`.
pub(super) fn conv_params(shape: &[usize], channels: usize, bias: bool) -> Result<(Param, Option<Param>)> {
    let weight = Tensor::try_zeros(shape, DType::F32)?;
    init::kaiming_uniform_(&weight, 5f64.sqrt())?;
    let fan_in = shape[1..].iter().product();
    let bias = if bias {
        let b = Tensor::try_zeros([channels], DType::F32)?;
        init::bias_uniform_(&b, fan_in)?;
        Some(Param::new(b))
    } else {
        None
    };
    Ok((Param::new(weight), bias))
}

/// Sizes as Python prints a tuple: `(3,)`, `(3, 5)`.
pub(super) fn tuple(sizes: &[usize]) -> String {
    match sizes {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// What a convolution layer's `repr` shows: PyTorch's `_ConvNd.extra_repr`, each entry left out at its
/// default. `padding` is the tuple or string shown, `None` at zeros.
pub(super) struct ConvRepr<'a> {
    pub channels: (usize, usize),
    pub kernel: &'a [usize],
    pub stride: &'a [usize],
    pub padding: Option<String>,
    pub dilation: &'a [usize],
    pub output_padding: &'a [usize],
    pub groups: usize,
    pub bias: bool,
}

impl ConvRepr<'_> {
    pub(super) fn extra_repr(&self) -> String {
        let mut s = format!(
            "{}, {}, kernel_size={}, stride={}",
            self.channels.0,
            self.channels.1,
            tuple(self.kernel),
            tuple(self.stride)
        );
        if let Some(padding) = &self.padding {
            s.push_str(&format!(", padding={padding}"));
        }
        if self.dilation.iter().any(|&d| d != 1) {
            s.push_str(&format!(", dilation={}", tuple(self.dilation)));
        }
        if self.output_padding.iter().any(|&p| p != 0) {
            s.push_str(&format!(", output_padding={}", tuple(self.output_padding)));
        }
        if self.groups != 1 {
            s.push_str(&format!(", groups={}", self.groups));
        }
        if !self.bias {
            s.push_str(", bias=False");
        }
        s
    }
}

/// PyTorch's `Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
/// bias=True)`: weight `(out, in / groups, k)` initialised `kaiming_uniform_(a=sqrt(5))`, bias uniform in
/// `±1/sqrt(fan_in)`.
///
/// ```
/// use nn::prelude::*;
/// use nn::functional::{Conv1dOptions, Padding1d};
/// let conv = Conv1d::new(16, 32, 3, Conv1dOptions { stride: 2, padding: Padding1d::Explicit(1), ..Default::default() }, true).unwrap();
/// assert_eq!(conv.to_string(), "Conv1d(16, 32, kernel_size=(3,), stride=(2,), padding=(1,))");
/// let y = conv.forward(Tensor::zeros([4, 16, 50], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[4, 32, 25]);
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct Conv1d {
    /// `(out_channels, in_channels / groups, k)`.
    pub weight: Param,
    /// `(out_channels)`, when the layer has a bias.
    pub bias: Option<Param>,
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// The kernel's length.
    pub kernel_size: usize,
    /// Stride, padding, dilation and groups.
    #[module(skip)]
    pub options: Conv1dOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl Conv1d {
    /// A convolution in `f32`, initialised as PyTorch does; `groups` must divide both channel counts.
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: usize,
        options: Conv1dOptions,
        bias: bool,
    ) -> Result<Conv1d> {
        let o = &options;
        let channels = (in_channels, out_channels, o.groups);
        check_sizes("Conv1d", channels, &[kernel_size], &[o.stride], &[o.dilation])?;
        if o.padding == Padding1d::Same && o.stride != 1 {
            return Err(Error::invalid(
                "Conv1d",
                "padding='same' is not supported for strided convolutions",
            ));
        }
        let shape = [out_channels, in_channels / o.groups, kernel_size];
        let (weight, bias) = conv_params(&shape, out_channels, bias)?;
        Ok(Conv1d {
            weight,
            bias,
            in_channels,
            out_channels,
            kernel_size,
            options,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for Conv1d {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        ConvRepr {
            channels: (self.in_channels, self.out_channels),
            kernel: &[self.kernel_size],
            stride: &[o.stride],
            padding: match o.padding {
                Padding1d::Explicit(0) => None,
                Padding1d::Explicit(p) => Some(tuple(&[p])),
                Padding1d::Valid => Some("valid".into()),
                Padding1d::Same => Some("same".into()),
            },
            dilation: &[o.dilation],
            output_padding: &[],
            groups: o.groups,
            bias: self.bias.is_some(),
        }
        .extra_repr()
    }
}

reads_input!(Conv1d, |conv, x| {
    let bias = conv.bias.as_ref().map(Param::data);
    conv1d(x, &conv.weight.data(), bias.as_ref(), &conv.options)
});

/// PyTorch's `nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
/// bias=True)`: weight `(out, in / groups, kH, kW)` initialised `kaiming_uniform_(a=sqrt(5))`, bias uniform in
/// `±1/sqrt(fan_in)`.
///
/// ```
/// use nn::prelude::*;
/// use nn::functional::{Conv2dOptions, Padding2d};
/// let conv = Conv2d::new(16, 14, [3, 3], Conv2dOptions { padding: Padding2d::Explicit(1, 1), ..Default::default() }, false).unwrap();
/// assert_eq!(conv.to_string(), "Conv2d(16, 14, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)");
/// let y = conv.forward(Tensor::zeros([2, 16, 5, 5], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[2, 14, 5, 5]);
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct Conv2d {
    /// `(out_channels, in_channels / groups, kH, kW)`.
    pub weight: Param,
    /// `(out_channels)`, when the layer has a bias.
    pub bias: Option<Param>,
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// `(kH, kW)`.
    pub kernel_size: [usize; 2],
    /// Stride, padding, dilation and groups.
    #[module(skip)]
    pub options: Conv2dOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl Conv2d {
    /// A new layer with this one's configuration, mode and hooks around other parameters (what PyTorch's
    /// `copy.deepcopy` of the layer followed by assigning `weight` and `bias` gives).
    pub(crate) fn with_params(&self, weight: Param, bias: Option<Param>) -> Conv2d {
        Conv2d {
            weight,
            bias,
            in_channels: self.in_channels,
            out_channels: self.out_channels,
            kernel_size: self.kernel_size,
            options: self.options,
            training: self.training,
            hooks: self.hooks.clone(),
        }
    }

    /// A convolution in `f32`, initialised as PyTorch does; `groups` must divide both channel counts.
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: [usize; 2],
        options: Conv2dOptions,
        bias: bool,
    ) -> Result<Conv2d> {
        let o = &options;
        let channels = (in_channels, out_channels, o.groups);
        check_sizes("Conv2d", channels, &kernel_size, &o.stride, &o.dilation)?;
        if o.padding == Padding2d::Same && o.stride != [1, 1] {
            return Err(Error::invalid(
                "Conv2d",
                "padding='same' is not supported for strided convolutions",
            ));
        }
        let shape = [out_channels, in_channels / o.groups, kernel_size[0], kernel_size[1]];
        let (weight, bias) = conv_params(&shape, out_channels, bias)?;
        Ok(Conv2d {
            weight,
            bias,
            in_channels,
            out_channels,
            kernel_size,
            options,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for Conv2d {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        ConvRepr {
            channels: (self.in_channels, self.out_channels),
            kernel: &self.kernel_size,
            stride: &o.stride,
            padding: match o.padding {
                Padding2d::Explicit(0, 0) => None,
                Padding2d::Explicit(h, w) => Some(tuple(&[h, w])),
                Padding2d::Valid => Some("valid".into()),
                Padding2d::Same => Some("same".into()),
            },
            dilation: &o.dilation,
            output_padding: &[],
            groups: o.groups,
            bias: self.bias.is_some(),
        }
        .extra_repr()
    }
}

reads_input!(Conv2d, |conv, x| {
    let bias = conv.bias.as_ref().map(Param::data);
    conv2d(x, &conv.weight.data(), bias.as_ref(), &conv.options)
});
