//! Embedding lookup, on the CPU.

use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Saved};
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
    run(&Embedding { padding_idx }, &[indices, weight])
}

/// The rows of `weight` at `indices`; inputs `[indices, weight]`. Row `padding_idx` gets no gradient.
struct Embedding {
    padding_idx: Option<usize>,
}

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

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (indices, padding_idx) = (Saved::new(inputs[0]), self.padding_idx);
        let (shape, dtype) = (inputs[1].shape().clone(), inputs[1].dtype());
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            // Each looked-up row's gradient added into its row of the table.
            let dim = shape[1];
            let rows = indices.get("embedding")?.to_dtype(DType::I64)?.to_vec::<i64>()?;
            let dy = g[0].to_dtype(DType::F64)?.to_vec::<f64>()?;
            let mut dw = vec![0.0f64; shape.numel()];
            for (pos, &row) in rows.iter().enumerate() {
                let row = row as usize;
                if Some(row) == padding_idx {
                    continue;
                }
                for (d, v) in dw[row * dim..(row + 1) * dim]
                    .iter_mut()
                    .zip(&dy[pos * dim..(pos + 1) * dim])
                {
                    *d += v;
                }
            }
            Ok(vec![None, Some(Tensor::from_vec(dw, shape.clone())?.to_dtype(dtype)?)])
        }))
    }
}
