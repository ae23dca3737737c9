//! [`LayerNorm`] and [`RMSNorm`]: normalisation over the last dimensions.

use crate::functional::{layer_norm, rms_norm};
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
        format!(
            "{}, eps={}, elementwise_affine={}",
            py_tuple(&self.normalized_shape),
            py_float(self.eps),
            py_bool(self.elementwise_affine)
        )
    }
}

/// A shape as Python prints a tuple: `(5,)`, `(3, 4)`.
fn py_tuple(dims: &[usize]) -> String {
    let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    }
}

reads_input!(LayerNorm, |ln, x| {
    let w = ln.weight.as_ref().map(Param::data);
    let b = ln.bias.as_ref().map(Param::data);
    layer_norm(x, &ln.normalized_shape, w.as_ref(), b.as_ref(), ln.eps)
});

/// PyTorch's `nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True)`: [`rms_norm`] over the last
/// dimensions, scaled by `weight` (ones at first); `eps` `None` is the dtype's machine epsilon.
///
/// ```
/// use nn::prelude::*;
/// let norm = RMSNorm::new(vec![4]);
/// assert_eq!(norm.to_string(), "RMSNorm((4,), eps=None, elementwise_affine=True)");
/// assert_eq!(norm.forward(Tensor::ones([2, 4], DType::F32)).unwrap().shape(), &[2, 4]);
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct RMSNorm {
    /// Scale, of `normalized_shape` (`elementwise_affine`).
    pub weight: Option<Param>,
    /// The trailing dimensions normalised over.
    pub normalized_shape: Vec<usize>,
    /// Added to the mean square; `None`: the machine epsilon of the computing dtype.
    pub eps: Option<f64>,
    /// Whether the layer has `weight`.
    pub elementwise_affine: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl RMSNorm {
    /// PyTorch's defaults: `eps=None, elementwise_affine=True`, in `f32`.
    pub fn new(normalized_shape: Vec<usize>) -> RMSNorm {
        RMSNorm::with_options(normalized_shape, None, true)
    }

    /// Every constructor argument.
    pub fn with_options(normalized_shape: Vec<usize>, eps: Option<f64>, elementwise_affine: bool) -> RMSNorm {
        RMSNorm {
            weight: elementwise_affine.then(|| Param::new(Tensor::ones(normalized_shape.clone(), DType::F32))),
            normalized_shape,
            eps,
            elementwise_affine,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for RMSNorm {
    fn extra_repr(&self) -> String {
        format!(
            "{}, eps={}, elementwise_affine={}",
            py_tuple(&self.normalized_shape),
            self.eps.map_or("None".to_string(), py_float),
            py_bool(self.elementwise_affine)
        )
    }
}

reads_input!(RMSNorm, |norm, x| {
    let w = norm.weight.as_ref().map(Param::data);
    rms_norm(x, &norm.normalized_shape, w.as_ref(), norm.eps)
});
