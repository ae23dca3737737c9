//! Running `f32`/`f64` code on float tensors of any float dtype: `f64` tensors compute in `f64`, the others in
//! `f32` (`f16` and `bf16` are widened, as PyTorch's CPU kernels do), and results are rounded back.

use std::ops::Deref;

use half::{bf16, f16};
use kernels::Real;

use super::gemm::Gemm;
use crate::tensor::HostSlice;
use crate::tensor::storage::CpuData;
use crate::{DType, Element, Error, Result, Shape, Tensor};

/// `f32` or `f64`, with matrix products and math.
pub(crate) trait Float: Gemm + Real + Element {}

impl Float for f32 {}
impl Float for f64 {}

/// A tensor's elements as `T`: borrowed in place when the dtype is `T`, else widened into a new vector.
pub(crate) enum FloatRef<'a, T> {
    Borrowed(HostSlice<'a, T>),
    Owned(Vec<T>),
}

impl<T> Deref for FloatRef<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            FloatRef::Borrowed(g) => g,
            FloatRef::Owned(v) => v,
        }
    }
}

impl Tensor {
    /// The elements as `T` (the tensor must be of a float dtype that `T` computes).
    pub(crate) fn float_ref<T: Float>(&self, op: &'static str) -> Result<FloatRef<'_, T>> {
        Error::check_float(op, self.dtype())?;
        if self.dtype() == T::DTYPE && self.is_dense() {
            return self.host_slice::<T>(op).map(FloatRef::Borrowed);
        }
        let widened = self.read_cpu(op, |data| match data {
            CpuData::F16(v) => Ok(v.iter().map(|x| T::from_f64(f16::to_f64(*x))).collect()),
            CpuData::BF16(v) => Ok(v.iter().map(|x| T::from_f64(bf16::to_f64(*x))).collect()),
            CpuData::F32(v) => Ok(v.iter().map(|x| T::from_f64(*x as f64)).collect()),
            CpuData::F64(v) => Ok(v.iter().map(|x| T::from_f64(*x)).collect()),
            other => Err(Error::float_only(op, other.dtype())),
        })??;
        Ok(FloatRef::Owned(widened))
    }

    /// A tensor of `dtype` holding `values` computed in `T` (rounded when `dtype` is narrower).
    pub(crate) fn from_computed<T: Float>(values: Vec<T>, shape: Shape, dtype: DType) -> Result<Tensor> {
        Tensor::from_vec(values, shape)?.to_dtype(dtype)
    }
}

/// Runs `$body` with `$T` the float type that computes `$dtype` (`f64` for `F64`, else `f32`).
macro_rules! with_float_type {
    ($dtype:expr, $T:ident => $body:expr) => {{
        if $dtype == $crate::DType::F64 {
            type $T = f64;
            $body
        } else {
            type $T = f32;
            $body
        }
    }};
}
pub(crate) use with_float_type;
