//! [`Generator`]: PyTorch's CPU generator (`CPUGeneratorImpl`): the Mersenne twister, its 32- and 64-bit
//! draws, the cached second sample of the Box-Muller normal, and the state `get_rng_state` stores.

use super::mt19937::{Mt19937, STATE_WORDS};
use crate::{Error, Result};

/// The seed of a generator no one has seeded: PyTorch's `default_rng_seed_val`.
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// A random stream that draws PyTorch's numbers: `torch.Generator().manual_seed(seed)`.
///
/// Every draw of the library (the tensor constructors, `nn::init`, the layers' initialisation, dropout)
/// consumes it as PyTorch's CPU kernels consume theirs, so the same seed gives PyTorch's tensors bit for bit.
///
/// ```
/// use nn::random::Generator;
/// let mut g = Generator::new(0);
/// // torch.Generator().manual_seed(0); torch.randint(0, 2**32, (1,), generator=g) draws one 32-bit word.
/// assert_eq!(g.random(), 2_357_136_044);
/// let state = g.state_bytes();
/// let a = g.random64();
/// g.set_state_bytes(&state)?;
/// assert_eq!(g.random64(), a);
/// # Ok::<(), nn::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Generator {
    engine: Mt19937,
    next_double_normal: Option<f64>,
    next_float_normal: Option<f32>,
}

impl Default for Generator {
    /// `torch.Generator()`: seeded with [`DEFAULT_SEED`].
    fn default() -> Generator {
        Generator::new(DEFAULT_SEED)
    }
}

/// Bytes of PyTorch's `CPUGeneratorImplState`, the state `get_rng_state` returns.
pub const STATE_BYTES: usize = 5056;
/// Bytes of the legacy `THGeneratorState` (no float normal sample), which `set_rng_state` also takes.
const LEGACY_STATE_BYTES: usize = 5048;
/// Offsets of the fields in the state.
const LEFT: usize = 8;
const SEEDED: usize = 12;
const NEXT: usize = 16;
const WORDS: usize = 24;
const NORMAL_X: usize = WORDS + 8 * STATE_WORDS;
const NORMAL_Y: usize = NORMAL_X + 8;
const NORMAL_RHO: usize = NORMAL_Y + 8;
const NORMAL_IS_VALID: usize = NORMAL_RHO + 8;
const FLOAT_NORMAL: usize = LEGACY_STATE_BYTES;
const FLOAT_NORMAL_IS_VALID: usize = FLOAT_NORMAL + 4;

impl Generator {
    /// A generator seeded with `seed`, as `torch.Generator().manual_seed(seed)`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            engine: Mt19937::new(seed),
            next_double_normal: None,
            next_float_normal: None,
        }
    }

    /// Reseeds it (`Generator.manual_seed`): the stream starts again from `seed`, the cached normal sample
    /// dropped.
    pub fn manual_seed(&mut self, seed: u64) -> &mut Generator {
        *self = Generator::new(seed);
        self
    }

    /// The seed it was built from (`Generator.initial_seed`).
    pub fn initial_seed(&self) -> u64 {
        self.engine.seed
    }

    /// 32 random bits (PyTorch's `random()`).
    #[inline]
    pub fn random(&mut self) -> u32 {
        self.engine.next_u32()
    }

    /// 64 random bits from two draws, the first the high word (PyTorch's `random64()`).
    #[inline]
    pub fn random64(&mut self) -> u64 {
        let high = self.engine.next_u32();
        let low = self.engine.next_u32();
        (u64::from(high) << 32) | u64::from(low)
    }

    /// One sample uniform in `[0, 1)` with 53 random bits (`uniform_real_distribution<double>(0, 1)`).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        unit_f64(self.random64())
    }

    /// One sample uniform in `[low, high)` (`uniform_real_distribution<double>(low, high)`).
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        self.unit().mul_add(high - low, low)
    }

    /// One sample of the standard normal distribution as PyTorch's scalar sampler draws it
    /// (`normal_distribution<double>`): Box-Muller from two 53-bit uniforms, the second sample cached for the
    /// next call.
    pub fn normal(&mut self) -> f64 {
        if let Some(cached) = self.next_double_normal.take() {
            return cached;
        }
        let u1 = self.unit();
        let u2 = self.unit();
        let r = (-2.0 * (-u2).ln_1p()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * u1;
        self.next_double_normal = Some(r * theta.sin());
        r * theta.cos()
    }

    /// A fresh 64-bit seed drawn from this stream (one `random64()`).
    pub fn next_seed(&mut self) -> u64 {
        self.random64()
    }

    /// The state's [`STATE_BYTES`] bytes, laid out as PyTorch's `CPUGeneratorImplState` (the elements of
    /// [`get_state`](Self::get_state)'s tensor), so a state saved by either library restores in the other.
    pub fn state_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; STATE_BYTES];
        let e = &self.engine;
        bytes[..8].copy_from_slice(&e.seed.to_le_bytes());
        bytes[LEFT..LEFT + 4].copy_from_slice(&e.left.to_le_bytes());
        bytes[SEEDED..SEEDED + 4].copy_from_slice(&i32::from(e.seeded).to_le_bytes());
        bytes[NEXT..NEXT + 8].copy_from_slice(&u64::from(e.next).to_le_bytes());
        for (i, word) in e.state.iter().enumerate() {
            bytes[WORDS + 8 * i..WORDS + 8 * i + 8].copy_from_slice(&u64::from(*word).to_le_bytes());
        }
        if let Some(sample) = self.next_double_normal {
            bytes[NORMAL_IS_VALID..NORMAL_IS_VALID + 4].copy_from_slice(&1i32.to_le_bytes());
            bytes[NORMAL_Y..NORMAL_Y + 8].copy_from_slice(&sample.to_le_bytes());
        }
        if let Some(sample) = self.next_float_normal {
            bytes[FLOAT_NORMAL_IS_VALID] = 1;
            bytes[FLOAT_NORMAL..FLOAT_NORMAL + 4].copy_from_slice(&sample.to_le_bytes());
        }
        bytes
    }

    /// Restores a state [`state_bytes`](Self::state_bytes) (or PyTorch's) gave, or its legacy 5,048-byte
    /// form; anything else is PyTorch's error and leaves the generator as it was.
    pub fn set_state_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        *self = Generator::from_state_bytes(bytes)?;
        Ok(())
    }

    /// The generator a state's bytes describe ([`set_state`](Self::set_state)).
    fn from_state_bytes(bytes: &[u8]) -> Result<Generator> {
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let i32_at = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let f64_at = |at: usize| f64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let (legacy, current) = (bytes.len() == LEGACY_STATE_BYTES, bytes.len() == STATE_BYTES);
        if !legacy && !current {
            return Err(Error::invalid(
                "set_state",
                format!(
                    "Expected either a CPUGeneratorImplStateLegacy of size {LEGACY_STATE_BYTES} or a \
                     CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state size to be {}",
                    bytes.len()
                ),
            ));
        }
        let mut state = [0u32; STATE_WORDS];
        for (i, word) in state.iter_mut().enumerate() {
            *word = u64_at(WORDS + 8 * i) as u32;
        }
        let engine = Mt19937 {
            seed: u64_at(0),
            left: i32_at(LEFT),
            seeded: i32_at(SEEDED) != 0,
            next: u64_at(NEXT) as u32,
            state,
        };
        if !engine.is_valid() {
            return Err(Error::invalid("set_state", "Invalid mt19937 state"));
        }
        let normal_is_valid = i32_at(NORMAL_IS_VALID) != 0;
        let next_double_normal = match (normal_is_valid, legacy) {
            (false, _) => None,
            // The legacy state keeps the pair's uniform and radius; the cached sample is their sine form.
            (true, true) => Some(f64_at(NORMAL_RHO) * (2.0 * std::f64::consts::PI * f64_at(NORMAL_X)).sin()),
            (true, false) => Some(f64_at(NORMAL_Y)),
        };
        let next_float_normal = (current && bytes[FLOAT_NORMAL_IS_VALID] != 0)
            .then(|| f32::from_le_bytes(bytes[FLOAT_NORMAL..FLOAT_NORMAL + 4].try_into().expect("4 bytes")));
        Ok(Generator {
            engine,
            next_double_normal,
            next_float_normal,
        })
    }
}

/// A uniform in `[0, 1)` from the low 53 bits of `bits` (`transformation::uniform_real<double>`).
pub(crate) fn unit_f64(bits: u64) -> f64 {
    (bits & ((1u64 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64)
}
