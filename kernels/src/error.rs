//! [`KernelError`]: why a device could not be opened or a kernel was not run.

/// An error from a device or a kernel launch. Nothing is launched when one is returned.
///
/// ```
/// use kernels::{FloatType, KernelError};
/// let e = KernelError::Unsupported {
///     op: "gelu",
///     dtype: FloatType::BF16,
///     device: "wgpu:0 (llvmpipe)".into(),
///     reason: "the device has no bf16 arithmetic".into(),
/// };
/// assert!(e.to_string().contains("bf16"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// No such device on this machine, or its runtime is not compiled in.
    #[error("{device} is not available: {reason}")]
    DeviceUnavailable {
        /// The device asked for (`wgpu:0`, `cuda:1`).
        device: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The device cannot run this operation in this dtype.
    #[error("{op} in {dtype} is not supported on {device}: {reason}")]
    Unsupported {
        /// The operation.
        op: &'static str,
        /// The element type.
        dtype: crate::FloatType,
        /// The device, with its adapter's name.
        device: String,
        /// Why.
        reason: String,
    },
    /// Buffers that do not fit the operation (lengths, devices).
    #[error("{op}: {message}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The device reported a failure while running or reading back.
    #[error("{device}: {message}")]
    Device {
        /// The device.
        device: String,
        /// The runtime's message.
        message: String,
    },
}

/// The result of a kernel operation.
pub type Result<T, E = KernelError> = std::result::Result<T, E>;
