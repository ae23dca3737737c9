//! Reading and writing along a dim at positions an index tensor gives, element by element: `gather`, its
//! inverses `scatter` and `scatter_add`, and `one_hot`. The index is read on the host (one small read) into
//! flat positions; the elements then move by `index_select` and `index_add` on the tensor's device, in every
//! dtype. Each records PyTorch's node (`GatherBackward0`, `ScatterBackward0`, `ScatterAddBackward0`).
//!
//! ```
//! use nn::Tensor;
//! let q = Tensor::from_vec(vec![0.1f32, 0.7, 0.2, 0.5, 0.3, 0.9], [2, 3])?;
//! let actions = Tensor::from_vec(vec![1i64, 2], [2, 1])?;
//! assert_eq!(q.gather(1, &actions)?.to_vec::<f32>()?, vec![0.7, 0.9]); // q.gather(1, actions)
//! # Ok::<(), nn::Error>(())
//! ```

use crate::tensor::autograd::{no_grad, record_function};
use crate::{DType, Error, Result, Shape, Tensor};

/// For each element of a tensor of shape `inner` (row-major), its flat position in a tensor of shape `outer`
/// at the same coordinates (`inner` fits inside `outer`).
fn positions_within(inner: &Shape, outer: &Shape) -> Vec<i64> {
    let strides = outer.strides();
    let n: usize = inner.iter().product();
    let mut coords = vec![0usize; inner.len()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(coords.iter().zip(&strides).map(|(c, s)| c * s).sum::<usize>() as i64);
        for d in (0..inner.len()).rev() {
            coords[d] += 1;
            if coords[d] < inner[d] {
                break;
            }
            coords[d] = 0;
        }
    }
    out
}

/// The index's checks shared by `gather` and the scatters, in PyTorch's words: int64, the target's rank, and
/// sizes within the target's (and `src`'s) apart from `dim`.
fn check_index(op: &'static str, target: &Shape, dim: usize, index: &Tensor, src: Option<&Shape>) -> Result<()> {
    let kind = if op == "gather" { "gather" } else { "scatter" };
    if index.dtype() != DType::I64 {
        return Err(Error::invalid(op, format!("{kind}(): Expected dtype int64 for index")));
    }
    if index.rank() != target.len() {
        let whose = if src.is_none() { "input" } else { "self" };
        return Err(Error::invalid(
            op,
            format!("Index tensor must have the same number of dimensions as {whose} tensor"),
        ));
    }
    let idx = index.shape();
    let beyond_target = (0..idx.len()).find(|&d| d != dim && idx[d] > target[d]);
    match src {
        None => {
            if let Some(d) = beyond_target {
                return Err(Error::invalid(
                    op,
                    format!(
                        "Size does not match at dimension {d} expected index {:?} to be smaller than self {:?} apart from dimension {dim}",
                        idx.as_ref(),
                        target.as_ref()
                    ),
                ));
            }
        }
        Some(src) => {
            let beyond_src = src.len() != idx.len() || (0..idx.len()).any(|d| idx[d] > src[d]);
            if beyond_target.is_some() || beyond_src {
                return Err(Error::invalid(
                    op,
                    format!(
                        "Expected index {:?} to be smaller than self {:?} apart from dimension {dim} and to be smaller size than src {:?}",
                        idx.as_ref(),
                        target.as_ref(),
                        src.as_ref()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The flat positions in a row-major tensor of shape `target` that `index` addresses along `dim`: each
/// index element's own coordinates, with the one along `dim` replaced by its value.
fn addressed(op: &'static str, target: &Shape, dim: usize, index: &Tensor) -> Result<Vec<i64>> {
    let values = index.cpu()?.to_vec::<i64>()?;
    let strides = target.strides();
    let size = target[dim] as i64;
    let within = positions_within(index.shape(), target);
    let (index_stride, index_len) = (index.shape().strides()[dim], index.shape()[dim]);
    let mut out = Vec::with_capacity(values.len());
    for (e, (&v, &p)) in values.iter().zip(&within).enumerate() {
        if v < 0 || v >= size {
            return Err(Error::invalid(
                op,
                format!("index {v} is out of bounds for dimension {dim} with size {size}"),
            ));
        }
        // `p` has the index element's coordinate along `dim`; swap it for the value.
        let along = (e / index_stride) % index_len;
        out.push(p + (v - along as i64) * strides[dim] as i64);
    }
    Ok(out)
}

/// A 1-d int64 tensor of `positions` on `device`.
fn position_tensor(positions: Vec<i64>, device: crate::Device) -> Result<Tensor> {
    let n = positions.len();
    Tensor::from_vec(positions, [n])?.to_device(device)
}

impl Tensor {
    /// The elements at `index` along `dim` (PyTorch's `gather`): `out[i][j] = x[i][index[i][j]]` for `dim = 1`.
    /// `index` is int64, of this tensor's rank, no larger apart from `dim`; the result has its shape.
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let op = "gather";
        if self.rank() == 0 && index.rank() == 0 {
            return self.unsqueeze(0)?.gather(0, &index.unsqueeze(0)?)?.squeeze(0);
        }
        let d = self.dim_index(op, dim)?;
        check_index(op, self.shape(), d, index, None)?;
        let positions = position_tensor(addressed(op, self.shape(), d, index)?, self.device())?;
        let (shape, numel) = (self.shape().clone(), self.numel());
        let mut out = {
            let _forward = no_grad();
            self.reshape(Shape::from([numel]))?
                .index_select(0, &positions)?
                .reshape(index.shape().clone())?
        };
        record_function(op, &[self], &mut out, move |g, _| {
            let zeros = Tensor::zeros([numel], g.dtype()).to_device(g.device())?;
            let n = positions.numel();
            let grad = zeros.index_add(0, &positions, &g.reshape(Shape::from([n]))?)?;
            Ok(vec![Some(grad.reshape(shape.clone())?)])
        });
        Ok(out)
    }

    /// This tensor with the elements of `src` added at `index` along `dim` (PyTorch's out-of-place
    /// `scatter_add`): `out[i][index[i][j]] += src[i][j]` for `dim = 1`, duplicates summing. `src` has this
    /// tensor's dtype and is at least `index`'s size.
    ///
    /// ```
    /// use nn::Tensor;
    /// let counts = Tensor::zeros([3], nn::DType::F32);
    /// let labels = Tensor::from_vec(vec![2i64, 0, 2, 2], [4])?;
    /// let ones = Tensor::ones([4], nn::DType::F32);
    /// assert_eq!(counts.scatter_add(0, &labels, &ones)?.to_vec::<f32>()?, vec![1.0, 0.0, 3.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_with("scatter_add", dim, index, src, true)
    }

    /// This tensor with the elements of `src` written at `index` along `dim` (PyTorch's out-of-place
    /// `scatter`): `out[i][index[i][j]] = src[i][j]` for `dim = 1`; where an index repeats, the last write
    /// stays (PyTorch's CPU order).
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_with("scatter", dim, index, src, false)
    }

    fn scatter_with(&self, op: &'static str, dim: isize, index: &Tensor, src: &Tensor, add: bool) -> Result<Tensor> {
        if self.rank() == 0 && index.rank() == 0 && src.rank() == 0 {
            let (x, i, s) = (self.unsqueeze(0)?, index.unsqueeze(0)?, src.unsqueeze(0)?);
            return x.scatter_with(op, 0, &i, &s, add)?.squeeze(0);
        }
        let d = self.dim_index(op, dim)?;
        check_index(op, self.shape(), d, index, Some(src.shape()))?;
        if src.dtype() != self.dtype() {
            return Err(Error::invalid(
                op,
                "scatter(): Expected self.dtype to be equal to src.dtype",
            ));
        }
        let targets = addressed(op, self.shape(), d, index)?;
        let device = self.device();
        let (shape, numel, n) = (self.shape().clone(), self.numel(), targets.len());
        // The part of `src` the index covers, in the index's row-major order.
        let sources = position_tensor(positions_within(index.shape(), src.shape()), device)?;
        let (src_shape, src_numel) = (src.shape().clone(), src.numel());
        let flat = |t: &Tensor, len: usize| t.reshape(Shape::from([len]));
        // `scatter` reads each position from the tensor or from the last `src` element written there:
        // `cat([x, part])[choice]`; its gradient for `x` reads zero (one appended) where a write landed.
        let (choice, kept) = if add {
            (None, None)
        } else {
            let mut choice: Vec<i64> = (0..numel as i64).collect();
            let mut kept = choice.clone();
            for (e, &p) in targets.iter().enumerate() {
                choice[p as usize] = (numel + e) as i64;
                kept[p as usize] = numel as i64;
            }
            (
                Some(position_tensor(choice, device)?),
                Some(position_tensor(kept, device)?),
            )
        };
        let targets = position_tensor(targets, device)?;
        let mut out = {
            let _forward = no_grad();
            let part = flat(src, src_numel)?.index_select(0, &sources)?;
            let base = flat(self, numel)?;
            let out = match &choice {
                None => base.index_add(0, &targets, &part)?,
                Some(choice) => Tensor::cat(&[&base, &part], 0)?.index_select(0, choice)?,
            };
            out.reshape(shape.clone())?
        };
        let index = index.clone();
        record_function(op, &[self, src], &mut out, move |g, needs| {
            let grad_self = match (&kept, needs[0]) {
                (_, false) => None,
                (None, true) => Some(g.clone()),
                (Some(kept), true) => {
                    let zero = Tensor::zeros([1], g.dtype()).to_device(g.device())?;
                    let padded = Tensor::cat(&[&flat(g, numel)?, &zero], 0)?;
                    Some(padded.index_select(0, kept)?.reshape(shape.clone())?)
                }
            };
            let grad_src = if needs[1] {
                let picked = g.gather(d as isize, &index)?;
                let zeros = Tensor::zeros([src_numel], g.dtype()).to_device(g.device())?;
                let grad = zeros.index_add(0, &sources, &flat(&picked, n)?)?;
                Some(grad.reshape(src_shape.clone())?)
            } else {
                None
            };
            Ok(vec![grad_self, grad_src])
        });
        Ok(out)
    }
}

/// One-hot rows of the class indices in `labels` (PyTorch's `F.one_hot`): int64 with one more dim of
/// `num_classes` entries (`None`: the largest label + 1).
///
/// ```
/// use nn::{Tensor, functional as F};
/// let labels = Tensor::from_vec(vec![0i64, 2, 1], [3])?;
/// assert_eq!(F::one_hot(&labels, None)?.to_vec::<i64>()?, vec![1, 0, 0, 0, 0, 1, 0, 1, 0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn one_hot(labels: &Tensor, num_classes: Option<usize>) -> Result<Tensor> {
    let op = "one_hot";
    if labels.dtype() != DType::I64 {
        return Err(Error::invalid(
            op,
            "one_hot is only applicable to index tensor of type LongTensor.",
        ));
    }
    let values = labels.cpu()?.to_vec::<i64>()?;
    if values.iter().any(|&v| v < 0) {
        return Err(Error::invalid(op, "Class values must be non-negative."));
    }
    let largest = values.iter().copied().max();
    let classes = match (num_classes, largest) {
        (Some(c), _) => c,
        (None, Some(m)) => m as usize + 1,
        (None, None) => {
            return Err(Error::invalid(
                op,
                "Can not infer total number of classes from empty tensor.",
            ));
        }
    };
    if largest.is_some_and(|m| m as usize >= classes) {
        return Err(Error::invalid(op, "Class values must be smaller than num_classes."));
    }
    let mut out = vec![0i64; values.len() * classes];
    for (row, &v) in values.iter().enumerate() {
        out[row * classes + v as usize] = 1;
    }
    let mut shape = labels.shape().to_vec();
    shape.push(classes);
    Tensor::from_vec(out, shape)?.to_device(labels.device())
}
