//! Ordering along a dim: `sort`, `argsort` and `topk`. The order is found on the host (a device tensor is read
//! back once; NaN orders above every number, as in PyTorch; equal elements keep their order, PyTorch's
//! `stable=True`), then the values are gathered on the tensor's device. The values record PyTorch's node
//! (`SortBackward0`, `TopkBackward0`): the gradient goes back to the positions they came from.
//!
//! ```
//! use nn::Tensor;
//! let x = Tensor::from_vec(vec![3.0f32, 1.0, 2.0, 9.0, 7.0, 8.0], [2, 3])?;
//! let (values, indices) = x.sort(1, false)?;
//! assert_eq!(values.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 7.0, 8.0, 9.0]);
//! assert_eq!(indices.to_vec::<i64>()?, vec![1, 2, 0, 1, 2, 0]);
//! let (top, at) = x.topk(2, -1, true)?;
//! assert_eq!((top.to_vec::<f32>()?, at.to_vec::<i64>()?), (vec![3.0, 2.0, 9.0, 8.0], vec![0, 2, 0, 2]));
//! # Ok::<(), nn::Error>(())
//! ```

use std::cmp::Ordering;

use crate::tensor::autograd::{no_grad, record_function};
use crate::tensor::normalize_dim;
use crate::{DType, Error, Result, Shape, Tensor};

/// `a` against `b` with NaN above every number and equal to NaN.
fn nan_last(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

/// For each run along `dim` of the row-major `keys` (of `shape`), the positions `0..n` in sorted order
/// (stable), ascending or descending, as an int64 tensor of `shape`.
fn order<K: Copy>(
    keys: &[K],
    shape: &Shape,
    dim: usize,
    descending: bool,
    cmp: impl Fn(K, K) -> Ordering,
) -> Result<Tensor> {
    let n = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.iter().skip(dim + 1).product();
    let mut out = vec![0i64; keys.len()];
    let mut line: Vec<usize> = Vec::with_capacity(n);
    if n > 0 && inner > 0 {
        for (block, out_block) in keys.chunks(n * inner).zip(out.chunks_mut(n * inner)) {
            for j in 0..inner {
                line.clear();
                line.extend(0..n);
                let key = |i: usize| block[i * inner + j];
                if descending {
                    line.sort_by(|&a, &b| cmp(key(b), key(a)));
                } else {
                    line.sort_by(|&a, &b| cmp(key(a), key(b)));
                }
                for (i, &from) in line.iter().enumerate() {
                    out_block[i * inner + j] = from as i64;
                }
            }
        }
    }
    Tensor::from_vec(out, shape.clone())
}

impl Tensor {
    /// The elements sorted along `dim`, ascending (or `descending`), and the int64 positions they came from
    /// (PyTorch's `sort(dim, descending, stable=True)`).
    pub fn sort(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        let indices = self.argsort(dim, descending)?;
        let values = self.picked("sort", dim, &indices)?;
        Ok((values, indices))
    }

    /// The positions that sort the elements along `dim` (PyTorch's `argsort(dim, descending, stable=True)`):
    /// int64, on this tensor's device.
    pub fn argsort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        let d = normalize_dim("argsort", dim, self.rank())?;
        let shape = self.shape().clone();
        let indices = if self.is_floating_point() {
            order(&self.to_vec_f64()?, &shape, d, descending, nan_last)?
        } else {
            let keys = self.cpu()?.to_dtype(DType::I64)?.to_vec::<i64>()?;
            order(&keys, &shape, d, descending, |a: i64, b: i64| a.cmp(&b))?
        };
        indices.to_device(self.device())
    }

    /// The `k` largest elements along `dim` (or the smallest, `largest = false`) and their int64 positions
    /// (PyTorch's `topk(k, dim, largest, sorted=True)`: always in order). Among equal elements the first comes
    /// first, where PyTorch leaves their order unspecified.
    pub fn topk(&self, k: usize, dim: isize, largest: bool) -> Result<(Tensor, Tensor)> {
        let op = "topk";
        let d = normalize_dim(op, dim, self.rank())?;
        if self.rank() == 0 {
            let (values, indices) = self.unsqueeze(0)?.topk(k, 0, largest)?;
            return if k == 1 {
                Ok((values.squeeze(0)?, indices.squeeze(0)?))
            } else {
                Ok((values, indices))
            };
        }
        if k > self.shape()[d] {
            return Err(Error::invalid(op, "selected index k out of range"));
        }
        let indices = self.argsort(dim, largest)?.narrow(d as isize, 0, k)?.contiguous()?;
        let values = self.picked(op, dim, &indices)?;
        Ok((values, indices))
    }

    /// The elements at `indices` along `dim`, recorded as one node named `op` whose gradient goes back to
    /// those positions.
    fn picked(&self, op: &'static str, dim: isize, indices: &Tensor) -> Result<Tensor> {
        let mut values = {
            let _forward = no_grad();
            if self.rank() == 0 {
                self.copy()?
            } else {
                self.gather(dim, indices)?
            }
        };
        let (shape, indices) = (self.shape().clone(), indices.clone());
        record_function(op, &[self], &mut values, move |g, _| {
            if shape.is_empty() {
                return Ok(vec![Some(g.clone())]);
            }
            let zeros = Tensor::zeros(shape.clone(), g.dtype()).to_device(g.device())?;
            Ok(vec![Some(zeros.scatter(dim, &indices, g)?)])
        });
        Ok(values)
    }
}
