//! cubecl kernels for `nn` on wgpu and CUDA devices: the activations forward and backward, and what the layers
//! need to run there (layout moves, broadcast arithmetic, element-wise math, reductions, linear, conv2d and its
//! gradients, batch and layer norm, LSTM).
//!
//! Each activation is a [`Formula`] (forward and backward side by side, generic over the float type and the
//! vector width), instantiated into element-wise kernels. Devices are opened through cubecl's probing API, so
//! a missing device is an error, never a panic.

pub mod activation;
pub mod binary;
pub mod boolean;
mod buffer;
pub mod cast;
pub mod channels_last_conv;
pub mod conv2d;
mod copy;
mod device;
mod dtype;
mod error;
mod formula;
pub mod gather;
pub mod gru_cell;
pub mod host;
pub mod index;
pub mod integer;
mod launch;
pub mod layout;
pub mod linear;
pub mod lstm;
mod math;
mod moments;
pub mod norm;
pub mod pool2d;
pub mod prelu;
mod reduce;
mod slices;
pub mod softmax;
mod softmax_slices;
pub mod sum;
mod tiled_matmul;
pub mod unary;

pub use buffer::GpuBuffer;
pub use device::{Backend, GpuDevice};
pub use dtype::FloatType;
pub use error::{KernelError, Result};
pub use formula::Formula;
pub use host::{HostFormula, Real};
