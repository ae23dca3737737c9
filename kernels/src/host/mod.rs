//! The host side of the kernels: the same formulas for the CPU, in plain Rust over [`Real`] (`f32`, `f64`).
//!
//! Every activation's [`HostFormula`] sits in its file beside its cubecl [`Formula`](crate::Formula), so a
//! formula is written in one place for both paths. `f32`'s elementary functions are [`fastmath`]'s, written to
//! vectorise; `f64` uses the correctly rounded ones.

pub mod fastmath;
mod real;

pub use real::Real;

/// An element-wise activation on the host: `forward(x)` and `backward(saved, dy)` with the activation's two
/// constants `a`, `b` (the same as its [`Formula`](crate::Formula)'s), in `f64` so that a constant derived from
/// them (CELU's `1/alpha`) rounds as PyTorch's does.
pub trait HostFormula: Send + Sync + 'static {
    /// Whether `backward` takes the forward's output (PyTorch saves the result of `sigmoid` and `tanh`) rather
    /// than its input. The device kernels follow the same rule.
    const GRAD_FROM_OUTPUT: bool = false;
    /// Whether the device formula calls `exp`, `log`, `tanh`, `erf` or `pow`: wgpu cannot run those in
    /// `float64` ([`GpuDevice::check_math`](crate::GpuDevice::check_math)).
    const TRANSCENDENTAL: bool = false;
    /// The activation of `x`.
    fn forward<R: Real>(x: R, a: f64, b: f64) -> R;
    /// The input's gradient from the saved tensor (the input, or the output when
    /// [`GRAD_FROM_OUTPUT`](Self::GRAD_FROM_OUTPUT)) and the output's gradient `dy`.
    fn backward<R: Real>(saved: R, dy: R, a: f64, b: f64) -> R;
}

/// `x` limited to `[lo, hi]`, NaN passed through (PyTorch's `hardtanh`).
#[inline(always)]
pub fn hardtanh<R: Real>(x: R, lo: R, hi: R) -> R {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}
