//! PyTorch's random streams on the CPU: its Mersenne twister, and its kernels' way of turning the stream
//! into tensors, so that a seed gives PyTorch's numbers bit for bit.
//!
//! Like PyTorch, there is one default generator per process ([`manual_seed`] reseeds it; unseeded it starts
//! from PyTorch's default seed, [`generator::DEFAULT_SEED`]) and explicit [`Generator`]s for streams of one's
//! own. Threads share the default generator behind a lock: each draw (a whole tensor) takes it once, so draws
//! from several threads interleave tensor by tensor, in the order they take the lock. [`fork_rng`] runs code
//! and then puts the default generator back as it was; `nn::get_rng_state` and `nn::set_rng_state` save and
//! restore it in PyTorch's layout.
//!
//! What draws as PyTorch 2.5.1 on the CPU does, bit for bit: `rand`, `uniform_`, `randn`, `normal_` (for 16 or
//! more `f32` elements PyTorch's x86-64 builds fill with Cephes' AVX2 functions; builds without AVX2, as on
//! ARM, round a few of those elements differently), `randint`, `random_`, `randperm`, `bernoulli` and
//! `bernoulli_` (the scalar form from MKL's MCG31 stream, as PyTorch's x86-64 wheels draw it), dropout's
//! masks, `cauchy_`, `log_normal_`, `geometric_`, `multinomial` with replacement, `nn::init`'s functions,
//! every layer's initialisation and RReLU's slopes in training. Three go through MKL's closed numerics, so
//! they draw PyTorch's stream and leave the generator where PyTorch's leaves it, but their values are
//! PyTorch's only to its rounding (within `assert_close`'s defaults): `exponential_` (MKL's vector
//! logarithm: 71% of samples bit-equal) and `multinomial`'s fast path built on it (the same categories but
//! where two ratios lie within that rounding), `trunc_normal_` (MKL's `erfinv`: 98% bit-equal) and
//! `orthogonal_` (LAPACK's QR). A tensor on a device is drawn on the host and copied, so it holds what
//! PyTorch's CPU would draw (not its CUDA Philox stream).
//!
//! ```
//! nn::manual_seed(0);
//! let a = nn::Tensor::rand([3], nn::DType::F32);
//! // torch.manual_seed(0); torch.rand(3)
//! assert_eq!(a.to_vec::<f32>()?, vec![0.49625659, 0.76822180, 0.08847743]);
//! # Ok::<(), nn::Error>(())
//! ```

mod cephes;
pub(crate) mod fill;
mod generator;
pub(crate) mod mcg31;
mod mt19937;

pub use generator::{DEFAULT_SEED, Generator, STATE_BYTES};

use parking_lot::Mutex;

static DEFAULT: Mutex<Option<Generator>> = Mutex::new(None);

/// Seeds the default generator (`torch.manual_seed`), which layer initialisation, dropout and the tensor
/// constructors that take no generator draw from.
///
/// ```
/// nn::manual_seed(0);
/// let a = nn::Tensor::randn([3], nn::DType::F32);
/// nn::manual_seed(0);
/// let b = nn::Tensor::randn([3], nn::DType::F32);
/// assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
/// ```
pub fn manual_seed(seed: u64) {
    *DEFAULT.lock() = Some(Generator::new(seed));
}

/// The seed the default generator started from (`torch.initial_seed`).
///
/// ```
/// nn::manual_seed(42);
/// assert_eq!(nn::random::initial_seed(), 42);
/// ```
pub fn initial_seed() -> u64 {
    with_global(|g| g.initial_seed())
}

/// Runs `f`, then puts the default generator back as it was before (`torch.random.fork_rng`): what `f` draws
/// does not change what the code after it draws.
///
/// ```
/// nn::manual_seed(3);
/// let inside = nn::random::fork_rng(|| nn::Tensor::rand([2], nn::DType::F32));
/// let after = nn::Tensor::rand([2], nn::DType::F32);
/// assert_eq!(inside.to_vec::<f32>()?, after.to_vec::<f32>()?);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn fork_rng<R>(f: impl FnOnce() -> R) -> R {
    let saved = with_global(|g| g.clone());
    let result = f();
    *DEFAULT.lock() = Some(saved);
    result
}

/// Runs `f` with the default generator, holding its lock.
pub fn with_global<R>(f: impl FnOnce(&mut Generator) -> R) -> R {
    let mut guard = DEFAULT.lock();
    f(guard.get_or_insert_with(Generator::default))
}
