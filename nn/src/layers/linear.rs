//! [`Linear`]: `y = x Wᵀ + b`.

use crate::module::ExtraRepr;
use crate::{DType, Error, Module, Param, Result, Tensor, init};

/// PyTorch's `nn.Linear(in_features, out_features, bias=True)`: weight `(out, in)` initialised
/// `kaiming_uniform_(a=sqrt(5))`, bias uniform in `±1/sqrt(in)`.
///
/// ```
/// use nn::prelude::*;
/// let fc = Linear::new(4, 2, true);
/// assert_eq!(fc.to_string(), "Linear(in_features=4, out_features=2, bias=True)");
/// assert_eq!(fc.forward(Tensor::zeros([3, 4], DType::F32)).unwrap().shape(), &[3, 2]);
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct Linear {
    /// `(out_features, in_features)`.
    pub weight: Param,
    /// `(out_features)`, when the layer has a bias.
    pub bias: Option<Param>,
    /// Size of each input sample.
    pub in_features: usize,
    /// Size of each output sample.
    pub out_features: usize,
    training: bool,
    hooks: crate::Hooks,
}

impl Linear {
    /// A new layer with this one's configuration, mode and hooks around other parameters (what PyTorch's
    /// `copy.deepcopy` of the layer followed by assigning `weight` and `bias` gives).
    pub(crate) fn with_params(&self, weight: Param, bias: Option<Param>) -> Linear {
        Linear {
            weight,
            bias,
            in_features: self.in_features,
            out_features: self.out_features,
            training: self.training,
            hooks: self.hooks.clone(),
        }
    }

    /// A layer in `f32`, initialised as PyTorch does (from the global generator).
    ///
    /// # Panics
    /// Where its weight cannot be allocated, as [`Tensor::zeros`] does (the message names the shape).
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Linear {
        // The shapes are 2-dimensional, so the initialisers fail only where the allocator refuses.
        let allocated = |r: Result<()>| r.unwrap_or_else(|e| panic!("Linear({in_features}, {out_features}): {e}"));
        let weight = Tensor::zeros([out_features, in_features], DType::F32);
        allocated(init::kaiming_uniform_(&weight, 5f64.sqrt()));
        let bias = bias.then(|| {
            let b = Tensor::zeros([out_features], DType::F32);
            allocated(init::bias_uniform_(&b, in_features));
            Param::new(b)
        });
        Linear {
            weight: Param::new(weight),
            bias,
            in_features,
            out_features,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// A layer holding `weight` `(out, in)` and an optional `bias` `(out)`.
    pub fn from_tensors(weight: Tensor, bias: Option<Tensor>) -> Result<Linear> {
        Error::check_rank(
            "Linear",
            weight.shape(),
            2,
            "the weight must be (out_features, in_features)",
        )?;
        let (out_features, in_features) = (weight.shape()[0], weight.shape()[1]);
        if let Some(b) = &bias
            && b.shape() != &[out_features]
        {
            return Err(Error::shapes(
                "Linear",
                weight.shape(),
                b.shape(),
                "bias (out_features) for weight (out_features, in_features)",
            ));
        }
        Ok(Linear {
            weight: Param::new(weight),
            bias: bias.map(Param::new),
            in_features,
            out_features,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

/// A linear layer's `repr` arguments (its own and `MultiheadAttention`'s output projection's).
pub(crate) fn linear_repr(in_features: usize, out_features: usize, bias: &Option<Param>) -> String {
    let bias = if bias.is_some() { "True" } else { "False" };
    format!("in_features={in_features}, out_features={out_features}, bias={bias}")
}

/// A linear layer's forward: `x Wᵀ + b`.
pub(crate) fn linear_forward(x: &Tensor, weight: &Param, bias: &Option<Param>) -> Result<Tensor> {
    let bias = bias.as_ref().map(Param::data);
    x.linear(&weight.data(), bias.as_ref())
}

impl ExtraRepr for Linear {
    fn extra_repr(&self) -> String {
        linear_repr(self.in_features, self.out_features, &self.bias)
    }
}

reads_input!(Linear, |fc, x| linear_forward(x, &fc.weight, &fc.bias));
