//! [`GpuBuffer`]: bytes in a device's memory.

use cubecl::server::Handle;

use crate::{GpuDevice, KernelError, Result};

/// Device memory holding `len` bytes, freed when the last handle to it drops.
///
/// The bytes are a tensor's elements in little-endian order, of any dtype: the kernels read them as the dtype
/// they are told.
///
/// ```no_run
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0).unwrap();
/// let buffer = GpuBuffer::from_bytes(&device, &[1, 2, 3, 4]);
/// assert_eq!(buffer.to_bytes().unwrap(), vec![1, 2, 3, 4]);
/// ```
#[derive(Clone)]
pub struct GpuBuffer {
    device: GpuDevice,
    handle: Handle,
    len: usize,
}

/// Bytes allocated for `len` bytes: whole 4-byte words, so any buffer can be copied on the device as words, and
/// at least 8 bytes: a zero-sized binding is not valid on every backend, and an empty operand bound as an array
/// of 8-byte elements (a `f64` product over no inputs, the weight's gradient of a batch of 0) must hold one
/// element for wgpu's validation, which refused a 4-byte one ("bound with size 4 where the shader expects 8").
fn allocation(len: usize) -> usize {
    len.div_ceil(4).max(2) * 4
}

impl GpuBuffer {
    /// Uploads `bytes`.
    pub fn from_bytes(device: &GpuDevice, bytes: &[u8]) -> GpuBuffer {
        let handle = if bytes.len() == allocation(bytes.len()) {
            device.client().create_from_slice(bytes)
        } else {
            let mut padded = bytes.to_vec();
            padded.resize(allocation(bytes.len()), 0);
            device.client().create_from_slice(&padded)
        };
        GpuBuffer {
            device: device.clone(),
            handle,
            len: bytes.len(),
        }
    }

    /// `len` bytes of uninitialised memory, for a kernel to write.
    pub fn uninit(device: &GpuDevice, len: usize) -> GpuBuffer {
        GpuBuffer {
            device: device.clone(),
            handle: device.client().empty(allocation(len)),
            len,
        }
    }

    /// The device the memory is on.
    pub fn device(&self) -> &GpuDevice {
        &self.device
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cubecl handle, for launching kernels on this memory.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Downloads the bytes (waits for every kernel writing them).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let bytes = self
            .device
            .client()
            .read_one(self.handle.clone())
            .map_err(|e| KernelError::Device {
                device: self.device.to_string(),
                message: format!("reading {} bytes back failed: {e}", self.len),
            })?;
        let mut bytes = bytes.to_vec();
        bytes.truncate(self.len);
        Ok(bytes)
    }

    /// Overwrites the contents with `bytes` (of the same length), in place: every holder of this buffer sees
    /// the new contents.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != self.len {
            return Err(KernelError::InvalidArgument {
                op: "write",
                message: format!("{} bytes given for a buffer of {} bytes", bytes.len(), self.len),
            });
        }
        if self.len == 0 {
            return Ok(());
        }
        let mut padded = bytes.to_vec();
        padded.resize(allocation(self.len), 0);
        self.device
            .client()
            .write(&self.handle, cubecl::bytes::Bytes::from_bytes_vec(padded));
        Ok(())
    }

    /// A copy in new memory on the same device, made by a kernel (no trip through the host).
    pub fn deep_copy(&self) -> GpuBuffer {
        let out = GpuBuffer::uninit(&self.device, self.len);
        crate::copy::copy_words(self, &out, allocation(self.len) / 4);
        out
    }

    /// Copies the contents of `src` (same length) into this buffer, on the device when both are on the same
    /// one.
    pub fn copy_from(&self, src: &GpuBuffer) -> Result<()> {
        if src.len != self.len {
            return Err(KernelError::InvalidArgument {
                op: "copy_from",
                message: format!("a buffer of {} bytes cannot take {} bytes", self.len, src.len),
            });
        }
        if src.device.same(&self.device) {
            crate::copy::copy_words(src, self, allocation(self.len) / 4);
            return Ok(());
        }
        self.write(&src.to_bytes()?)
    }
}

impl std::fmt::Debug for GpuBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuBuffer({} bytes on {})", self.len, self.device)
    }
}
