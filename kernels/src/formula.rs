//! [`Formula`]: one activation's forward and backward, written once for every float type, and the three
//! element-wise kernels every formula is instantiated into (forward, forward in place, backward).
//!
//! Kernels read elements of the storage type `F` and compute in `C`: `C = F` for `f32` and `f64`, `C = f32`
//! for `f16` and `bf16` — PyTorch's "opmath", so half-precision results are the `f32` result rounded once.

use cubecl::prelude::*;

/// An element-wise activation: `forward(x)` and `backward(saved, dy)`, with up to two constants `a`, `b`
/// (a slope, a threshold, …) that each formula documents.
#[cube]
pub trait Formula: 'static + Send + Sync {
    /// The activation of `x`.
    fn forward<C: Float, N: Size>(x: Vector<C, N>, a: C, b: C) -> Vector<C, N>;
    /// The input's gradient from the saved tensor (the input, or the output for formulas whose host
    /// description says so) and the output's gradient `dy`.
    fn backward<C: Float, N: Size>(saved: Vector<C, N>, dy: Vector<C, N>, a: C, b: C) -> Vector<C, N>;
}

/// `A(x)` of a stored vector, computed in `C`.
#[cube]
fn forward_of<F: Float, C: Float, N: Size, A: Formula>(x: Vector<F, N>, a: C, b: C) -> Vector<F, N> {
    Vector::<F, N>::cast_from(A::forward::<C, N>(Vector::<C, N>::cast_from(x), a, b))
}

/// `output = A(input)`.
#[cube(launch_unchecked)]
pub(crate) fn forward_kernel<F: Float, C: Float + LaunchArg, N: Size, A: Formula>(
    input: &[Vector<F, N>],
    output: &mut [Vector<F, N>],
    a: C,
    b: C,
) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = forward_of::<F, C, N, A>(input[ABSOLUTE_POS], a, b);
    }
}

/// `data = A(data)`.
#[cube(launch_unchecked)]
pub(crate) fn forward_in_place_kernel<F: Float, C: Float + LaunchArg, N: Size, A: Formula>(
    data: &mut [Vector<F, N>],
    a: C,
    b: C,
) {
    if ABSOLUTE_POS < data.len() {
        data[ABSOLUTE_POS] = forward_of::<F, C, N, A>(data[ABSOLUTE_POS], a, b);
    }
}

/// `dx = A'(saved, dy)`.
#[cube(launch_unchecked)]
pub(crate) fn backward_kernel<F: Float, C: Float + LaunchArg, N: Size, A: Formula>(
    saved: &[Vector<F, N>],
    dy: &[Vector<F, N>],
    dx: &mut [Vector<F, N>],
    a: C,
    b: C,
) {
    if ABSOLUTE_POS < dx.len() {
        let s = Vector::<C, N>::cast_from(saved[ABSOLUTE_POS]);
        let g = Vector::<C, N>::cast_from(dy[ABSOLUTE_POS]);
        dx[ABSOLUTE_POS] = Vector::<F, N>::cast_from(A::backward::<C, N>(s, g, a, b));
    }
}

/// Declares an element-wise formula: a unit struct implementing [`Formula`] (the device form, in the compute
/// float `C` and vector `N`) and [`HostFormula`](crate::HostFormula) (the host form, in `R: Real`), forward
/// and backward side by side; the flags in brackets set the host form's `const`s to `true`
/// (`TRANSCENDENTAL`, `GRAD_FROM_OUTPUT`, `PIECEWISE_LINEAR`). Each function names its parameters: the input (or the saved
/// tensor and `dy`) and the constants `a`, `b`. An optional last `host fn gradient_from_output(a, b)` says
/// when the gradient is read off the output instead of the input
/// ([`HostFormula::gradient_from_output`](crate::HostFormula::gradient_from_output)). The `#[cube]` before the device forward is the attribute put
/// on the device impl: written at the call, so the names cubecl's expansion adds resolve beside the caller's.
///
/// ```ignore
/// formula! {
///     /// `e^x`; its gradient `dy·e^x` reads the saved output.
///     Exp [TRANSCENDENTAL, GRAD_FROM_OUTPUT];
///     #[cube] device fn forward(x, _a, _b) { exp_reduced::<C, N>(x) }
///     device fn backward(y, dy, _a, _b) { dy * y }
///     host fn forward(x, _a, _b) { x.exp() }
///     host fn backward(y, dy, _a, _b) { dy * y }
/// }
/// ```
macro_rules! formula {
    (
        $(#[$meta:meta])*
        $name:ident [$($flag:ident),*];
        $pound:tt $cube:tt device fn forward($x:ident, $a:ident, $b:ident) { $($forward:tt)* }
        device fn backward($s:ident, $dy:ident, $a2:ident, $b2:ident) { $($backward:tt)* }
        host fn forward($hx:ident, $ha:ident, $hb:ident) { $($host_forward:tt)* }
        host fn backward($hs:ident, $hdy:ident, $ha2:ident, $hb2:ident) { $($host_backward:tt)* }
        $(host fn gradient_from_output($ga:ident, $gb:ident) { $($from_output:tt)* })?
    ) => {
        $(#[$meta])*
        pub struct $name;

        $pound $cube
        impl $crate::Formula for $name {
            fn forward<C: Float, N: Size>($x: Vector<C, N>, $a: C, $b: C) -> Vector<C, N> {
                $($forward)*
            }

            fn backward<C: Float, N: Size>($s: Vector<C, N>, $dy: Vector<C, N>, $a2: C, $b2: C) -> Vector<C, N> {
                $($backward)*
            }
        }

        impl $crate::HostFormula for $name {
            $(const $flag: bool = true;)*

            #[inline(always)]
            fn forward<R: $crate::Real>($hx: R, $ha: f64, $hb: f64) -> R {
                $($host_forward)*
            }

            #[inline(always)]
            fn backward<R: $crate::Real>($hs: R, $hdy: R, $ha2: f64, $hb2: f64) -> R {
                $($host_backward)*
            }

            $(
                fn gradient_from_output($ga: f64, $gb: f64) -> bool {
                    $($from_output)*
                }
            )?
        }
    };
}
pub(crate) use formula;
