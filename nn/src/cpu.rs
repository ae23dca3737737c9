//! The vector instructions nn's CPU loops are compiled for (PyTorch's CPU capability): AVX-512, AVX2 with FMA,
//! or the baseline. Detected once; the environment variable `NN_CPU_CAPABILITY` (`default`, `avx2` or
//! `avx512`, as PyTorch's `ATEN_CPU_CAPABILITY`) lowers it, to compare the paths or to run the narrower one on a
//! wide CPU. A value asking for more than the CPU has is capped at what it has (PyTorch's would run
//! instructions the CPU lacks); any other value is ignored. The variable is read on first use, so set it before
//! the program starts. It governs nn's own loops (activations, softmax, batch norm sums, the direct
//! convolution, the LSTM); matrix products go through `matrixmultiply`, which picks its own kernels.
//!
//! ```
//! use nn::cpu::{CpuCapability, cpu_capability};
//! let cap = cpu_capability();
//! assert!(cap <= CpuCapability::detected());
//! assert!(["DEFAULT", "AVX2", "AVX512"].contains(&cap.to_string().as_str()));
//! ```

use std::fmt;
use std::sync::OnceLock;

/// A set of vector instructions nn's CPU loops have a compiled form for, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuCapability {
    /// The target's baseline (SSE2 on x86-64; every other architecture).
    Default,
    /// AVX2 and FMA.
    Avx2,
    /// AVX-512 (F, VL, BW, DQ) with AVX2 and FMA.
    Avx512,
}

impl CpuCapability {
    /// The widest capability this CPU has, ignoring `NN_CPU_CAPABILITY`.
    pub fn detected() -> CpuCapability {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return CpuCapability::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                return CpuCapability::Avx2;
            }
        }
        CpuCapability::Default
    }

    /// The capability an `NN_CPU_CAPABILITY` value asks for (`default`, `avx2`, `avx512`, any case), if it is one.
    pub fn from_name(name: &str) -> Option<CpuCapability> {
        match name.trim().to_ascii_lowercase().as_str() {
            "default" => Some(CpuCapability::Default),
            "avx2" => Some(CpuCapability::Avx2),
            "avx512" => Some(CpuCapability::Avx512),
            _ => None,
        }
    }
}

/// PyTorch's names: `DEFAULT`, `AVX2`, `AVX512` (`torch.backends.cpu.get_cpu_capability()`).
impl fmt::Display for CpuCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuCapability::Default => "DEFAULT",
            CpuCapability::Avx2 => "AVX2",
            CpuCapability::Avx512 => "AVX512",
        })
    }
}

/// The capability nn's CPU loops run with: the detected one, lowered by `NN_CPU_CAPABILITY` when it is set
/// (PyTorch's `torch.backends.cpu.get_cpu_capability()`). Never above [`CpuCapability::detected`].
pub fn cpu_capability() -> CpuCapability {
    static CAPABILITY: OnceLock<CpuCapability> = OnceLock::new();
    *CAPABILITY.get_or_init(|| {
        let detected = CpuCapability::detected();
        let asked = std::env::var("NN_CPU_CAPABILITY")
            .ok()
            .and_then(|v| CpuCapability::from_name(&v));
        asked.map_or(detected, |asked| asked.min(detected))
    })
}
