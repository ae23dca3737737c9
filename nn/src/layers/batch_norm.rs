//! [`BatchNorm1d`], [`BatchNorm2d`] and [`BatchNorm3d`]: normalisation over the batch, with running statistics.

use crate::functional::{RunningStats, batch_norm};
use crate::module::{CustomStateDict, ExtraRepr, StateDict, py_bool, py_float};
use crate::{DType, Error, Module, Param, Result, Tensor};

macro_rules! batch_norm_layer {
    ($(#[$doc:meta])* $name:ident, $printed:literal, $ranks:expr, $expected:literal) => {
        $(#[$doc])*
        #[derive(Module)]
        #[module(name = $printed, extra_repr, custom_state_dict)]
        pub struct $name {
            /// Per-channel scale (`affine`).
            pub weight: Option<Param>,
            /// Per-channel shift (`affine`).
            pub bias: Option<Param>,
            /// Running mean (`track_running_stats`).
            pub running_mean: Option<Tensor>,
            /// Running variance (`track_running_stats`).
            pub running_var: Option<Tensor>,
            /// Batches seen in training (`track_running_stats`), an `int64` scalar.
            pub num_batches_tracked: Option<Tensor>,
            /// Channels.
            pub num_features: usize,
            /// Added to the variance.
            pub eps: f64,
            /// Weight of the new batch in the running statistics; `None`: a cumulative average.
            pub momentum: Option<f64>,
            /// Whether the layer has `weight` and `bias`.
            pub affine: bool,
            /// Whether the layer keeps running statistics.
            pub track_running_stats: bool,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $name {
            /// PyTorch's defaults: `eps=1e-5, momentum=0.1, affine=True, track_running_stats=True`, in `f32`.
            pub fn new(num_features: usize) -> $name {
                $name::with_options(num_features, 1e-5, Some(0.1), true, true)
            }

            /// A layer with this one's configuration, mode and hooks that holds the same parameters and buffers
            /// (a module placed in a second slot, as Python would hold the same object).
            #[allow(dead_code)] // Only `BatchNorm2d`'s is used (`BNReLU2d`); PyTorch has no `BNReLU1d`.
            pub(crate) fn share_copy(&self) -> $name {
                $name {
                    weight: self.weight.clone(),
                    bias: self.bias.clone(),
                    running_mean: self.running_mean.clone(),
                    running_var: self.running_var.clone(),
                    num_batches_tracked: self.num_batches_tracked.clone(),
                    hooks: self.hooks.clone(),
                    ..*self
                }
            }

            /// Every constructor argument.
            pub fn with_options(num_features: usize, eps: f64, momentum: Option<f64>, affine: bool, track_running_stats: bool) -> $name {
                let f = num_features;
                $name {
                    weight: affine.then(|| Param::new(Tensor::ones([f], DType::F32))),
                    bias: affine.then(|| Param::new(Tensor::zeros([f], DType::F32))),
                    running_mean: track_running_stats.then(|| Tensor::zeros([f], DType::F32)),
                    running_var: track_running_stats.then(|| Tensor::ones([f], DType::F32)),
                    num_batches_tracked: track_running_stats.then(|| Tensor::scalar(0i64)),
                    num_features,
                    eps,
                    momentum,
                    affine,
                    track_running_stats,
                    training: true,
                hooks: crate::Hooks::new(),
                }
            }
        }

        /// Version 2 added `num_batches_tracked`: a dict saved before it (or with no version, as any dict from
        /// a file) that lacks it keeps the layer's own count (0 when it has none), as PyTorch's
        /// `_load_from_state_dict` does.
        impl CustomStateDict for $name {
            const VERSION: u32 = 2;

            fn load_from_state_dict(&self, state: &mut StateDict, prefix: &str, version: Option<u32>) -> Result<()> {
                if version.is_none_or(|v| v < 2) && self.track_running_stats {
                    let key = format!("{prefix}num_batches_tracked");
                    if !state.contains_key(&key) {
                        let count = match &self.num_batches_tracked {
                            Some(t) => t.deep_copy()?,
                            None => Tensor::scalar(0i64),
                        };
                        state.insert(key, count);
                    }
                }
                Ok(())
            }
        }

        impl ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                let momentum = self.momentum.map_or("None".to_string(), py_float);
                format!(
                    "{}, eps={}, momentum={momentum}, affine={}, track_running_stats={}",
                    self.num_features,
                    py_float(self.eps),
                    py_bool(self.affine),
                    py_bool(self.track_running_stats)
                )
            }
        }

        reads_input!($name, |bn, x| {
            if !$ranks.contains(&x.rank()) {
                return Err(Error::invalid($printed, format!(concat!("expected ", $expected, " input (got {}D input)"), x.rank())));
            }
            forward(x, &BatchNormParts {
                num_features: bn.num_features,
                weight: bn.weight.as_ref(),
                bias: bn.bias.as_ref(),
                running_mean: bn.running_mean.as_ref(),
                running_var: bn.running_var.as_ref(),
                num_batches_tracked: bn.num_batches_tracked.as_ref(),
                eps: bn.eps,
                momentum: bn.momentum,
                track_running_stats: bn.track_running_stats,
                training: bn.training,
            })
        });
    };
}

batch_norm_layer!(
    /// PyTorch's `nn.BatchNorm1d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)`
    /// on `(N, C)` or `(N, C, L)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let bn = BatchNorm1d::new(32);
    /// assert_eq!(bn.to_string(), "BatchNorm1d(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
    /// assert_eq!(bn.state_dict().keys().collect::<Vec<_>>(), ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);
    /// ```
    BatchNorm1d, "BatchNorm1d", [2, 3], "2D or 3D"
);
batch_norm_layer!(
    /// PyTorch's `nn.BatchNorm2d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)`
    /// on `(N, C, H, W)`.
    BatchNorm2d, "BatchNorm2d", [4], "4D"
);
batch_norm_layer!(
    /// PyTorch's `nn.BatchNorm3d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)`
    /// on `(N, C, D, H, W)`.
    BatchNorm3d, "BatchNorm3d", [5], "5D"
);

/// The members a batch norm's forward reads.
struct BatchNormParts<'a> {
    num_features: usize,
    weight: Option<&'a Param>,
    bias: Option<&'a Param>,
    running_mean: Option<&'a Tensor>,
    running_var: Option<&'a Tensor>,
    num_batches_tracked: Option<&'a Tensor>,
    eps: f64,
    momentum: Option<f64>,
    track_running_stats: bool,
    training: bool,
}

/// PyTorch's `_BatchNorm.forward`; an input it refuses leaves the running statistics untouched.
fn forward(x: &Tensor, p: &BatchNormParts<'_>) -> Result<Tensor> {
    if x.shape()[1] != p.num_features {
        return Err(Error::invalid(
            "batch_norm",
            format!(
                "the layer has {} channels, but the input has {} (shape {})",
                p.num_features,
                x.shape()[1],
                x.shape()
            ),
        ));
    }
    let count = x.numel() / p.num_features.max(1);
    if p.training && count <= 1 {
        return Err(Error::invalid(
            "batch_norm",
            format!(
                "Expected more than 1 value per channel when training, got input size torch.Size({})",
                x.shape()
            ),
        ));
    }
    let mut factor = p.momentum.unwrap_or(0.0);
    if p.training
        && p.track_running_stats
        && let Some(n) = p.num_batches_tracked
    {
        n.add_scalar_(1.0)?;
        if p.momentum.is_none() {
            factor = 1.0 / n.item()?;
        }
    }
    let use_batch_stats = p.training || (p.running_mean.is_none() && p.running_var.is_none());
    let running = match (p.running_mean, p.running_var) {
        (Some(mean), Some(var)) if !p.training || p.track_running_stats => Some(RunningStats { mean, var }),
        _ => None,
    };
    let weight = p.weight.map(Param::data);
    let bias = p.bias.map(Param::data);
    batch_norm(
        x,
        running,
        weight.as_ref(),
        bias.as_ref(),
        use_batch_stats,
        factor,
        p.eps,
    )
}
