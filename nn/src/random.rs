//! Seedable random numbers for tensor constructors and layer initialisation.
//!
//! Like PyTorch, there is one global generator ([`manual_seed`] resets it) and explicit [`Generator`]s for
//! reproducible streams. The streams are ChaCha8: the same seed gives the same numbers on every platform (but
//! not PyTorch's numbers: PyTorch uses a Mersenne twister).

use parking_lot::Mutex;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// A reproducible random stream.
///
/// ```
/// use nn::random::Generator;
/// let mut a = Generator::new(7);
/// let mut b = Generator::new(7);
/// assert_eq!(a.uniform(0.0, 1.0), b.uniform(0.0, 1.0));
/// ```
#[derive(Clone, Debug)]
pub struct Generator {
    rng: ChaCha8Rng,
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// One sample of the standard normal distribution.
    pub fn normal(&mut self) -> f64 {
        StandardNormal.sample(&mut self.rng)
    }

    /// One sample uniform in `[low, high)`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.rng.random::<f64>()
    }

    /// One sample uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// A fresh 64-bit seed drawn from this stream.
    pub fn next_seed(&mut self) -> u64 {
        self.rng.random::<u64>()
    }
}

static GLOBAL: Mutex<Option<Generator>> = Mutex::new(None);

/// Seeds the global generator used by layer initialisation, [`Dropout`](crate::layers::Dropout) and the
/// tensor constructors that take no generator.
///
/// ```
/// nn::manual_seed(0);
/// let a = nn::Tensor::randn([3], nn::DType::F32);
/// nn::manual_seed(0);
/// let b = nn::Tensor::randn([3], nn::DType::F32);
/// assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
/// ```
pub fn manual_seed(seed: u64) {
    *GLOBAL.lock() = Some(Generator::new(seed));
}

/// Runs `f` with the global generator (seeded with 0 until [`manual_seed`] is called).
pub fn with_global<R>(f: impl FnOnce(&mut Generator) -> R) -> R {
    let mut guard = GLOBAL.lock();
    f(guard.get_or_insert_with(|| Generator::new(0)))
}
