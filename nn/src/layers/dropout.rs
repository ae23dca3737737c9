//! The dropout layers: [`Dropout`], [`Dropout1d`], [`Dropout2d`], [`Dropout3d`], [`AlphaDropout`],
//! [`FeatureAlphaDropout`]: random elements or feature maps zeroed in training.

use crate::module::{ExtraRepr, py_bool, py_float};
use crate::ops::dropout::{Dropout as Kind, check_p};
use crate::{Forward, Module, Result, Tensor};

/// Declares a dropout layer: PyTorch's `_DropoutNd` subclass `$name(p=0.5, inplace=False)` running `$kind`.
macro_rules! dropout_layer {
    ($(#[$doc:meta])* $name:ident => $kind:expr) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $name {
            /// Probability of zeroing an element (or a feature map).
            pub p: f64,
            /// Whether to change the input in place.
            pub inplace: bool,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $name {
            /// The layer; `p` must lie in `[0, 1]`.
            pub fn new(p: f64, inplace: bool) -> Result<$name> {
                check_p(p)?;
                Ok($name {
                    p,
                    inplace,
                    training: true,
                    hooks: crate::Hooks::new(),
                })
            }
        }

        impl ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                format!("p={}, inplace={}", py_float(self.p), py_bool(self.inplace))
            }
        }

        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                self.forward_ref(&x)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                $kind.apply(x, self.p, self.training, self.inplace)
            }
        }
    };
}

dropout_layer! {
    /// PyTorch's `nn.Dropout(p=0.5, inplace=False)`: in training, each element is zeroed with probability `p`
    /// and the others scaled by `1 / (1 - p)`; in evaluation, the input passes unchanged. Draws from the global
    /// generator ([`crate::manual_seed`]), on the CPU or a device (see [`crate::functional::dropout`]).
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut drop = Dropout::new(0.5, false).unwrap();
    /// assert_eq!(drop.to_string(), "Dropout(p=0.5, inplace=False)");
    /// drop.eval();
    /// let x = Tensor::ones([4], DType::F32);
    /// assert_eq!(drop.forward(x).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 4]);
    /// ```
    Dropout => Kind::Elements
}

dropout_layer! {
    /// PyTorch's `nn.Dropout1d(p=0.5, inplace=False)`: whole channels of `(N, C, L)` or `(C, L)` inputs zeroed
    /// ([`crate::functional::dropout1d`]).
    ///
    /// ```
    /// use nn::prelude::*;
    /// let drop = Dropout1d::new(0.2, false)?;
    /// assert_eq!(drop.to_string(), "Dropout1d(p=0.2, inplace=False)");
    /// assert!(drop.forward(Tensor::ones([2, 3, 4, 5], DType::F32)).is_err());
    /// # Ok::<(), nn::Error>(())
    /// ```
    Dropout1d => Kind::OneD
}

dropout_layer! {
    /// PyTorch's `nn.Dropout2d(p=0.5, inplace=False)`: whole feature maps of `(N, C, H, W)` inputs zeroed
    /// ([`crate::functional::dropout2d`]).
    Dropout2d => Kind::TwoD
}

dropout_layer! {
    /// PyTorch's `nn.Dropout3d(p=0.5, inplace=False)`: whole channels of `(N, C, D, H, W)` or `(C, D, H, W)`
    /// inputs zeroed ([`crate::functional::dropout3d`]).
    Dropout3d => Kind::ThreeD
}

dropout_layer! {
    /// PyTorch's `nn.AlphaDropout(p=0.5, inplace=False)`: the dropout of self-normalising (SELU) networks
    /// ([`crate::functional::alpha_dropout`]).
    AlphaDropout => Kind::Alpha
}

dropout_layer! {
    /// PyTorch's `nn.FeatureAlphaDropout(p=0.5, inplace=False)`: alpha dropout of whole feature maps
    /// ([`crate::functional::feature_alpha_dropout`]).
    FeatureAlphaDropout => Kind::FeatureAlpha
}
