//! `torch.testing`: [`assert_close`], PyTorch 2.5.1's verdict and message, with its per-dtype tolerances.
//!
//! Two tensors are close where `|actual - expected| <= atol + rtol·|expected|` element by element, computed
//! in their dtype as `torch.isclose` computes it; equal infinities are close, NaN is close to NaN only with
//! `equal_nan`. Shapes must be equal and, unless the options say otherwise, devices and dtypes too. A failure
//! reads as PyTorch's `AssertionError`: the mismatched share, the greatest absolute and relative differences
//! with their indices and the tolerances allowed.
//!
//! ```
//! use nn::Tensor;
//! let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3])?;
//! let b = Tensor::from_vec(vec![1.0f32, 2.0000010, 3.0], [3])?;
//! nn::testing::assert_close(&a, &b);
//! let c = Tensor::from_vec(vec![1.0f32, 2.1, 3.0], [3])?;
//! let e = nn::testing::check_close(&a, &c, &Default::default()).unwrap_err();
//! assert!(e.to_string().contains("Mismatched elements: 1 / 3 (33.3%)"));
//! # Ok::<(), nn::Error>(())
//! ```

use crate::error::py_float;
use crate::ops::elementwise::promote;
use crate::{DType, Device, Error, Result, Tensor};

/// `torch.testing.assert_close`'s keyword arguments. `rtol` and `atol` are given both or neither (neither:
/// the dtypes' defaults, [`default_tolerance`]).
///
/// ```
/// use nn::testing::CloseOptions;
/// let loose = CloseOptions { rtol: Some(1e-3), atol: Some(1e-3), ..Default::default() };
/// assert!(loose.equal_nan == false && loose.check_dtype);
/// ```
#[derive(Clone, Debug)]
pub struct CloseOptions {
    /// Relative tolerance.
    pub rtol: Option<f64>,
    /// Absolute tolerance.
    pub atol: Option<f64>,
    /// Whether NaN is close to NaN.
    pub equal_nan: bool,
    /// Whether the devices must be equal (else both are compared on the CPU).
    pub check_device: bool,
    /// Whether the dtypes must be equal (else both are promoted to their common dtype).
    pub check_dtype: bool,
    /// A message that replaces PyTorch's when the check fails.
    pub msg: Option<String>,
}

impl Default for CloseOptions {
    fn default() -> CloseOptions {
        CloseOptions {
            rtol: None,
            atol: None,
            equal_nan: false,
            check_device: true,
            check_dtype: true,
            msg: None,
        }
    }
}

/// `torch.testing.assert_close`'s default `(rtol, atol)` for a dtype; `(0, 0)`, exact, for the integer types
/// and bool.
///
/// ```
/// assert_eq!(nn::testing::default_tolerance(nn::DType::F32), (1.3e-6, 1e-5));
/// ```
pub fn default_tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F64 => (1e-7, 1e-7),
        DType::F32 => (1.3e-6, 1e-5),
        DType::F16 => (1e-3, 1e-5),
        DType::BF16 => (1.6e-2, 1e-5),
        _ => (0.0, 0.0),
    }
}

/// `torch.testing.assert_close(actual, expected)` with PyTorch's defaults. Panics with PyTorch's message
/// where [`check_close`] returns an error.
pub fn assert_close(actual: &Tensor, expected: &Tensor) {
    assert_close_with(actual, expected, &CloseOptions::default());
}

/// `torch.testing.assert_close(actual, expected, **options)`. Panics with PyTorch's message where
/// [`check_close`] returns an error.
pub fn assert_close_with(actual: &Tensor, expected: &Tensor, options: &CloseOptions) {
    if let Err(e) = check_close(actual, expected, options) {
        panic!("{e}");
    }
}

/// `torch.testing.assert_close`'s verdict: `Ok` where the tensors are close, else [`Error::NotClose`] with
/// PyTorch's message (or [`Error::InvalidArgument`] with its sentence for one of `rtol` and `atol` alone).
pub fn check_close(actual: &Tensor, expected: &Tensor, options: &CloseOptions) -> Result<()> {
    let (rtol, atol) = tolerances(actual.dtype(), expected.dtype(), options)?;
    let fail = |message: String| Error::NotClose {
        message: options.msg.clone().unwrap_or(message),
    };
    if actual.shape() != expected.shape() {
        return Err(fail(mismatch("shape", size(actual), size(expected))));
    }
    if options.check_device && actual.device() != expected.device() {
        return Err(fail(mismatch("device", actual.device(), expected.device())));
    }
    if options.check_dtype && actual.dtype() != expected.dtype() {
        return Err(fail(mismatch(
            "dtype",
            format!("torch.{}", actual.dtype().name()),
            format!("torch.{}", expected.dtype().name()),
        )));
    }
    let dtype = promote(actual.dtype(), expected.dtype());
    let values = |t: &Tensor| t.to_device(Device::Cpu)?.to_dtype(dtype)?.to_vec_f64();
    let (a, e) = (values(actual)?, values(expected)?);
    let close: Vec<bool> = a
        .iter()
        .zip(&e)
        .map(|(&a, &e)| is_close(a, e, rtol, atol, options.equal_nan, dtype))
        .collect();
    if close.iter().all(|c| *c) {
        return Ok(());
    }
    let tolerance = Tolerance { rtol, atol };
    let message = if actual.shape().rank() == 0 {
        scalar_message(a[0], e[0], dtype, tolerance)
    } else {
        tensor_message(&a, &e, &close, actual.shape().dims(), dtype, tolerance)
    };
    Err(fail(message))
}

/// The tolerances in force: the options' pair, or the larger of the two dtypes' defaults.
fn tolerances(actual: DType, expected: DType, options: &CloseOptions) -> Result<(f64, f64)> {
    match (options.rtol, options.atol) {
        (Some(rtol), Some(atol)) => Ok((rtol, atol)),
        (None, None) => {
            let (a, e) = (default_tolerance(actual), default_tolerance(expected));
            Ok((a.0.max(e.0), a.1.max(e.1)))
        }
        (rtol, _) => Err(Error::invalid(
            "assert_close",
            format!(
                "Both 'rtol' and 'atol' must be either specified or omitted, but got no {}.",
                if rtol.is_some() { "atol" } else { "rtol" }
            ),
        )),
    }
}

/// PyTorch's sentence for an attribute that differs.
fn mismatch(attribute: &str, actual: impl std::fmt::Display, expected: impl std::fmt::Display) -> String {
    format!("The values for attribute '{attribute}' do not match: {actual} != {expected}.")
}

/// A shape as `torch.Size` prints.
fn size(t: &Tensor) -> String {
    let dims: Vec<String> = t.shape().dims().iter().map(|d| d.to_string()).collect();
    format!("torch.Size([{}])", dims.join(", "))
}

/// `torch.isclose(a, e, rtol, atol, equal_nan)` of one element in `dtype`: equal, or the rounded error finite
/// and within `atol + |rtol·e|` (`rtol·e` in the computing type, `atol` rounded to the dtype, the sum
/// rounded). Integers and bool compare their tolerance in `float32`, PyTorch's default dtype.
fn is_close(a: f64, e: f64, rtol: f64, atol: f64, equal_nan: bool, dtype: DType) -> bool {
    if a == e || (equal_nan && a.is_nan() && e.is_nan()) {
        return true;
    }
    if rtol == 0.0 && atol == 0.0 {
        return false;
    }
    let float = if dtype.is_floating_point() { dtype } else { DType::F32 };
    let computing = if float == DType::F64 { DType::F64 } else { DType::F32 };
    let scaled = float.round_f64(float.round_f64(computing.round_f64(rtol) * e).abs());
    let allowed = float.round_f64(float.round_f64(atol) + scaled);
    let error = if dtype.is_floating_point() {
        dtype.round_f64(a - e).abs()
    } else {
        DType::F32.round_f64((a - e).abs())
    };
    error.is_finite() && error <= allowed
}

/// The tolerances a message prints.
#[derive(Clone, Copy)]
struct Tolerance {
    rtol: f64,
    atol: f64,
}

/// `_make_mismatch_msg`: the verdict, `extra`, then the absolute and relative differences with their indices
/// (`None` for a scalar) and, unless the comparison was for equality, the tolerances.
fn mismatch_message(
    identifier: &str,
    extra: &str,
    absolute: (String, Option<String>),
    relative: (String, Option<String>),
    tolerance: Tolerance,
) -> String {
    let equality = tolerance.rtol == 0.0 && tolerance.atol == 0.0;
    let line = |kind: &str, (diff, at): (String, Option<String>), tol: f64| {
        let mut line = match at {
            None => format!("{}{} difference: {diff}", kind[..1].to_uppercase(), &kind[1..]),
            Some(at) => format!("Greatest {kind} difference: {diff} at index {at}"),
        };
        if !equality {
            line.push_str(&format!(" (up to {} allowed)", py_float(tol)));
        }
        line
    };
    format!(
        "{identifier} are not {}!\n\n{extra}\n{}\n{}",
        if equality { "equal" } else { "close" },
        line("absolute", absolute, tolerance.atol),
        line("relative", relative, tolerance.rtol)
    )
}

/// A value as Python prints the element `.item()` gives: a float's `repr`, an integer, `True` / `False`.
fn item(v: f64, dtype: DType) -> String {
    match dtype {
        DType::Bool => (if v != 0.0 { "True" } else { "False" }).into(),
        d if d.is_floating_point() => py_float(v),
        _ => format!("{}", v as i64),
    }
}

/// `make_scalar_mismatch_msg`: Python's arithmetic on the two `.item()`s.
fn scalar_message(a: f64, e: f64, dtype: DType, tolerance: Tolerance) -> String {
    let float = dtype.is_floating_point();
    let absolute = (a - e).abs();
    let relative = if e == 0.0 { f64::INFINITY } else { absolute / e.abs() };
    let absolute = if float {
        py_float(absolute)
    } else {
        format!("{}", absolute as i64)
    };
    let extra = format!("Expected {} but got {}.", item(e, dtype), item(a, dtype));
    mismatch_message(
        "Scalars",
        &extra,
        (absolute, None),
        (py_float(relative), None),
        tolerance,
    )
}

/// `make_tensor_mismatch_msg`: the mismatched share, then the greatest differences among the mismatched
/// elements, computed in the dtype (integers in `int64`, their ratio in `float32`), the first greatest
/// (NaN above every number) named by its index.
fn tensor_message(a: &[f64], e: &[f64], close: &[bool], dims: &[usize], dtype: DType, tolerance: Tolerance) -> String {
    let total = close.len();
    let mismatched = close.iter().filter(|c| !**c).count();
    let extra = format!(
        "Mismatched elements: {mismatched} / {total} ({:.1}%)",
        mismatched as f64 / total as f64 * 100.0
    );
    let float = dtype.is_floating_point();
    let ratio_type = if float { dtype } else { DType::F32 };
    let mut absolute = Vec::with_capacity(total);
    let mut relative = Vec::with_capacity(total);
    for ((&a, &e), &close) in a.iter().zip(e).zip(close) {
        let diff = if close {
            0.0
        } else if float {
            dtype.round_f64(a - e).abs()
        } else {
            (a - e).abs()
        };
        absolute.push(diff);
        let ratio = ratio_type.round_f64(ratio_type.round_f64(diff) / ratio_type.round_f64(e.abs()));
        relative.push(if close { 0.0 } else { ratio });
    }
    let (abs_at, rel_at) = (greatest(&absolute), greatest(&relative));
    let printed = |v: f64| if float { py_float(v) } else { format!("{}", v as i64) };
    mismatch_message(
        "Tensor-likes",
        &extra,
        (printed(absolute[abs_at]), Some(index(abs_at, dims))),
        (py_float(relative[rel_at]), Some(index(rel_at, dims))),
        tolerance,
    )
}

/// The flat index of the first greatest value, NaN above every number (`torch.max`'s).
fn greatest(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        let b = values[best];
        if !b.is_nan() && (v.is_nan() || v > b) {
            best = i;
        }
    }
    best
}

/// A flat index as the Python tuple of its coordinates: `(1,)`, `(0, 2)`.
fn index(mut flat: usize, dims: &[usize]) -> String {
    let mut coordinates = vec![0; dims.len()];
    for (c, &d) in coordinates.iter_mut().zip(dims).rev() {
        *c = flat % d.max(1);
        flat /= d.max(1);
    }
    match coordinates.as_slice() {
        [one] => format!("({one},)"),
        many => {
            let parts: Vec<String> = many.iter().map(|c| c.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}
