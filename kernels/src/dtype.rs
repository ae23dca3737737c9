//! [`FloatType`]: the element types the kernels are compiled for.

use std::fmt;

/// A floating-point element type a kernel runs in.
///
/// ```
/// assert_eq!(kernels::FloatType::F16.size_in_bytes(), 2);
/// assert_eq!(kernels::FloatType::BF16.to_string(), "bf16");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatType {
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
}

impl FloatType {
    /// All four, narrowest first.
    pub const ALL: [FloatType; 4] = [FloatType::F16, FloatType::BF16, FloatType::F32, FloatType::F64];

    /// Bytes per element.
    pub fn size_in_bytes(self) -> usize {
        match self {
            FloatType::F16 | FloatType::BF16 => 2,
            FloatType::F32 => 4,
            FloatType::F64 => 8,
        }
    }

    /// The type the kernels compute in for this element type: `f64` for `f64`, `f32` for the others (PyTorch's
    /// opmath).
    ///
    /// ```
    /// assert_eq!(kernels::FloatType::BF16.compute(), kernels::FloatType::F32);
    /// ```
    pub fn compute(self) -> FloatType {
        match self {
            FloatType::F64 => FloatType::F64,
            _ => FloatType::F32,
        }
    }
}

impl fmt::Display for FloatType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FloatType::F16 => "f16",
            FloatType::BF16 => "bf16",
            FloatType::F32 => "f32",
            FloatType::F64 => "f64",
        })
    }
}

/// Runs `$body` with `$t` bound to the Rust type of a [`FloatType`] (`half::f16`, `half::bf16`, `f32`, `f64`).
macro_rules! with_float_type {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::FloatType::F16 => {
                type $t = half::f16;
                $body
            }
            $crate::FloatType::BF16 => {
                type $t = half::bf16;
                $body
            }
            $crate::FloatType::F32 => {
                type $t = f32;
                $body
            }
            $crate::FloatType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}
pub(crate) use with_float_type;
