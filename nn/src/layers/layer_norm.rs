//! [`LayerNorm`]: normalisation over the last dimensions.

use crate::functional::layer_norm;
use crate::module::{ExtraRepr, py_bool, py_float};
use crate::{DType, Module, Param, Tensor};

/// PyTorch's `nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True)`.
///
/// ```
/// use nn::prelude::*;
/// let ln = LayerNorm::new(vec![3, 4]);
/// assert_eq!(ln.to_string(), "LayerNorm((3, 4), eps=1e-05, elementwise_affine=True)");
/// assert_eq!(LayerNorm::new(vec![5]).to_string(), "LayerNorm((5,), eps=1e-05, elementwise_affine=True)");
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct LayerNorm {
    /// Scale, of `normalized_shape` (`elementwise_affine`).
    pub weight: Option<Param>,
    /// Shift, of `normalized_shape` (`elementwise_affine` and `bias`).
    pub bias: Option<Param>,
    /// The trailing dimensions normalised over.
    pub normalized_shape: Vec<usize>,
    /// Added to the variance.
    pub eps: f64,
    /// Whether the layer has `weight` (and `bias`).
    pub elementwise_affine: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl LayerNorm {
    /// PyTorch's defaults: `eps=1e-5, elementwise_affine=True, bias=True`, in `f32`.
    pub fn new(normalized_shape: Vec<usize>) -> LayerNorm {
        LayerNorm::with_options(normalized_shape, 1e-5, true, true)
    }

    /// Every constructor argument.
    pub fn with_options(normalized_shape: Vec<usize>, eps: f64, elementwise_affine: bool, bias: bool) -> LayerNorm {
        let shape = normalized_shape.clone();
        LayerNorm {
            weight: elementwise_affine.then(|| Param::new(Tensor::ones(shape.clone(), DType::F32))),
            bias: (elementwise_affine && bias).then(|| Param::new(Tensor::zeros(shape, DType::F32))),
            normalized_shape,
            eps,
            elementwise_affine,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for LayerNorm {
    fn extra_repr(&self) -> String {
        let dims: Vec<String> = self.normalized_shape.iter().map(|d| d.to_string()).collect();
        let tuple = if dims.len() == 1 {
            format!("({},)", dims[0])
        } else {
            format!("({})", dims.join(", "))
        };
        format!(
            "{tuple}, eps={}, elementwise_affine={}",
            py_float(self.eps),
            py_bool(self.elementwise_affine)
        )
    }
}

reads_input!(LayerNorm, |ln, x| {
    let w = ln.weight.as_ref().map(Param::data);
    let b = ln.bias.as_ref().map(Param::data);
    layer_norm(x, &ln.normalized_shape, w.as_ref(), b.as_ref(), ln.eps)
});
