//! `f32` elementary functions written as straight-line code (no table, no call, branches that compile to
//! selects), so that loops over them vectorise: `exp`, `exp_m1`, `ln`, `ln_1p`, `tanh`, `erf`.
//!
//! Each is a range reduction and a polynomial whose coefficients were fitted here (minimax-weighted least
//! squares against 40-digit references); the tests below bound each function's error against `f64`'s.

// The coefficients are written with the digits the fit produced; the compiler rounds each to f32 once.
#![allow(clippy::excessive_precision)]

/// `c[0] + v·(c[1] + v·(c[2] + …))`, each step one fused multiply-add (one instruction where the CPU has FMA,
/// which every x86-64 CPU with AVX2 and every AArch64 CPU has; a correctly rounded library call elsewhere).
#[inline(always)]
fn horner<const N: usize>(v: f32, c: [f32; N]) -> f32 {
    let mut acc = c[N - 1];
    for i in (0..N - 1).rev() {
        acc = acc.mul_add(v, c[i]);
    }
    acc
}

/// 1.5·2²³: adding it to `|x| < 2²²` rounds `x` to an integer (ties to even) held in the low mantissa bits.
const MAGIC: f32 = 12_582_912.0;
/// The bits of `MAGIC`.
const MAGIC_BITS: i32 = 0x4B40_0000;

/// `2^n` for an integer `n` in `[-126, 127]`, from its bits (integer arithmetic only: it vectorises, where a
/// float-to-int cast would not).
#[inline(always)]
fn pow2i(n: i32) -> f32 {
    f32::from_bits(((n + 127) << 23) as u32)
}

/// `e^x` as `p·2^n`: `n = round(x / ln 2)` and `p = e^r` for `r = x - n·ln 2` (`|r| ≤ ln 2 / 2`), by a
/// polynomial; `x` must be finite and within `[-104, 89]`.
#[inline(always)]
fn exp_reduced(x: f32) -> (f32, i32) {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let t = x * LOG2E + MAGIC;
    let n = t - MAGIC;
    let ni = t.to_bits() as i32 - MAGIC_BITS;
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, x));
    let p = horner(
        r,
        [
            1.000_000_000_547_402_8,
            1.000_000_036_358_067_4,
            0.499_999_921_845_703,
            0.166_664_200_530_69,
            0.041_668_201_929_324_786,
            0.008_374_823_595_256_611,
            0.001_383_817_080_199_077_7,
        ],
    );
    (p, ni)
}

/// `e^x`, within 2 ulp; `+inf` above 88.72, `0` below -103.97 (through the subnormals), NaN for NaN.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let (p, ni) = exp_reduced(x.clamp(-104.0, 89.0));
    // 2^n in two halves, so that n down to -150 (subnormal results) and up to 128 stay representable.
    let half = ni >> 1;
    let y = p * pow2i(half) * pow2i(ni - half);
    if x > 88.722_84 {
        f32::INFINITY
    } else if x < -103.972_08 {
        0.0
    } else if x.is_nan() {
        x
    } else {
        y
    }
}

/// `e^x - 1`, accurate near 0 (within 2 ulp).
#[inline(always)]
pub fn exp_m1(x: f32) -> f32 {
    let p = horner(
        x,
        [
            0.500_000_000_037_637_7,
            0.166_666_671_354_609_6,
            0.041_666_664_417_615_09,
            0.008_333_182_718_117_674,
            0.001_388_902_865_391_547_7,
            0.000_199_619_691_060_767_2,
            2.484_475_254_465_577_3e-5,
        ],
    );
    let small = (x * x).mul_add(p, x);
    if x.abs() < 0.5 { small } else { exp(x) - 1.0 }
}

/// Natural logarithm, within 2 ulp; `-inf` at 0, NaN below 0, `+inf` at `+inf`. Subnormal inputs are
/// scaled up first.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let subnormal = x < f32::MIN_POSITIVE;
    let xs = if subnormal { x * 8_388_608.0 } else { x };
    let bits = xs.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    if m > 2.0 * SQRT_HALF {
        m *= 0.5;
        e += 1;
    }
    let e = e as f32 - if subnormal { 23.0 } else { 0.0 };
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let r = horner(
        s2,
        [
            0.666_666_665_437_12,
            0.400_001_258_486_439,
            0.285_505_109_467_048_9,
            0.233_369_316_877_054_45,
        ],
    );
    let log_m = (s * s2).mul_add(r, 2.0 * s);
    let y = e.mul_add(std::f32::consts::LN_2, log_m);
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x < 0.0 || x.is_nan() {
        f32::NAN
    } else if x == f32::INFINITY {
        x
    } else {
        y
    }
}

/// `ln(1 + x)`, accurate near 0.
#[inline(always)]
pub fn ln_1p(x: f32) -> f32 {
    let u = 1.0 + x;
    // ln(u) corrected by the rounding of 1 + x: ln(1 + x) ≈ ln(u) - ((u - 1) - x) / u.
    let corrected = ln(u) - ((u - 1.0) - x) / u;
    if u == 1.0 {
        x
    } else if u == 0.0 {
        // `x = -1`: the correction would be `0 / 0`.
        f32::NEG_INFINITY
    } else if u == f32::INFINITY {
        ln(x)
    } else {
        corrected
    }
}

/// `ln(1 + y)` for `y` in `[0, 1]`: `y·P(y)` (P fitted on `[0, 1]`, 5e-9 relative), no division.
#[inline(always)]
fn ln_1p_unit(y: f32) -> f32 {
    y * horner(
        y,
        [
            0.999_999_995_410_494_7,
            -0.499_999_043_343_724_75,
            0.333_300_116_995_889_7,
            -0.249_546_263_217_841_98,
            0.196_784_188_556_449_5,
            -0.153_126_290_339_928_28,
            0.106_154_173_386_229_58,
            -0.057_074_382_112_319_77,
            0.019_912_038_686_986_353,
            -0.003_257_356_815_671_078_3,
        ],
    )
}

/// `ln(1 + e^x)` (softplus), computed as `max(x, 0) + ln(1 + e^-|x|)`: no overflow, no division.
#[inline(always)]
pub fn log1p_exp(x: f32) -> f32 {
    let m = if x > 0.0 { x } else { 0.0 };
    m + ln_1p_unit(exp_nonpositive(-x.abs()))
}

/// Hyperbolic tangent, within 2 ulp.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let x2 = x * x;
    let q = horner(
        x2,
        [
            -0.333_333_331_559_878_8,
            0.133_333_024_481_513_43,
            -0.053_959_081_879_056_71,
            0.021_767_816_358_300_888,
            -0.008_341_021_552_998_408,
            0.002_289_957_595_361_105,
        ],
    );
    let small = (x * x2).mul_add(q, x);
    // 1 - 2/(e^2a + 1); past 2a = 80, where tanh rounds to 1, the argument stays at 80: no overflow, so
    // none of `exp`'s range handling.
    let (p, n) = exp_reduced((2.0 * a).min(80.0));
    let large = 1.0 - 2.0 / p.mul_add(pow2i(n), 1.0);
    if a < 0.625 {
        small
    } else if x.is_nan() {
        x
    } else {
        large.copysign(x)
    }
}

/// `x²` as an unevaluated sum `hi + lo`, exactly: the fused multiply-add's single rounding gives the error
/// of the product.
#[inline(always)]
fn square_exact(x: f32) -> (f32, f32) {
    let p = x * x;
    (p, x.mul_add(x, -p))
}

/// `e^x` for `x <= 0` (softmax's `x - max`, erfc's `-z²`): [`exp`] without its overflow branch; a NaN
/// passes through the clamp and comes out NaN.
#[inline(always)]
pub fn exp_nonpositive(x: f32) -> f32 {
    let (p, ni) = exp_reduced(if x < -104.0 { -104.0 } else { x });
    let half = ni >> 1;
    let y = p * pow2i(half) * pow2i(ni - half);
    if x < -103.972_08 { 0.0 } else { y }
}

/// `erfc(z)` for `z >= 0`, given `z² = z2.0 + z2.1`: `e^(-z²)·P(t)` with `t = 1 / (1 + z/2)` (P fitted on
/// `[0, 4]`, 1.2e-8 relative; beyond 4 the value is below 2e-8). The exact square keeps `e^(-z²)` accurate
/// where `z²` is large.
#[inline(always)]
fn erfc_nonneg(z: f32, z2: (f32, f32)) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z.min(4.0));
    let p = horner(
        t,
        [
            -0.000_455_819_809_468_633_7,
            0.289_683_718_305_419_67,
            0.227_098_557_007_466_98,
            0.473_369_549_612_132_96,
            -0.402_203_179_093_425_7,
            1.012_177_929_147_379,
            -0.888_108_001_682_272_8,
            0.338_156_162_862_777_17,
            -0.049_718_904_514_271_876,
        ],
    );
    // Once e^{-z²} is 0 the result is 0: past z ≈ 10, where z² overflows, `1 - lo` would be infinite.
    let e = exp_nonpositive(-z2.0);
    if e == 0.0 { 0.0 } else { e * (1.0 - z2.1) * p }
}

/// The error function, within 2 ulp.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let a2 = x * x;
    // erf(x) = x·P(x²) with P(0) = 2/√π = 1 + 0.1283…: adding x to x·(P - 1) keeps the rounding of the
    // polynomial's large leading term out of the result.
    let p = horner(
        a2,
        [
            0.128_379_165_580_761,
            -0.376_126_252_590_761_27,
            0.112_835_800_347_506_76,
            -0.026_853_624_951_431_32,
            0.005_188_003_663_616_721,
            -0.000_800_753_372_168_432_1,
            7.845_527_231_357_775e-5,
        ],
    );
    let small = x.mul_add(p, x);
    let large = (1.0 - erfc_nonneg(a, square_exact(a))).copysign(x);
    if a < 1.0 {
        small
    } else if x.is_nan() {
        x
    } else {
        large
    }
}

/// GELU with the exact normal CDF, `x·Φ(x)`, as PyTorch writes it (`x·(1 + erf(x/√2))/2`) but computed as
/// `x - x·erfc(|x|/√2)/2` or `x·erfc(|x|/√2)/2`: one branch, no cancellation for negative `x` (within
/// 8 ulp; PyTorch's own f32 GELU loses far more there, to the cancellation in `1 + erf`).
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    let a = x.abs();
    let (hi, lo) = square_exact(a);
    let half_e = 0.5 * erfc_nonneg(a * std::f32::consts::FRAC_1_SQRT_2, (0.5 * hi, 0.5 * lo));
    if x >= 0.0 { x - x * half_e } else { x * half_e }
}

#[cfg(test)]
mod tests {
    /// Distance in units in the last place between `got` and the correctly rounded `want`.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if got == w || (got.is_nan() && w.is_nan()) {
            return 0.0;
        }
        let ulp = if w == 0.0 {
            f32::from_bits(1) as f64
        } else {
            (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64
        };
        (got as f64 - want).abs() / ulp
    }

    fn sweep(lo: f32, hi: f32, n: usize) -> impl Iterator<Item = f32> {
        (0..=n).map(move |i| lo + (hi - lo) * i as f32 / n as f32)
    }

    /// Asserts that `f` is within `bound` ulp of the exact `g` at every point.
    fn assert_within(bound: f64, f: impl Fn(f32) -> f32, g: impl Fn(f64) -> f64, points: impl Iterator<Item = f32>) {
        let (u, x) = points
            .map(|x| (ulps(f(x), g(x as f64)), x))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        assert!(u <= bound, "{u} ulp at {x}");
    }

    #[test]
    fn exp_is_within_2_ulp() {
        assert_within(2.0, super::exp, f64::exp, sweep(-103.9, 88.7, 400_000));
        assert_eq!(super::exp(89.0), f32::INFINITY);
        assert_eq!(super::exp(-105.0), 0.0);
        assert!(super::exp(f32::NAN).is_nan());
        assert_eq!(super::exp(0.0), 1.0);
        assert!(super::exp_nonpositive(f32::NAN).is_nan());
        assert_eq!(super::exp_nonpositive(-105.0), 0.0);
        assert_eq!(super::exp_nonpositive(f32::NEG_INFINITY), 0.0);
        assert_eq!(super::exp_nonpositive(0.0), 1.0);
        for x in sweep(-103.9, 0.0, 200_001) {
            assert_eq!(super::exp_nonpositive(x), super::exp(x), "{x}");
        }
    }

    #[test]
    fn exp_m1_is_within_2_ulp() {
        assert_within(
            2.0,
            super::exp_m1,
            f64::exp_m1,
            sweep(-20.0, 20.0, 200_000).chain(sweep(-1e-3, 1e-3, 10_000)),
        );
    }

    #[test]
    fn ln_is_within_2_ulp() {
        assert_within(
            2.0,
            super::ln,
            f64::ln,
            sweep(1e-30, 10.0, 200_000).chain(sweep(1.0, 1e30, 200_000)),
        );
        let sub = f32::from_bits(1000);
        assert!(ulps(super::ln(sub), (sub as f64).ln()) <= 2.0);
        assert_eq!(super::ln(0.0), f32::NEG_INFINITY);
        assert!(super::ln(-1.0).is_nan());
    }

    #[test]
    fn ln_1p_is_within_2_ulp() {
        assert_within(
            2.0,
            super::ln_1p,
            f64::ln_1p,
            sweep(-0.99, 10.0, 200_000)
                .chain(sweep(-1e-4, 1e-4, 10_000))
                .chain(sweep(10.0, 1e9, 10_000)),
        );
        assert_eq!(super::ln_1p(-1.0), f32::NEG_INFINITY);
        assert!(super::ln_1p(-1.5).is_nan());
        assert_eq!(super::ln_1p(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn tanh_is_within_2_ulp() {
        assert_within(
            2.0,
            super::tanh,
            f64::tanh,
            sweep(-20.0, 20.0, 400_000).chain(sweep(-1e-3, 1e-3, 10_000)),
        );
        assert_eq!(super::tanh(100.0), 1.0);
    }

    #[test]
    fn gelu_is_within_8_ulp() {
        let exact = |x: f64| x * 0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2);
        assert_within(8.0, super::gelu, exact, sweep(-5.0, 10.0, 400_000));
        assert!(super::gelu(f32::NAN).is_nan());
        assert_eq!(super::gelu(-20.0), -0.0);
    }

    #[test]
    fn log1p_exp_is_within_2_ulp() {
        let exact = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
        assert_within(2.0, super::log1p_exp, exact, sweep(-80.0, 80.0, 400_000));
        assert!(super::log1p_exp(f32::NAN).is_nan());
    }

    #[test]
    fn erf_is_within_2_ulp() {
        assert_within(
            2.0,
            super::erf,
            libm::erf,
            sweep(-6.0, 6.0, 400_000).chain(sweep(-1e-3, 1e-3, 10_000)),
        );
    }
}
