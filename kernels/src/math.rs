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

/// Whether `v` is infinite, as [`is_nan`] tests NaN (by its bits on wgpu).
#[cube]
pub(crate) fn is_inf<F: Float, N: Size>(v: F) -> bool {
    Vector::<F, N>::new(v).is_inf().extract(0usize)
}

/// A quiet NaN made at run time from `v`'s bits (exponent and quiet bit set): a NaN constant is not written in
/// every shader language, and arithmetic meant to give NaN (`0 / 0`) may be folded by a shader compiler that
/// assumes NaN away.
#[cube]
pub(crate) fn nan_from<C: Float>(v: C) -> C {
    C::cast_from(f32::reinterpret(u32::reinterpret(f32::cast_from(v)) | 0x7fc0_0000u32))
}

/// Whether `v`'s sign bit is set (`-0.0` included), read from its bits.
#[cube]
pub(crate) fn sign_bit<C: Float>(v: C) -> bool {
    (u32::reinterpret(f32::cast_from(v)) >> 31u32) == 1u32
}

/// C's `fmod(a, b)`: `a - n·b` for `n` the quotient truncated toward zero, exactly (the result is a value of the
/// type), with `a`'s sign (`-0.0` for a negative `a` divided evenly); NaN where `a` is infinite, `b` is zero or
/// either is NaN; `a` where `b` is infinite. The device's `%` of floats is `a - b·trunc(a / b)`, rounded
/// (`1.0 % 0.1` off by `0.1`); here it is long division on the values: the largest `|b|·2^k` not above `|a|`,
/// then each of `|b|·2^k … |b|` subtracted where it fits. Every difference `r - t` has `t ≤ r < 2t`, so it
/// is exact (Sterbenz), and so is each doubling and halving of `|b|`: at most 277 steps each way in `f32`, 2,098
/// in `f64`.
#[cube]
pub(crate) fn fmod<C: Float>(a: C, b: C) -> C {
    let zero = C::new(0.0);
    let two = C::new(2.0);
    let half = C::new(0.5);
    let mut result = a;
    if is_nan::<C, Const<1>>(a) {
        result = a;
    } else if is_nan::<C, Const<1>>(b) {
        result = b;
    } else if is_inf::<C, Const<1>>(a) || b == zero {
        result = nan_from::<C>(a);
    } else {
        let mut r = a;
        if a < zero {
            r = -a;
        }
        let mut d = b;
        if b < zero {
            d = -b;
        }
        if r >= d {
            let mut t = d;
            loop {
                // A doubling past the largest float is infinite, above any `r`: it stops here too.
                let next = t * two;
                if next > r {
                    break;
                }
                t = next;
            }
            loop {
                if r >= t {
                    r -= t;
                }
                if t == d {
                    break;
                }
                t *= half;
            }
            result = r;
            if a < zero {
                result = -r;
            }
        }
    }
    result
}
