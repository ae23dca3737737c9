//! Tensors on cubecl devices (`Device::Wgpu(i)`, `Device::Cuda(i)`): moving data there and back, and the
//! operations that run there as cubecl kernels, with no trip through the host: the activations, linear,
//! conv2d, batch and layer norm, the LSTM, broadcast arithmetic, `narrow` / `permute` / `cat`.
//!
//! Compiled with the `wgpu` feature (on by default) or `cuda`; without either, every device is
//! [`Error::DeviceUnavailable`](crate::Error::DeviceUnavailable).
//!
//! Before an operation first runs in a dtype on a device, a **parity probe** runs it on a fixed set of
//! inputs (large magnitudes included) there and on the CPU and compares: drivers whose functions are wrong
//! in a dtype (lavapipe's `f64` `exp` returns garbage without an error) make that operation refuse with
//! [`Error::UnsupportedOnDevice`](crate::Error::UnsupportedOnDevice) naming the device, the dtype and the
//! error measured, instead of returning wrong numbers. A dtype the device cannot store at all (`bf16` on
//! wgpu) is refused before anything is launched.
//!
//! ```no_run
//! use nn::{Device, Tensor, functional::Activation};
//! let x = Tensor::from_vec(vec![-1.0f32, 0.5], [2])?.to_device(Device::Wgpu(0))?;
//! let y = Activation::Gelu.forward(&x)?; // a cubecl kernel on wgpu:0
//! assert_eq!(y.device(), Device::Wgpu(0));
//! let host = y.cpu()?;
//! # Ok::<(), nn::Error>(())
//! ```

#[cfg(feature = "gpu")]
mod layers;
#[cfg(feature = "gpu")]
mod memory;
#[cfg(feature = "gpu")]
mod ops;
#[cfg(feature = "gpu")]
mod probe;
#[cfg(feature = "gpu")]
mod tensors;

#[cfg(feature = "gpu")]
pub(crate) use layers::*;
#[cfg(feature = "gpu")]
pub(crate) use memory::{copy_into, deep_copy, download, to_dtype, upload};
#[cfg(feature = "gpu")]
pub(crate) use ops::*;
#[cfg(feature = "gpu")]
pub(crate) use tensors::*;

#[cfg(not(feature = "gpu"))]
mod disabled;
#[cfg(not(feature = "gpu"))]
pub(crate) use disabled::*;

/// Waits until every kernel launched on `device` has finished (launches are asynchronous; reading a tensor
/// back waits by itself). Immediate for the CPU.
///
/// ```no_run
/// nn::gpu::synchronize(nn::Device::Wgpu(0))?;
/// # Ok::<(), nn::Error>(())
/// ```
pub fn synchronize(device: crate::Device) -> crate::Result<()> {
    if device.is_cpu() {
        return Ok(());
    }
    #[cfg(feature = "gpu")]
    return memory::open(device)?
        .synchronize()
        .map_err(|e| memory::kernel_error(e, "synchronize", crate::DType::F32, device));
    #[cfg(not(feature = "gpu"))]
    Err(crate::Error::DeviceUnavailable {
        device,
        reason: "nn was built without the `wgpu` and `cuda` features".into(),
    })
}
