//! Tensors of evenly spaced values and the identity: `arange`, `linspace`, `logspace`, `eye`, each computed as
//! PyTorch's CPU kernels compute it (so integer results truncate where PyTorch's do).
//!
//! ```
//! use nn::{DType, Tensor};
//! assert_eq!(Tensor::arange(0.0, 5.0, 2.0, DType::I64)?.to_vec::<i64>()?, vec![0, 2, 4]);
//! assert_eq!(Tensor::linspace(0.0, 1.0, 5, DType::F32)?.to_vec::<f32>()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
//! assert_eq!(Tensor::logspace(0.0, 2.0, 3, 10.0, DType::F64)?.to_vec::<f64>()?, vec![1.0, 10.0, 100.0]);
//! assert_eq!(Tensor::eye(2, 3, DType::I64)?.to_vec::<i64>()?, vec![1, 0, 0, 0, 1, 0]);
//! # Ok::<(), nn::Error>(())
//! ```

use half::{bf16, f16};

use super::Tensor;
use super::random::not_implemented;
use crate::{DType, Error, Result};

/// `v` rounded to `dtype`'s precision (floats; integers are truncated by the final cast). Each step of the
/// half-precision kernels rounds so (c10's `Half` computes in `f32`).
fn rounded(v: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F32 => v as f32 as f64,
        DType::F16 => f16::from_f32(v as f32).to_f64(),
        DType::BF16 => bf16::from_f32(v as f32).to_f64(),
        _ => v,
    }
}

/// `start` and `end` as the kernel reads them: cast to `dtype` (an integer dtype truncates them).
fn endpoints(start: f64, end: f64, dtype: DType) -> (f64, f64) {
    if dtype.is_floating_point() {
        (rounded(start, dtype), rounded(end, dtype))
    } else {
        (start.trunc(), end.trunc())
    }
}

/// `steps` values from `start` to `end` as PyTorch's `linspace` kernel places them: the first half counted
/// up from `start`, the second half down from `end`, so both ends are exact.
fn spaced(start: f64, end: f64, steps: usize, dtype: DType) -> Vec<f64> {
    if steps == 1 {
        return vec![start];
    }
    // Integer results step in double precision; float results in their own.
    let float = dtype.is_floating_point();
    let r = |v: f64| if float { rounded(v, dtype) } else { v };
    let step = r((end - start) / (steps - 1) as f64);
    let halfway = steps / 2;
    (0..steps)
        .map(|i| {
            if i < halfway {
                r(start + r(step * i as f64))
            } else {
                r(end - r(step * (steps - i - 1) as f64))
            }
        })
        .collect()
}

impl Tensor {
    /// Values from `start` (inclusive) to `end` (exclusive) by `step`, as PyTorch's `arange`.
    pub fn arange(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
        let op = "arange";
        if !start.is_finite() || !end.is_finite() {
            return Err(Error::invalid(op, format!("unsupported range: {start} -> {end}")));
        }
        if step == 0.0 || !step.is_finite() {
            return Err(Error::invalid(op, format!("step must be nonzero (got {step})")));
        }
        if (end - start) * step < 0.0 {
            return Err(Error::invalid(
                op,
                format!(
                    "upper bound and larger bound inconsistent with step sign (start {start}, end {end}, step {step})"
                ),
            ));
        }
        let n = ((end - start) / step).ceil().max(0.0) as usize;
        let values: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
        Tensor::from_vec(values, [n])?.to_dtype(dtype)
    }

    /// `steps` evenly spaced values from `start` to `end`, both included (PyTorch's `linspace`); an integer
    /// `dtype` truncates each, as PyTorch's does.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::linspace(-7.0, 12.0, 9, DType::I64)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![-7, -4, -2, 0, 2, 4, 7, 9, 12]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn linspace(start: f64, end: f64, steps: usize, dtype: DType) -> Result<Tensor> {
        check_dtype("linspace", dtype)?;
        let (start, end) = endpoints(start, end, dtype);
        Tensor::from_vec(spaced(start, end, steps, dtype), [steps])?.to_dtype(dtype)
    }

    /// `base` raised to `steps` evenly spaced exponents from `start` to `end` (PyTorch's `logspace`).
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::logspace(0.0, 3.0, 4, 2.0, DType::F32)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![1.0, 2.0, 4.0, 8.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn logspace(start: f64, end: f64, steps: usize, base: f64, dtype: DType) -> Result<Tensor> {
        check_dtype("logspace", dtype)?;
        let (start, end) = endpoints(start, end, dtype);
        // PyTorch's kernel steps its exponents in double precision whatever the dtype.
        let exponents = spaced(start, end, steps, DType::F64);
        let values: Vec<f64> = exponents.into_iter().map(|e| base.powf(e)).collect();
        Tensor::from_vec(values, [steps])?.to_dtype(dtype)
    }

    /// A `rows` × `cols` matrix with ones on its diagonal and zeros elsewhere (PyTorch's `eye(n, m)`).
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// assert_eq!(Tensor::eye(3, 3, DType::F32)?.to_string(), "tensor([[1., 0., 0.],\n        [0., 1., 0.],\n        [0., 0., 1.]])");
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn eye(rows: usize, cols: usize, dtype: DType) -> Result<Tensor> {
        let mut values = vec![0.0; rows * cols];
        for i in 0..rows.min(cols) {
            values[i * cols + i] = 1.0;
        }
        Tensor::from_vec(values, [rows, cols])?.to_dtype(dtype)
    }
}

/// PyTorch's kernels have no boolean form of the ranges.
fn check_dtype(op: &'static str, dtype: DType) -> Result<()> {
    if dtype == DType::Bool {
        let kernel = if op == "linspace" {
            "linspace_cpu"
        } else {
            "logspace_cpu"
        };
        return Err(not_implemented(op, kernel, dtype));
    }
    Ok(())
}
