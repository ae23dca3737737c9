//! `prod`: the product of the elements along a dim or of them all. Floats multiply pairwise (halving the dim
//! each round, on any device); integers multiply on the host in int64, wrapping as PyTorch's do. The gradient
//! is PyTorch's: each element's is the product of the others (so a single zero gets the product of the rest
//! and the others 0), from running products, without dividing by the element.
//!
//! ```
//! use nn::Tensor;
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 0.5, 2.0], [2, 3])?;
//! assert_eq!(x.prod(Some(1), false)?.to_vec::<f32>()?, vec![6.0, 4.0]);
//! assert_eq!(x.prod(None, false)?.item()?, 24.0);
//! let n = Tensor::from_vec(vec![2i32, 3, 4], [3])?;
//! assert_eq!(n.prod(None, false)?.to_vec::<i64>()?, vec![24]);
//! # Ok::<(), nn::Error>(())
//! ```

use crate::ops::cumulative::scan;
use crate::tensor::autograd::{Saved, no_grad, record_function};
use crate::tensor::normalize_dim;
use crate::{DType, Result, Shape, Tensor};

/// `t` with size `len` along `d` filled with ones, on `t`'s device.
fn ones_along(t: &Tensor, d: usize, len: usize) -> Result<Tensor> {
    let mut shape = t.shape().to_vec();
    shape[d] = len;
    Tensor::ones(Shape::from(shape), t.dtype()).to_device(t.device())
}

/// The product along `d`, kept as size 1: the two halves multiplied until one slice is left.
fn pairwise_product(t: &Tensor, d: usize) -> Result<Tensor> {
    let mut t = t.clone();
    let mut n = t.shape()[d];
    if n == 0 {
        return ones_along(&t, d, 1);
    }
    while n > 1 {
        let half = n / 2;
        let mut p = t.narrow(d as isize, 0, half)?.mul(&t.narrow(d as isize, half, half)?)?;
        if n % 2 == 1 {
            p = Tensor::cat(&[&p, &t.narrow(d as isize, n - 1, 1)?], d as isize)?;
        }
        t = p;
        n = t.shape()[d];
    }
    Ok(t)
}

/// The running products along `d` of the elements before each one (1 for the first): the inclusive
/// [`scan`] by `mul`, shifted by one.
fn products_before(t: &Tensor, d: usize) -> Result<Tensor> {
    let n = t.shape()[d];
    let inclusive = scan(t, d, 1.0, Tensor::mul)?;
    Tensor::cat(
        &[&ones_along(t, d, 1)?, &inclusive.narrow(d as isize, 0, n - 1)?],
        d as isize,
    )
}

/// Each element's product of the others along `d`.
fn products_of_others(t: &Tensor, d: usize) -> Result<Tensor> {
    if t.shape()[d] == 0 {
        return Ok(t.clone());
    }
    let back = [d as isize];
    let after = products_before(&t.flip(&back)?, d)?.flip(&back)?;
    products_before(t, d)?.mul(&after)
}

/// The integer product along `d` (keepdim) in int64, wrapping on overflow as PyTorch's.
fn integer_product(t: &Tensor, d: usize) -> Result<Tensor> {
    let shape = t.shape().to_vec();
    let values = t.cpu()?.to_dtype(DType::I64)?.to_vec::<i64>()?;
    let (n, inner) = (shape[d], shape[d + 1..].iter().product::<usize>());
    let outer: usize = shape[..d].iter().product();
    let mut out = vec![1i64; outer * inner];
    for o in 0..outer {
        for i in 0..n {
            for j in 0..inner {
                let slot = &mut out[o * inner + j];
                *slot = slot.wrapping_mul(values[(o * n + i) * inner + j]);
            }
        }
    }
    let mut kept = shape;
    kept[d] = 1;
    Tensor::from_vec(out, kept)?.to_device(t.device())
}

impl Tensor {
    /// The product of the elements along `dim` (PyTorch's `prod(dim, keepdim)`), or of all of them with `None`
    /// (`prod()`, a 0-d result; `keepdim` then keeps every dim as size 1). Integers and `bool` give int64.
    pub fn prod(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        let op = if dim.is_some() { "prod_dim" } else { "prod_all" };
        // The dim reduced, of the tensor itself or of it flattened.
        let (source, d) = match dim {
            Some(dim) => (self.clone(), normalize_dim("prod", dim, self.rank())?),
            None => (self.reshape(Shape::from([self.numel()]))?, 0),
        };
        let source = if source.rank() == 0 {
            source.unsqueeze(0)?
        } else {
            source
        };
        let final_shape: Vec<usize> = match (dim, keepdim) {
            (_, true) => self
                .shape()
                .iter()
                .enumerate()
                .map(|(i, &s)| if dim.is_none() || i == d { 1 } else { s })
                .collect(),
            (Some(_), false) => self
                .shape()
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != d)
                .map(|(_, &s)| s)
                .collect(),
            (None, false) => Vec::new(),
        };
        let mut out = {
            let _forward = no_grad();
            let product = if self.is_floating_point() {
                pairwise_product(&source, d)?
            } else {
                integer_product(&source, d)?
            };
            product.reshape(Shape::from(final_shape))?
        };
        let x = Saved::new(self);
        let shape = self.shape().clone();
        record_function(op, &[self], &mut out, move |g, _| {
            let x = x.get("prod")?;
            let source = match dim {
                Some(_) if x.rank() > 0 => x.clone(),
                _ => x.reshape(Shape::from([x.numel()]))?,
            };
            // The gradient of the kept-dim product, broadcast back along the reduced dim.
            let mut kept = source.shape().to_vec();
            kept[d] = 1;
            let g = g.reshape(Shape::from(kept))?;
            let grad = products_of_others(&source, d)?.mul(&g)?;
            Ok(vec![Some(grad.reshape(shape.clone())?)])
        });
        Ok(out)
    }
}
