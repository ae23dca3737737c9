//! [`GpuDevice`]: a cubecl device (wgpu or CUDA), found by the probing API and opened once per process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cubecl::client::Client;
use cubecl::prelude::*;

use crate::{FloatType, KernelError, Result};

/// The runtime a device belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// cubecl's wgpu runtime (Vulkan, Metal, DX12, or GL).
    Wgpu,
    /// cubecl's CUDA runtime.
    Cuda,
}

impl Backend {
    /// Whether this build links the runtime: the crate feature of the same name (`wgpu`, on by default, or
    /// `cuda`), in `kernels` and in `nn`, which forwards it.
    ///
    /// ```
    /// assert_eq!(kernels::Backend::Wgpu.compiled(), cfg!(feature = "wgpu"));
    /// ```
    pub fn compiled(self) -> bool {
        match self {
            Backend::Wgpu => cfg!(feature = "wgpu"),
            Backend::Cuda => cfg!(feature = "cuda"),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Wgpu => "wgpu",
            Backend::Cuda => "cuda",
        })
    }
}

/// An open device: its cubecl client, shared by every buffer on it. Cloning shares the client.
///
/// `wgpu:0` is wgpu's default adapter (the best one, or the one `CUBECL_WGPU_DEFAULT_DEVICE` names);
/// `wgpu:N` for `N ≥ 1` is the N-th adapter wgpu enumerates. `cuda:N` is the N-th CUDA GPU.
///
/// ```no_run
/// use kernels::{Backend, GpuDevice};
/// match GpuDevice::open(Backend::Wgpu, 0) {
///     Ok(device) => println!("running on {device}"),
///     Err(e) => println!("no wgpu device: {e}"),
/// }
/// ```
#[derive(Clone)]
pub struct GpuDevice {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Backend,
    index: usize,
    client: Client,
}

impl GpuDevice {
    /// The device `index` of `backend`, opened on first use and cached for the process; an error (never a
    /// panic) when the machine has no such device or the runtime is not compiled in.
    pub fn open(backend: Backend, index: usize) -> Result<GpuDevice> {
        static OPEN: OnceLock<Mutex<HashMap<(Backend, usize), GpuDevice>>> = OnceLock::new();
        let mut open = OPEN
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(device) = open.get(&(backend, index)) {
            return Ok(device.clone());
        }
        let label = format!("{backend}:{index}");
        let unavailable = |reason: String| KernelError::DeviceUnavailable {
            device: label.clone(),
            reason,
        };
        if !backend.compiled() {
            // cubecl's own message names its feature; a user of nn turns on nn's, of the same name.
            return Err(unavailable(format!(
                "this build does not include the {backend} runtime: build with the `{backend}` feature of nn \
                 (or kernels)"
            )));
        }
        let device = match backend {
            Backend::Wgpu => find_wgpu(index).map_err(unavailable)?,
            Backend::Cuda => cubecl::Device::cuda(index).map_err(|e| unavailable(e.to_string()))?,
        };
        let client = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| device.client()))
            .map_err(|_| unavailable("the runtime failed to start on it".into()))?;
        let device = GpuDevice {
            inner: Arc::new(Inner { backend, index, client }),
        };
        open.insert((backend, index), device.clone());
        Ok(device)
    }

    /// The runtime.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The index within the runtime.
    pub fn index(&self) -> usize {
        self.inner.index
    }

    /// The cubecl client kernels are launched on.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// Waits until every kernel launched on the device has finished; an error if one failed.
    pub fn synchronize(&self) -> Result<()> {
        cubecl::future::block_on(self.client().sync()).map_err(|e| KernelError::Device {
            device: self.to_string(),
            message: format!("waiting for the device failed: {e}"),
        })
    }

    /// Whether the device is a software rasterizer on the host's CPU (Mesa's lavapipe or llvmpipe, WARP): wgpu
    /// reports it as no card at all. Kernels are routed by it where one measured faster there and the other on
    /// a GPU.
    ///
    /// ```no_run
    /// use kernels::{Backend, GpuDevice};
    /// let device = GpuDevice::open(Backend::Wgpu, 0)?;
    /// println!("{device} runs on the CPU: {}", device.is_software());
    /// # Ok::<(), kernels::KernelError>(())
    /// ```
    pub fn is_software(&self) -> bool {
        self.backend() == Backend::Wgpu && self.client().properties().identity.physical.is_none()
    }

    /// Whether two handles are the same open device.
    pub fn same(&self, other: &GpuDevice) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// `Ok` when the device can store and compute `dtype`, else an [`KernelError::Unsupported`] for `op`
    /// saying what the device lacks. (Whether its functions are *right* in that dtype is for a parity test
    /// to say.)
    pub fn check_dtype(&self, op: &'static str, dtype: FloatType) -> Result<()> {
        use cubecl::ir::features::TypeUsage;
        let uses = crate::dtype::with_float_type!(dtype, T => <T as Scalar>::supported_uses(self.client()));
        let missing: Vec<&str> = [(TypeUsage::Buffer, "buffers"), (TypeUsage::Arithmetic, "arithmetic")]
            .into_iter()
            .filter(|(u, _)| !uses.contains(*u))
            .map(|(_, name)| name)
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(KernelError::Unsupported {
            op,
            dtype,
            device: self.to_string(),
            reason: format!("the device reports no {dtype} {}", missing.join(" or ")),
        })
    }

    /// `Ok` unless `op` computes transcendental functions (`exp`, `log`, `tanh`, `erf`, `pow`) in a dtype the
    /// device cannot: `float64` on wgpu, whose shading languages define them for 16- and 32-bit floats only
    /// (SPIR-V's GLSL.std.450, WGSL, HLSL, MSL). On Vulkan, NVIDIA's driver fails to compile such a kernel and
    /// loses the device; Mesa's lavapipe computes garbage. Checked before the kernel is built, never probed.
    pub fn check_math(&self, op: &'static str, dtype: FloatType) -> Result<()> {
        if self.backend() == Backend::Wgpu && dtype == FloatType::F64 {
            return Err(KernelError::Unsupported {
                op,
                dtype,
                device: self.to_string(),
                reason: "wgpu's shading languages define exp, log, tanh, erf and pow for 16- and 32-bit floats \
                         only; run it in float32 or on the CPU"
                    .into(),
            });
        }
        Ok(())
    }
}

impl fmt::Display for GpuDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.inner.backend, self.inner.index)
    }
}

impl fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GpuDevice({self})")
    }
}

/// wgpu's default adapter for index 0, else the index-th adapter it enumerates.
fn find_wgpu(index: usize) -> std::result::Result<cubecl::Device, String> {
    use cubecl::device::WgpuDeviceKind;
    if index == 0 {
        return cubecl::Device::wgpu(WgpuDeviceKind::DefaultDevice).map_err(|e| e.to_string());
    }
    let all: Vec<cubecl::Device> = cubecl::Device::enumerate_all()
        .into_iter()
        .filter(|d| matches!(d, cubecl::Device::Wgpu(_)))
        .collect();
    let count = all.len();
    all.into_iter()
        .nth(index)
        .ok_or_else(|| format!("wgpu enumerates {count} adapter(s) on this machine"))
}
