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
    /// Whether the formula is linear between finitely many kinks (ReLU, hardtanh, abs, floor): its second
    /// derivative is zero almost everywhere, so `dy` times the derivative, taken as a constant, differentiates
    /// exactly (autograd's `create_graph`).
    const PIECEWISE_LINEAR: bool = false;
    /// Whether the device formula calls `exp`, `log`, `tanh`, `erf` or `pow`: wgpu cannot run those in
    /// `float64` ([`GpuDevice::check_math`](crate::GpuDevice::check_math)).
    const TRANSCENDENTAL: bool = false;
    /// Whether the gradient is read off the output, for the constants `a`, `b`: always for a formula whose
    /// backward reads the output; for another where `backward` handed the output gives what it gives handed the
    /// input (ReLU's `y > 0` holds exactly where `x > 0`) and PyTorch's in-place form saves its result. An
    /// in-place change under autograd then saves its result, as `relu_` does, instead of a copy of its input,
    /// and a later change of the tensor makes the backward fail as PyTorch's does. (PyTorch's `hardtanh_` and
    /// `threshold_` copy their input, so theirs say no, and the same programs run.)
    ///
    /// ```
    /// use kernels::{HostFormula, activation::{Hardtanh, LeakyRelu}};
    /// assert!(LeakyRelu::gradient_from_output(0.01, 0.0));
    /// assert!(!LeakyRelu::gradient_from_output(-0.5, 0.0)); // y > 0 where x < 0 too
    /// assert!(!Hardtanh::gradient_from_output(-1.0, 1.0));
    /// ```
    fn gradient_from_output(a: f64, b: f64) -> bool {
        let _ = (a, b);
        Self::GRAD_FROM_OUTPUT
    }
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
