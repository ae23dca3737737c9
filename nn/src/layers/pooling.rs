//! [`MaxPool2d`], [`AvgPool2d`] and [`AdaptiveAvgPool2d`]: PyTorch's 2-d pooling layers, over
//! [`functional::max_pool2d`](crate::functional::max_pool2d) and its siblings; [`MaxPool1d`], [`AvgPool1d`]
//! and [`AdaptiveAvgPool1d`] over the 1-d functions.

use crate::functional::{
    AvgPool1dOptions, AvgPool2dOptions, MaxPool1dOptions, MaxPool2dOptions, OutputSize2d, Size2d, adaptive_avg_pool1d,
    adaptive_avg_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool1d_with_indices, max_pool2d,
    max_pool2d_with_indices,
};
use crate::module::ExtraRepr;
use crate::{Module, Result, Tensor};

/// PyTorch's `nn.MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False)`: the largest
/// entry of every window of `(N, C, H, W)` or `(C, H, W)`. With `return_indices=True`, PyTorch's forward also
/// returns each maximum's position: here [`MaxPool2d::forward_with_indices`].
///
/// ```
/// use nn::prelude::*;
/// use nn::functional::MaxPool2dOptions;
/// let pool = MaxPool2d::with_options(3, MaxPool2dOptions { stride: Some(2.into()), padding: Some(1.into()), ..Default::default() });
/// assert_eq!(pool.to_string(), "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)");
/// assert_eq!(pool.forward(Tensor::zeros([2, 8, 9, 9], DType::F32))?.shape(), &[2, 8, 5, 5]);
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct MaxPool2d {
    /// The window.
    #[module(skip)]
    pub kernel_size: Size2d,
    /// Stride, padding, dilation and ceil mode.
    #[module(skip)]
    pub options: MaxPool2dOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl MaxPool2d {
    /// Windows of `kernel_size` (a number or `(h, w)`), stride the window, no padding.
    pub fn new(kernel_size: impl Into<Size2d>) -> MaxPool2d {
        MaxPool2d::with_options(kernel_size, MaxPool2dOptions::default())
    }

    /// Windows of `kernel_size` with PyTorch's other arguments; they are checked when the layer runs.
    pub fn with_options(kernel_size: impl Into<Size2d>, options: MaxPool2dOptions) -> MaxPool2d {
        MaxPool2d {
            kernel_size: kernel_size.into(),
            options,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// The output and each maximum's position in its `H·W` plane (`int64`), as PyTorch's layer with
    /// `return_indices=True` returns them ([`max_pool2d_with_indices`]). The layer's forward hooks, which
    /// see one output tensor, do not run for this form.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let x = Tensor::from_vec(vec![1.0f32, 4.0, 3.0, 2.0], [1, 1, 2, 2])?;
    /// let (y, at) = MaxPool2d::new(2).forward_with_indices(&x)?;
    /// assert_eq!((y.to_vec::<f32>()?, at.to_vec::<i64>()?), (vec![4.0], vec![1]));
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn forward_with_indices(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        max_pool2d_with_indices(x, self.kernel_size, self.options)
    }
}

impl ExtraRepr for MaxPool2d {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        format!(
            "kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
            self.kernel_size,
            o.stride.unwrap_or(self.kernel_size),
            o.padding.unwrap_or(Size2d::Both(0)),
            o.dilation.unwrap_or(Size2d::Both(1)),
            if o.ceil_mode { "True" } else { "False" }
        )
    }
}

reads_input!(MaxPool2d, |layer, x| max_pool2d(x, layer.kernel_size, layer.options));

/// PyTorch's `nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
/// divisor_override=None)`: the mean of every window of `(N, C, H, W)` or `(C, H, W)`. As PyTorch's, its
/// `repr` prints the window, stride and padding only.
///
/// ```
/// use nn::prelude::*;
/// let pool = AvgPool2d::new((2, 3));
/// assert_eq!(pool.to_string(), "AvgPool2d(kernel_size=(2, 3), stride=(2, 3), padding=0)");
/// assert_eq!(pool.forward(Tensor::ones([1, 4, 6], DType::F32))?.to_vec::<f32>()?, vec![1.0; 4]);
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct AvgPool2d {
    /// The window.
    #[module(skip)]
    pub kernel_size: Size2d,
    /// Stride, padding, ceil mode, and the divisor's rule.
    #[module(skip)]
    pub options: AvgPool2dOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl AvgPool2d {
    /// Windows of `kernel_size` (a number or `(h, w)`), stride the window, no padding.
    pub fn new(kernel_size: impl Into<Size2d>) -> AvgPool2d {
        AvgPool2d::with_options(kernel_size, AvgPool2dOptions::default())
    }

    /// Windows of `kernel_size` with PyTorch's other arguments; they are checked when the layer runs.
    pub fn with_options(kernel_size: impl Into<Size2d>, options: AvgPool2dOptions) -> AvgPool2d {
        AvgPool2d {
            kernel_size: kernel_size.into(),
            options,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for AvgPool2d {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        format!(
            "kernel_size={}, stride={}, padding={}",
            self.kernel_size,
            o.stride.unwrap_or(self.kernel_size),
            o.padding.unwrap_or(Size2d::Both(0))
        )
    }
}

reads_input!(AvgPool2d, |layer, x| avg_pool2d(x, layer.kernel_size, layer.options));

/// PyTorch's `nn.AdaptiveAvgPool2d(output_size)`: `(N, C, H, W)` or `(C, H, W)` averaged to `output_size`
/// (a number, or `(h, w)` with `None` keeping the input's size), whatever the input's size.
///
/// ```
/// use nn::prelude::*;
/// let pool = AdaptiveAvgPool2d::new(1);
/// assert_eq!(pool.to_string(), "AdaptiveAvgPool2d(output_size=1)");
/// assert_eq!(pool.forward(Tensor::ones([2, 3, 7, 5], DType::F32))?.shape(), &[2, 3, 1, 1]);
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct AdaptiveAvgPool2d {
    /// The output's spatial size.
    #[module(skip)]
    pub output_size: OutputSize2d,
    training: bool,
    hooks: crate::Hooks,
}

impl AdaptiveAvgPool2d {
    /// Pools to `output_size`: `7`, `(5, 7)`, or `OutputSize2d::Each(None, Some(7))`.
    pub fn new(output_size: impl Into<OutputSize2d>) -> AdaptiveAvgPool2d {
        AdaptiveAvgPool2d {
            output_size: output_size.into(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for AdaptiveAvgPool2d {
    fn extra_repr(&self) -> String {
        format!("output_size={}", self.output_size)
    }
}

reads_input!(AdaptiveAvgPool2d, |layer, x| adaptive_avg_pool2d(x, layer.output_size));

/// PyTorch's `nn.MaxPool1d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
/// ceil_mode=False)` on `(N, C, L)` or `(C, L)`; `return_indices=True` is
/// [`MaxPool1d::forward_with_indices`].
///
/// ```
/// use nn::prelude::*;
/// let pool = MaxPool1d::new(3);
/// assert_eq!(pool.to_string(), "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)");
/// assert_eq!(pool.forward(Tensor::zeros([2, 4, 9], DType::F32)).unwrap().shape(), &[2, 4, 3]);
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct MaxPool1d {
    /// The window.
    #[module(skip)]
    pub kernel_size: usize,
    /// Stride, padding, dilation and ceil mode.
    #[module(skip)]
    pub options: MaxPool1dOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl MaxPool1d {
    /// Windows of `kernel_size`, stride the window, no padding.
    pub fn new(kernel_size: usize) -> MaxPool1d {
        MaxPool1d::with_options(kernel_size, MaxPool1dOptions::default())
    }

    /// Windows of `kernel_size` with PyTorch's other arguments; they are checked when the layer runs.
    pub fn with_options(kernel_size: usize, options: MaxPool1dOptions) -> MaxPool1d {
        MaxPool1d {
            kernel_size,
            options,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// The output and each maximum's position along `L` (`int64`), as PyTorch's layer with
    /// `return_indices=True` returns them; the layer's forward hooks do not run for this form.
    pub fn forward_with_indices(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        max_pool1d_with_indices(x, self.kernel_size, self.options)
    }
}

impl ExtraRepr for MaxPool1d {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        format!(
            "kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
            self.kernel_size,
            o.stride.unwrap_or(self.kernel_size),
            o.padding,
            o.dilation.unwrap_or(1),
            if o.ceil_mode { "True" } else { "False" }
        )
    }
}

reads_input!(MaxPool1d, |layer, x| max_pool1d(x, layer.kernel_size, layer.options));

/// PyTorch's `nn.AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)` on
/// `(N, C, L)` or `(C, L)`; as PyTorch's, its `repr` prints one-element tuples.
///
/// ```
/// use nn::prelude::*;
/// let pool = AvgPool1d::new(2);
/// assert_eq!(pool.to_string(), "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))");
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct AvgPool1d {
    /// The window.
    #[module(skip)]
    pub kernel_size: usize,
    /// Stride, padding, ceil mode, and whether the padding counts.
    #[module(skip)]
    pub options: AvgPool1dOptions,
    training: bool,
    hooks: crate::Hooks,
}

impl AvgPool1d {
    /// Windows of `kernel_size`, stride the window, no padding.
    pub fn new(kernel_size: usize) -> AvgPool1d {
        AvgPool1d::with_options(kernel_size, AvgPool1dOptions::default())
    }

    /// Windows of `kernel_size` with PyTorch's other arguments; they are checked when the layer runs.
    pub fn with_options(kernel_size: usize, options: AvgPool1dOptions) -> AvgPool1d {
        AvgPool1d {
            kernel_size,
            options,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for AvgPool1d {
    fn extra_repr(&self) -> String {
        let o = &self.options;
        format!(
            "kernel_size=({},), stride=({},), padding=({},)",
            self.kernel_size,
            o.stride.unwrap_or(self.kernel_size),
            o.padding
        )
    }
}

reads_input!(AvgPool1d, |layer, x| avg_pool1d(x, layer.kernel_size, layer.options));

/// PyTorch's `nn.AdaptiveAvgPool1d(output_size)`: `(N, C, L)` or `(C, L)` averaged to `output_size`.
///
/// ```
/// use nn::prelude::*;
/// let pool = AdaptiveAvgPool1d::new(5);
/// assert_eq!(pool.to_string(), "AdaptiveAvgPool1d(output_size=5)");
/// assert_eq!(pool.forward(Tensor::ones([2, 3, 7], DType::F32)).unwrap().shape(), &[2, 3, 5]);
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct AdaptiveAvgPool1d {
    /// The output's length.
    #[module(skip)]
    pub output_size: usize,
    training: bool,
    hooks: crate::Hooks,
}

impl AdaptiveAvgPool1d {
    /// Pools to `output_size`.
    pub fn new(output_size: usize) -> AdaptiveAvgPool1d {
        AdaptiveAvgPool1d {
            output_size,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for AdaptiveAvgPool1d {
    fn extra_repr(&self) -> String {
        format!("output_size={}", self.output_size)
    }
}

reads_input!(AdaptiveAvgPool1d, |layer, x| adaptive_avg_pool1d(x, layer.output_size));
