//! Reductions over any set of dimensions (sum, mean, variance): on the CPU accumulated in `f64`, read in place
//! and split over nn's threads ([`host_sum`]) (PyTorch's variance accumulates in `double`
//! too; its sums add `f32` pairwise in `f32`, which `f64` matches within the tolerance); on a device by
//! `kernels::sum` (pairwise summation), the variance as a composition of the others.

pub(crate) mod host_sum;
mod product;
mod statistics;

use kernels::GpuDevice;

use super::{Op, run};
use crate::tensor::autograd::{Backward, Formula};
use crate::tensor::cast::cast_data;
use crate::tensor::device::probe;
use crate::tensor::storage::CpuData;
use crate::{DType, Error, Result, Shape, Tensor};
use host_sum::sum_dims_into;

/// What a [`Reduce`] computes.
#[derive(Clone, Copy)]
enum Reduction {
    Sum,
    Mean,
    Var { unbiased: bool },
}

/// The dimensions the probe reduces over (static, as `Reduce` borrows its dimensions).
const PROBE_DIMS: [&[isize]; 3] = [&[1], &[0, 2], &[]];

/// A reduction of `x` over `dims` (all when empty), keeping them as size 1 when `keepdim`; inputs `[x]`.
struct Reduce<'d> {
    reduction: Reduction,
    dims: &'d [isize],
    keepdim: bool,
}

impl Op for Reduce<'_> {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        match self.reduction {
            Reduction::Sum => "sum",
            Reduction::Mean => "mean",
            Reduction::Var { .. } => "var",
        }
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, dims, keepdim) = (inputs[0], self.dims, self.keepdim);
        match self.reduction {
            Reduction::Sum => {
                let (acc, keep, reduce, _) = x.sums("sum", dims, false)?;
                Ok(x.finish_reduction(acc, keep, &reduce, keepdim))
            }
            Reduction::Mean => {
                let (mut acc, keep, reduce, count) = x.sums("mean", dims, false)?;
                acc.iter_mut().for_each(|a| *a /= count as f64);
                Ok(x.finish_reduction(acc, keep, &reduce, keepdim))
            }
            Reduction::Var { unbiased } => {
                let mean = x.mean_dims(dims, true)?.to_dtype(DType::F64)?;
                let centered = x.to_dtype(DType::F64)?.sub(&mean)?;
                let (mut acc, keep, reduce, count) = centered.sums("var", dims, true)?;
                let denom = if unbiased { count as f64 - 1.0 } else { count as f64 };
                acc.iter_mut().for_each(|a| *a /= denom);
                let out = Tensor::from_f64_values(acc, keep.clone(), DType::F64);
                let out = out.reshape(x.reduced_output_shape(keep, &reduce, keepdim))?;
                out.to_dtype(x.dtype())
            }
        }
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, name) = (inputs[0], self.name());
        let (keep, reduce) = x.reduced_shape(name, self.dims)?;
        let shape = x.reduced_output_shape(keep, &reduce, self.keepdim);
        let mean = match self.reduction {
            Reduction::Sum => false,
            Reduction::Mean => true,
            Reduction::Var { unbiased } => {
                // (x - mean)² summed, over the count (less one, unbiased): each step a device op.
                let _no_grad = crate::no_grad();
                let centered = x.sub(&x.mean_dims(self.dims, true)?)?;
                let count = x.reduced_count(&reduce);
                let denom = if unbiased { count as f64 - 1.0 } else { count as f64 };
                let sum = centered.mul(&centered)?.sum_dims(self.dims, self.keepdim)?;
                return sum.mul_scalar(1.0 / denom);
            }
        };
        x.gpu_op(name, shape, |dtype, b| {
            kernels::sum::sum_dims(dtype, b, x.shape(), &reduce, mean)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let x = Tensor::from_vec(probe::wave(3 * 5 * 7, 0.5), [3, 5, 7])?.to_dtype(dtype)?;
        Ok(PROBE_DIMS
            .iter()
            .map(|&dims| {
                let case = Reduce {
                    reduction: self.reduction,
                    dims,
                    keepdim: false,
                };
                (case, vec![x.clone()])
            })
            .collect())
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let x = inputs[0];
        let (keep, reduce) = x.reduced_shape(self.name(), self.dims).ok()?;
        let count = x.reduced_count(&reduce);
        let scale = match self.reduction {
            Reduction::Sum => 1.0,
            Reduction::Mean => 1.0 / count as f64,
            Reduction::Var { .. } => return None,
        };
        let (shape, dtype, device) = (x.shape().clone(), x.dtype(), x.device());
        Some(
            Formula::new(move |g: &[Tensor], _: &[bool]| {
                // Each element of a reduced group gets the group's gradient (over its count, for the mean).
                let spread = Tensor::zeros(shape.clone(), dtype)
                    .to_device(device)?
                    .add(&g[0].reshape(keep.clone())?)?;
                Ok(vec![Some(if scale == 1.0 {
                    spread
                } else {
                    spread.mul_scalar(scale)?
                })])
            })
            .saving_nothing()
            .differentiable()
            .boxed(),
        )
    }
}

impl Tensor {
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
            .shape()
            .iter()
            .zip(&reduce)
            .map(|(&s, &r)| if r { 1 } else { s })
            .collect();
        Ok((keep, reduce))
    }

    /// How many elements each output of a reduction over `reduce` sums.
    fn reduced_count(&self, reduce: &[bool]) -> usize {
        self.shape()
            .iter()
            .zip(reduce)
            .filter(|(_, r)| **r)
            .map(|(s, _)| s)
            .product()
    }

    /// The shape of a reduction over `reduce`: `keep` (size 1 where reduced) with `keepdim`, else without the
    /// reduced dimensions.
    fn reduced_output_shape(&self, keep: Shape, reduce: &[bool], keepdim: bool) -> Shape {
        if keepdim {
            keep
        } else {
            self.shape()
                .iter()
                .zip(reduce)
                .filter(|(_, r)| !**r)
                .map(|(&s, _)| s)
                .collect()
        }
    }

    fn finish_reduction(&self, values: Vec<f64>, keep: Shape, reduce: &[bool], keepdim: bool) -> Tensor {
        let shape = self.reduced_output_shape(keep, reduce, keepdim);
        Tensor::from_f64_values(values, shape, self.dtype())
    }

    /// Sums of `x` (of `x²` when `square`) over `dims` (all dimensions when empty), in f64, into the kept
    /// shape; read in place.
    fn sums(&self, op: &'static str, dims: &[isize], square: bool) -> Result<(Vec<f64>, Shape, Vec<bool>, usize)> {
        Error::check_float(op, self.dtype())?;
        let (keep, reduce) = self.reduced_shape(op, dims)?;
        let count = self.reduced_count(&reduce);
        let mut acc = vec![0.0f64; keep.numel()];
        let shape = self.shape().dims();
        self.read_cpu(op, |d| match d {
            CpuData::F32(x) => sum_dims_into(x, shape, &reduce, square, &mut acc),
            CpuData::F64(x) => sum_dims_into(x, shape, &reduce, square, &mut acc),
            other => {
                let CpuData::F32(wide) = cast_data(other, DType::F32) else {
                    unreachable!("cast_data returns the dtype asked for")
                };
                sum_dims_into(&wide, shape, &reduce, square, &mut acc)
            }
        })?;
        Ok((acc, keep, reduce, count))
    }

    fn reduce(&self, reduction: Reduction, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let op = Reduce {
            reduction,
            dims,
            keepdim,
        };
        run(&op, &[self])
    }

    /// This gradient summed over the dimensions a broadcast to its shape added or stretched, so that it has
    /// `shape` (the backward of a broadcast).
    pub(crate) fn sum_to(&self, shape: &Shape) -> Result<Tensor> {
        if self.shape() == shape {
            return Ok(self.clone());
        }
        let lead = self.rank().saturating_sub(shape.rank());
        let dims: Vec<isize> = (0..self.rank())
            .filter(|&d| d < lead || (shape[d - lead] == 1 && self.shape()[d] != 1))
            .map(|d| d as isize)
            .collect();
        let summed = if dims.is_empty() {
            self.clone()
        } else {
            self.sum_dims(&dims, true)?
        };
        summed.reshape(shape.clone())
    }

    /// Sum over `dims` (all when empty).
    ///
    /// ```
    /// let t = nn::Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    /// assert_eq!(t.sum_dims(&[0], false).unwrap().to_vec::<f32>().unwrap(), vec![4.0, 6.0]);
    /// ```
    pub fn sum_dims(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce(Reduction::Sum, dims, keepdim)
    }

    /// Mean over `dims` (all when empty).
    pub fn mean_dims(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce(Reduction::Mean, dims, keepdim)
    }

    /// Variance over `dims` (all when empty), with Bessel's correction when `unbiased`.
    pub fn var_dims(&self, dims: &[isize], unbiased: bool, keepdim: bool) -> Result<Tensor> {
        self.reduce(Reduction::Var { unbiased }, dims, keepdim)
    }

    /// Sum of every element, as a 0-dimensional tensor.
    pub fn sum_all(&self) -> Result<Tensor> {
        self.sum_dims(&[], false)
    }

    /// Mean of every element, as a 0-dimensional tensor.
    pub fn mean_all(&self) -> Result<Tensor> {
        self.mean_dims(&[], false)
    }
}
