//! PyTorch's padding layers (`ZeroPad1d/2d/3d`, `ConstantPad1d/2d/3d`, `ReflectionPad1d/2d/3d`,
//! `ReplicationPad1d/2d/3d`, `CircularPad1d/2d/3d`), `PixelShuffle` / `PixelUnshuffle` and `ChannelShuffle`:
//! each holds its sizes and calls [`functional::pad`](crate::functional::pad) or the shuffles.

use crate::Module;
use crate::error::py_float;
use crate::functional::{PadMode, channel_shuffle, pad, pixel_shuffle, pixel_unshuffle};
use crate::module::ExtraRepr;

/// Sizes as Python prints a tuple.
fn tuple(sizes: &[i64]) -> String {
    format!(
        "({})",
        sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
    )
}

/// A padding layer of `$n` sizes (`(left, right, top, bottom, front, back)`'s first `$n`) in mode `$mode`.
macro_rules! padding_layer {
    ($(#[$doc:meta])* $layer:ident, $n:literal, $mode:expr) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $layer {
            /// `(before, after)` per padded dimension, the last dimension first; negative sizes crop.
            #[module(skip)]
            pub padding: [i64; $n],
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// With these sizes (PyTorch's tuple).
            pub fn new(padding: [i64; $n]) -> $layer {
                $layer {
                    padding,
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }

            /// The same size on every side (PyTorch's int).
            pub fn uniform(padding: i64) -> $layer {
                $layer::new([padding; $n])
            }
        }

        impl ExtraRepr for $layer {
            fn extra_repr(&self) -> String {
                tuple(&self.padding)
            }
        }

        reads_input!($layer, |layer, x| {
            // PyTorch's circular layers check the rank themselves (`_CircularPadNd._check_input_dim`).
            let dims = $n / 2;
            if matches!($mode, PadMode::Circular) && x.rank() != dims + 1 && x.rank() != dims + 2 {
                return Err(crate::Error::invalid(
                    stringify!($layer),
                    format!("expected {}D or {}D input (got {}D input)", dims + 1, dims + 2, x.rank()),
                ));
            }
            pad(x, &layer.padding, $mode)
        });
    };
}

padding_layer!(
    /// PyTorch's `nn.ZeroPad1d(padding)`: zeros added to the last dimension.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let layer = ZeroPad2d::new([1, 1, 2, 0]);
    /// assert_eq!(layer.to_string(), "ZeroPad2d((1, 1, 2, 0))");
    /// assert_eq!(layer.forward(Tensor::ones([1, 3, 3], DType::F32)).unwrap().shape(), &[1, 5, 5]);
    /// ```
    ZeroPad1d, 2, PadMode::Constant(0.0)
);
padding_layer!(
    /// PyTorch's `nn.ZeroPad2d(padding)`: zeros added to the last two dimensions.
    ZeroPad2d, 4, PadMode::Constant(0.0)
);
padding_layer!(
    /// PyTorch's `nn.ZeroPad3d(padding)`: zeros added to the last three dimensions.
    ZeroPad3d, 6, PadMode::Constant(0.0)
);
padding_layer!(
    /// PyTorch's `nn.ReflectionPad1d(padding)`: the last dimension mirrored about its edges.
    ReflectionPad1d, 2, PadMode::Reflect
);
padding_layer!(
    /// PyTorch's `nn.ReflectionPad2d(padding)`.
    ReflectionPad2d, 4, PadMode::Reflect
);
padding_layer!(
    /// PyTorch's `nn.ReflectionPad3d(padding)`.
    ReflectionPad3d, 6, PadMode::Reflect
);
padding_layer!(
    /// PyTorch's `nn.ReplicationPad1d(padding)`: the edge values repeated.
    ReplicationPad1d, 2, PadMode::Replicate
);
padding_layer!(
    /// PyTorch's `nn.ReplicationPad2d(padding)`.
    ReplicationPad2d, 4, PadMode::Replicate
);
padding_layer!(
    /// PyTorch's `nn.ReplicationPad3d(padding)`.
    ReplicationPad3d, 6, PadMode::Replicate
);
padding_layer!(
    /// PyTorch's `nn.CircularPad1d(padding)`: the input wrapped around.
    CircularPad1d, 2, PadMode::Circular
);
padding_layer!(
    /// PyTorch's `nn.CircularPad2d(padding)`.
    CircularPad2d, 4, PadMode::Circular
);
padding_layer!(
    /// PyTorch's `nn.CircularPad3d(padding)`.
    CircularPad3d, 6, PadMode::Circular
);

/// A constant padding layer of `$n` sizes.
macro_rules! constant_pad {
    ($(#[$doc:meta])* $layer:ident, $n:literal) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $layer {
            /// `(before, after)` per padded dimension, the last dimension first; negative sizes crop.
            #[module(skip)]
            pub padding: [i64; $n],
            /// The value added.
            pub value: f64,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// With these sizes (PyTorch's tuple) and value.
            pub fn new(padding: [i64; $n], value: f64) -> $layer {
                $layer {
                    padding,
                    value,
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }

            /// The same size on every side (PyTorch's int).
            pub fn uniform(padding: i64, value: f64) -> $layer {
                $layer::new([padding; $n], value)
            }
        }

        impl ExtraRepr for $layer {
            fn extra_repr(&self) -> String {
                format!("padding={}, value={}", tuple(&self.padding), py_float(self.value))
            }
        }

        reads_input!($layer, |layer, x| pad(x, &layer.padding, PadMode::Constant(layer.value)));
    };
}

constant_pad!(
    /// PyTorch's `nn.ConstantPad1d(padding, value)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// assert_eq!(ConstantPad1d::uniform(2, 3.5).to_string(), "ConstantPad1d(padding=(2, 2), value=3.5)");
    /// ```
    ConstantPad1d, 2
);
constant_pad!(
    /// PyTorch's `nn.ConstantPad2d(padding, value)`.
    ConstantPad2d, 4
);
constant_pad!(
    /// PyTorch's `nn.ConstantPad3d(padding, value)`.
    ConstantPad3d, 6
);

/// A layer of one `usize` argument that calls `$function` with it (the pixel and channel shuffles).
macro_rules! shuffle_layer {
    ($(#[$doc:meta])* $name:ident, $field:ident, $function:path, $field_doc:literal) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $name {
            #[doc = $field_doc]
            pub $field: usize,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $name {
            /// With this argument.
            pub fn new($field: usize) -> $name {
                $name {
                    $field,
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }
        }

        impl ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                format!(concat!(stringify!($field), "={}"), self.$field)
            }
        }

        reads_input!($name, |layer, x| $function(x, layer.$field));
    };
}

shuffle_layer!(
    /// PyTorch's `nn.PixelShuffle(upscale_factor)`: [`pixel_shuffle`].
    ///
    /// ```
    /// use nn::prelude::*;
    /// let layer = PixelShuffle::new(3);
    /// assert_eq!(layer.to_string(), "PixelShuffle(upscale_factor=3)");
    /// assert_eq!(layer.forward(Tensor::zeros([1, 18, 4, 4], DType::F32)).unwrap().shape(), &[1, 2, 12, 12]);
    /// ```
    PixelShuffle, upscale_factor, pixel_shuffle, "The factor the height and width grow by."
);

shuffle_layer!(
    /// PyTorch's `nn.PixelUnshuffle(downscale_factor)`: [`pixel_unshuffle`].
    PixelUnshuffle, downscale_factor, pixel_unshuffle, "The factor the height and width shrink by."
);

shuffle_layer!(
    /// PyTorch's `nn.ChannelShuffle(groups)`: [`channel_shuffle`].
    ///
    /// ```
    /// use nn::prelude::*;
    /// let layer = ChannelShuffle::new(2);
    /// assert_eq!(layer.to_string(), "ChannelShuffle(groups=2)");
    /// let x = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], [1, 4, 1]).unwrap();
    /// assert_eq!(layer.forward(x).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 2.0, 1.0, 3.0]);
    /// ```
    ChannelShuffle, groups, channel_shuffle, "The groups the channels are split into."
);
