//! Reuse of large host buffers, so that a loop calling an out-of-place operation on the same shapes does not
//! pay the kernel's page faults (and zeroing) for fresh memory on every call.
//!
//! When the storage of a buffer of at least [`MIN_BYTES`] is dropped, the buffer is kept (up to
//! [`CAPACITY_BYTES`] in all, oldest dropped first); an operation that will overwrite every element of a new
//! buffer of the same dtype and length takes it back. [`empty_cache`] frees them all, as PyTorch's
//! `torch.cuda.empty_cache()` does for its caching allocator.

use parking_lot::Mutex;

use super::storage::CpuData;
use crate::DType;

/// Buffers smaller than this are not kept (the allocator serves them from its free lists). Above it, glibc's
/// allocator returns freed memory to the system and a new buffer pays a page fault per 4 KiB: a third of the
/// DynamicsNetwork's forward at batch 256 (buffers of 147 KB) went to page faults before they were kept.
pub const MIN_BYTES: usize = 1 << 16;
/// At most this many buffers are kept.
const CAPACITY_BUFFERS: usize = 256;
/// At most this many bytes are kept.
pub const CAPACITY_BYTES: usize = 1 << 29;

static POOL: Mutex<Vec<CpuData>> = Mutex::new(Vec::new());

fn bytes(d: &CpuData) -> usize {
    d.len() * d.dtype().size_in_bytes()
}

/// Keeps `data` for reuse if it is large; drops it otherwise.
pub(crate) fn give(data: CpuData) {
    let size = bytes(&data);
    if !(MIN_BYTES..=CAPACITY_BYTES).contains(&size) {
        return;
    }
    let mut pool = POOL.lock();
    let mut total: usize = pool.iter().map(bytes).sum::<usize>() + size;
    while (total > CAPACITY_BYTES || pool.len() >= CAPACITY_BUFFERS) && !pool.is_empty() {
        total -= bytes(&pool.remove(0));
    }
    pool.push(data);
}

/// A kept buffer of `dtype` and `len` elements, holding stale values, if there is one.
pub(crate) fn take(dtype: DType, len: usize) -> Option<CpuData> {
    if len * dtype.size_in_bytes() < MIN_BYTES {
        return None;
    }
    let mut pool = POOL.lock();
    let i = pool.iter().rposition(|d| d.dtype() == dtype && d.len() == len)?;
    Some(pool.swap_remove(i))
}

/// Frees every kept buffer.
///
/// ```
/// nn::tensor::empty_cache();
/// ```
pub fn empty_cache() {
    POOL.lock().clear();
}
