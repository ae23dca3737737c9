//! [`ConvReLU2d`], [`LinearReLU`] and [`BNReLU2d`]: a layer and the ReLU after it, as one module (PyTorch's
//! `torch.ao.nn.intrinsic` modules, which [`fuse_modules`](crate::utils::fuse_modules) builds).

use super::{BatchNorm2d, Conv2d, Linear, ReLU};
use crate::{Call, Forward, Module, Result, Tensor};

macro_rules! fused_relu {
    ($(#[$doc:meta])* $name:ident($first:ident: $first_ty:ty)) => {
        $(#[$doc])*
        ///
        /// Like PyTorch's (a `Sequential` of the two), its keys are `0.…` for the layer and `1.…` for the ReLU,
        /// its `repr` lists both, and a call runs each with its hooks.
        #[derive(Module)]
        pub struct $name {
            #[doc = concat!("The `", stringify!($first_ty), "` (key `0`).")]
            #[module(rename = "0")]
            pub $first: $first_ty,
            /// The `ReLU` (key `1`).
            #[module(rename = "1")]
            pub relu: ReLU,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $name {
            #[doc = concat!("`", stringify!($first_ty), "` then `relu`, in the layer's mode.")]
            pub fn new($first: $first_ty, relu: ReLU) -> $name {
                $name {
                    training: $first.is_training(),
                    $first,
                    relu,
                    hooks: crate::Hooks::new(),
                }
            }
        }

        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                self.relu.call(self.$first.call(x)?)
            }
        }
    };
}

fused_relu!(
    /// PyTorch's `torch.ao.nn.intrinsic.ConvReLU2d(conv, relu)`: a `Conv2d` followed by a `ReLU`.
    ///
    /// ```
    /// use nn::functional::Conv2dOptions;
    /// use nn::prelude::*;
    /// let fused = nn::layers::ConvReLU2d::new(Conv2d::new(1, 2, [1, 1], Conv2dOptions::default(), false).unwrap(), ReLU::new(false));
    /// assert_eq!(fused.to_string(), "ConvReLU2d(\n  (0): Conv2d(1, 2, kernel_size=(1, 1), stride=(1, 1), bias=False)\n  (1): ReLU()\n)");
    /// assert_eq!(fused.state_dict().keys().collect::<Vec<_>>(), ["0.weight"]);
    /// let y = fused.forward(Tensor::randn([1, 1, 3, 3], DType::F32)).unwrap();
    /// assert!(y.to_vec::<f32>().unwrap().iter().all(|&v| v >= 0.0));
    /// ```
    ConvReLU2d(conv: Conv2d)
);

fused_relu!(
    /// PyTorch's `torch.ao.nn.intrinsic.LinearReLU(linear, relu)`: a `Linear` followed by a `ReLU`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let fused = nn::layers::LinearReLU::new(Linear::new(3, 2, true), ReLU::new(true));
    /// assert_eq!(fused.to_string(), "LinearReLU(\n  (0): Linear(in_features=3, out_features=2, bias=True)\n  (1): ReLU(inplace=True)\n)");
    /// assert_eq!(fused.forward(Tensor::ones([4, 3], DType::F32)).unwrap().shape(), &[4, 2]);
    /// ```
    LinearReLU(linear: Linear)
);

fused_relu!(
    /// PyTorch's `torch.ao.nn.intrinsic.BNReLU2d(batch_norm, relu)`: a `BatchNorm2d` followed by a `ReLU`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let fused = nn::layers::BNReLU2d::new(BatchNorm2d::new(2), ReLU::new(false));
    /// assert_eq!(fused.state_dict().keys().next().unwrap(), "0.weight");
    /// ```
    BNReLU2d(batch_norm: BatchNorm2d)
);
