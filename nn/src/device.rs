//! Where a tensor's data lives.

use std::fmt;

/// A compute device, named as PyTorch prints it (`cpu`, `cuda:0`) plus `wgpu:N` for cubecl's wgpu runtime.
///
/// ```
/// use nn::Device;
/// assert_eq!(Device::Cuda(1).to_string(), "cuda:1");
/// assert_eq!(Device::parse("wgpu"), Some(Device::Wgpu(0)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Device {
    /// Host memory.
    #[default]
    Cpu,
    /// The n-th adapter of cubecl's wgpu runtime (Vulkan, Metal, DX12 or GL).
    Wgpu(usize),
    /// The n-th CUDA device.
    Cuda(usize),
}

impl Device {
    /// Whether this is host memory.
    pub fn is_cpu(self) -> bool {
        self == Device::Cpu
    }

    /// Parses `cpu`, `wgpu`, `wgpu:1`, `cuda`, `cuda:0`.
    pub fn parse(s: &str) -> Option<Device> {
        let (kind, index) = match s.split_once(':') {
            Some((k, i)) => (k, i.parse().ok()?),
            None => (s, 0),
        };
        match kind {
            "cpu" if index == 0 => Some(Device::Cpu),
            "wgpu" => Some(Device::Wgpu(index)),
            "cuda" => Some(Device::Cuda(index)),
            _ => None,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Wgpu(i) => write!(f, "wgpu:{i}"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}
