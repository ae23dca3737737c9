//! cubecl kernels for `nn`'s activations, forward and backward, shared by the wgpu and CUDA runtimes.
//!
//! Each activation is a [`Formula`] (forward and backward side by side, generic over the float type and the
//! vector width), instantiated into element-wise kernels. Devices are opened through cubecl's probing API, so
//! a missing device is an error, never a panic.

pub mod activation;
mod buffer;
mod copy;
mod device;
mod dtype;
mod error;
mod formula;
mod launch;
mod math;
pub mod prelu;
pub mod softmax;

pub use buffer::GpuBuffer;
pub use device::{Backend, GpuDevice};
pub use dtype::FloatType;
pub use error::{KernelError, Result};
pub use formula::Formula;
