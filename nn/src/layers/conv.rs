//! [`Conv2d`]: 2-d convolution.

use crate::functional::{Conv2dOptions, Padding2d, conv2d};
use crate::module::ExtraRepr;
use crate::{DType, Error, Module, Param, Result, Tensor, init};

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
        let g = options.groups;
        if g == 0 || !in_channels.is_multiple_of(g) || !out_channels.is_multiple_of(g) {
            return Err(Error::invalid(
                "Conv2d",
                format!("in_channels {in_channels} and out_channels {out_channels} must be divisible by groups {g}"),
            ));
        }
        if kernel_size.contains(&0) || options.stride.contains(&0) || options.dilation.contains(&0) {
            return Err(Error::invalid(
                "Conv2d",
                "kernel size, stride and dilation must be positive",
            ));
        }
        if options.padding == Padding2d::Same && options.stride != [1, 1] {
            return Err(Error::invalid(
                "Conv2d",
                "padding='same' is not supported for strided convolutions",
            ));
        }
        let weight = Tensor::try_zeros(
            [out_channels, in_channels / g, kernel_size[0], kernel_size[1]],
            DType::F32,
        )?;
        init::kaiming_uniform_(&weight, 5f64.sqrt())?;
        let fan_in = in_channels / g * kernel_size[0] * kernel_size[1];
        let bias = if bias {
            let b = Tensor::try_zeros([out_channels], DType::F32)?;
            init::bias_uniform_(&b, fan_in)?;
            Some(Param::new(b))
        } else {
            None
        };
        Ok(Conv2d {
            weight: Param::new(weight),
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
        let pair = |p: [usize; 2]| format!("({}, {})", p[0], p[1]);
        let o = &self.options;
        let mut s = format!(
            "{}, {}, kernel_size={}, stride={}",
            self.in_channels,
            self.out_channels,
            pair(self.kernel_size),
            pair(o.stride)
        );
        match o.padding {
            Padding2d::Explicit(0, 0) => {}
            Padding2d::Explicit(h, w) => s.push_str(&format!(", padding={}", pair([h, w]))),
            Padding2d::Valid => s.push_str(", padding=valid"),
            Padding2d::Same => s.push_str(", padding=same"),
        }
        if o.dilation != [1, 1] {
            s.push_str(&format!(", dilation={}", pair(o.dilation)));
        }
        if o.groups != 1 {
            s.push_str(&format!(", groups={}", o.groups));
        }
        if self.bias.is_none() {
            s.push_str(", bias=False");
        }
        s
    }
}

reads_input!(Conv2d, |conv, x| {
    let bias = conv.bias.as_ref().map(Param::data);
    conv2d(x, &conv.weight.data(), bias.as_ref(), &conv.options)
});
