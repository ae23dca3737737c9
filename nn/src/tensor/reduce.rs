//! Reductions (sum, mean, variance over any set of dimensions) and softmax, accumulated in `f64` as PyTorch's
//! CPU kernels accumulate `f32` in `double`.

use super::Tensor;
use super::storage::CpuData;
use crate::tensor::cast::cast_data;
use crate::tensor::elementwise::broadcast_strides;
use crate::tensor::map;
use crate::{DType, Error, Result, Shape};

impl Tensor {
    /// The elements as `f64` values, for math that accumulates in double precision.
    pub(crate) fn f64_values(&self, op: &'static str) -> Result<Vec<f64>> {
        if !self.is_floating_point() {
            return Err(Error::float_only(op, self.dtype()));
        }
        self.read_cpu(op, |d| match d {
            CpuData::F64(v) => v.clone(),
            other => match cast_data(other, DType::F64) {
                CpuData::F64(v) => v,
                _ => unreachable!("cast_data returns the dtype asked for"),
            },
        })
    }

    /// A tensor of `dtype` made from `f64` values (rounded as PyTorch rounds a float result).
    pub(crate) fn from_f64_values(values: Vec<f64>, shape: Shape, dtype: DType) -> Tensor {
        let data = CpuData::F64(values);
        let data = if dtype == DType::F64 {
            data
        } else {
            cast_data(&data, dtype)
        };
        Tensor::from_cpu(data, shape)
    }

    fn reduced_shape(&self, op: &'static str, dims: &[isize]) -> Result<(Shape, Vec<bool>)> {
        let mut reduce = vec![false; self.rank()];
        if dims.is_empty() {
            reduce.iter_mut().for_each(|r| *r = true);
        }
        for &d in dims {
            let i = self.dim_index(op, d)?;
            if self.rank() > 0 {
                reduce[i] = true;
            }
        }
        let keep: Shape = self
            .shape
            .iter()
            .zip(&reduce)
            .map(|(&s, &r)| if r { 1 } else { s })
            .collect();
        Ok((keep, reduce))
    }

    fn finish_reduction(&self, values: Vec<f64>, keep: Shape, reduce: &[bool], keepdim: bool) -> Tensor {
        let shape = if keepdim {
            keep
        } else {
            self.shape
                .iter()
                .zip(reduce)
                .filter(|(_, r)| !**r)
                .map(|(&s, _)| s)
                .collect()
        };
        Tensor::from_f64_values(values, shape, self.dtype())
    }

    /// Sums of `x` over `dims` (all dimensions when empty), in f64, into the kept shape.
    fn sums(
        &self,
        op: &'static str,
        dims: &[isize],
        map: impl Fn(f64) -> f64,
    ) -> Result<(Vec<f64>, Shape, Vec<bool>, usize)> {
        let (keep, reduce) = self.reduced_shape(op, dims)?;
        let values = self.f64_values(op)?;
        let out_strides = broadcast_strides(&keep, &self.shape);
        let mut acc = vec![0.0f64; keep.numel()];
        let count = self
            .shape
            .iter()
            .zip(&reduce)
            .filter(|(_, r)| **r)
            .map(|(&s, _)| s)
            .product::<usize>();
        if !values.is_empty() {
            let rank = self.rank();
            let mut index = vec![0usize; rank];
            let mut out = 0usize;
            for &x in &values {
                acc[out] += map(x);
                for d in (0..rank).rev() {
                    index[d] += 1;
                    out += out_strides[d];
                    if index[d] < self.shape[d] {
                        break;
                    }
                    out -= out_strides[d] * self.shape[d];
                    index[d] = 0;
                }
            }
        }
        Ok((acc, keep, reduce, count))
    }

    /// Sum over `dims` (all when empty).
    ///
    /// ```
    /// let t = nn::Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    /// assert_eq!(t.sum_dims(&[0], false).unwrap().to_vec::<f32>().unwrap(), vec![4.0, 6.0]);
    /// ```
    pub fn sum_dims(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let (acc, keep, reduce, _) = self.sums("sum", dims, |x| x)?;
        Ok(self.finish_reduction(acc, keep, &reduce, keepdim))
    }

    /// Mean over `dims` (all when empty).
    pub fn mean_dims(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let (mut acc, keep, reduce, count) = self.sums("mean", dims, |x| x)?;
        acc.iter_mut().for_each(|a| *a /= count as f64);
        Ok(self.finish_reduction(acc, keep, &reduce, keepdim))
    }

    /// Variance over `dims` (all when empty), with Bessel's correction when `unbiased`.
    pub fn var_dims(&self, dims: &[isize], unbiased: bool, keepdim: bool) -> Result<Tensor> {
        let mean = self.mean_dims(dims, true)?.to_dtype(DType::F64)?;
        let centered = self.to_dtype(DType::F64)?.sub(&mean)?;
        let (mut acc, keep, reduce, count) = centered.sums("var", dims, |x| x * x)?;
        let denom = if unbiased { count as f64 - 1.0 } else { count as f64 };
        acc.iter_mut().for_each(|a| *a /= denom);
        let out = Tensor::from_f64_values(acc, keep, DType::F64);
        let out = if keepdim {
            out
        } else {
            out.finish_reduction_shape(&self.shape, &reduce)?
        };
        out.to_dtype(self.dtype())
    }

    fn finish_reduction_shape(&self, full: &Shape, reduce: &[bool]) -> Result<Tensor> {
        let shape: Shape = full.iter().zip(reduce).filter(|(_, r)| !**r).map(|(&s, _)| s).collect();
        self.reshape(shape)
    }

    /// Sum of every element, as a 0-dimensional tensor.
    pub fn sum_all(&self) -> Result<Tensor> {
        self.sum_dims(&[], false)
    }

    /// Mean of every element, as a 0-dimensional tensor.
    pub fn mean_all(&self) -> Result<Tensor> {
        self.mean_dims(&[], false)
    }

    /// Softmax along `dim`: `exp(x - max) / sum(exp(x - max))`.
    ///
    /// ```
    /// let t = nn::Tensor::from_vec(vec![0.0f64, 0.0], [2]).unwrap();
    /// assert_eq!(t.softmax(-1).unwrap().to_vec::<f64>().unwrap(), vec![0.5, 0.5]);
    /// ```
    pub fn softmax(&self, dim: isize) -> Result<Tensor> {
        self.softmax_impl("softmax", dim, false)
    }

    /// Log-softmax along `dim`: `x - max - log(sum(exp(x - max)))`.
    pub fn log_softmax(&self, dim: isize) -> Result<Tensor> {
        self.softmax_impl("log_softmax", dim, true)
    }

    fn softmax_impl(&self, op: &'static str, dim: isize, log: bool) -> Result<Tensor> {
        let d = self.dim_index(op, dim)?;
        let (outer, size, inner) = self.split_at_dim(d);
        if !self.device().is_cpu() {
            return crate::gpu::softmax(self, [outer, size, inner], log);
        }
        let n = self.numel();
        let data = self.read_cpu(op, |data| -> Result<CpuData> {
            Ok(match data {
                CpuData::F32(v) => map::filled(n, |out| map::softmax(v, out, size, inner, log)),
                CpuData::F64(v) => map::filled(n, |out| map::softmax(v, out, size, inner, log)),
                CpuData::F16(_) | CpuData::BF16(_) => {
                    let wide = cast_data(data, DType::F32);
                    let CpuData::F32(v) = &wide else {
                        unreachable!("cast to f32")
                    };
                    let out = map::filled(n, |out| map::softmax(v, out, size, inner, log));
                    cast_data(&out, data.dtype())
                }
                other => return Err(Error::float_only(op, other.dtype())),
            })
        })??;
        Ok(Tensor::from_cpu(data, self.shape.clone()))
    }

    /// Softmax's (or log-softmax's) backward from the forward's output `self` and the gradient `dy`, along
    /// `dim`: `y · (dy - Σ dy·y)`, or `dy - e^y · Σ dy`. Sums accumulate in `f64`.
    pub(crate) fn softmax_backward_impl(&self, dy: &Tensor, dim: isize, log: bool) -> Result<Tensor> {
        let op = if log {
            "log_softmax_backward"
        } else {
            "softmax_backward"
        };
        let d = self.dim_index(op, dim)?;
        let (outer, size, inner) = self.split_at_dim(d);
        if !self.device().is_cpu() {
            return crate::gpu::softmax_backward(self, dy, [outer, size, inner], log);
        }
        let y = self.f64_values(op)?;
        let g = dy.f64_values(op)?;
        let mut dx = vec![0.0f64; y.len()];
        let block = size * inner;
        if block > 0 {
            for ((y, g), dx) in y.chunks(block).zip(g.chunks(block)).zip(dx.chunks_mut(block)) {
                for lane in 0..inner {
                    let at = |k: usize| k * inner + lane;
                    let sum: f64 = (0..size)
                        .map(|k| if log { g[at(k)] } else { g[at(k)] * y[at(k)] })
                        .sum();
                    for k in 0..size {
                        let i = at(k);
                        dx[i] = if log {
                            g[i] - y[i].exp() * sum
                        } else {
                            y[i] * (g[i] - sum)
                        };
                    }
                }
            }
        }
        Ok(Tensor::from_f64_values(dx, self.shape.clone(), self.dtype()))
    }

    /// The shape read as `(outer, size of dim, inner)`.
    pub(crate) fn split_at_dim(&self, d: usize) -> (usize, usize, usize) {
        if self.rank() == 0 {
            return (1, 1, 1);
        }
        let outer = self.shape[..d].iter().product();
        let inner = self.shape[d + 1..].iter().product();
        (outer, self.shape[d], inner)
    }
}
