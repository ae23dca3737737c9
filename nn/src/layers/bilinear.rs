//! [`Bilinear`]: `y = x1ᵀ A x2 + b`.

use crate::functional::bilinear;
use crate::module::ExtraRepr;
use crate::{DType, Error, Forward, Module, Param, Result, Tensor, init};

/// PyTorch's `nn.Bilinear(in1_features, in2_features, out_features, bias=True)`: weight
/// `(out, in1, in2)` and bias `(out)` uniform in `±1/sqrt(in1_features)`, drawn from the global generator in
/// PyTorch's order. Its input is the pair `(input1, input2)`: [`bilinear`].
///
/// ```
/// use nn::prelude::*;
/// let layer = Bilinear::new(3, 4, 5, true)?;
/// assert_eq!(layer.to_string(), "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)");
/// let y = layer.forward((Tensor::zeros([2, 3], DType::F32), Tensor::zeros([2, 4], DType::F32)))?;
/// assert_eq!(y.shape(), &[2, 5]);
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct Bilinear {
    /// `(out_features, in1_features, in2_features)`.
    pub weight: Param,
    /// `(out_features)`, when the layer has a bias.
    pub bias: Option<Param>,
    /// Size of each first input sample.
    pub in1_features: usize,
    /// Size of each second input sample.
    pub in2_features: usize,
    /// Size of each output sample.
    pub out_features: usize,
    training: bool,
    hooks: crate::Hooks,
}

impl Bilinear {
    /// A layer in `f32`, initialised as PyTorch does. `in1_features = 0` is PyTorch's error (its bound
    /// `1/sqrt(0)` divides by zero).
    pub fn new(in1_features: usize, in2_features: usize, out_features: usize, bias: bool) -> Result<Bilinear> {
        if in1_features == 0 {
            return Err(Error::invalid("Bilinear", "float division by zero"));
        }
        let bound = 1.0 / (in1_features as f64).sqrt();
        let weight = Tensor::zeros([out_features, in1_features, in2_features], DType::F32);
        init::uniform_(&weight, -bound, bound)?;
        let bias = bias
            .then(|| -> Result<Param> {
                let b = Tensor::zeros([out_features], DType::F32);
                init::uniform_(&b, -bound, bound)?;
                Ok(Param::new(b))
            })
            .transpose()?;
        Ok(Bilinear {
            weight: Param::new(weight),
            bias,
            in1_features,
            in2_features,
            out_features,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for Bilinear {
    fn extra_repr(&self) -> String {
        let bias = if self.bias.is_some() { "True" } else { "False" };
        format!(
            "in1_features={}, in2_features={}, out_features={}, bias={bias}",
            self.in1_features, self.in2_features, self.out_features
        )
    }
}

impl Forward for Bilinear {
    type Input = (Tensor, Tensor);
    type Output = Tensor;

    fn forward(&self, (input1, input2): (Tensor, Tensor)) -> Result<Tensor> {
        self.forward_ref(&(input1, input2))
    }

    fn forward_ref(&self, (input1, input2): &(Tensor, Tensor)) -> Result<Tensor> {
        let bias = self.bias.as_ref().map(Param::data);
        bilinear(input1, input2, &self.weight.data(), bias.as_ref())
    }
}
