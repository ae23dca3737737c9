//! The crate's error type: every public operation that can fail on bad input returns one.
//!
//! This is the bottom layer: it imports no other part of the crate but the plain types it names (shapes,
//! dtypes, devices). What a refused load or a wrong path reports ([`LoadError`], [`PathError`]) is data defined
//! here and filled in by the module layer, so a tensor's errors never depend on modules.

mod load;
mod path;
mod python;

use std::path::PathBuf;

pub use load::{LoadError, ShapeMismatch};
pub use path::{PathError, PathErrorKind};
pub(crate) use python::cpp_double;
pub use python::py_float;

use crate::{DType, Device, Shape};

/// An error from a tensor operation, a module operation or a file.
///
/// Each variant names what was given and what was expected, so the message alone tells what to fix.
///
/// ```
/// use nn::{Tensor, DType};
/// let a = Tensor::zeros([2, 3], DType::F32);
/// let b = Tensor::zeros([4], DType::F32);
/// let err = a.add(&b).unwrap_err();
/// assert!(err.to_string().contains("[2, 3]"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two shapes that an operation needs to agree do not.
    #[error("{op}: shapes {lhs} and {rhs} do not match ({expected})")]
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// The first shape.
        lhs: Shape,
        /// The second shape.
        rhs: Shape,
        /// What the operation expects of them.
        expected: &'static str,
    },
    /// A tensor of one dtype where another was needed.
    #[error("{op}: expected dtype {expected}, got {got}")]
    DTypeMismatch {
        /// The operation.
        op: &'static str,
        /// The dtype needed.
        expected: DType,
        /// The dtype given.
        got: DType,
    },
    /// An operation that is not defined for a dtype (e.g. `exp` on `int64`).
    #[error("{op} is not defined for dtype {dtype}{hint}")]
    UnsupportedDType {
        /// The operation.
        op: &'static str,
        /// The dtype given.
        dtype: DType,
        /// How to fix it, starting with "; " when present.
        hint: &'static str,
    },
    /// An operation the device refuses for this dtype, with the device's reason.
    #[error("{op} in {dtype} is not supported on {device}: {reason}")]
    UnsupportedOnDevice {
        /// The operation.
        op: &'static str,
        /// The dtype.
        dtype: DType,
        /// The device.
        device: Device,
        /// Why.
        reason: String,
    },
    /// Tensors on two devices given to one operation.
    #[error("{op}: tensors are on {lhs} and {rhs}; move them to one device first")]
    DeviceMismatch {
        /// The operation.
        op: &'static str,
        /// The first device.
        lhs: Device,
        /// The second device.
        rhs: Device,
    },
    /// A device that does not exist on this machine, or whose support is not compiled in.
    #[error("device {device} is not available: {reason}")]
    DeviceUnavailable {
        /// The device asked for.
        device: Device,
        /// Why it cannot be used.
        reason: String,
    },
    /// A device that failed while running an operation (a lost device, a kernel that did not compile).
    #[error("{op} on {device} failed: {message}")]
    DeviceFailure {
        /// The operation.
        op: &'static str,
        /// The device.
        device: Device,
        /// What the runtime reported.
        message: String,
    },
    /// A data buffer whose length does not match the shape it is given.
    #[error("a tensor of shape {shape} holds {expected} elements, but {got} were given")]
    ElementCount {
        /// The shape asked for.
        shape: Shape,
        /// Elements the shape holds.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// A tensor the allocator refused (or whose bytes overflow `isize::MAX`): PyTorch's "not enough memory".
    #[error("{op}: cannot allocate a tensor of shape {shape} and dtype {dtype} ({bytes} bytes)")]
    Allocation {
        /// The constructor.
        op: &'static str,
        /// The shape asked for.
        shape: Shape,
        /// The dtype asked for.
        dtype: DType,
        /// Its bytes (saturated at `usize::MAX`).
        bytes: usize,
    },
    /// A backward pass that cannot run, or an operation autograd cannot record (a second backward through a
    /// freed graph, a backward from a tensor that requires no gradient, an in-place change autograd would miss).
    #[error("autograd: {op}: {message}")]
    Autograd {
        /// The operation or hook.
        op: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// An argument outside what the operation accepts.
    #[error("{op}: {message}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// What is wrong and what is expected.
        message: String,
    },
    /// Two tensors `nn::testing::check_close` finds not close: PyTorch's `AssertionError` message.
    #[error("assert_close: {message}")]
    NotClose {
        /// PyTorch's message (or the one the options gave).
        message: String,
    },
    /// `load_state_dict` refused the state; nothing was changed.
    #[error(transparent)]
    Load(Box<LoadError>),
    /// A dotted path (`get_submodule`, `get_parameter`, …) that does not lead where asked.
    #[error(transparent)]
    Path(Box<PathError>),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A safetensors file that cannot be parsed or holds what cannot be loaded.
    #[error("safetensors {path}: {message}")]
    SafeTensors {
        /// The file (or `<memory>`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A PyTorch checkpoint (`.pt`, `.pth`) that cannot be parsed or holds what cannot be loaded.
    #[error("PyTorch checkpoint {path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A checkpoint's tensor whose dtype nn does not have.
    #[error(
        "PyTorch checkpoint {path}: tensor {key} has dtype {dtype}, which nn does not have (it reads \
         float16, bfloat16, float32, float64, int64, int32, uint8 and bool)"
    )]
    CheckpointDType {
        /// The file.
        path: String,
        /// The tensor's key.
        key: String,
        /// PyTorch's name of its dtype.
        dtype: String,
    },
    /// A checkpoint whose weights are not at its top level (`{"state_dict": …, "epoch": 3}`), read without
    /// saying under which key they are.
    #[error(
        "PyTorch checkpoint {path} holds no tensor at its top level; its top-level keys are {}: the weights are \
         nested{}",
        quoted(top_level_keys),
        suggestion.as_ref().map(|k| format!(", read them with PtOptions::new().key(\"{k}\")")).unwrap_or_default()
    )]
    NestedCheckpoint {
        /// The file.
        path: String,
        /// Every top-level key, sorted.
        top_level_keys: Vec<String>,
        /// The key that most likely holds the weights.
        suggestion: Option<String>,
    },
    /// A module's extra state was refused by its `set_extra_state`.
    #[error("extra state of {module}: {message}")]
    ExtraState {
        /// The module's dotted path.
        module: String,
        /// Why it was refused.
        message: String,
    },
}

/// Keys in double quotes, comma separated.
fn quoted(keys: &[String]) -> String {
    keys.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// [`Error::InvalidArgument`]: `op` refused an argument, `message` says what is wrong and what it expects.
    pub fn invalid(op: &'static str, message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            op,
            message: message.into(),
        }
    }

    /// [`Error::Autograd`] for `op`.
    pub fn autograd(op: &'static str, message: impl Into<String>) -> Error {
        Error::Autograd {
            op,
            message: message.into(),
        }
    }

    /// [`Error::ShapeMismatch`] of two shapes, with what `op` expects of them.
    pub fn shapes(op: &'static str, lhs: &Shape, rhs: &Shape, expected: &'static str) -> Error {
        Error::ShapeMismatch {
            op,
            lhs: lhs.clone(),
            rhs: rhs.clone(),
            expected,
        }
    }

    /// [`Error::UnsupportedDType`] for `op`, which takes floating-point tensors only.
    pub fn float_only(op: &'static str, dtype: DType) -> Error {
        Error::UnsupportedDType {
            op,
            dtype,
            hint: "; it takes a floating-point tensor (convert with to_dtype(DType::F32))",
        }
    }

    /// `Ok` when `lhs` equals `rhs`, else [`Error::shapes`].
    ///
    /// ```
    /// use nn::{Error, Shape};
    /// assert!(Error::check_shapes("add", &Shape::from([2]), &Shape::from([2]), "equal shapes").is_ok());
    /// assert!(Error::check_shapes("add", &Shape::from([2]), &Shape::from([3]), "equal shapes").is_err());
    /// ```
    pub fn check_shapes(op: &'static str, lhs: &Shape, rhs: &Shape, expected: &'static str) -> Result<()> {
        if lhs == rhs {
            Ok(())
        } else {
            Err(Error::shapes(op, lhs, rhs, expected))
        }
    }

    /// `Ok` when `shape` has `rank` dimensions, else [`Error::InvalidArgument`] for `op` saying what was
    /// expected (`"the weight must be (out, in)"`) and the shape.
    ///
    /// ```
    /// use nn::{Error, Shape};
    /// let err = Error::check_rank("linear", &Shape::from([3]), 2, "the weight must be (out, in)").unwrap_err();
    /// assert!(err.to_string().contains("the weight must be (out, in); got shape [3]"));
    /// ```
    pub fn check_rank(op: &'static str, shape: &Shape, rank: usize, expected: &str) -> Result<()> {
        if shape.len() == rank {
            Ok(())
        } else {
            Err(Error::invalid(op, format!("{expected}; got shape {shape}")))
        }
    }

    /// `Ok` for a floating-point `dtype`, else [`Error::float_only`].
    pub fn check_float(op: &'static str, dtype: DType) -> Result<()> {
        if dtype.is_floating_point() {
            Ok(())
        } else {
            Err(Error::float_only(op, dtype))
        }
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        Error::Load(Box::new(e))
    }
}

impl From<PathError> for Error {
    fn from(e: PathError) -> Error {
        Error::Path(Box::new(e))
    }
}
