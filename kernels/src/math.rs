//! Math helpers more accurate than some drivers' built-ins.

use cubecl::prelude::*;

/// `log2(e)`, `ln 2` and `ln 2` split into a part with a short mantissa (`k·LN2_HI` is exact for the `k`
/// that occur) and the rest.
const LOG2E: f32 = core::f32::consts::LOG2_E;
const LN2: f32 = core::f32::consts::LN_2;
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;
/// `ln 2 - LN2_HI - LN2_LO`: the third part, for `f64`.
const LN2_LO2: f32 = 5.497_923e-14;

/// `e^x` as `e^r · 2^k` with `k = round(x / ln 2)` and `|r| ≤ ln 2 / 2`.
///
/// Drivers commonly compute `exp(x)` as `exp2(x · log2 e)`, which rounds the product first: a relative
/// error of `|x|·2^-24` in `f32` (8 ulps at `x = -8`). Here the device's `exp` only sees the small `r`,
/// and `e^{k·ln 2}` lands on the exact power of two (`k·ln 2·log2 e` rounds back to `k`).
///
/// `k` is kept within ±2000 (past where `e^x` is 0 or infinite in every float type), so `x = ±∞` gives
/// `e^{±∞}·2^{±2000}` = ∞ or 0 rather than `∞ - ∞` = NaN in `r`.
///
/// In `f64` the `f32` constants are too coarse for both steps (`e^{k·ln 2}` with `ln 2` rounded to `f32` is
/// `k·2e-9` off): there `ln 2` is taken as three `f32` parts, each product with `k` exact, for `r` and for
/// `2^k = e^{k·LN2_HI}·e^{k·LN2_LO}·e^{k·LN2_LO2}`.
#[cube]
pub(crate) fn exp_reduced<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let k = (x * Vector::new(C::new(LOG2E)))
        .round()
        .max(Vector::new(C::new(-2000.0)))
        .min(Vector::new(C::new(2000.0)));
    let (hi, lo) = (k * Vector::new(C::new(LN2_HI)), k * Vector::new(C::new(LN2_LO)));
    if C::size_bits().comptime() > 32 {
        let lo2 = k * Vector::new(C::new(LN2_LO2));
        ((x - hi) - lo - lo2).exp() * hi.exp() * lo.exp() * lo2.exp()
    } else {
        ((x - hi) - lo).exp() * (k * Vector::new(C::new(LN2))).exp()
    }
}

/// Whether `v` is NaN (through a one-lane vector `N`: cubecl tests vectors; on wgpu by its bits, which the
/// shader compiler cannot assume away).
#[cube]
pub(crate) fn is_nan<F: Float, N: Size>(v: F) -> bool {
    Vector::<F, N>::new(v).is_nan().extract(0usize)
}
