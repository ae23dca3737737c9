//! [`Conv1d`], [`Conv2d`]: convolution layers, and what every convolution layer shares (the transposed ones
//! in `conv_transpose.rs`): [`conv_layer!`] declares the layer from its options' [`LayerOptions`]; the checks
//! of the sizes, the initialisation, the `repr`.

use crate::functional::{
    Conv1dOptions, Conv2dOptions, ConvTranspose1dOptions, ConvTranspose2dOptions, Padding1d, Padding2d, conv1d, conv2d,
};
use crate::{DType, Error, Module, Param, Result, Tensor, init};

/// PyTorch's `_ConvNd` checks of a layer's sizes: `groups` positive and dividing both channel counts; a
/// kernel, stride and dilation of positive sizes.
fn check_sizes(
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
fn conv_params(shape: &[usize], channels: usize, bias: bool) -> Result<(Param, Option<Param>)> {
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
fn tuple(sizes: &[usize]) -> String {
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
struct ConvRepr<'a> {
    channels: (usize, usize),
    kernel: &'a [usize],
    stride: &'a [usize],
    padding: Option<String>,
    dilation: &'a [usize],
    output_padding: &'a [usize],
    groups: usize,
    bias: bool,
}

impl ConvRepr<'_> {
    fn extra_repr(&self) -> String {
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

/// What a convolution layer's options say about it: the sizes per spatial dimension, the groups, the padding
/// as `repr` shows it, whether the layer is transposed (its weight `(in, out / groups, …)`), and the checks of
/// the options that are not sizes.
pub(super) trait LayerOptions {
    /// Whether the weight is `(in, out / groups, kernel…)` (transposed) or `(out, in / groups, kernel…)`.
    const TRANSPOSED: bool;
    fn stride(&self) -> Vec<usize>;
    fn dilation(&self) -> Vec<usize>;
    fn groups(&self) -> usize;
    /// `None` at zeros, else the tuple or the string PyTorch prints.
    fn padding_repr(&self) -> Option<String>;
    /// Empty for a plain convolution.
    fn output_padding(&self) -> Vec<usize> {
        Vec::new()
    }
    /// PyTorch's refusal of `padding='same'` with a stride.
    fn check(&self, layer: &'static str) -> Result<()> {
        let _ = layer;
        Ok(())
    }
}

/// The refusal of `padding='same'` with a stride.
fn check_same(layer: &'static str, same: bool, stride: &[usize]) -> Result<()> {
    if same && stride.iter().any(|&s| s != 1) {
        return Err(Error::invalid(
            layer,
            "padding='same' is not supported for strided convolutions",
        ));
    }
    Ok(())
}

impl LayerOptions for Conv1dOptions {
    const TRANSPOSED: bool = false;
    fn stride(&self) -> Vec<usize> {
        vec![self.stride]
    }
    fn dilation(&self) -> Vec<usize> {
        vec![self.dilation]
    }
    fn groups(&self) -> usize {
        self.groups
    }
    fn padding_repr(&self) -> Option<String> {
        match self.padding {
            Padding1d::Explicit(0) => None,
            Padding1d::Explicit(p) => Some(tuple(&[p])),
            Padding1d::Valid => Some("valid".into()),
            Padding1d::Same => Some("same".into()),
        }
    }
    fn check(&self, layer: &'static str) -> Result<()> {
        check_same(layer, self.padding == Padding1d::Same, &[self.stride])
    }
}

impl LayerOptions for Conv2dOptions {
    const TRANSPOSED: bool = false;
    fn stride(&self) -> Vec<usize> {
        self.stride.to_vec()
    }
    fn dilation(&self) -> Vec<usize> {
        self.dilation.to_vec()
    }
    fn groups(&self) -> usize {
        self.groups
    }
    fn padding_repr(&self) -> Option<String> {
        match self.padding {
            Padding2d::Explicit(0, 0) => None,
            Padding2d::Explicit(h, w) => Some(tuple(&[h, w])),
            Padding2d::Valid => Some("valid".into()),
            Padding2d::Same => Some("same".into()),
        }
    }
    fn check(&self, layer: &'static str) -> Result<()> {
        check_same(layer, self.padding == Padding2d::Same, &self.stride)
    }
}

impl LayerOptions for ConvTranspose1dOptions {
    const TRANSPOSED: bool = true;
    fn stride(&self) -> Vec<usize> {
        vec![self.stride]
    }
    fn dilation(&self) -> Vec<usize> {
        vec![self.dilation]
    }
    fn groups(&self) -> usize {
        self.groups
    }
    fn padding_repr(&self) -> Option<String> {
        (self.padding != 0).then(|| tuple(&[self.padding]))
    }
    fn output_padding(&self) -> Vec<usize> {
        vec![self.output_padding]
    }
}

impl LayerOptions for ConvTranspose2dOptions {
    const TRANSPOSED: bool = true;
    fn stride(&self) -> Vec<usize> {
        self.stride.to_vec()
    }
    fn dilation(&self) -> Vec<usize> {
        self.dilation.to_vec()
    }
    fn groups(&self) -> usize {
        self.groups
    }
    fn padding_repr(&self) -> Option<String> {
        (self.padding != [0, 0]).then(|| tuple(&self.padding))
    }
    fn output_padding(&self) -> Vec<usize> {
        self.output_padding.to_vec()
    }
}

/// The kernel's sizes of a layer: one length, or one per spatial dimension.
pub(super) trait KernelSize: Copy {
    fn sizes(&self) -> Vec<usize>;
}

impl KernelSize for usize {
    fn sizes(&self) -> Vec<usize> {
        vec![*self]
    }
}

impl<const N: usize> KernelSize for [usize; N] {
    fn sizes(&self) -> Vec<usize> {
        self.to_vec()
    }
}

/// The weight and bias of a new convolution layer `layer` (its options and sizes checked as PyTorch's
/// `_ConvNd` checks them): see [`conv_params`].
pub(super) fn new_params<O: LayerOptions>(
    layer: &'static str,
    (in_channels, out_channels): (usize, usize),
    kernel: &[usize],
    options: &O,
    bias: bool,
) -> Result<(Param, Option<Param>)> {
    let g = options.groups();
    check_sizes(
        layer,
        (in_channels, out_channels, g),
        kernel,
        &options.stride(),
        &options.dilation(),
    )?;
    options.check(layer)?;
    let mut shape = if O::TRANSPOSED {
        vec![in_channels, out_channels / g]
    } else {
        vec![out_channels, in_channels / g]
    };
    shape.extend_from_slice(kernel);
    conv_params(&shape, out_channels, bias)
}

/// PyTorch's `_ConvNd.extra_repr` of a layer.
pub(super) fn layer_repr<O: LayerOptions>(
    channels: (usize, usize),
    kernel: &[usize],
    options: &O,
    bias: bool,
) -> String {
    ConvRepr {
        channels,
        kernel,
        stride: &options.stride(),
        padding: options.padding_repr(),
        dilation: &options.dilation(),
        output_padding: &options.output_padding(),
        groups: options.groups(),
        bias,
    }
    .extra_repr()
}

/// A convolution layer: the struct (weight, bias, channels, kernel size, options), `new` (PyTorch's checks
/// and initialisation), its `repr` and its forward by `$function`.
macro_rules! conv_layer {
    (
        $(#[$doc:meta])* $layer:ident, kernel: $kernel:ty, options: $options:ty, function: $function:path,
        weight: $weight_doc:literal
    ) => {
        $(#[$doc])*
        #[derive(Module)]
        #[module(extra_repr)]
        pub struct $layer {
            #[doc = $weight_doc]
            pub weight: crate::Param,
            /// `(out_channels)`, when the layer has a bias.
            pub bias: Option<crate::Param>,
            /// Input channels.
            pub in_channels: usize,
            /// Output channels.
            pub out_channels: usize,
            /// The kernel's size.
            pub kernel_size: $kernel,
            /// Stride, padding, dilation, groups (and output padding).
            #[module(skip)]
            pub options: $options,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// A layer in `f32`, initialised as PyTorch does; `groups` must divide both channel counts.
            pub fn new(
                in_channels: usize,
                out_channels: usize,
                kernel_size: $kernel,
                options: $options,
                bias: bool,
            ) -> crate::Result<$layer> {
                use $crate::layers::conv::KernelSize;
                let channels = (in_channels, out_channels);
                let (weight, bias) =
                    $crate::layers::conv::new_params(stringify!($layer), channels, &kernel_size.sizes(), &options, bias)?;
                Ok($layer {
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

        impl crate::module::ExtraRepr for $layer {
            fn extra_repr(&self) -> String {
                use $crate::layers::conv::KernelSize;
                let channels = (self.in_channels, self.out_channels);
                $crate::layers::conv::layer_repr(channels, &self.kernel_size.sizes(), &self.options, self.bias.is_some())
            }
        }

        reads_input!($layer, |conv, x| {
            let bias = conv.bias.as_ref().map(crate::Param::data);
            $function(x, &conv.weight.data(), bias.as_ref(), &conv.options)
        });
    };
}

conv_layer!(
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
    Conv1d,
    kernel: usize,
    options: Conv1dOptions,
    function: conv1d,
    weight: "`(out_channels, in_channels / groups, k)`."
);

conv_layer!(
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
    Conv2d,
    kernel: [usize; 2],
    options: Conv2dOptions,
    function: conv2d,
    weight: "`(out_channels, in_channels / groups, kH, kW)`."
);

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
}
