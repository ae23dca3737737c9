//! The stream PyTorch's x86-64 wheels draw `bernoulli_(p)` (and so dropout) and `exponential_` from: MKL's
//! `VSL_BRNG_MCG31`, a multiplicative congruential generator modulo 2³¹ − 1, seeded with one draw of the
//! generator. For `bernoulli_scalar_kernel` element `i` is 1 where the stream's `i`-th uniform is below `p`
//! (`viRngBernoulli`'s inverse CDF); for `exponential_kernel` it is `-ln(u) / lambda` (`v?RngExponential`'s
//! inverse CDF), where MKL's vector logarithm rounds a few samples differently from a correctly rounded one:
//! within 2 units in the last place in `f32`, 4·10⁻¹⁰ relative in `f64`.

use super::Generator;

const MODULUS: u64 = (1 << 31) - 1;
const MULTIPLIER: u64 = 1_132_489_760;

/// MCG31's state: `x`, whose uniform is `x / (2³¹ − 1)`.
struct Mcg31 {
    x: u64,
}

impl Mcg31 {
    /// The stream MKL's `vslNewStream(VSL_BRNG_MCG31, seed)` starts: `seed mod (2³¹ − 1)`, 1 for 0.
    fn new(seed: u32) -> Mcg31 {
        let x = u64::from(seed) % MODULUS;
        Mcg31 {
            x: if x == 0 { 1 } else { x },
        }
    }

    /// The next state, in `1..2³¹ − 1`.
    fn next_state(&mut self) -> u64 {
        let x = self.x;
        self.x = self.x * MULTIPLIER % MODULUS;
        x
    }

    /// The next uniform in `(0, 1)`.
    fn next_unit(&mut self) -> f64 {
        self.next_state() as f64 / MODULUS as f64
    }

    /// The next uniform in `(0, 1]`, in single precision (`vsRng*`'s).
    fn next_unit_f32(&mut self) -> f32 {
        self.next_state() as f32 / MODULUS as f32
    }
}

/// `n` Bernoulli draws of probability `p` appended to `out`, as `torch.empty(n).bernoulli_(p)` draws them
/// (one 32-bit draw of `g` seeds the stream).
pub(crate) fn bernoulli(g: &mut Generator, out: &mut Vec<bool>, n: usize, p: f64) {
    let mut stream = Mcg31::new(g.random());
    out.extend((0..n).map(|_| stream.next_unit() < p));
}

/// `n` samples of the exponential distribution of rate `lambda` appended to `out`, as
/// `torch.empty(n).exponential_(lambda)` draws them in `f32` (and, rounded, in the half types): one 32-bit draw
/// of `g` seeds the stream, none for `n == 0`.
pub(crate) fn exponential_f32(g: &mut Generator, out: &mut Vec<f32>, n: usize, lambda: f64) {
    if n == 0 {
        return;
    }
    let mut stream = Mcg31::new(g.random());
    let beta = (1.0 / lambda) as f32;
    out.extend((0..n).map(|_| -stream.next_unit_f32().ln() * beta));
}

/// [`exponential_f32`] in `f64`: a 64-bit draw of `g` seeds the stream (MKL keeps its low 32 bits).
pub(crate) fn exponential_f64(g: &mut Generator, out: &mut Vec<f64>, n: usize, lambda: f64) {
    if n == 0 {
        return;
    }
    let mut stream = Mcg31::new(g.random64() as u32);
    let beta = 1.0 / lambda;
    out.extend((0..n).map(|_| -stream.next_unit().ln() * beta));
}
