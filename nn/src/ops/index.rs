//! Selection by index along one dimension, on the CPU: `index_select`, `max` / `min` over a dimension (values
//! and indices), and `index_add` (the scatter their gradients need). Elements are moved as bytes, so every
//! dtype is exact.

use super::{DevicePath, Op, run};
use crate::tensor::autograd::Backward;
use crate::{DType, Error, Result, Shape, Tensor};

/// `(outer, size, inner)`: the elements before dimension `dim`, its size, and the elements after it.
fn split(shape: &Shape, dim: usize) -> (usize, usize, usize) {
    (
        shape[..dim].iter().product(),
        shape[dim],
        shape[dim + 1..].iter().product(),
    )
}

/// The indices of `index` (int64 or int32, one dimension or none), each checked against `size`.
fn indices(op: &'static str, index: &Tensor, size: usize) -> Result<Vec<usize>> {
    if !matches!(index.dtype(), DType::I64 | DType::I32) || index.rank() > 1 {
        return Err(Error::invalid(
            op,
            format!(
                "the index must be a 0-d or 1-d int64 or int32 tensor; got {} of shape {}",
                index.dtype(),
                index.shape()
            ),
        ));
    }
    index
        .to_dtype(DType::I64)?
        .to_vec::<i64>()?
        .into_iter()
        .map(|i| {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < size)
                .ok_or_else(|| Error::invalid(op, format!("index {i} is out of range for a dimension of size {size}")))
        })
        .collect()
}

/// The slices of `x` at `index` along `dim`; inputs `[x, index]`.
struct IndexSelect {
    dim: usize,
}

impl Op for IndexSelect {
    type Output = Tensor;
    const NAME: &'static str = "index_select";
    const DEVICE: DevicePath = DevicePath::None;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, index) = (inputs[0], inputs[1]);
        let (outer, size, inner) = split(x.shape(), self.dim);
        let picks = indices(Self::NAME, index, size)?;
        let width = inner * x.dtype().size_in_bytes();
        let bytes = x.with_bytes(|src| {
            let mut out = Vec::with_capacity(outer * picks.len() * width);
            for o in 0..outer {
                for &i in &picks {
                    let at = (o * size + i) * width;
                    out.extend_from_slice(&src[at..at + width]);
                }
            }
            out
        })?;
        let mut shape = x.shape().to_vec();
        shape[self.dim] = picks.len();
        Tensor::from_bytes(&bytes, shape, x.dtype())
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (dim, shape, index) = (self.dim, inputs[0].shape().clone(), inputs[1].clone());
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            // Each selected slice's gradient goes back to the slice it came from (summed when picked twice).
            let zeros = Tensor::zeros(shape.clone(), g[0].dtype());
            Ok(vec![Some(zeros.index_add(dim as isize, &index, &g[0])?), None])
        }))
    }
}

/// `x` with the slices of `src` added at `index` along `dim`; inputs `[x, index, src]`.
struct IndexAdd {
    dim: usize,
}

impl Op for IndexAdd {
    type Output = Tensor;
    const NAME: &'static str = "index_add";
    const DEVICE: DevicePath = DevicePath::None;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, index, src) = (inputs[0], inputs[1], inputs[2]);
        let (outer, size, inner) = split(x.shape(), self.dim);
        let picks = indices(Self::NAME, index, size)?;
        let mut out = x.to_vec_f64()?;
        let add = src.to_vec_f64()?;
        for o in 0..outer {
            for (k, &i) in picks.iter().enumerate() {
                let (to, from) = ((o * size + i) * inner, (o * picks.len() + k) * inner);
                for j in 0..inner {
                    out[to + j] += add[from + j];
                }
            }
        }
        Tensor::from_vec(out, x.shape().clone())?.to_dtype(x.dtype())
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (dim, index) = (self.dim as isize, inputs[1].clone());
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let dsrc = needs[2].then(|| g[0].index_select(dim, &index)).transpose()?;
            Ok(vec![needs[0].then(|| g[0].clone()), None, dsrc])
        }))
    }
}

/// The largest (or smallest) element of each slice along `dim` and its index; inputs `[x]`. NaN wins, as in
/// PyTorch; among equal values the first.
struct Extreme {
    dim: usize,
    keepdim: bool,
    largest: bool,
}

impl Op for Extreme {
    type Output = (Tensor, Tensor);
    const DEVICE: DevicePath = DevicePath::None;

    fn name(&self) -> &'static str {
        if self.largest { "max" } else { "min" }
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<(Tensor, Tensor)> {
        let x = inputs[0];
        let (outer, size, inner) = split(x.shape(), self.dim);
        if size == 0 {
            return Err(Error::invalid(
                self.name(),
                format!("cannot reduce over dimension {} of size 0", self.dim),
            ));
        }
        let v = x.to_vec_f64()?;
        let mut at = Vec::with_capacity(outer * inner);
        for o in 0..outer {
            for j in 0..inner {
                let value = |i: usize| v[(o * size + i) * inner + j];
                let mut best = 0;
                for i in 1..size {
                    let (a, b) = (value(i), value(best));
                    if b.is_nan() {
                        break;
                    }
                    if a.is_nan() || (self.largest && a > b) || (!self.largest && a < b) {
                        best = i;
                    }
                }
                at.push(best);
            }
        }
        let mut shape = x.shape().to_vec();
        if self.keepdim {
            shape[self.dim] = 1;
        } else {
            shape.remove(self.dim);
        }
        let picked = x.with_bytes(|src| {
            let width = x.dtype().size_in_bytes();
            let mut out = Vec::with_capacity(at.len() * width);
            for (k, &i) in at.iter().enumerate() {
                let (o, j) = (k / inner.max(1), k % inner.max(1));
                let start = ((o * size + i) * inner + j) * width;
                out.extend_from_slice(&src[start..start + width]);
            }
            out
        })?;
        let values = Tensor::from_bytes(&picked, shape.clone(), x.dtype())?;
        let index = Tensor::from_vec(at.iter().map(|&i| i as i64).collect::<Vec<_>>(), shape)?;
        Ok((values, index))
    }

    fn gradient(&self, inputs: &[&Tensor], output: &(Tensor, Tensor)) -> Option<Box<dyn Backward>> {
        let (x_shape, index) = (inputs[0].shape().clone(), output.1.clone());
        let dim = self.dim;
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            // The gradient of each slice goes to the element chosen, and nowhere else.
            let (outer, size, inner) = split(&x_shape, dim);
            let at = index.to_vec::<i64>()?;
            let dv = g[0].to_vec_f64()?;
            let mut dx = vec![0.0; outer * size * inner];
            for (k, (&i, &d)) in at.iter().zip(&dv).enumerate() {
                let (o, j) = (k / inner.max(1), k % inner.max(1));
                dx[(o * size + i as usize) * inner + j] = d;
            }
            Ok(vec![Some(
                Tensor::from_vec(dx, x_shape.clone())?.to_dtype(g[0].dtype())?,
            )])
        }))
    }
}

impl Tensor {
    /// The slices at `index` (a 1-d int64 or int32 tensor) along `dim`, in a new tensor (PyTorch's
    /// `index_select`); an index out of range is an error.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2])?;
    /// let i = Tensor::from_vec(vec![2i64, 0], [2])?;
    /// assert_eq!(x.index_select(0, &i)?.to_vec::<f32>()?, vec![5.0, 6.0, 1.0, 2.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let dim = self.dim_index("index_select", dim)?;
        run(&IndexSelect { dim }, &[self, index])
    }

    /// This tensor with the slices of `src` added at `index` along `dim` (PyTorch's out-of-place
    /// `index_add`); `src` has this tensor's shape but `index.len()` along `dim`.
    pub fn index_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let op = "index_add";
        let dim = self.dim_index(op, dim)?;
        let mut want = self.shape().to_vec();
        want[dim] = index.numel();
        if src.shape().as_ref() != want.as_slice() || src.dtype() != self.dtype() {
            return Err(Error::invalid(
                op,
                format!(
                    "src must be {} of shape {want:?}; got {} of shape {}",
                    self.dtype(),
                    src.dtype(),
                    src.shape()
                ),
            ));
        }
        run(&IndexAdd { dim }, &[self, index, src])
    }

    /// The largest element along `dim` and its index (PyTorch's `torch.max(x, dim, keepdim)`): NaN is the
    /// largest; among equal values the first index. The gradient goes to the element chosen.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0, 4.0], [2, 2])?;
    /// let (values, indices) = x.max_dim(1, false)?;
    /// assert_eq!(values.to_vec::<f32>()?, vec![5.0, 4.0]);
    /// assert_eq!(indices.to_vec::<i64>()?, vec![1, 1]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn max_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dim = self.dim_index("max", dim)?;
        run(
            &Extreme {
                dim,
                keepdim,
                largest: true,
            },
            &[self],
        )
    }

    /// The smallest element along `dim` and its index (PyTorch's `torch.min(x, dim, keepdim)`), as
    /// [`max_dim`](Self::max_dim).
    pub fn min_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dim = self.dim_index("min", dim)?;
        run(
            &Extreme {
                dim,
                keepdim,
                largest: false,
            },
            &[self],
        )
    }
}
