//! Views: tensors that read and write the elements of another tensor's storage where they lie.
//!
//! A tensor an operation makes owns its storage and holds its elements there densely, in row-major order. A view
//! (`transpose`, `narrow`, `select`, `expand`, `as_strided`, a `reshape` that needs no copy) shares its base's
//! storage, and with it the version counter, and says where its elements lie: the element at index
//! `(i_0, i_1, …)` is element `offset + Σ i_d·strides[d]` of the storage. An operation that needs a view's elements
//! in row-major order reads them once into a buffer of their own ([`Tensor::dense`]); a write into a view lands in
//! the storage, where its base and every other view of it see it ([`Tensor::write_back`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use super::storage::{Buffer, CpuData, with_cpu_data};
use super::{ModeMarks, Tensor, device};
use crate::{Error, Result, Shape};

/// Steps between neighbouring elements along each dimension, in elements of the storage.
pub(crate) type Strides = SmallVec<[usize; 4]>;

/// Where a view's elements lie in its storage: the element at index `(i_0, …)` is `offset + Σ i_d·strides[d]`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Geometry {
    pub(crate) shape: Shape,
    pub(crate) strides: Strides,
    pub(crate) offset: usize,
}

impl Geometry {
    /// The geometry of `x`'s elements.
    pub(crate) fn of(x: &Tensor) -> Geometry {
        Geometry {
            shape: x.shape().clone(),
            strides: x.strides(),
            offset: x.storage_offset(),
        }
    }

    /// The geometry of a dense tensor of `shape`.
    pub(crate) fn dense(shape: &Shape) -> Geometry {
        Geometry {
            shape: shape.clone(),
            strides: shape.strides(),
            offset: 0,
        }
    }

    /// Where each element lies in the storage, in row-major order of its indices.
    pub(crate) fn positions(&self) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.shape.numel());
        for_each_run(&self.shape, &self.strides, self.offset, |at, run| {
            out.extend((at..at + run).map(|p| p as i64))
        });
        out
    }

    /// Whether two indices reach one element: checked on the dimensions sorted by stride, each stride past the
    /// reach of the smaller ones (as PyTorch's `as_strided` backward checks).
    pub(crate) fn overlaps(&self) -> bool {
        if self.shape.contains(&0) {
            return false;
        }
        let mut dims: Vec<(usize, usize)> = (self.shape.iter().copied())
            .zip(self.strides.iter().copied())
            .filter(|&(size, _)| size > 1)
            .collect();
        dims.sort_by_key(|&(_, stride)| stride);
        let mut reach = 0;
        for (size, stride) in dims {
            if stride <= reach {
                return true;
            }
            reach += (size - 1) * stride;
        }
        false
    }
}

/// Where a view's elements lie in its storage, and the tensor it views.
pub(crate) struct View {
    strides: Strides,
    offset: usize,
    /// The view reads its whole storage in row-major order, so the storage's buffer is its elements.
    dense: bool,
    /// The tensor that owns the storage (PyTorch's `_base`), with its autograd state.
    base: Tensor,
    /// The storage's version when the view's autograd history was last set: a later write into the storage
    /// makes its history that of the base as it is now (`view_history`).
    history_version: AtomicU64,
}

impl View {
    /// The storage version the view's history was set at.
    pub(crate) fn history_version(&self) -> u64 {
        self.history_version.load(Ordering::Acquire)
    }

    /// Records that the view's history was set at storage version `version`.
    pub(crate) fn set_history_version(&self, version: u64) {
        self.history_version.store(version, Ordering::Release);
    }
}

/// PyTorch's sentence for a write into a view some of whose elements are one element of the storage.
const OVERLAP: &str = "unsupported operation: more than one element of the written-to tensor refers to a single \
                       memory location. Please clone() the tensor before performing the operation.";

impl Tensor {
    /// The steps, in elements, between neighbouring elements along each dimension (PyTorch's `stride()`): a
    /// tensor an operation made is row-major; a view has the strides of the elements it shares.
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 3], nn::DType::F32);
    /// assert_eq!(x.stride(), vec![3, 1]);
    /// assert_eq!(x.t()?.stride(), vec![1, 3]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn stride(&self) -> Vec<usize> {
        self.strides().to_vec()
    }

    /// Where the first element lies in the storage, in elements (PyTorch's `storage_offset()`).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([4, 3], nn::DType::F32);
    /// assert_eq!(x.select(0, 2)?.storage_offset(), 6);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn storage_offset(&self) -> usize {
        self.view.as_ref().map_or(0, |v| v.offset)
    }

    /// Whether the elements lie in row-major order without gaps (PyTorch's `is_contiguous()`: sizes of 1 and
    /// empty tensors place no constraint).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 3], nn::DType::F32);
    /// assert!(x.is_contiguous() && !x.t()?.is_contiguous());
    /// assert!(x.narrow(0, 1, 1)?.is_contiguous());
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn is_contiguous(&self) -> bool {
        self.is_dense() || row_major(self.shape(), &self.strides())
    }

    /// Whether this tensor is a view of another tensor's storage (PyTorch's `_is_view()`).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 3], nn::DType::F32);
    /// assert!(!x.is_view() && x.t()?.is_view());
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn is_view(&self) -> bool {
        self.view.is_some()
    }

    /// Whether the storage's buffer is exactly this tensor's elements in row-major order (every tensor an
    /// operation made, and views such as a `reshape` of one).
    pub(crate) fn is_dense(&self) -> bool {
        self.view.as_ref().is_none_or(|v| v.dense)
    }

    /// The strides of the elements in the storage.
    pub(crate) fn strides(&self) -> Strides {
        match &self.view {
            Some(v) => v.strides.clone(),
            None => self.shape().strides(),
        }
    }

    /// The number of elements the storage holds (a view may see fewer).
    pub(crate) fn storage_len(&self) -> usize {
        self.storage.len
    }

    /// The tensor whose storage this view shares (PyTorch's `_base`), with its autograd state.
    pub(crate) fn view_base(&self) -> Option<&Tensor> {
        self.view.as_ref().map(|v| &v.base)
    }

    /// The view's geometry and bookkeeping, for a view.
    pub(crate) fn view_info(&self) -> Option<&View> {
        self.view.as_deref()
    }

    /// The elements of this tensor's storage at `offset + Σ i_d·strides[d]` over `shape`, as a view that shares
    /// the storage and carries no autograd state (the op that makes it records its own). The caller checked that
    /// every index lies inside the storage.
    pub(crate) fn as_view(&self, shape: Shape, strides: Strides, offset: usize) -> Tensor {
        debug_assert_eq!(shape.rank(), strides.len());
        let base = match &self.view {
            Some(v) => v.base.clone(),
            None => Tensor {
                mode_marks: ModeMarks::NONE,
                ..self.clone()
            },
        };
        let dense = offset == 0 && shape.numel() == self.storage.len && row_major(&shape, &strides);
        Tensor {
            shape,
            view: Some(Arc::new(View {
                strides,
                offset,
                dense,
                base,
                history_version: AtomicU64::new(self.version()),
            })),
            storage: self.storage.clone(),
            grad_meta: OnceLock::new(),
            mode_marks: ModeMarks::NONE,
        }
    }

    /// This dense tensor's elements at `shape` (of equal element count), as a tensor of its own rather than a
    /// view: for a reshape of a copy made for it, which nothing else sees.
    pub(crate) fn reshaped(&self, shape: Shape) -> Tensor {
        debug_assert!(self.is_dense() && shape.numel() == self.numel());
        Tensor {
            shape,
            view: None,
            storage: self.storage.clone(),
            grad_meta: OnceLock::new(),
            mode_marks: ModeMarks::NONE,
        }
    }

    /// A handle to the same elements without autograd state, the base's dropped too (a saved tensor holds no
    /// graph through it).
    pub(crate) fn detached_view(&self) -> Option<Arc<View>> {
        self.view.as_ref().map(|v| {
            Arc::new(View {
                strides: v.strides.clone(),
                offset: v.offset,
                dense: v.dense,
                base: v.base.detach(),
                history_version: AtomicU64::new(v.history_version()),
            })
        })
    }

    /// This tensor's elements densely in row-major order: the tensor itself when its storage already holds them
    /// so, else a copy in a storage of its own, on the same device, carrying no autograd state.
    pub(crate) fn dense(&self) -> Result<Tensor> {
        let Some(view) = self.view.as_ref().filter(|v| !v.dense) else {
            return Ok(self.clone());
        };
        let (shape, dtype, device) = (self.shape().clone(), self.dtype(), self.device());
        let buffer = match &*self.storage.data.read() {
            Buffer::Device(b) => match device::element("contiguous", dtype, device) {
                Ok(element) => {
                    let out = kernels::gather::gather(b, element, &shape, &view.strides, view.offset)
                        .map_err(|e| self.kernel_error("contiguous", e))?;
                    Buffer::Device(out)
                }
                // No kernel moves 1-byte elements: they are gathered on the host (a move, not a computation).
                Err(_) => {
                    let host = device::download(b, dtype, device)?;
                    let data =
                        with_cpu_data!(&host, v => CpuData::from_vec(gather(v, &shape, &view.strides, view.offset)));
                    device::upload(data.as_bytes(), device)?
                }
            },
            host => {
                let data = host.host().expect("a buffer off the device has host elements");
                Buffer::Cpu(with_cpu_data!(data, v => CpuData::from_vec(gather(v, &shape, &view.strides, view.offset))))
            }
        };
        Ok(Tensor::from_parts(buffer, dtype, device, shape))
    }

    /// Refuses a write into a view some of whose elements are one element of the storage (an `expand`, an
    /// `as_strided` of overlapping windows), with PyTorch's sentence. (PyTorch refuses the first kind and leaves
    /// the result of the second undefined.)
    pub(crate) fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.view.as_ref().is_some_and(|v| !v.dense) && Geometry::of(self).overlaps() {
            return Err(Error::invalid(op, OVERLAP));
        }
        Ok(())
    }

    /// Puts `src`'s elements (dense, of this tensor's shape, dtype and device) where this tensor's elements lie
    /// in its storage, and counts a write in place. For a dense tensor that is its whole buffer.
    pub(crate) fn write_back(&self, src: &Tensor) -> Result<()> {
        self.check_writable("copy_")?;
        self.scatter_from(src)
    }

    /// [`write_back`](Self::write_back) into any view, one whose elements overlap too (where one value written to
    /// every element, `fill_`, is well defined).
    pub(crate) fn scatter_from(&self, src: &Tensor) -> Result<()> {
        let op = "copy_";
        debug_assert!(src.is_dense() && src.shape() == self.shape() && src.dtype() == self.dtype());
        let (strides, offset) = (self.strides(), self.storage_offset());
        self.bump_version();
        if self.shares_storage(src) {
            return Ok(());
        }
        let mut guard = self.storage.data.write();
        match &mut *guard {
            Buffer::Device(dst) => {
                let element = device::element(op, self.dtype(), self.device())?;
                let from = src.gpu_buffer(op)?;
                kernels::gather::scatter(&from, dst, element, self.shape(), &strides, offset)
                    .map_err(|e| self.kernel_error(op, e))
            }
            host => {
                let dst = host.host_mut().expect("a buffer off the device has host elements");
                let from = src.cpu()?;
                from.read_cpu(op, |s| scatter_data(dst, s, self.shape(), &strides, offset))?
            }
        }
    }

    /// This gradient of a view placed where the view's elements lie (`at`, which must not overlap) within zeros of
    /// `shape`, the dense tensor it views: that tensor's gradient.
    pub(crate) fn place_in(&self, shape: &Shape, at: &Geometry) -> Result<Tensor> {
        if at.overlaps() {
            return Err(Error::autograd(
                "as_strided",
                "a view whose elements overlap (an expand), read after its base changed in place, has no gradient \
                 here; take the view after the change",
            ));
        }
        let out = Tensor::try_zeros(shape.clone(), self.dtype())?.to_device(self.device())?;
        out.as_view(at.shape.clone(), at.strides.clone(), at.offset)
            .write_back(&self.dense()?)?;
        Ok(out)
    }

    /// The strides a view of `shape` of this tensor's elements takes without a copy, or `None` where the new
    /// sizes cut across dimensions that do not lie one after the other (PyTorch's `computeStride`).
    pub(crate) fn view_strides(&self, shape: &Shape) -> Option<Strides> {
        view_strides(self.shape(), &self.strides(), shape)
    }
}

/// Whether `strides` lay out `shape` in row-major order without gaps (sizes of 1 place no constraint).
pub(crate) fn row_major(shape: &[usize], strides: &[usize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected = 1;
    for (&size, &stride) in shape.iter().zip(strides).rev() {
        if size != 1 {
            if stride != expected {
                return false;
            }
            expected *= size;
        }
    }
    true
}

/// The strides for a view of `new` sizes of elements laid out as `old` sizes at `strides`, or `None` where no
/// view holds them: PyTorch's `computeStride` (`aten/src/ATen/TensorUtils.cpp`).
pub(crate) fn view_strides(old: &[usize], strides: &[usize], new: &[usize]) -> Option<Strides> {
    if old.is_empty() {
        return Some(SmallVec::from_elem(1, new.len()));
    }
    let numel: usize = old.iter().product();
    if numel == 0 && old == new {
        return Some(SmallVec::from_slice(strides));
    }
    let mut out: Strides = SmallVec::from_elem(0, new.len());
    if numel == 0 {
        for d in (0..new.len()).rev() {
            out[d] = if d + 1 == new.len() {
                1
            } else {
                new[d + 1].max(1) * out[d + 1]
            };
        }
        return Some(out);
    }
    let mut view_d = new.len() as isize - 1;
    let mut chunk_base_stride = *strides.last().expect("rank > 0");
    let (mut tensor_numel, mut view_numel) = (1usize, 1usize);
    for tensor_d in (0..old.len()).rev() {
        tensor_numel *= old[tensor_d];
        let chunk_ends =
            tensor_d == 0 || (old[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new[view_d as usize] == 1) {
                out[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= new[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(out)
}

/// Calls `f(at, run)` for every run of elements of `shape` at `strides` from `offset`, in row-major order: `run`
/// elements lying one after the other from storage index `at` (the trailing dimensions that lie so form one run).
fn for_each_run(shape: &[usize], strides: &[usize], offset: usize, mut f: impl FnMut(usize, usize)) {
    let n: usize = shape.iter().product();
    if n == 0 {
        return;
    }
    let mut rank = shape.len();
    let mut run = 1;
    while rank > 0 && (strides[rank - 1] == run || shape[rank - 1] == 1) {
        run *= shape[rank - 1];
        rank -= 1;
    }
    let mut index: SmallVec<[usize; 4]> = SmallVec::from_elem(0, rank);
    let mut at = offset;
    for _ in 0..n / run {
        f(at, run);
        for d in (0..rank).rev() {
            index[d] += 1;
            at += strides[d];
            if index[d] < shape[d] {
                break;
            }
            at -= strides[d] * shape[d];
            index[d] = 0;
        }
    }
}

/// Rows of a tile of [`gather_tiled`]: 32 rows of 32 elements keep the rows read (32 cache lines) in the cache
/// while each is read across.
const TILE: usize = 32;

/// The elements of `v` at `offset + Σ i_d·strides[d]` over `shape`, in row-major order: runs of elements that
/// lie one after the other are copied as slices; a last dimension that does not ([`gather_tiled`]) in tiles, on
/// the threads.
pub(crate) fn gather<T: Copy + Send + Sync>(v: &[T], shape: &[usize], strides: &[usize], offset: usize) -> Vec<T> {
    let n: usize = shape.iter().product();
    let rank = shape.len();
    if n > 0 && rank >= 2 && strides[rank - 1] != 1 && shape[rank - 1] > 1 && shape[rank - 2] > 1 {
        return gather_tiled(v, shape, strides, offset);
    }
    let mut out = Vec::with_capacity(n);
    for_each_run(shape, strides, offset, |at, run| {
        out.extend_from_slice(&v[at..at + run])
    });
    out
}

/// [`gather`] where the last dimension is strided (a transpose): the output's rows are filled in groups of
/// [`TILE`], [`TILE`] columns at a time, so the source rows a group reads stay in the cache.
fn gather_tiled<T: Copy + Send + Sync>(v: &[T], shape: &[usize], strides: &[usize], offset: usize) -> Vec<T> {
    let rank = shape.len();
    let (width, column_stride) = (shape[rank - 1], strides[rank - 1]);
    let (outer_shape, outer_strides) = (&shape[..rank - 1], &strides[..rank - 1]);
    // Where output row `r` (an index of the leading dimensions) starts in `v`.
    let row_start = |mut r: usize| {
        let mut at = offset;
        for d in (0..outer_shape.len()).rev() {
            at += (r % outer_shape[d]) * outer_strides[d];
            r /= outer_shape[d];
        }
        at
    };
    let n = shape.iter().product();
    let mut out = vec![v[offset]; n];
    let parts = crate::threads::parts_for(n * std::mem::size_of::<T>(), crate::threads::COPY_SPLIT_BYTES);
    crate::threads::for_each_piece(&mut out, width * TILE, parts, |first, piece| {
        let first_row = first / width;
        for (g, group) in piece.chunks_mut(width * TILE).enumerate() {
            let rows = group.len() / width;
            let starts: SmallVec<[usize; TILE]> = (0..rows).map(|i| row_start(first_row + g * TILE + i)).collect();
            for j0 in (0..width).step_by(TILE) {
                let j1 = (j0 + TILE).min(width);
                for (i, &start) in starts.iter().enumerate() {
                    let row = &mut group[i * width + j0..i * width + j1];
                    for (j, o) in (j0..j1).zip(row) {
                        *o = v[start + j * column_stride];
                    }
                }
            }
        }
    });
    out
}

/// Writes `src`'s elements (row-major over `shape`) to `dst` at `offset + Σ i_d·strides[d]`.
fn scatter<T: Copy>(dst: &mut [T], src: &[T], shape: &[usize], strides: &[usize], offset: usize) {
    let mut from = 0;
    for_each_run(shape, strides, offset, |at, run| {
        dst[at..at + run].copy_from_slice(&src[from..from + run]);
        from += run;
    });
}

/// [`scatter`] between two buffers of one dtype.
fn scatter_data(dst: &mut CpuData, src: &CpuData, shape: &[usize], strides: &[usize], offset: usize) -> Result<()> {
    macro_rules! typed {
        ($($variant:ident),*) => {
            match (dst, src) {
                $((CpuData::$variant(d), CpuData::$variant(s)) => scatter(d, s, shape, strides, offset),)*
                (dst, src) => {
                    return Err(Error::DTypeMismatch {
                        op: "copy_",
                        expected: dst.dtype(),
                        got: src.dtype(),
                    });
                }
            }
        };
    }
    typed!(F16, BF16, F32, F64, I64, I32, U8, Bool);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_strides_follow_pytorch_compute_stride() {
        // Contiguous: any view.
        assert_eq!(
            view_strides(&[2, 3, 4], &[12, 4, 1], &[6, 4]).unwrap().to_vec(),
            vec![4, 1]
        );
        // A transpose merges no dimensions across its swapped pair...
        assert_eq!(view_strides(&[3, 2], &[1, 3], &[6]), None);
        // ...but splits and keeps them.
        assert_eq!(
            view_strides(&[4, 2], &[1, 4], &[2, 2, 2]).unwrap().to_vec(),
            vec![2, 1, 4]
        );
        // Size-1 dimensions are free.
        assert_eq!(
            view_strides(&[3, 1, 2], &[2, 7, 1], &[3, 2, 1]).unwrap().to_vec(),
            vec![2, 1, 1]
        );
        // A narrow along the first dimension stays viewable as rows.
        assert_eq!(view_strides(&[2, 3], &[3, 1], &[6]).unwrap().to_vec(), vec![1]);
        // Empty tensors: row-major strides of the new sizes.
        assert_eq!(view_strides(&[0, 3], &[3, 1], &[3, 0]).unwrap().to_vec(), vec![1, 1]);
        // A scalar: ones.
        assert_eq!(view_strides(&[], &[], &[1, 1]).unwrap().to_vec(), vec![1, 1]);
    }

    #[test]
    fn a_tiled_gather_equals_the_walk_over_runs() {
        let v: Vec<u32> = (0..20_000).collect();
        let cases: [(&[usize], &[usize], usize); 4] = [
            (&[70, 45], &[1, 71], 3),           // a transpose, neither size a multiple of the tile
            (&[3, 40, 33], &[1, 3, 120], 0),    // a permutation of three dimensions
            (&[2, 33, 64], &[9000, 2, 130], 5), // strided rows and columns
            (&[1000, 3], &[3, 1000], 0),        // many short rows: more than one thread's piece
        ];
        for (shape, strides, offset) in cases {
            let mut walk = Vec::new();
            for_each_run(shape, strides, offset, |at, run| {
                walk.extend_from_slice(&v[at..at + run])
            });
            assert_eq!(gather_tiled(&v, shape, strides, offset), walk, "{shape:?} {strides:?}");
        }
    }

    #[test]
    fn runs_gather_and_scatter_strided_elements() {
        let v: Vec<i32> = (0..12).collect();
        // The transpose of a 3x4 matrix.
        assert_eq!(
            gather(&v, &[4, 3], &[1, 4], 0),
            vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
        );
        // Columns 1..3 of it, and a repeated row (stride 0).
        assert_eq!(gather(&v, &[3, 2], &[4, 1], 1), vec![1, 2, 5, 6, 9, 10]);
        assert_eq!(gather(&v, &[2, 3], &[0, 1], 4), vec![4, 5, 6, 4, 5, 6]);
        let mut dst = vec![0; 12];
        scatter(&mut dst, &[1, 2, 3, 4, 5, 6], &[3, 2], &[4, 1], 1);
        assert_eq!(dst, vec![0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0]);
        assert!(row_major(&[2, 1, 3], &[3, 99, 1]) && !row_major(&[2, 3], &[1, 2]));
    }
}
