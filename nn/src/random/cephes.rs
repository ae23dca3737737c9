//! The `f32` logarithm, sine and cosine of PyTorch's AVX2 normal fill (`normal_fill_16_AVX2`, from
//! `aten/src/ATen/native/cpu/avx_mathfun.h`: Cephes' polynomials), operation for operation as GCC compiles
//! them for PyTorch's x86-64 wheels (AVX2 and AVX-512 builds alike): a product whose only use is a sum is
//! fused into it (`mul_add`, one rounding), the first product of a sum of two products being the one fused.

// The C source's literals as it writes them, with more digits than an `f32` holds.
#![allow(clippy::excessive_precision)]

// The constants as the C source writes them: `double` literals stored in `float`s.
const LOG_P: [f32; 9] = [
    7.0376836292E-2_f64 as f32,
    -1.1514610310E-1_f64 as f32,
    1.1676998740E-1_f64 as f32,
    -1.2420140846E-1_f64 as f32,
    1.4249322787E-1_f64 as f32,
    -1.6668057665E-1_f64 as f32,
    2.0000714765E-1_f64 as f32,
    -2.4999993993E-1_f64 as f32,
    3.3333331174E-1_f64 as f32,
];
const LOG_Q1: f32 = -2.12194440e-4_f64 as f32;
const LOG_Q2: f32 = 0.693359375;
const SQRT_HALF: f32 = std::f64::consts::FRAC_1_SQRT_2 as f32;

/// `log256_ps` of one lane: the natural logarithm of `x > 0` (denormals cut to the smallest normal).
#[inline(always)]
pub(crate) fn log(x: f32) -> f32 {
    let x = x.max(f32::MIN_POSITIVE);
    let exponent = (x.to_bits() >> 23) as i32 - 0x7f;
    let m = f32::from_bits((x.to_bits() & !0x7f80_0000) | 0.5f32.to_bits());
    // Branch-free, as the vector code is, so that a loop over lanes vectorises.
    let small = m < SQRT_HALF;
    let e = (exponent as f32 + 1.0) - if small { 1.0 } else { 0.0 };
    let m = (m - 1.0) + if small { m } else { 0.0 };
    let z = m * m;
    let mut y = LOG_P[0];
    for p in &LOG_P[1..] {
        y = y.mul_add(m, *p);
    }
    y *= m;
    y = y.mul_add(z, e * LOG_Q1);
    y -= z * 0.5;
    e.mul_add(LOG_Q2, m + y)
}

const DP: [f32; 3] = [
    -0.78515625,
    -2.4187564849853515625e-4_f64 as f32,
    -3.77489497744594108e-8_f64 as f32,
];
const SIN_P: [f32; 3] = [
    -1.9515295891E-4_f64 as f32,
    8.3321608736E-3_f64 as f32,
    -1.6666654611E-1_f64 as f32,
];
const COS_P: [f32; 3] = [
    2.443315711809948E-005_f64 as f32,
    -1.388731625493765E-003_f64 as f32,
    4.166664568298827E-002_f64 as f32,
];
const FOUR_OVER_PI: f32 = 1.27323954473516_f64 as f32;

/// `sincos256_ps` of one lane: `(sin x, cos x)`.
#[inline(always)]
pub(crate) fn sin_cos(x: f32) -> (f32, f32) {
    let mut sign_sin = x.to_bits() & 0x8000_0000;
    let mut x = x.abs();
    let j = (((x * FOUR_OVER_PI) as i32) + 1) & !1;
    let y = j as f32;
    sign_sin ^= ((j & 4) as u32) << 29;
    let sine_polynomial_first = j & 2 == 0;
    for d in DP {
        x = y.mul_add(d, x);
    }
    let sign_cos = ((!(j - 2) & 4) as u32) << 29;
    let z = x * x;
    let mut c = COS_P[0].mul_add(z, COS_P[1]).mul_add(z, COS_P[2]);
    c *= z;
    c = c.mul_add(z, -(z * 0.5));
    c += 1.0;
    let mut s = SIN_P[0].mul_add(z, SIN_P[1]).mul_add(z, SIN_P[2]);
    s *= z;
    s = s.mul_add(x, x);
    let (sin, cos) = if sine_polynomial_first { (s, c) } else { (c, s) };
    (
        f32::from_bits(sin.to_bits() ^ sign_sin),
        f32::from_bits(cos.to_bits() ^ sign_cos),
    )
}

#[cfg(test)]
mod tests {
    /// Cephes' approximations stay within a few units in the last place of the exact values over the angles
    /// and radii the normal fill takes.
    #[test]
    fn approximate_the_exact_functions() {
        for k in 1..=1000 {
            let u = k as f32 / 1000.0;
            assert!((super::log(u) as f64 - (u as f64).ln()).abs() <= 4e-7 * (u as f64).ln().abs().max(1e-3));
            let theta = u * std::f32::consts::TAU;
            let (s, c) = super::sin_cos(theta);
            assert!((s as f64 - (theta as f64).sin()).abs() < 3e-7, "sin {theta}");
            assert!((c as f64 - (theta as f64).cos()).abs() < 3e-7, "cos {theta}");
        }
    }
}
