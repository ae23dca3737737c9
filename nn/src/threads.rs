//! The one thread pool all CPU work runs on, and the number of threads an operation may use (PyTorch's
//! `torch.set_num_threads` / `torch.get_num_threads`).
//!
//! The pool is rayon's, built on first use with as many threads as the machine has cores, and the thread that
//! builds it is its worker 0: when that thread (usually the program's main thread) runs an operation that
//! splits, it computes one part itself while the other workers take the rest, as an OpenMP team does, instead
//! of handing all of it over and sleeping until it is done. Another thread's operation hands its parts to the
//! pool's workers and waits. An operation splits only where its work is large enough to pay for the hand-off
//! (each kind of loop has its threshold, set where the DynamicsNetwork's bench measured a split to pay), into
//! at most [`get_num_threads`] parts; work already running on a part does not split again.
//!
//! ```
//! nn::set_num_threads(1); // every operation on the calling thread
//! assert_eq!(nn::get_num_threads(), 1);
//! nn::set_num_threads(0); // back to the default: one thread per core
//! assert!(nn::get_num_threads() >= 1);
//! ```

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use rayon::prelude::*;

/// The threads an operation may use; 0 means the default, one per core.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread is running a part of a split operation (which then does not split again).
    static IN_PART: Cell<bool> = const { Cell::new(false) };
}

/// The machine's cores, as the standard library counts them (at least 1), read once: counting them reads the
/// cgroup's CPU quota from files, which cost a fifth of a model's forward when done per operation.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Sets how many threads an operation may use, as `torch.set_num_threads` does; `0` restores the default (one
/// per core). More threads than the machine has cores are capped at the core count.
pub fn set_num_threads(threads: usize) {
    LIMIT.store(threads, Ordering::Relaxed);
}

/// How many threads an operation may use (`torch.get_num_threads`).
pub fn get_num_threads() -> usize {
    match LIMIT.load(Ordering::Relaxed) {
        0 => cores(),
        n => n.min(cores()),
    }
}

/// nn's pool: `None` on a machine of one core, or where no thread could be started.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = cores();
        if threads < 2 {
            return None;
        }
        let builder = || {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("nn-worker-{i}"))
        };
        // The building thread as worker 0, so that it computes a part of its own operations. It cannot be
        // when it already works for another rayon pool; then every worker is a new thread.
        builder()
            .use_current_thread()
            .build()
            .or_else(|_| builder().build())
            .ok()
    })
    .as_ref()
}

/// A copy of at least this many bytes per thread is split (memcpy, and reads from the page cache, which are
/// the kernel's copies). Measured with `cargo bench -p nn --bench copy` (2 cores, 2026-11-26): split in two, a
/// 512 KiB copy ran at 61 GiB/s against one thread's 79, a 1 MiB copy at 117 against 53.
pub(crate) const COPY_SPLIT_BYTES: usize = 512 << 10;

/// How many parts to split `work` units into when a part should hold at least `min_work` of them: at most
/// [`get_num_threads`], 1 when already on a part.
pub(crate) fn parts_for(work: usize, min_work: usize) -> usize {
    if IN_PART.with(Cell::get) {
        return 1;
    }
    (work / min_work.max(1)).clamp(1, get_num_threads())
}

/// Runs `f` as a part of a split operation: operations it calls do not split again.
fn as_part<R>(f: impl FnOnce() -> R) -> R {
    let outer = IN_PART.with(|p| p.replace(true));
    let result = f();
    IN_PART.with(|p| p.set(outer));
    result
}

/// A piece of a split loop not yet taken: its first element's index and its elements.
type Piece<'a, T> = (usize, &'a mut [T]);

/// Pieces per thread of a split loop: a worker that wakes late takes what is left, not a fixed half.
const PIECES_PER_THREAD: usize = 4;

/// Runs `f(first element, piece)` on pieces of `data` of whole `unit`-element units, on up to `parts`
/// threads (all of `data` at once on the calling thread when `parts` is 1).
///
/// The pieces are handed out one at a time, [`PIECES_PER_THREAD`] per thread: the calling thread starts on
/// them at once, and a worker that was asleep joins when it wakes (which takes tens of microseconds on a
/// virtual machine) and takes only the pieces left, so a split loop is never much slower than one thread's.
pub(crate) fn for_each_piece<T: Send>(data: &mut [T], unit: usize, parts: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let units = data.len().checked_div(unit).unwrap_or(0);
    let parts = parts.clamp(1, units.max(1));
    let Some(pool) = pool().filter(|_| parts > 1) else {
        f(0, data);
        return;
    };
    let per_piece = units.div_ceil((parts * PIECES_PER_THREAD).min(units)) * unit;
    let pieces: Vec<Mutex<Option<Piece<'_, T>>>> = data
        .chunks_mut(per_piece)
        .enumerate()
        .map(|(i, piece)| Mutex::new(Some((i * per_piece, piece))))
        .collect();
    let next = AtomicUsize::new(0);
    let work = || {
        as_part(|| {
            while let Some(piece) = pieces.get(next.fetch_add(1, Ordering::Relaxed)) {
                if let Some((at, piece)) = piece.lock().take() {
                    f(at, piece);
                }
            }
        })
    };
    run_on(pool, parts, &work);
}

/// Runs `work` on `parts` threads of `pool` (the calling thread among them). `work` is a trait object, so that
/// rayon's scheduling code is compiled once for the crate: generic over each loop's closure, it was about a
/// quarter of nn's generated code (`cargo llvm-lines`), for a call made once per loop.
fn run_on(pool: &rayon::ThreadPool, parts: usize, work: &(dyn Fn() + Sync)) {
    pool.install(|| (0..parts).into_par_iter().with_max_len(1).for_each(|_| work()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_is_visited_once_with_its_offset() {
        let mut data: Vec<usize> = vec![0; 1003];
        for parts in [1, 2, 3, 8] {
            data.iter_mut().for_each(|x| *x = 0);
            for_each_piece(&mut data, 1, parts, |at, piece| {
                for (i, x) in piece.iter_mut().enumerate() {
                    *x += at + i + 1;
                }
            });
            assert!(data.iter().enumerate().all(|(i, &x)| x == i + 1), "{parts} parts");
        }
    }

    #[test]
    fn a_part_does_not_split_again() {
        let inner = AtomicUsize::new(0);
        let mut data = [0u8; 64];
        for_each_piece(&mut data, 1, 2, |_, _| {
            inner.fetch_max(parts_for(1 << 30, 1), Ordering::Relaxed);
        });
        assert_eq!(inner.load(Ordering::Relaxed), 1);
    }
}
