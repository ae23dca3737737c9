//! Embedding lookup: `index_select` of the table's rows (on the CPU and on devices), whose gradient leaves the
//! padding row out.

use super::index::{IndexSelect, index_type};
use super::run;
use crate::{Error, Result, Tensor};

/// PyTorch's `F.embedding(indices, weight)`: the rows of `weight` (`(num, dim)`) at `indices` (`int64` or
/// `int32`, any shape), giving `indices.shape + (dim,)`.
///
/// ```
/// use nn::{Tensor, functional::embedding};
/// let w = Tensor::from_vec(vec![0.0f32, 0.0, 1.0, 1.0, 2.0, 2.0], [3, 2]).unwrap();
/// let i = Tensor::from_vec(vec![2i64, 0], [2]).unwrap();
/// assert_eq!(embedding(&i, &w).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 2.0, 0.0, 0.0]);
/// ```
pub fn embedding(indices: &Tensor, weight: &Tensor) -> Result<Tensor> {
    embedding_padded(indices, weight, None)
}

/// PyTorch's `F.embedding(indices, weight, padding_idx)`: [`embedding`] whose row `padding_idx` gets no
/// gradient (its lookups still return it).
///
/// ```
/// use nn::{Tensor, functional::embedding_padded};
/// let mut w = Tensor::from_vec(vec![0.0f64, 0.0, 1.0, 1.0], [2, 2]).unwrap();
/// w.set_requires_grad(true).unwrap();
/// let i = Tensor::from_vec(vec![1i64, 0, 1], [3]).unwrap();
/// embedding_padded(&i, &w, Some(0)).unwrap().sum_all().unwrap().backward().unwrap();
/// assert_eq!(w.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 0.0, 2.0, 2.0]);
/// ```
pub fn embedding_padded(indices: &Tensor, weight: &Tensor, padding_idx: Option<usize>) -> Result<Tensor> {
    let op = "embedding";
    Error::check_rank(
        op,
        weight.shape(),
        2,
        "the weight must be (num_embeddings, embedding_dim)",
    )?;
    index_type(op, indices)?;
    let lookup = IndexSelect {
        dim: 0,
        skip: padding_idx,
        name: op,
    };
    let rows = run(&lookup, &[weight, &indices.reshape([indices.numel()])?])?;
    let mut shape = indices.shape().to_vec();
    shape.push(weight.shape()[1]);
    rows.reshape(shape)
}
