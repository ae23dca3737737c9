//! The tensor's device half: opening cubecl devices (`Device::Wgpu(i)`, `Device::Cuda(i)`), moving bytes there
//! and back, copies and float casts on the device, and the translation of the kernels' errors into [`Error`]s
//! that name the tensor's device and dtype.
//!
//! Built with the `wgpu` feature (on by default) or `cuda`; without either, every device is
//! [`Error::DeviceUnavailable`] (the kernels compile without a runtime, so there is one build of this code).
//!
//! The [`probe`] keeps the verdicts of the parity probes: before an operation first runs in a dtype on a device,
//! it runs on fixed inputs there and on the CPU, and a device whose results differ (lavapipe's `f64` `exp`
//! returns garbage without an error) refuses that operation in that dtype instead of returning wrong numbers.

pub(crate) mod probe;

use kernels::gather::Element;
use kernels::{Backend, FloatType, GpuBuffer, GpuDevice, KernelError};

use super::Tensor;
use super::cast;
use super::storage::{Buffer, CpuData};
use crate::{DType, Device, Error, Result, Shape};

/// The cubecl device behind `device` (opened once per process).
pub(crate) fn open(device: Device) -> Result<GpuDevice> {
    let (backend, index) = match device {
        Device::Wgpu(i) => (Backend::Wgpu, i),
        Device::Cuda(i) => (Backend::Cuda, i),
        Device::Cpu => {
            return Err(Error::invalid("to_device", "the CPU is not a cubecl device"));
        }
    };
    GpuDevice::open(backend, index).map_err(|e| kernel_error(e, "to_device", DType::F32, device))
}

/// The kernels' name for a floating-point dtype, or an error naming `op` for any other dtype.
pub(crate) fn float_type(op: &'static str, dtype: DType) -> Result<FloatType> {
    match dtype {
        DType::F16 => Ok(FloatType::F16),
        DType::BF16 => Ok(FloatType::BF16),
        DType::F32 => Ok(FloatType::F32),
        DType::F64 => Ok(FloatType::F64),
        other => Err(Error::float_only(op, other)),
    }
}

/// How the device kernels move elements of `dtype`, or an error naming `op` for the 1-byte dtypes, which no
/// kernel moves.
pub(crate) fn element(op: &'static str, dtype: DType, device: Device) -> Result<Element> {
    match dtype {
        DType::F16 => Ok(Element::F16),
        DType::BF16 => Ok(Element::BF16),
        DType::F32 | DType::I32 => Ok(Element::Bits32),
        DType::F64 | DType::I64 => Ok(Element::Bits64),
        DType::U8 | DType::Bool => Err(Error::UnsupportedOnDevice {
            op,
            dtype,
            device,
            reason: "1-byte elements are not moved by the device kernels; move the tensor with .cpu() first".into(),
        }),
    }
}

/// `KernelError` as the crate's error, for `op` on a tensor of `dtype` on `device`.
pub(crate) fn kernel_error(e: KernelError, op: &'static str, dtype: DType, device: Device) -> Error {
    match e {
        KernelError::DeviceUnavailable { reason, .. } => Error::DeviceUnavailable { device, reason },
        KernelError::Unsupported { reason, .. } => Error::UnsupportedOnDevice {
            op,
            dtype,
            device,
            reason,
        },
        KernelError::InvalidArgument { message, .. } => Error::invalid(op, message),
        KernelError::Device { message, .. } => Error::DeviceFailure { op, device, message },
        other => Error::DeviceFailure {
            op,
            device,
            message: other.to_string(),
        },
    }
}

impl Device {
    /// Waits until every kernel launched on this device has finished (launches are asynchronous; reading a
    /// tensor back waits by itself). Immediate for the CPU.
    ///
    /// ```no_run
    /// nn::Device::Wgpu(0).synchronize()?;
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn synchronize(self) -> Result<()> {
        if self.is_cpu() {
            return Ok(());
        }
        open(self)?
            .synchronize()
            .map_err(|e| kernel_error(e, "synchronize", DType::F32, self))
    }

    /// `Ok` when this device stores and computes floating-point `dtype`, as its adapter reports (the CPU does
    /// every dtype; integer and bool tensors move to any device as bytes, so they are `Ok` where the device
    /// opens). Otherwise the error an operation in that dtype would return there:
    /// [`Error::UnsupportedOnDevice`] saying what the adapter lacks, or [`Error::DeviceUnavailable`].
    ///
    /// Whether the device's math in a supported dtype is *right* is decided per operation, by the parity
    /// probe that runs before an operation's first use in a dtype.
    ///
    /// ```
    /// use nn::{DType, Device};
    /// assert!(Device::Cpu.check_dtype(DType::BF16).is_ok());
    /// if let Err(e) = Device::Wgpu(0).check_dtype(DType::F16) {
    ///     println!("no f16 here: {e}");
    /// }
    /// ```
    pub fn check_dtype(self, dtype: DType) -> Result<()> {
        if self.is_cpu() {
            return Ok(());
        }
        let device = open(self)?;
        if !dtype.is_floating_point() {
            return Ok(());
        }
        let float = float_type("check_dtype", dtype)?;
        device
            .check_dtype("check_dtype", float)
            .map_err(|e| kernel_error(e, "check_dtype", dtype, self))
    }
}

impl Tensor {
    /// A new tensor of this tensor's dtype on its device, holding `buffer` (the elements of `shape`).
    pub(crate) fn with_gpu(&self, buffer: GpuBuffer, shape: Shape) -> Tensor {
        Tensor::from_parts(Buffer::Device(buffer), self.dtype(), self.device(), shape)
    }

    /// A new tensor of `dtype` and `shape` on this tensor's device, holding `buffer` (an operation's output of
    /// another dtype: the `int64` indices of `max`).
    pub(crate) fn with_gpu_as(&self, buffer: GpuBuffer, shape: Shape, dtype: DType) -> Tensor {
        Tensor::from_parts(Buffer::Device(buffer), dtype, self.device(), shape)
    }

    /// [`with_gpu`](Self::with_gpu) in this tensor's shape.
    pub(crate) fn like_gpu(&self, buffer: GpuBuffer) -> Tensor {
        self.with_gpu(buffer, self.shape.clone())
    }

    /// A new tensor of `shape` and this tensor's dtype on its device: `kernel`'s output, given this tensor's
    /// float type and device memory. A kernel error names `op`, the dtype and the device.
    pub(crate) fn gpu_op(
        &self,
        op: &'static str,
        shape: Shape,
        kernel: impl FnOnce(FloatType, &GpuBuffer) -> kernels::Result<GpuBuffer>,
    ) -> Result<Tensor> {
        let out = kernel(float_type(op, self.dtype())?, &self.gpu_buffer(op)?).map_err(|e| self.kernel_error(op, e))?;
        Ok(self.with_gpu(out, shape))
    }

    /// [`gpu_op`](Self::gpu_op) in this tensor's shape (an element-wise kernel).
    pub(crate) fn map_gpu(
        &self,
        op: &'static str,
        kernel: impl FnOnce(FloatType, &GpuBuffer) -> kernels::Result<GpuBuffer>,
    ) -> Result<Tensor> {
        self.gpu_op(op, self.shape.clone(), kernel)
    }

    /// The device memory of this tensor's elements in row-major order (a handle, no copy, unless the tensor is a
    /// view whose elements lie elsewhere: then a copy of them), or an error naming `op` for a tensor on the CPU.
    pub(crate) fn gpu_buffer(&self, op: &'static str) -> Result<GpuBuffer> {
        if !self.is_dense() {
            return self.dense()?.gpu_buffer(op);
        }
        match &*self.storage.data.read() {
            Buffer::Device(b) => Ok(b.clone()),
            Buffer::Cpu(_) | Buffer::Raw(_) => Err(Error::invalid(
                op,
                "expected a tensor on a device, found one on the CPU",
            )),
        }
    }

    /// The device memory of an optional operand (a bias), for `op`.
    pub(crate) fn gpu_buffer_of(t: Option<&Tensor>, op: &'static str) -> Result<Option<GpuBuffer>> {
        t.map(|t| t.gpu_buffer(op)).transpose()
    }

    /// A kernel's error as the crate's, named after `op` and this tensor's dtype and device.
    pub(crate) fn kernel_error(&self, op: &'static str, e: KernelError) -> Error {
        kernel_error(e, op, self.dtype(), self.device())
    }
}

/// Copies host data to `device`.
pub(crate) fn upload(bytes: &[u8], device: Device) -> Result<Buffer> {
    let gpu = open(device)?;
    Ok(Buffer::Device(GpuBuffer::from_bytes(&gpu, bytes)))
}

/// Copies device memory holding `dtype` elements to the host (waiting for the kernels writing it).
pub(crate) fn download(buffer: &GpuBuffer, dtype: DType, device: Device) -> Result<CpuData> {
    let bytes = buffer.to_bytes().map_err(|e| kernel_error(e, "cpu", dtype, device))?;
    CpuData::from_bytes(dtype, &bytes)
}

/// `dst.copy_(src)` for a `dst` on a device: on the device when `src` is there in the same dtype, else
/// through the host (casting as PyTorch's `copy_` does).
pub(crate) fn copy_into(dst: &Tensor, dst_buffer: &GpuBuffer, src: &Tensor) -> Result<()> {
    let fail = |e| dst.kernel_error("copy_", e);
    let src = &src.dense()?;
    if src.device() == dst.device() && src.dtype() == dst.dtype() {
        let guard = src.storage.data.read();
        if let Buffer::Device(src_buffer) = &*guard {
            return dst_buffer.copy_from(src_buffer).map_err(fail);
        }
    }
    let host = src.cpu()?.to_dtype(dst.dtype())?;
    host.read_cpu("copy_", |d| dst_buffer.write(d.as_bytes()))?
        .map_err(fail)
}

/// `x.to_dtype(dtype)` for `x` on a device: between float types a kernel on the device, where the device
/// computes both types and its conversion matched the CPU's bit for bit on the probe values; otherwise (integer
/// types, a type the device lacks, a driver that flushes half-precision subnormals) cast on the host and the
/// result put back on the device.
pub(crate) fn to_dtype(x: &Tensor, buffer: &GpuBuffer, dtype: DType) -> Result<Buffer> {
    if let (Ok(from), Ok(to)) = (float_type("to_dtype", x.dtype()), float_type("to_dtype", dtype))
        && casts_on_device(x.device(), x.dtype(), dtype)
    {
        let out = kernels::cast::cast(buffer, from, to).map_err(|e| x.kernel_error("to_dtype", e))?;
        return Ok(Buffer::Device(out));
    }
    let data = download(buffer, x.dtype(), x.device())?;
    upload(cast::cast_data(&data, dtype).as_bytes(), x.device())
}

/// The probe's name for a conversion to `to`.
fn cast_name(to: DType) -> &'static str {
    match to {
        DType::F16 => "cast to float16",
        DType::BF16 => "cast to bfloat16",
        DType::F32 => "cast to float32",
        _ => "cast to float64",
    }
}

/// Whether float type `from` converts to `to` on `device` exactly as on the CPU (probed once: the usual
/// values, half-precision subnormals, overflow to infinity, NaN).
fn casts_on_device(device: Device, from: DType, to: DType) -> bool {
    let Ok(gpu) = open(device) else { return false };
    let (Ok(a), Ok(b)) = (float_type("cast", from), float_type("cast", to)) else {
        return false;
    };
    if gpu.check_dtype("cast", a).is_err() || gpu.check_dtype("cast", b).is_err() {
        return false;
    }
    probe::ensure(device, cast_name(to), from, || {
        let mut xs = probe::inputs();
        xs.extend([
            3.0e-8,
            -6.0e-8,
            5.9e-5,
            1.0e-40,
            65504.0,
            70000.0,
            -1.0e39,
            f64::NAN,
            0.1,
            1.0 / 3.0,
        ]);
        let n = xs.len();
        let cpu = Tensor::from_vec(xs, [n])?.to_dtype(from)?;
        let want = cpu.to_dtype(to)?.to_vec_f64()?;
        let dev = cpu.to_device(device)?;
        let out =
            kernels::cast::cast(&dev.gpu_buffer("cast")?, a, b).map_err(|e| kernel_error(e, "cast", from, device))?;
        let got =
            Tensor::from_parts(Buffer::Cpu(download(&out, to, device)?), to, Device::Cpu, [n].into()).to_vec_f64()?;
        // Every value converts exactly to f64, so equal bits there are equal bits in `to` (NaNs: any payload).
        let same = got
            .iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()));
        Ok(probe::Measured {
            error: if same { 0.0 } else { f64::INFINITY },
            at: "the conversion of the probe values (bit for bit)".into(),
        })
    })
    .is_ok()
}
