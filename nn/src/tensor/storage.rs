//! Host buffers of every dtype, and the shared, lockable storage a tensor points to.

use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use half::{bf16, f16};
use parking_lot::RwLock;

use super::raw::Raw;
use crate::{DType, Device, Element, Error, Result};

/// Element types whose all-zero bit pattern is a valid value (zero, or `false`).
///
/// # Safety
/// An implementor must be a non-zero-sized type for which every byte being 0 is a valid, initialised value.
unsafe trait Zeroable: Sized {}

// SAFETY: for each of these, all-zero bytes are a valid value: +0.0 for the IEEE 754 floats (`f16` and `bf16`
// are `#[repr(transparent)]` over a `u16` bit pattern), 0 for the integers, `false` for `bool`; none is
// zero-sized.
unsafe impl Zeroable for f16 {}
// SAFETY: as above.
unsafe impl Zeroable for bf16 {}
// SAFETY: as above.
unsafe impl Zeroable for f32 {}
// SAFETY: as above.
unsafe impl Zeroable for f64 {}
// SAFETY: as above.
unsafe impl Zeroable for i64 {}
// SAFETY: as above.
unsafe impl Zeroable for i32 {}
// SAFETY: as above.
unsafe impl Zeroable for u8 {}
// SAFETY: as above.
unsafe impl Zeroable for bool {}

/// `n` zeros from the allocator's zeroed memory, as `vec![0; n]` gets them (no pass writing zeros), or `None`
/// where the allocator refuses, instead of `vec!`'s abort.
fn try_zeroed<T: Zeroable>(n: usize) -> Option<Vec<T>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    // SAFETY: `layout`'s size is non-zero: `n > 0` and `T` is not zero-sized (`Zeroable`'s contract).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with `Layout::array::<T>(n)`, which is the size and
    // alignment a `Vec<T>` of capacity `n` allocates with, so the `Vec` may own and free it; its `n` elements
    // are initialised, since the memory is zeroed and all-zero bytes are a valid `T` (`Zeroable`).
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// A host buffer: one typed `Vec` per dtype, so every element is aligned for its type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CpuData {
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}

/// Runs `$body` with `$v` bound to the typed `Vec` inside a [`CpuData`] (by reference, or by value).
macro_rules! with_cpu_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            CpuData::F16($v) => $body,
            CpuData::BF16($v) => $body,
            CpuData::F32($v) => $body,
            CpuData::F64($v) => $body,
            CpuData::I64($v) => $body,
            CpuData::I32($v) => $body,
            CpuData::U8($v) => $body,
            CpuData::Bool($v) => $body,
        }
    };
}
pub(crate) use with_cpu_data;

impl CpuData {
    pub(crate) fn dtype(&self) -> DType {
        match self {
            CpuData::F16(_) => DType::F16,
            CpuData::BF16(_) => DType::BF16,
            CpuData::F32(_) => DType::F32,
            CpuData::F64(_) => DType::F64,
            CpuData::I64(_) => DType::I64,
            CpuData::I32(_) => DType::I32,
            CpuData::U8(_) => DType::U8,
            CpuData::Bool(_) => DType::Bool,
        }
    }

    pub(crate) fn len(&self) -> usize {
        with_cpu_data!(self, v => v.len())
    }

    /// A buffer of `n` zeros (false for bool).
    pub(crate) fn zeros(dtype: DType, n: usize) -> CpuData {
        CpuData::try_zeros(dtype, n).unwrap_or_else(|| {
            panic!(
                "cannot allocate {n} elements of {dtype} ({} bytes): the allocator refused",
                n.saturating_mul(dtype.size_in_bytes())
            )
        })
    }

    /// A zeroed buffer of `n` elements, or `None` where the allocator refuses it (or its bytes overflow
    /// `isize::MAX`): the fallible form of [`zeros`](Self::zeros), which `vec![0; n]` has no form of.
    pub(crate) fn try_zeros(dtype: DType, n: usize) -> Option<CpuData> {
        Some(match dtype {
            DType::F16 => CpuData::F16(try_zeroed(n)?),
            DType::BF16 => CpuData::BF16(try_zeroed(n)?),
            DType::F32 => CpuData::F32(try_zeroed(n)?),
            DType::F64 => CpuData::F64(try_zeroed(n)?),
            DType::I64 => CpuData::I64(try_zeroed(n)?),
            DType::I32 => CpuData::I32(try_zeroed(n)?),
            DType::U8 => CpuData::U8(try_zeroed(n)?),
            DType::Bool => CpuData::Bool(try_zeroed(n)?),
        })
    }

    /// Sets every element to `value`, cast to the dtype as PyTorch's `fill_` does, in place.
    pub(crate) fn fill(&mut self, value: f64) {
        match self {
            CpuData::F16(v) => v.fill(f16::from_f64(value)),
            CpuData::BF16(v) => v.fill(Element::from_f64(value)),
            CpuData::F32(v) => v.fill(value as f32),
            CpuData::F64(v) => v.fill(value),
            CpuData::I64(v) => v.fill(value as i64),
            CpuData::I32(v) => v.fill(value as i32),
            CpuData::U8(v) => v.fill(Element::from_f64(value)),
            CpuData::Bool(v) => v.fill(value != 0.0),
        }
    }

    /// Wraps a typed vector.
    pub(crate) fn from_vec<T: Element>(v: Vec<T>) -> CpuData {
        let any: Box<dyn Any> = Box::new(v);
        macro_rules! take {
            ($any:expr, $($t:ty => $variant:ident),*) => {{
                let any = $any;
                $(let any = match any.downcast::<Vec<$t>>() {
                    Ok(v) => return CpuData::$variant(*v),
                    Err(any) => any,
                };)*
                drop(any);
                unreachable!("Element is implemented only for the eight dtypes' types")
            }};
        }
        take!(any, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64, i64 => I64, i32 => I32, u8 => U8, bool => Bool)
    }

    /// The elements as `&[T]` when `T` is this buffer's element type.
    pub(crate) fn as_slice<T: Element>(&self) -> Option<&[T]> {
        with_cpu_data!(self, v => (v as &dyn Any).downcast_ref::<Vec<T>>().map(|v| v.as_slice()))
    }

    /// The elements as `&mut [T]` when `T` is this buffer's element type.
    pub(crate) fn as_mut_slice<T: Element>(&mut self) -> Option<&mut [T]> {
        with_cpu_data!(self, v => (v as &mut dyn Any).downcast_mut::<Vec<T>>().map(|v| v.as_mut_slice()))
    }

    /// The raw little-endian bytes of the buffer, without a copy.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            CpuData::F16(v) => bytemuck::cast_slice(v),
            CpuData::BF16(v) => bytemuck::cast_slice(v),
            CpuData::F32(v) => bytemuck::cast_slice(v),
            CpuData::F64(v) => bytemuck::cast_slice(v),
            CpuData::I64(v) => bytemuck::cast_slice(v),
            CpuData::I32(v) => bytemuck::cast_slice(v),
            CpuData::U8(v) => v,
            CpuData::Bool(v) => bytemuck::cast_slice(v),
        }
    }

    /// Reads `n` elements of `dtype` (little-endian) from `reader` straight into a new aligned buffer: no
    /// intermediate copy. A size past `isize::MAX` bytes, or a bool byte other than 0 or 1, is an error.
    pub(crate) fn read_from(dtype: DType, n: usize, reader: &mut dyn std::io::Read) -> std::io::Result<CpuData> {
        CpuData::filled_by(dtype, n, |bytes| reader.read_exact(bytes))
    }

    /// Reads `n` elements of `dtype` (little-endian) at byte `offset` of `file` straight into a new aligned
    /// buffer, as [`read_from`](Self::read_from) does; a large read is split into positioned reads on the threads
    /// (on Unix), so that the page faults of the new buffer and the kernel's copies run on both cores.
    pub(crate) fn read_at(dtype: DType, n: usize, file: &std::fs::File, offset: u64) -> std::io::Result<CpuData> {
        CpuData::filled_by(dtype, n, |bytes| read_exact_at(file, bytes, offset))
    }

    /// A new buffer of `n` elements of `dtype` whose bytes `fill` writes (every one of them, or fails).
    fn filled_by(
        dtype: DType,
        n: usize,
        fill: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
    ) -> std::io::Result<CpuData> {
        let fits = n
            .checked_mul(dtype.size_in_bytes())
            .is_some_and(|b| b <= isize::MAX as usize);
        if !fits {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{n} elements of {dtype} do not fit in memory"),
            ));
        }
        fn filled<T: bytemuck::Pod>(
            n: usize,
            fill: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
        ) -> std::io::Result<Vec<T>> {
            let mut v = vec![T::zeroed(); n];
            fill(bytemuck::cast_slice_mut(&mut v))?;
            Ok(v)
        }
        Ok(match dtype {
            DType::F16 => CpuData::F16(filled(n, fill)?),
            DType::BF16 => CpuData::BF16(filled(n, fill)?),
            DType::F32 => CpuData::F32(filled(n, fill)?),
            DType::F64 => CpuData::F64(filled(n, fill)?),
            DType::I64 => CpuData::I64(filled(n, fill)?),
            DType::I32 => CpuData::I32(filled(n, fill)?),
            DType::U8 => CpuData::U8(filled(n, fill)?),
            DType::Bool => {
                let v: Vec<u8> = filled(n, fill)?;
                if let Some(i) = v.iter().position(|&b| b > 1) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("byte {i} of a bool tensor is {}; a bool byte must be 0 or 1", v[i]),
                    ));
                }
                CpuData::Bool(v.into_iter().map(|b| b == 1).collect())
            }
        })
    }

    /// Reads `bytes` (little-endian, any alignment) as elements of `dtype`: one copy into an aligned buffer.
    pub(crate) fn from_bytes(dtype: DType, bytes: &[u8]) -> Result<CpuData> {
        let size = dtype.size_in_bytes();
        if !bytes.len().is_multiple_of(size) {
            return Err(Error::invalid(
                "from_bytes",
                format!(
                    "{} bytes is not a whole number of {dtype} elements ({size} bytes each)",
                    bytes.len()
                ),
            ));
        }
        if dtype == DType::Bool
            && let Some(i) = bytes.iter().position(|&b| b > 1)
        {
            return Err(Error::invalid(
                "from_bytes",
                format!("byte {i} of a bool tensor is {}; a bool byte must be 0 or 1", bytes[i]),
            ));
        }
        Ok(CpuData::from_pod_bytes(dtype, bytes))
    }

    /// Reads `bytes` (little-endian, any alignment, a whole number of elements) as elements of `dtype`; a bool
    /// byte is true when it is not 0 (callers that must refuse other bytes than 0 and 1 check first).
    pub(crate) fn from_pod_bytes(dtype: DType, bytes: &[u8]) -> CpuData {
        match dtype {
            DType::F16 => CpuData::F16(bytemuck::pod_collect_to_vec(bytes)),
            DType::BF16 => CpuData::BF16(bytemuck::pod_collect_to_vec(bytes)),
            DType::F32 => CpuData::F32(bytemuck::pod_collect_to_vec(bytes)),
            DType::F64 => CpuData::F64(bytemuck::pod_collect_to_vec(bytes)),
            DType::I64 => CpuData::I64(bytemuck::pod_collect_to_vec(bytes)),
            DType::I32 => CpuData::I32(bytemuck::pod_collect_to_vec(bytes)),
            DType::U8 => CpuData::U8(bytes.to_vec()),
            DType::Bool => CpuData::Bool(bytes.iter().map(|&b| b != 0).collect()),
        }
    }

    /// Copies `src` into this buffer in place when both hold the same dtype and length (no new memory), else
    /// replaces the buffer with a copy of `src`.
    pub(crate) fn copy_from(&mut self, src: &CpuData) {
        if self.dtype() == src.dtype() && self.copy_from_bytes(src.as_bytes()) {
            return;
        }
        match (&mut *self, src) {
            (CpuData::Bool(d), CpuData::Bool(s)) if d.len() == s.len() => d.copy_from_slice(s),
            (dst, src) => *dst = src.clone(),
        }
    }

    /// Copies the host elements of `src` (of this buffer's dtype and length) into this buffer in place: raw
    /// bytes as they are, a typed buffer with [`copy_from`](Self::copy_from); nothing for device memory.
    pub(crate) fn copy_from_buffer(&mut self, src: &Buffer) {
        if let Buffer::Raw(raw) = src
            && self.copy_from_bytes(raw.bytes())
        {
            return;
        }
        if let Some(src) = src.host() {
            self.copy_from(src);
        }
    }

    /// Copies little-endian `bytes` of this buffer's dtype and length into it in place; `false` (nothing
    /// written) when the length differs or the dtype is bool (whose bytes must be checked).
    pub(crate) fn copy_from_bytes(&mut self, bytes: &[u8]) -> bool {
        let dst: &mut [u8] = match self {
            CpuData::F16(v) => bytemuck::cast_slice_mut(v),
            CpuData::BF16(v) => bytemuck::cast_slice_mut(v),
            CpuData::F32(v) => bytemuck::cast_slice_mut(v),
            CpuData::F64(v) => bytemuck::cast_slice_mut(v),
            CpuData::I64(v) => bytemuck::cast_slice_mut(v),
            CpuData::I32(v) => bytemuck::cast_slice_mut(v),
            CpuData::U8(v) => v,
            CpuData::Bool(_) => return false,
        };
        if dst.len() != bytes.len() {
            return false;
        }
        copy_bytes(dst, bytes);
        true
    }
}

/// Copies `src` into `dst` (of one length), split over the threads from [`COPY_SPLIT_BYTES`] per thread on: a
/// copy out of a mapped file also waits for page faults, which two threads overlap.
///
/// [`COPY_SPLIT_BYTES`]: crate::threads::COPY_SPLIT_BYTES
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    let parts = crate::threads::parts_for(dst.len(), crate::threads::COPY_SPLIT_BYTES);
    crate::threads::for_each_piece(dst, 1, parts, |at, piece| {
        piece.copy_from_slice(&src[at..at + piece.len()]);
    });
}

/// Fills `bytes` from `file` at byte `offset`, split over the threads as a copy is (positioned reads, on Unix;
/// elsewhere one read after a seek). The first error wins; a short file is `UnexpectedEof`.
fn read_exact_at(file: &std::fs::File, bytes: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let error = parking_lot::Mutex::new(None);
        let parts = crate::threads::parts_for(bytes.len(), crate::threads::COPY_SPLIT_BYTES);
        crate::threads::for_each_piece(bytes, 1, parts, |at, piece| {
            if error.lock().is_none()
                && let Err(e) = file.read_exact_at(piece, offset + at as u64)
            {
                error.lock().get_or_insert(e);
            }
        });
        error.into_inner().map_or(Ok(()), Err)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(bytes)
    }
}

/// Where a storage's elements are: host memory, raw host bytes, or a cubecl device's memory.
#[derive(Debug)]
pub(crate) enum Buffer {
    /// Host memory.
    Cpu(CpuData),
    /// Host elements as the raw bytes they came in (a mapped file's pages, a checkpoint reader's bytes).
    Raw(Raw),
    /// Memory of a cubecl device.
    Device(kernels::GpuBuffer),
}

impl Buffer {
    /// The host data (raw bytes' typed copy, made on the first call), or `None` for device memory.
    pub(crate) fn host(&self) -> Option<&CpuData> {
        match self {
            Buffer::Cpu(d) => Some(d),
            Buffer::Raw(m) => Some(m.host()),
            Buffer::Device(_) => None,
        }
    }

    /// The host data's little-endian bytes, without a copy (raw bytes as they are), or `None` for
    /// device memory.
    pub(crate) fn host_bytes(&self) -> Option<&[u8]> {
        match self {
            Buffer::Cpu(d) => Some(d.as_bytes()),
            Buffer::Raw(m) => Some(m.bytes()),
            Buffer::Device(_) => None,
        }
    }

    /// The host data for writing: raw bytes become a typed buffer of their own first (a mapped file is
    /// never written); `None` for device memory.
    pub(crate) fn host_mut(&mut self) -> Option<&mut CpuData> {
        if matches!(self, Buffer::Raw(_))
            && let Buffer::Raw(m) = std::mem::replace(self, Buffer::Cpu(CpuData::U8(Vec::new())))
        {
            *self = Buffer::Cpu(m.into_host());
        }
        match self {
            Buffer::Cpu(d) => Some(d),
            Buffer::Raw(_) | Buffer::Device(_) => None,
        }
    }

    /// The buffer with its host data in a typed buffer of its own (raw bytes' elements copied out).
    pub(crate) fn owned(self) -> Buffer {
        match self {
            Buffer::Raw(m) => Buffer::Cpu(m.into_host()),
            other => other,
        }
    }

    /// A copy of the contents, on the same device (in typed host memory for raw bytes).
    pub(crate) fn clone_buffer(&self) -> Buffer {
        match self {
            Buffer::Cpu(d) => Buffer::Cpu(d.clone()),
            Buffer::Raw(m) => Buffer::Cpu(CpuData::from_pod_bytes(m.dtype(), m.bytes())),
            Buffer::Device(b) => Buffer::Device(b.deep_copy()),
        }
    }
}

/// Storages alive in this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// How many tensor storages are alive in this process (tensors that share storage count once): for checking that
/// a loop does not leak, such as a training loop's saved tensors.
///
/// ```
/// let before = nn::tensor::live_storages();
/// let t = nn::Tensor::zeros([3], nn::DType::F32);
/// assert!(nn::tensor::live_storages() >= before + 1);
/// drop(t);
/// ```
pub fn live_storages() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The shared data behind one or more tensors. Its dtype, device and length never change; its contents do
/// (in-place operations, `load_state_dict`), under the lock.
#[derive(Debug)]
pub(crate) struct Storage {
    pub(crate) dtype: DType,
    pub(crate) device: Device,
    pub(crate) len: usize,
    pub(crate) data: RwLock<Buffer>,
    /// Bumped by every write in place (PyTorch's version counter): autograd checks that a tensor a backward
    /// saved was not changed since.
    pub(crate) version: AtomicU64,
}

impl Drop for Storage {
    /// A large host buffer goes back to the pool for reuse.
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
        match self.take_buffer() {
            Buffer::Cpu(data) => super::buffer_cache::give(data),
            Buffer::Raw(_) | Buffer::Device(_) => {}
        }
    }
}

impl Storage {
    /// The buffer, leaving an empty one in its place.
    pub(crate) fn take_buffer(&mut self) -> Buffer {
        std::mem::replace(self.data.get_mut(), Buffer::Cpu(CpuData::U8(Vec::new())))
    }

    pub(crate) fn cpu(data: CpuData) -> Storage {
        Storage::new(data.dtype(), Device::Cpu, data.len(), Buffer::Cpu(data))
    }

    /// A storage of `len` elements of `dtype` on `device`, holding `buffer`; counted in [`live_storages`].
    pub(crate) fn new(dtype: DType, device: Device, len: usize, buffer: Buffer) -> Storage {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Storage {
            dtype,
            device,
            len,
            data: RwLock::new(buffer),
            version: AtomicU64::new(0),
        }
    }
}
