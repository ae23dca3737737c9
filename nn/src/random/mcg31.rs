//! The stream PyTorch's x86-64 wheels draw `bernoulli_(p)` (and so dropout) from: MKL's `VSL_BRNG_MCG31`, a
//! multiplicative congruential generator modulo 2³¹ − 1, seeded with one 32-bit draw of the generator
//! (`bernoulli_scalar_kernel`); element `i` is 1 where the stream's `i`-th uniform is below `p`
//! (`viRngBernoulli`'s inverse CDF).

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

    /// The next uniform in `(0, 1)`.
    fn next_unit(&mut self) -> f64 {
        let u = self.x as f64 / MODULUS as f64;
        self.x = self.x * MULTIPLIER % MODULUS;
        u
    }
}

/// `n` Bernoulli draws of probability `p` appended to `out`, as `torch.empty(n).bernoulli_(p)` draws them
/// (one 32-bit draw of `g` seeds the stream).
pub(crate) fn bernoulli(g: &mut Generator, out: &mut Vec<bool>, n: usize, p: f64) {
    let mut stream = Mcg31::new(g.random());
    out.extend((0..n).map(|_| stream.next_unit() < p));
}
