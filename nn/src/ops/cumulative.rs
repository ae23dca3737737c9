//! `cumsum`: running sums along a dim, recorded as PyTorch's `CumsumBackward0` (the gradient is the reversed
//! running sum of the incoming one). Integer inputs sum to `int64`, as PyTorch's do.
//!
//! ```
//! use nn::{DType, Tensor};
//! let x = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], [2, 3])?;
//! let y = x.cumsum(1)?;
//! assert_eq!((y.dtype(), y.to_vec::<i64>()?), (DType::I64, vec![1, 3, 6, 4, 9, 15]));
//! assert_eq!(x.cumsum(0)?.to_vec::<i64>()?, vec![1, 2, 3, 5, 7, 9]);
//! # Ok::<(), nn::Error>(())
//! ```

use crate::tensor::autograd::{no_grad, record_function};
use crate::tensor::normalize_dim;
use crate::{DType, Result, Shape, Tensor};

/// `values` (row-major in `shape`) with each run along `dim` replaced by its running sum, accumulated in `T`.
fn running_sums<T: Copy + std::ops::AddAssign + Default>(values: &mut [T], shape: &[usize], dim: usize) {
    let n = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.iter().skip(dim + 1).product();
    if n == 0 || inner == 0 {
        return;
    }
    for block in values.chunks_mut(n * inner) {
        for j in 0..inner {
            let mut sum = T::default();
            for i in 0..n {
                sum += block[i * inner + j];
                block[i * inner + j] = sum;
            }
        }
    }
}

/// The inclusive running combination of `t` along `d` by `combine` (`add`: running sums, `mul`: running
/// products): Hillis and Steele's scan, log₂ n rounds, each combining the partial results with themselves
/// shifted by a doubling stride (`identity` shifted in), from `narrow`, `cat` and `combine` on `t`'s device.
pub(crate) fn scan(
    t: &Tensor,
    d: usize,
    identity: f64,
    combine: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let n = t.shape().get(d).copied().unwrap_or(1);
    let mut partial = t.clone();
    let mut stride = 1;
    while stride < n {
        let mut fill_shape = t.shape().to_vec();
        fill_shape[d] = stride;
        let fill = Tensor::try_full(Shape::from(fill_shape), identity, t.dtype())?.to_device(t.device())?;
        let shifted = Tensor::cat(&[&fill, &partial.narrow(d as isize, 0, n - stride)?], d as isize)?;
        partial = combine(&partial, &shifted)?;
        stride *= 2;
    }
    Ok(partial)
}

impl Tensor {
    /// The running sums along `dim` (PyTorch's `cumsum`): element `i` is the sum of elements `0..=i`. Floats
    /// keep their dtype (the CPU accumulates in `f64`, as PyTorch's); integers and `bool` give `int64`.
    pub fn cumsum(&self, dim: isize) -> Result<Tensor> {
        let op = "cumsum";
        let d = normalize_dim(op, dim, self.rank().max(1))?;
        let mut out = {
            let _forward = no_grad();
            if self.is_floating_point() && !self.device().is_cpu() {
                self.device_cumsum(d)?
            } else {
                self.host_cumsum(d)?
            }
        };
        record_function(op, &[self], &mut out, move |g, _| {
            let back = [d as isize];
            Ok(vec![Some(g.flip(&back)?.cumsum(d as isize)?.flip(&back)?)])
        });
        Ok(out)
    }

    /// The running sums on the host, moved back to the tensor's device.
    fn host_cumsum(&self, d: usize) -> Result<Tensor> {
        let shape = self.shape().clone();
        let host = self.cpu()?;
        let sums = if self.is_floating_point() {
            let mut values = host.to_vec_f64()?;
            running_sums(&mut values, &shape, d);
            Tensor::from_vec(values, shape)?.to_dtype(self.dtype())?
        } else {
            let mut values = host.to_dtype(DType::I64)?.to_vec::<i64>()?;
            running_sums(&mut values, &shape, d);
            Tensor::from_vec(values, shape)?
        };
        sums.to_device(self.device())
    }

    /// The running sums on a device: [`scan`] with `add`.
    fn device_cumsum(&self, d: usize) -> Result<Tensor> {
        scan(&self.copy()?, d, 0.0, Tensor::add)
    }
}
