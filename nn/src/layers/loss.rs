//! PyTorch's loss modules: each holds its options (and `weight` / `pos_weight` as buffers, as PyTorch registers
//! them), prints as PyTorch does (`MSELoss()`: a loss has no `extra_repr`), and calls its function in
//! [`functional::loss`](crate::functional::loss) on `(input, target)`.

use crate::functional::{
    ClassLossOptions, KlReduction, Reduction, binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
    huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss,
};
use crate::{Forward, Module, Result, Tensor};

/// `Forward<(input, target)>` for a loss module, running `$body`.
macro_rules! loss_forward {
    ($layer:ty, |$this:ident, $x:ident, $t:ident| $body:expr) => {
        impl Forward for $layer {
            type Input = (Tensor, Tensor);
            type Output = Tensor;
            fn forward(&self, ($x, $t): (Tensor, Tensor)) -> Result<Tensor> {
                let ($this, $x, $t) = (self, &$x, &$t);
                $body
            }
        }
    };
}

/// A loss of `(input, target)` with only a reduction: the struct, `new`, `with_reduction`, `Default`.
macro_rules! plain_loss {
    ($(#[$doc:meta])* $layer:ident, $f:ident) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        pub struct $layer {
            /// The reduction.
            #[module(skip)]
            pub reduction: Reduction,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// PyTorch's default: `reduction='mean'`.
            pub fn new() -> $layer {
                $layer::with_reduction(Reduction::Mean)
            }

            /// With `reduction`.
            pub fn with_reduction(reduction: Reduction) -> $layer {
                $layer {
                    reduction,
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }
        }

        impl Default for $layer {
            fn default() -> $layer {
                $layer::new()
            }
        }

        loss_forward!($layer, |this, x, t| $f(x, t, this.reduction));
    };
}

plain_loss!(
    /// PyTorch's `nn.MSELoss(reduction='mean')`: [`mse_loss`].
    ///
    /// ```
    /// use nn::prelude::*;
    /// let loss = MSELoss::new();
    /// assert_eq!(loss.to_string(), "MSELoss()");
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], [2]).unwrap();
    /// let y = Tensor::zeros([2], DType::F32);
    /// assert_eq!(loss.forward((x, y)).unwrap().item().unwrap(), 5.0);
    /// ```
    MSELoss,
    mse_loss
);

plain_loss!(
    /// PyTorch's `nn.L1Loss(reduction='mean')`: [`l1_loss`].
    L1Loss,
    l1_loss
);

/// A loss with a reduction and one `f64` option.
macro_rules! parameter_loss {
    ($(#[$doc:meta])* $layer:ident, $f:ident, $param:ident = $default:expr) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        pub struct $layer {
            /// The reduction.
            #[module(skip)]
            pub reduction: Reduction,
            #[doc = concat!("`", stringify!($param), "`.")]
            pub $param: f64,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            #[doc = concat!("PyTorch's defaults: `reduction='mean'`, `", stringify!($param), "=", stringify!($default), "`.")]
            pub fn new() -> $layer {
                $layer::with_options(Reduction::Mean, $default)
            }

            /// With both options.
            pub fn with_options(reduction: Reduction, $param: f64) -> $layer {
                $layer {
                    reduction,
                    $param,
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }
        }

        impl Default for $layer {
            fn default() -> $layer {
                $layer::new()
            }
        }

        loss_forward!($layer, |this, x, t| $f(x, t, this.reduction, this.$param));
    };
}

parameter_loss!(
    /// PyTorch's `nn.SmoothL1Loss(reduction='mean', beta=1.0)`: [`smooth_l1_loss`].
    SmoothL1Loss,
    smooth_l1_loss,
    beta = 1.0
);

parameter_loss!(
    /// PyTorch's `nn.HuberLoss(reduction='mean', delta=1.0)`: [`huber_loss`].
    HuberLoss,
    huber_loss,
    delta = 1.0
);

/// A class-index loss: `weight` a buffer, the other options fields.
macro_rules! class_loss {
    ($(#[$doc:meta])* $layer:ident, $f:ident) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        pub struct $layer {
            /// A weight per class (a buffer, in the state dict as `weight`, when given).
            pub weight: Option<Tensor>,
            /// The class index that contributes nothing.
            pub ignore_index: i64,
            /// The reduction.
            #[module(skip)]
            pub reduction: Reduction,
            /// Label smoothing, in `[0, 1]`.
            pub label_smoothing: f64,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// PyTorch's defaults: no weight, `ignore_index=-100`, `reduction='mean'`, no label smoothing.
            pub fn new() -> $layer {
                $layer::with_options(ClassLossOptions::default())
            }

            /// With `options`.
            pub fn with_options(options: ClassLossOptions) -> $layer {
                $layer {
                    weight: options.weight,
                    ignore_index: options.ignore_index,
                    reduction: options.reduction,
                    label_smoothing: options.label_smoothing,
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }

            /// The options the function is called with.
            pub fn options(&self) -> ClassLossOptions {
                ClassLossOptions {
                    weight: self.weight.clone(),
                    ignore_index: self.ignore_index,
                    reduction: self.reduction,
                    label_smoothing: self.label_smoothing,
                }
            }
        }

        impl Default for $layer {
            fn default() -> $layer {
                $layer::new()
            }
        }

        loss_forward!($layer, |this, x, t| $f(x, t, &this.options()));
    };
}

class_loss!(
    /// PyTorch's `nn.CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)`:
    /// [`cross_entropy`], with class indices or class probabilities as the target.
    ///
    /// ```
    /// use nn::functional::{ClassLossOptions, Reduction};
    /// use nn::prelude::*;
    /// let weight = Tensor::from_vec(vec![1.0f32, 2.0, 0.5], [3]).unwrap();
    /// let loss = CrossEntropyLoss::with_options(ClassLossOptions { weight: Some(weight), ..Default::default() });
    /// assert_eq!(loss.to_string(), "CrossEntropyLoss()");
    /// assert_eq!(loss.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    /// ```
    CrossEntropyLoss,
    cross_entropy
);

class_loss!(
    /// PyTorch's `nn.NLLLoss(weight=None, ignore_index=-100, reduction='mean')`: [`nll_loss`] (its
    /// `label_smoothing` must stay 0).
    NLLLoss,
    nll_loss
);

/// PyTorch's `nn.BCELoss(weight=None, reduction='mean')`: [`binary_cross_entropy`].
#[derive(Module, Clone, Debug)]
pub struct BCELoss {
    /// A weight broadcast to the input (a buffer, when given).
    pub weight: Option<Tensor>,
    /// The reduction.
    #[module(skip)]
    pub reduction: Reduction,
    training: bool,
    hooks: crate::Hooks,
}

impl BCELoss {
    /// PyTorch's defaults: no weight, `reduction='mean'`.
    pub fn new() -> BCELoss {
        BCELoss::with_options(None, Reduction::Mean)
    }

    /// With a weight and a reduction.
    pub fn with_options(weight: Option<Tensor>, reduction: Reduction) -> BCELoss {
        BCELoss {
            weight,
            reduction,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(BCELoss => BCELoss::new());

loss_forward!(BCELoss, |this, x, t| binary_cross_entropy(
    x,
    t,
    this.weight.as_ref(),
    this.reduction
));

/// PyTorch's `nn.BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None)`:
/// [`binary_cross_entropy_with_logits`].
///
/// ```
/// use nn::prelude::*;
/// let loss = BCEWithLogitsLoss::new();
/// assert_eq!(loss.to_string(), "BCEWithLogitsLoss()");
/// ```
#[derive(Module, Clone, Debug)]
pub struct BCEWithLogitsLoss {
    /// A weight broadcast to the input (a buffer, when given).
    pub weight: Option<Tensor>,
    /// The weight of positive targets per class, broadcast along the last dimension (a buffer, when given).
    pub pos_weight: Option<Tensor>,
    /// The reduction.
    #[module(skip)]
    pub reduction: Reduction,
    training: bool,
    hooks: crate::Hooks,
}

impl BCEWithLogitsLoss {
    /// PyTorch's defaults: no weights, `reduction='mean'`.
    pub fn new() -> BCEWithLogitsLoss {
        BCEWithLogitsLoss::with_options(None, Reduction::Mean, None)
    }

    /// With PyTorch's three arguments, in its order.
    pub fn with_options(weight: Option<Tensor>, reduction: Reduction, pos_weight: Option<Tensor>) -> BCEWithLogitsLoss {
        BCEWithLogitsLoss {
            weight,
            pos_weight,
            reduction,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(BCEWithLogitsLoss => BCEWithLogitsLoss::new());

loss_forward!(BCEWithLogitsLoss, |this, x, t| binary_cross_entropy_with_logits(
    x,
    t,
    this.weight.as_ref(),
    this.pos_weight.as_ref(),
    this.reduction
));

/// PyTorch's `nn.KLDivLoss(reduction='mean', log_target=False)`: [`kl_div`].
#[derive(Module, Clone, Debug)]
pub struct KLDivLoss {
    /// The reduction (`BatchMean` gives the KL divergence).
    #[module(skip)]
    pub reduction: KlReduction,
    /// Whether the target is given as log-probabilities.
    pub log_target: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl KLDivLoss {
    /// PyTorch's defaults: `reduction='mean'`, `log_target=False`.
    pub fn new() -> KLDivLoss {
        KLDivLoss::with_options(KlReduction::Mean, false)
    }

    /// With both options.
    pub fn with_options(reduction: KlReduction, log_target: bool) -> KLDivLoss {
        KLDivLoss {
            reduction,
            log_target,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(KLDivLoss => KLDivLoss::new());

loss_forward!(KLDivLoss, |this, x, t| kl_div(x, t, this.reduction, this.log_target));
