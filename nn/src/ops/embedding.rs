//! Embedding lookup, on the CPU.

use super::{DevicePath, Op, run};
use crate::{DType, Error, Result, Shape, Tensor};

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
    let op = "embedding";
    if weight.rank() != 2 {
        return Err(Error::invalid(
            op,
            format!(
                "the weight must be (num_embeddings, embedding_dim); got shape {}",
                weight.shape()
            ),
        ));
    }
    if !matches!(indices.dtype(), DType::I64 | DType::I32) {
        return Err(Error::UnsupportedDType {
            op,
            dtype: indices.dtype(),
            hint: "; indices must be int64 or int32",
        });
    }
    run(&Embedding, &[indices, weight])
}

/// The rows of `weight` at `indices`; inputs `[indices, weight]`.
struct Embedding;

impl Op for Embedding {
    type Output = Tensor;
    const NAME: &'static str = "embedding";
    const DEVICE: DevicePath = DevicePath::None;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (indices, weight, op) = (inputs[0], inputs[1], "embedding");
        let (num, dim) = (weight.shape()[0], weight.shape()[1]);
        let idx = indices.to_dtype(DType::I64)?.to_vec::<i64>()?;
        let mut rows = Vec::with_capacity(idx.len());
        for (pos, &i) in idx.iter().enumerate() {
            if i < 0 || i as usize >= num {
                return Err(Error::invalid(
                    op,
                    format!("index {i} at position {pos} is out of range for {num} embeddings"),
                ));
            }
            rows.push(i as usize);
        }
        let mut shape: Shape = indices.shape().clone();
        shape.push(dim);
        let table = weight.to_dtype(DType::F64)?.to_vec::<f64>()?;
        let mut out = Vec::with_capacity(rows.len() * dim);
        for r in rows {
            out.extend_from_slice(&table[r * dim..(r + 1) * dim]);
        }
        Tensor::from_vec(out, shape)?.to_dtype(weight.dtype())
    }
}
