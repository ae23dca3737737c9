//! [`InstanceNorm1d`], [`InstanceNorm2d`], [`InstanceNorm3d`]: each sample's channels normalised over their
//! spatial elements; and [`LocalResponseNorm`].

use crate::functional::{RunningStats, instance_norm, local_response_norm};
use crate::module::{ExtraRepr, py_bool, py_float};
use crate::{DType, Error, Module, Param, Tensor};

macro_rules! instance_norm_layer {
    ($(#[$doc:meta])* $name:ident, $no_batch:literal, $expected:literal) => {
        $(#[$doc])*
        #[derive(Module)]
        #[module(extra_repr)]
        pub struct $name {
            /// Per-channel scale (`affine`).
            pub weight: Option<Param>,
            /// Per-channel shift (`affine`).
            pub bias: Option<Param>,
            /// Running mean (`track_running_stats`).
            pub running_mean: Option<Tensor>,
            /// Running variance (`track_running_stats`).
            pub running_var: Option<Tensor>,
            /// An `int64` scalar PyTorch registers (`track_running_stats`) and never counts up.
            pub num_batches_tracked: Option<Tensor>,
            /// Channels.
            pub num_features: usize,
            /// Added to the variance.
            pub eps: f64,
            /// Weight of the new batch in the running statistics; `None` counts as 0.
            pub momentum: Option<f64>,
            /// Whether the layer has `weight` and `bias`.
            pub affine: bool,
            /// Whether the layer keeps running statistics (and normalises by them in evaluation).
            pub track_running_stats: bool,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $name {
            /// PyTorch's defaults: `eps=1e-5, momentum=0.1, affine=False, track_running_stats=False`.
            pub fn new(num_features: usize) -> $name {
                $name::with_options(num_features, 1e-5, Some(0.1), false, false)
            }

            /// Every constructor argument, in `f32`.
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

        reads_input!($name, |norm, x| {
            let name = stringify!($name);
            let rank = x.rank();
            if rank != $no_batch && rank != $no_batch + 1 {
                return Err(Error::invalid(name, format!(concat!("expected ", $expected, " input (got {}D input)"), rank)));
            }
            let feature_dim = rank - $no_batch;
            if norm.affine && x.shape()[feature_dim] != norm.num_features {
                return Err(Error::invalid(
                    name,
                    format!(
                        "expected input's size at dim={feature_dim} to match num_features ({}), but got: {}.",
                        norm.num_features,
                        x.shape()[feature_dim]
                    ),
                ));
            }
            let batched = if rank == $no_batch { x.unsqueeze(0)? } else { x.clone() };
            let running = match (&norm.running_mean, &norm.running_var) {
                (Some(mean), Some(var)) => Some(RunningStats { mean, var }),
                _ => None,
            };
            let w = norm.weight.as_ref().map(Param::data);
            let b = norm.bias.as_ref().map(Param::data);
            let y = instance_norm(
                &batched,
                running,
                w.as_ref(),
                b.as_ref(),
                norm.training || !norm.track_running_stats,
                norm.momentum.unwrap_or(0.0),
                norm.eps,
            )?;
            if rank == $no_batch { y.squeeze(0) } else { Ok(y) }
        });
    };
}

instance_norm_layer!(
    /// PyTorch's `nn.InstanceNorm1d(num_features, eps=1e-5, momentum=0.1, affine=False,
    /// track_running_stats=False)` on `(N, C, L)` or `(C, L)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let norm = InstanceNorm1d::new(3);
    /// assert_eq!(norm.to_string(), "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
    /// assert_eq!(norm.forward(Tensor::randn([2, 3, 5], DType::F32)).unwrap().shape(), &[2, 3, 5]);
    /// ```
    InstanceNorm1d, 2, "2D or 3D"
);
instance_norm_layer!(
    /// PyTorch's `nn.InstanceNorm2d(num_features, eps=1e-5, momentum=0.1, affine=False,
    /// track_running_stats=False)` on `(N, C, H, W)` or `(C, H, W)`.
    InstanceNorm2d, 3, "3D or 4D"
);
instance_norm_layer!(
    /// PyTorch's `nn.InstanceNorm3d(num_features, eps=1e-5, momentum=0.1, affine=False,
    /// track_running_stats=False)` on `(N, C, D, H, W)` or `(C, D, H, W)`.
    InstanceNorm3d, 4, "4D or 5D"
);

/// PyTorch's `nn.LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)`: [`local_response_norm`] across the
/// channels of `(N, C, ...)`.
///
/// ```
/// use nn::prelude::*;
/// let lrn = LocalResponseNorm::new(2);
/// assert_eq!(lrn.to_string(), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct LocalResponseNorm {
    /// Channels in each window.
    #[module(skip)]
    pub size: usize,
    /// Scale of the mean square.
    #[module(skip)]
    pub alpha: f64,
    /// Exponent.
    #[module(skip)]
    pub beta: f64,
    /// Added before the exponent.
    #[module(skip)]
    pub k: f64,
    training: bool,
    hooks: crate::Hooks,
}

impl LocalResponseNorm {
    /// PyTorch's defaults for the constants.
    pub fn new(size: usize) -> LocalResponseNorm {
        LocalResponseNorm::with_options(size, 1e-4, 0.75, 1.0)
    }

    /// Every constructor argument.
    pub fn with_options(size: usize, alpha: f64, beta: f64, k: f64) -> LocalResponseNorm {
        LocalResponseNorm {
            size,
            alpha,
            beta,
            k,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for LocalResponseNorm {
    fn extra_repr(&self) -> String {
        format!(
            "{}, alpha={}, beta={}, k={}",
            self.size,
            py_float(self.alpha),
            py_float(self.beta),
            py_float(self.k)
        )
    }
}

reads_input!(LocalResponseNorm, |l, x| local_response_norm(
    x, l.size, l.alpha, l.beta, l.k
));
