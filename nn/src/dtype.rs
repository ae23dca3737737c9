//! Element types of a [`Tensor`](crate::Tensor) and the Rust types that carry them.

use std::fmt;

use half::{bf16, f16};

/// The element type of a tensor, as PyTorch names them.
///
/// ```
/// use nn::DType;
/// assert!(DType::F16.is_floating_point());
/// assert_eq!(DType::I64.to_string(), "int64");
/// assert_eq!(DType::BF16.size_in_bytes(), 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// IEEE half precision (`torch.float16`).
    F16,
    /// Brain floating point (`torch.bfloat16`).
    BF16,
    /// Single precision (`torch.float32`).
    F32,
    /// Double precision (`torch.float64`).
    F64,
    /// 64-bit signed integer (`torch.int64`).
    I64,
    /// 32-bit signed integer (`torch.int32`).
    I32,
    /// 8-bit unsigned integer (`torch.uint8`).
    U8,
    /// Boolean (`torch.bool`), one byte per element.
    Bool,
}

impl DType {
    /// The dtype as PyTorch's messages name it (c10's `ScalarType`: `Float`, `Long`).
    pub(crate) fn scalar_type_name(self) -> &'static str {
        match self {
            DType::F64 => "Double",
            DType::F32 => "Float",
            DType::F16 => "Half",
            DType::BF16 => "BFloat16",
            DType::I64 => "Long",
            DType::I32 => "Int",
            DType::U8 => "Byte",
            DType::Bool => "Bool",
        }
    }

    /// The dtype as PyTorch's C++ type names print in its messages (`float`, `double`, `long int`).
    pub(crate) fn cpp_name(self) -> &'static str {
        match self {
            DType::F32 => "float",
            DType::F64 => "double",
            DType::F16 => "c10::Half",
            DType::BF16 => "c10::BFloat16",
            DType::I64 => "long int",
            DType::I32 => "int",
            DType::U8 => "unsigned char",
            DType::Bool => "bool",
        }
    }

    /// `v` as this dtype's arithmetic rounds a result, back in `f64`: to `f32`, or for a half type through
    /// `f32` (its arithmetic computes in `f32` and rounds); unchanged for `f64` and the integer types.
    pub(crate) fn round_f64(self, v: f64) -> f64 {
        match self {
            DType::F32 => f64::from(v as f32),
            DType::F16 => f64::from(half::f16::from_f32(v as f32)),
            DType::BF16 => f64::from(half::bf16::from_f32(v as f32)),
            _ => v,
        }
    }

    /// Every dtype, in declaration order.
    pub const ALL: [DType; 8] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I64,
        DType::I32,
        DType::U8,
        DType::Bool,
    ];

    /// Bytes taken by one element.
    pub const fn size_in_bytes(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 => 8,
            DType::U8 | DType::Bool => 1,
        }
    }

    /// Whether this is one of the floating-point types, which module casts (`half()`, `to_dtype`) convert.
    pub const fn is_floating_point(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// PyTorch's name without the `torch.` prefix: `float32`, `int64`, …
    pub const fn name(self) -> &'static str {
        match self {
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::U8 => "uint8",
            DType::Bool => "bool",
        }
    }

    /// Parses PyTorch's name (`float32`, `torch.float32`) or the short form (`f32`).
    ///
    /// ```
    /// use nn::DType;
    /// assert_eq!(DType::parse("torch.float16"), Some(DType::F16));
    /// assert_eq!(DType::parse("bf16"), Some(DType::BF16));
    /// ```
    pub fn parse(name: &str) -> Option<DType> {
        let name = name.strip_prefix("torch.").unwrap_or(name);
        Some(match name {
            "float16" | "half" | "f16" => DType::F16,
            "bfloat16" | "bf16" => DType::BF16,
            "float32" | "float" | "f32" => DType::F32,
            "float64" | "double" | "f64" => DType::F64,
            "int64" | "long" | "i64" => DType::I64,
            "int32" | "int" | "i32" => DType::I32,
            "uint8" | "u8" => DType::U8,
            "bool" => DType::Bool,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust type that is the element of one [`DType`].
///
/// ```
/// use nn::{DType, Element};
/// assert_eq!(<f32 as Element>::DTYPE, DType::F32);
/// assert_eq!(<half::f16 as Element>::DTYPE, DType::F16);
/// ```
pub trait Element: Copy + Default + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The dtype this Rust type stands for.
    const DTYPE: DType;
    /// The value as an `f64` (booleans are 0 and 1).
    fn to_f64(self) -> f64;
    /// The nearest value to `v`, with PyTorch's cast semantics (via `f32` for the half types).
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($t:ty, $d:ident, |$s:ident| $to:expr, |$v:ident| $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline]
            fn to_f64(self) -> f64 {
                let $s = self;
                $to
            }
            #[inline]
            fn from_f64($v: f64) -> Self {
                $from
            }
        }
    };
}

element!(f16, F16, |s| s.to_f64(), |v| f16::from_f32(v as f32));
element!(bf16, BF16, |s| s.to_f64(), |v| bf16::from_f32(v as f32));
element!(f32, F32, |s| s as f64, |v| v as f32);
element!(f64, F64, |s| s, |v| v);
element!(i64, I64, |s| s as f64, |v| v as i64);
element!(i32, I32, |s| s as f64, |v| v as i32);
element!(u8, U8, |s| s as f64, |v| v as i64 as u8);
element!(bool, Bool, |s| if s { 1.0 } else { 0.0 }, |v| v != 0.0);
