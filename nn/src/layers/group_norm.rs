//! [`GroupNorm`]: normalisation over groups of channels.

use crate::functional::group_norm;
use crate::module::{ExtraRepr, py_bool, py_float};
use crate::{DType, Error, Module, Param, Result, Tensor};

/// PyTorch's `nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True)`: each sample's channels, in
/// `num_groups` groups, normalised by the group's mean and variance, then scaled and shifted per channel (see
/// [`group_norm`](crate::functional::group_norm)). It keeps no running statistics, so train and eval compute
/// alike.
///
/// ```
/// use nn::prelude::*;
/// let gn = GroupNorm::new(2, 6).unwrap();
/// assert_eq!(gn.to_string(), "GroupNorm(2, 6, eps=1e-05, affine=True)");
/// assert_eq!(gn.state_dict().keys().collect::<Vec<_>>(), ["weight", "bias"]);
/// let y = gn.forward(Tensor::randn([4, 6, 5, 5], DType::F32)).unwrap();
/// assert_eq!(y.shape().dims(), [4, 6, 5, 5]);
/// assert!(GroupNorm::new(4, 6).is_err()); // 6 channels do not split into 4 groups
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct GroupNorm {
    /// Scale per channel, of shape `(num_channels,)` (`affine`).
    pub weight: Option<Param>,
    /// Shift per channel, of shape `(num_channels,)` (`affine`).
    pub bias: Option<Param>,
    /// How many groups the channels split into.
    pub num_groups: usize,
    /// Channels of the input.
    pub num_channels: usize,
    /// Added to the variance.
    pub eps: f64,
    /// Whether the layer has `weight` and `bias`.
    pub affine: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl GroupNorm {
    /// PyTorch's defaults: `eps=1e-5, affine=True`, in `f32`; `num_groups` must divide `num_channels`.
    pub fn new(num_groups: usize, num_channels: usize) -> Result<GroupNorm> {
        GroupNorm::with_options(num_groups, num_channels, 1e-5, true)
    }

    /// Every constructor argument: the weight starts at ones and the bias at zeros, as PyTorch's.
    pub fn with_options(num_groups: usize, num_channels: usize, eps: f64, affine: bool) -> Result<GroupNorm> {
        if num_groups == 0 || !num_channels.is_multiple_of(num_groups) {
            return Err(Error::invalid(
                "GroupNorm",
                format!(
                    "num_channels must be divisible by num_groups (num_channels {num_channels}, num_groups {num_groups})"
                ),
            ));
        }
        let param = |value: f64| -> Result<Option<Param>> {
            affine
                .then(|| Tensor::try_full([num_channels], value, DType::F32).map(Param::new))
                .transpose()
        };
        let (weight, bias) = (param(1.0)?, param(0.0)?);
        Ok(GroupNorm {
            weight,
            bias,
            num_groups,
            num_channels,
            eps,
            affine,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for GroupNorm {
    fn extra_repr(&self) -> String {
        format!(
            "{}, {}, eps={}, affine={}",
            self.num_groups,
            self.num_channels,
            py_float(self.eps),
            py_bool(self.affine)
        )
    }
}

reads_input!(GroupNorm, |gn, x| {
    let w = gn.weight.as_ref().map(Param::data);
    let b = gn.bias.as_ref().map(Param::data);
    group_norm(x, gn.num_groups, w.as_ref(), b.as_ref(), gn.eps)
});
