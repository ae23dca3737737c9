//! Element rearrangements PyTorch composes models from: `flip`, `roll`, `repeat` and `tile`. Each is built from
//! the selection and layout ops (`index_select`, `narrow` and `cat`, `expand`), so it runs on every device and
//! dtype, and is recorded as one node with PyTorch's name and gradient (`FlipBackward0`, `RollBackward0`,
//! `RepeatBackward0`).
//!
//! ```
//! use nn::Tensor;
//! let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], [2, 3])?;
//! assert_eq!(x.flip(&[1])?.to_vec::<i64>()?, vec![3, 2, 1, 6, 5, 4]);
//! assert_eq!(x.roll(&[1], &[1])?.to_vec::<i64>()?, vec![3, 1, 2, 6, 4, 5]);
//! assert_eq!(x.repeat(&[1, 2])?.to_vec::<i64>()?, vec![1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]);
//! assert_eq!(x.tile(&[2])?.shape().to_vec(), vec![2, 6]);
//! # Ok::<(), nn::Error>(())
//! ```

use crate::tensor::autograd::{no_grad, record_function};
use crate::{DType, Error, Result, Shape, Tensor};

/// `dims` as indices into a tensor of `rank` dimensions, each at most once (PyTorch's "dim 0 appears multiple
/// times in the list of dims").
pub(crate) fn distinct_dims(op: &'static str, dims: &[isize], rank: usize) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::with_capacity(dims.len());
    for &d in dims {
        let d = crate::tensor::normalize_dim(op, d, rank)?;
        if out.contains(&d) {
            return Err(Error::invalid(
                op,
                format!("dim {d} appears multiple times in the list of dims"),
            ));
        }
        out.push(d);
    }
    Ok(out)
}

impl Tensor {
    /// The elements in reverse order along each of `dims` (PyTorch's `flip`), in a new tensor.
    pub fn flip(&self, dims: &[isize]) -> Result<Tensor> {
        let op = "flip";
        let dims = distinct_dims(op, dims, self.rank())?;
        let mut out = {
            let _forward = no_grad();
            let mut out = self.clone();
            for &d in &dims {
                let n = self.shape()[d] as i64;
                if n > 1 {
                    let reversed: Vec<i64> = (0..n).rev().collect();
                    let index = Tensor::from_vec(reversed, [n as usize])?.to_device(self.device())?;
                    out = out.index_select(d as isize, &index)?;
                }
            }
            if out.shares_storage(self) { out.copy()? } else { out }
        };
        let back: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
        record_function(op, &[self], &mut out, move |g, _| Ok(vec![Some(g.flip(&back)?)]));
        Ok(out)
    }

    /// The elements shifted by `shifts[i]` along `dims[i]`, wrapping around (PyTorch's `roll`); with no `dims`,
    /// the flattened tensor shifted by the one shift, then given its shape back.
    pub fn roll(&self, shifts: &[isize], dims: &[isize]) -> Result<Tensor> {
        let op = "roll";
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(Error::invalid(
                    op,
                    format!("shifts and dimensions must align. shifts: {}, dims:0", shifts.len()),
                ));
            }
            return self.flatten(0, -1)?.roll(shifts, &[0])?.reshape(self.shape().clone());
        }
        if shifts.len() != dims.len() {
            return Err(Error::invalid(
                op,
                format!(
                    "shifts and dimensions must align. shifts: {}, dims:{}",
                    shifts.len(),
                    dims.len()
                ),
            ));
        }
        let dims: Vec<usize> = dims.iter().map(|&d| self.dim_index(op, d)).collect::<Result<_>>()?;
        let mut out = {
            let _forward = no_grad();
            let mut out = self.clone();
            for (&shift, &d) in shifts.iter().zip(&dims) {
                let n = self.shape()[d];
                let k = if n == 0 {
                    0
                } else {
                    shift.rem_euclid(n as isize) as usize
                };
                if k != 0 {
                    let tail = out.narrow(d as isize, n - k, k)?;
                    let head = out.narrow(d as isize, 0, n - k)?;
                    out = Tensor::cat(&[&tail, &head], d as isize)?;
                }
            }
            if out.shares_storage(self) { out.copy()? } else { out }
        };
        let back_shifts: Vec<isize> = shifts.iter().map(|s| -s).collect();
        let back_dims: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
        record_function(op, &[self], &mut out, move |g, _| {
            Ok(vec![Some(g.roll(&back_shifts, &back_dims)?)])
        });
        Ok(out)
    }

    /// The tensor repeated `repeats[i]` times along dimension `i` (PyTorch's `repeat`): `repeats` has at least
    /// as many entries as the tensor has dimensions, and extra leading entries add dimensions.
    pub fn repeat(&self, repeats: &[usize]) -> Result<Tensor> {
        let op = "repeat";
        if repeats.len() < self.rank() {
            return Err(Error::invalid(
                op,
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        // The tensor with leading 1s, each dimension `s` seen as `(1, s)` and expanded to `(r, s)`.
        let lead = repeats.len() - self.rank();
        let padded: Vec<usize> = std::iter::repeat_n(1, lead)
            .chain(self.shape().iter().copied())
            .collect();
        let pairs: Vec<usize> = repeats.iter().zip(&padded).flat_map(|(&r, &s)| [r, s]).collect();
        let out_shape: Vec<usize> = repeats.iter().zip(&padded).map(|(&r, &s)| r * s).collect();
        let mut out = {
            let _forward = no_grad();
            let ones: Vec<usize> = padded.iter().flat_map(|&s| [1, s]).collect();
            let sizes: Vec<isize> = pairs.iter().map(|&s| s as isize).collect();
            let spread = self.reshape(Shape::from(ones))?.expand(&sizes)?;
            spread.copy()?.reshape(Shape::from(out_shape))?
        };
        let shape = self.shape().clone();
        let tiles: Vec<isize> = (0..repeats.len()).map(|i| 2 * i as isize).collect();
        record_function(op, &[self], &mut out, move |g, _| {
            let summed = g.reshape(Shape::from(pairs.clone()))?.sum_dims(&tiles, false)?;
            Ok(vec![Some(summed.reshape(shape.clone())?)])
        });
        Ok(out)
    }

    /// The tensor tiled `reps[i]` times along dimension `i` (PyTorch's `tile`): [`repeat`](Self::repeat) with
    /// `reps` padded by leading 1s to the tensor's rank.
    pub fn tile(&self, reps: &[usize]) -> Result<Tensor> {
        let lead = self.rank().saturating_sub(reps.len());
        let reps: Vec<usize> = std::iter::repeat_n(1, lead).chain(reps.iter().copied()).collect();
        self.repeat(&reps)
    }

    /// A copy of the elements in a storage of their own, recorded as PyTorch's `clone()` (`CloneBackward0`):
    /// the gradient passes through. (`Clone::clone` of a `Tensor` is another handle to the same storage.)
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2])?.requires_grad_(true)?;
    /// let y = x.copy()?;
    /// assert!(!y.shares_storage(&x));
    /// assert_eq!(y.to_string(), "tensor([1., 2.], grad_fn=<CloneBackward0>)");
    /// # Ok::<(), nn::Error>(())
    /// ```
    #[doc(alias = "clone")]
    pub fn copy(&self) -> Result<Tensor> {
        self.recorded_copy()
    }
}

/// The finite extremes of `dtype`, for clamping a maximum that may be infinite.
pub(crate) fn finite_max(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => f64::from(half::f16::MAX),
        DType::BF16 => f64::from(half::bf16::MAX),
        DType::F32 => f64::from(f32::MAX),
        _ => f64::MAX,
    }
}
