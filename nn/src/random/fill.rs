//! The streams PyTorch's CPU kernels draw, element for element and in each float type they draw in
//! (`aten/src/ATen/native/cpu/DistributionTemplates.h`, `TensorFactories.cpp`): `uniform_`, `normal_`'s fill
//! (the Box-Muller of 16 elements at a time PyTorch takes for 16 or more elements), `random_(from, to)` and
//! `randperm`. The tensor part picks one by dtype.

use half::{bf16, f16};

use super::{Generator, cephes};

/// `n` draws of `uniform_real_distribution<double>(from, to)`: 53 random bits each.
pub(crate) fn uniform_f64(g: &mut Generator, out: &mut Vec<f64>, n: usize, from: f64, to: f64) {
    out.extend((0..n).map(|_| g.uniform(from, to)));
}

/// `n` draws of `uniform_real_distribution<float>(from, to)`: 24 random bits each, scaled with one fused
/// multiply-add as PyTorch's x86-64 builds compile it.
pub(crate) fn uniform_f32(g: &mut Generator, out: &mut Vec<f32>, n: usize, from: f32, to: f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has FMA (just checked), the one extension `uniform_f32_fma` is compiled with.
        return unsafe { uniform_f32_fma(g, out, n, from, to) };
    }
    uniform_f32_body(g, out, n, from, to);
}

/// [`uniform_f32`] compiled with FMA instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn uniform_f32_fma(g: &mut Generator, out: &mut Vec<f32>, n: usize, from: f32, to: f32) {
    uniform_f32_body(g, out, n, from, to);
}

/// [`uniform_f32`]'s loop, inlined into each compiled form.
#[inline(always)]
fn uniform_f32_body(g: &mut Generator, out: &mut Vec<f32>, n: usize, from: f32, to: f32) {
    out.extend((0..n).map(|_| unit_f32(g.random()).mul_add(to - from, from)));
}

/// `n` normals of `normal_fill<double>`.
pub(crate) fn normal_f64(g: &mut Generator, out: &mut Vec<f64>, n: usize, mean: f64, std: f64) {
    box_muller(g, out, n, mean, std, |g| g.unit(), block_f64);
}

/// `n` normals of PyTorch's AVX2 fill in `f32`.
pub(crate) fn normal_f32(g: &mut Generator, out: &mut Vec<f32>, n: usize, mean: f32, std: f32) {
    box_muller(g, out, n, mean, std, |g| unit_f32(g.random()), block_f32);
}

/// `n` normals of `normal_fill<T>` for a half-precision `T`; `mean` and `std` already rounded to `T`.
pub(crate) fn normal_reduced<T: Reduced>(g: &mut Generator, out: &mut Vec<T>, n: usize, mean: T, std: T) {
    box_muller(g, out, n, mean, std, reduced_unit::<T>, block_reduced::<T>);
}

/// PyTorch's `normal_fill`, appended to `out`: `n` uniforms drawn by `unit`, each block of 16 turned into
/// normals by `block`, and when 16 does not divide `n` the last 16 drawn again and turned.
fn box_muller<T: Copy>(
    g: &mut Generator,
    out: &mut Vec<T>,
    n: usize,
    mean: T,
    std: T,
    unit: impl Fn(&mut Generator) -> T,
    block: fn(&mut [T], T, T),
) {
    let start = out.len();
    out.extend((0..n).map(|_| unit(g)));
    let data = &mut out[start..];
    for chunk in data.chunks_exact_mut(16) {
        block(chunk, mean, std);
    }
    if !n.is_multiple_of(16) {
        let tail = &mut data[n - 16..];
        for value in tail.iter_mut() {
            *value = unit(g);
        }
        block(tail, mean, std);
    }
}

/// `normal_fill_16<double>`: uniforms `d[j]`, `d[j + 8]` into the pair of normals at `j` and `j + 8`, the
/// scaling fused as GCC fuses `radius * cos(theta) * std + mean`.
fn block_f64(d: &mut [f64], mean: f64, std: f64) {
    for j in 0..8 {
        let u1 = 1.0 - d[j];
        let u2 = d[j + 8];
        let radius = (-2.0 * u1.ln()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * u2;
        d[j] = (radius * theta.cos()).mul_add(std, mean);
        d[j + 8] = (radius * theta.sin()).mul_add(std, mean);
    }
}

/// `normal_fill_16_AVX2`, one lane at a time: Cephes' logarithm and sine-cosine ([`cephes`]), the angle
/// formed in `f32`, the scaling one fused multiply-add. With the CPU's FMA instructions where it has them (the
/// same results: `mul_add` rounds once either way, in hardware or in `libm`).
fn block_f32(d: &mut [f32], mean: f32, std: f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has FMA and AVX2 (just checked), the extensions `block_f32_fma` is compiled with.
        return unsafe { block_f32_fma(d, mean, std) };
    }
    block_f32_body(d, mean, std);
}

/// [`block_f32`] compiled with FMA and AVX2 instructions (its 8 lanes in one vector).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn block_f32_fma(d: &mut [f32], mean: f32, std: f32) {
    block_f32_body(d, mean, std);
}

/// [`block_f32`]'s arithmetic, inlined into each compiled form.
#[inline(always)]
fn block_f32_body(d: &mut [f32], mean: f32, std: f32) {
    let two_pi = (2.0 * std::f64::consts::PI) as f32;
    let (first, second) = d.split_at_mut(8);
    for (a, b) in first.iter_mut().zip(second.iter_mut()) {
        let radius = (-2.0 * cephes::log(1.0 - *a)).sqrt();
        let (sin, cos) = cephes::sin_cos(two_pi * *b);
        *a = (radius * cos).mul_add(std, mean);
        *b = (radius * sin).mul_add(std, mean);
    }
}

/// A half-precision float as PyTorch's `c10::Half` and `c10::BFloat16` compute with it: every operation in
/// `f32`, its result rounded to the type.
pub(crate) trait Reduced: Copy {
    /// Random bits of a uniform (`std::numeric_limits<T>::digits`).
    const DIGITS: u32;
    fn from_f32(v: f32) -> Self;
    fn to_f32(self) -> f32;
    /// `v` rounded to the type, back in `f32`.
    fn round(v: f32) -> f32 {
        Self::from_f32(v).to_f32()
    }
}

/// [`Reduced`] for a `half` type with `digits` random bits per uniform.
macro_rules! reduced {
    ($($t:ident: $digits:expr),*) => {$(
        impl Reduced for $t {
            const DIGITS: u32 = $digits;
            fn from_f32(v: f32) -> Self {
                $t::from_f32(v)
            }
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
        }
    )*};
}
reduced!(f16: 11, bf16: 8);

/// `uniform_real<T>` of 32 random bits: the low `DIGITS` bits scaled to `[0, 1)`, in `f32`.
fn reduced_bits<T: Reduced>(bits: u32) -> f32 {
    (bits & ((1u32 << T::DIGITS) - 1)) as f32 * (1.0 / (1u32 << T::DIGITS) as f32)
}

/// One `uniform_real_distribution<T>(0, 1)` draw.
fn reduced_unit<T: Reduced>(g: &mut Generator) -> T {
    T::from_f32(reduced_bits::<T>(g.random()))
}

/// `n` draws of `uniform_real_distribution<T>(from, to)`: the bounds cast to `T` through `f32`, their
/// difference rounded to `T`, the sample formed in `f32` and rounded.
pub(crate) fn uniform_reduced<T: Reduced>(g: &mut Generator, out: &mut Vec<T>, n: usize, from: f64, to: f64) {
    let (from, to) = (T::round(from as f32), T::round(to as f32));
    let span = T::round(to - from);
    out.extend((0..n).map(|_| T::from_f32(reduced_bits::<T>(g.random()) * span + from)));
}

/// `normal_fill_16<T>` for a half-precision `T`: each operation's result rounded to `T`, as `c10::Half`'s and
/// `c10::BFloat16`'s operators and math functions round them.
fn block_reduced<T: Reduced>(d: &mut [T], mean: T, std: T) {
    let (mean, std) = (mean.to_f32(), std.to_f32());
    for j in 0..8 {
        let u1 = T::round(1.0 - d[j].to_f32());
        let u2 = d[j + 8].to_f32();
        let radius = T::round(T::round(-2.0 * T::round(u1.ln())).sqrt());
        let theta = T::round((2.0 * std::f64::consts::PI * f64::from(u2)) as f32);
        let (cos, sin) = (T::round(theta.cos()), T::round(theta.sin()));
        d[j] = T::from_f32(T::round(T::round(radius * cos) * std) + mean);
        d[j + 8] = T::from_f32(T::round(T::round(radius * sin) * std) + mean);
    }
}

/// `uniform_real<float>` of 32 random bits: the low 24 scaled to `[0, 1)`.
pub(crate) fn unit_f32(bits: u32) -> f32 {
    (bits & 0x00ff_ffff) as f32 * (1.0 / 16_777_216.0)
}

/// `n` integers uniform in `[from, from + range)` (wrapping), as `random_(from, to)` draws them: a 32-bit draw
/// modulo the range, or a 64-bit one where `wide` (PyTorch's rule: the range needs it and the dtype is
/// `int64`, `float64`, `float32` or `bfloat16`).
pub(crate) fn integers(g: &mut Generator, out: &mut Vec<i64>, n: usize, from: i64, range: u64, wide: bool) {
    out.extend((0..n).map(|_| {
        let bits = if wide { g.random64() } else { u64::from(g.random()) };
        (bits % range).wrapping_add(from as u64) as i64
    }));
}

/// A random permutation of `0..n`, as `torch.randperm(n)`: PyTorch's swaps from 32-bit draws, or for `n` of
/// 2³²/20 or more its inside-out shuffle from 64-bit draws.
pub(crate) fn randperm(g: &mut Generator, out: &mut Vec<i64>, n: usize) {
    let start = out.len();
    out.extend(0..n as i64);
    let r = &mut out[start..];
    if (n as u64) < u64::from(u32::MAX) / 20 {
        for i in 0..n.saturating_sub(1) {
            let z = (u64::from(g.random()) % (n - i) as u64) as usize;
            r.swap(i, z + i);
        }
        return;
    }
    for i in 0..n {
        let z = (g.random64() % (i as u64 + 1)) as usize;
        r[i] = r[z];
        r[z] = i as i64;
    }
}

/// `n` draws of `cauchy_distribution<double>(median, sigma)`: `median + sigma·tan(π(u − ½))` of a 53-bit
/// uniform, the product and sum fused as PyTorch's build fuses them.
pub(crate) fn cauchy(g: &mut Generator, out: &mut Vec<f64>, n: usize, median: f64, sigma: f64) {
    out.extend((0..n).map(|_| sigma.mul_add((std::f64::consts::PI * (g.unit() - 0.5)).tan(), median)));
}

/// `n` draws of `lognormal_distribution<double>(mean, std)`: `exp` of the scalar normal sampler's draws
/// ([`Generator::normal`], its cached second sample included).
pub(crate) fn log_normal(g: &mut Generator, out: &mut Vec<f64>, n: usize, mean: f64, std: f64) {
    out.extend((0..n).map(|_| g.normal().mul_add(std, mean).exp()));
}

/// `n` draws of `geometric_distribution<double>(p)`: the number of trials to the first success,
/// `⌈ln(u) / ln(1 − p)⌉` of a 53-bit uniform.
pub(crate) fn geometric(g: &mut Generator, out: &mut Vec<f64>, n: usize, p: f64) {
    out.extend((0..n).map(|_| (g.unit().ln() / (-p).ln_1p()).ceil()));
}
