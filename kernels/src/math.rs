//! Math helpers more accurate than some drivers' built-ins.

use cubecl::prelude::*;

/// `log2(e)`, `ln 2` and `ln 2` split into a part with a short mantissa (`k·LN2_HI` is exact for the `k`
/// that occur) and the rest.
const LOG2E: f32 = core::f32::consts::LOG2_E;
const LN2: f32 = core::f32::consts::LN_2;
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;

/// `e^x` as `e^r · 2^k` with `k = round(x / ln 2)` and `|r| ≤ ln 2 / 2`.
///
/// Drivers commonly compute `exp(x)` as `exp2(x · log2 e)`, which rounds the product first: a relative
/// error of `|x|·2^-24` in `f32` (8 ulps at `x = -8`). Here the device's `exp` only sees the small `r`,
/// and `e^{k·ln 2}` lands on the exact power of two (`k·ln 2·log2 e` rounds back to `k`).
#[cube]
pub(crate) fn exp_reduced<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let k = (x * Vector::new(C::new(LOG2E))).round();
    let r = (x - k * Vector::new(C::new(LN2_HI))) - k * Vector::new(C::new(LN2_LO));
    r.exp() * (k * Vector::new(C::new(LN2))).exp()
}
