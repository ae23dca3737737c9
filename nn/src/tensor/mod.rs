//! [`Tensor`]: an n-dimensional array of one [`DType`] on one [`Device`], in a storage of its own or a view of
//! another tensor's.

pub(crate) mod autograd;
pub(crate) mod buffer_cache;
pub(crate) mod cast;
mod create;
pub(crate) mod device;
mod distributions;
mod fmt;
pub(crate) mod grad_hooks;
pub(crate) mod in_place;
mod literal;
pub(crate) mod mode_marks;
mod multinomial;
pub(crate) mod random;
mod ranges;
mod raw;
pub(crate) mod storage;
pub(crate) mod view;
mod view_history;

use std::sync::{Arc, OnceLock};

pub use autograd::{GradMeta, GradMode, enable_grad, is_grad_enabled, no_grad};
pub use buffer_cache::empty_cache;
pub(crate) use fmt::torch_typename;
pub use grad_hooks::GradHookHandle;
pub use literal::{LiteralElement, Nested};
pub(crate) use mode_marks::ModeMarks;
use parking_lot::{MappedRwLockReadGuard, RwLockReadGuard};
pub use storage::live_storages;
use storage::{Buffer, CpuData, Storage};
use view::View;

use crate::{DType, Device, Element, Error, Result, Shape};

/// An n-dimensional array: a shape, and a handle to shared storage of one dtype on one device.
///
/// A tensor an operation makes holds its elements in row-major order in a storage of its own; a view
/// ([`t`](Self::t), [`narrow`](Self::narrow), [`select`](Self::select), [`expand`](Self::expand),
/// [`as_strided`](Self::as_strided), …) shares another tensor's storage at [`stride`](Self::stride)s of its own,
/// and writes through it land there.
///
/// Cloning a `Tensor` clones the handle: both share the data, as two Python names for one PyTorch tensor do
/// (in-place operations through either are seen by both). [`Tensor::deep_copy`] is PyTorch's `clone()`.
///
/// ```
/// use nn::{Tensor, DType};
/// let a = Tensor::from_vec(vec![1.0f32, -2.0, 3.0, -4.0], [2, 2]).unwrap();
/// let b = a.clone();
/// a.fill_(0.5).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap(), vec![0.5; 4]);
/// assert_eq!(a.shape(), &[2, 2]);
/// assert_eq!(a.dtype(), DType::F32);
/// ```
#[derive(Clone)]
pub struct Tensor {
    shape: Shape,
    /// Where the elements lie in the storage, for a view; `None`: the whole storage, in row-major order.
    view: Option<Arc<View>>,
    storage: Arc<Storage>,
    /// Set once through `&self` only by a recorded in-place write into a tensor that required no gradient
    /// (`in_place::adopt_history`); otherwise replaced through `&mut self`.
    grad_meta: OnceLock<Arc<GradMeta>>,
    /// The modes of a module that keeps this handle as a buffer and has no `training` field, and of handle-less
    /// modules above it (see [`crate::module::mode`]); a new tensor starts unmarked.
    mode_marks: ModeMarks,
}

impl Tensor {
    pub(crate) fn from_cpu(data: CpuData, shape: Shape) -> Tensor {
        debug_assert_eq!(data.len(), shape.numel());
        Tensor {
            shape,
            view: None,
            storage: Arc::new(Storage::cpu(data)),
            grad_meta: OnceLock::new(),
            mode_marks: ModeMarks::NONE,
        }
    }

    /// The sizes of the dimensions.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The size of dimension `dim` (negative counts from the end), or an error naming the rank.
    pub fn size(&self, dim: isize) -> Result<usize> {
        Ok(self.shape[self.dim_index("size", dim)?])
    }

    /// Number of dimensions (0 for a scalar).
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.storage.dtype
    }

    /// Where the data lives.
    pub fn device(&self) -> Device {
        self.storage.device
    }

    /// Whether the dtype is a floating-point one.
    pub fn is_floating_point(&self) -> bool {
        self.dtype().is_floating_point()
    }

    /// Whether `self` and `other` are handles to the same storage (so in-place changes to one show in both).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// An address identifying the storage, for de-duplication (equal for tensors that share storage).
    pub fn storage_id(&self) -> usize {
        Arc::as_ptr(&self.storage) as usize
    }

    /// Resolves a possibly negative dimension index against this tensor's rank.
    pub(crate) fn dim_index(&self, op: &'static str, dim: isize) -> Result<usize> {
        normalize_dim(op, dim, self.rank())
    }

    /// Runs `f` on the host elements in row-major order (a view's are copied out first), or fails for a tensor
    /// on a device.
    pub(crate) fn read_cpu<R>(&self, op: &'static str, f: impl FnOnce(&CpuData) -> R) -> Result<R> {
        if !self.is_dense() {
            if !self.device().is_cpu() {
                return Err(self.not_on_cpu(op));
            }
            return self.dense()?.read_cpu(op, f);
        }
        match self.storage.data.read().host() {
            Some(data) => Ok(f(data)),
            None => Err(self.not_on_cpu(op)),
        }
    }

    /// How many times the storage was written in place (PyTorch's `_version`): every in-place operation,
    /// `copy_` and `fill_` add one.
    ///
    /// ```
    /// let t = nn::Tensor::zeros([2], nn::DType::F32);
    /// t.fill_(1.0).unwrap();
    /// t.add_scalar_(1.0).unwrap();
    /// assert_eq!(t.version(), 2);
    /// ```
    pub fn version(&self) -> u64 {
        self.storage.version.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Records a write in place into the storage.
    pub(crate) fn bump_version(&self) {
        self.storage.version.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Runs `f` on the host elements for writing, in row-major order, or fails for a tensor on a device. A view's
    /// elements are copied out, changed, and written back where they lie.
    pub(crate) fn write_cpu<R>(&self, op: &'static str, f: impl FnOnce(&mut CpuData) -> R) -> Result<R> {
        if !self.is_dense() {
            if !self.device().is_cpu() {
                return Err(self.not_on_cpu(op));
            }
            self.check_writable(op)?;
            let copy = self.dense()?;
            let out = copy.write_cpu(op, f)?;
            self.write_back(&copy)?;
            return Ok(out);
        }
        self.bump_version();
        match self.storage.data.write().host_mut() {
            Some(data) => Ok(f(data)),
            None => Err(self.not_on_cpu(op)),
        }
    }

    pub(crate) fn not_on_cpu(&self, op: &'static str) -> Error {
        Error::UnsupportedOnDevice {
            op,
            dtype: self.dtype(),
            device: self.device(),
            reason: "this operation runs on the CPU only; move the tensor with .cpu() first".into(),
        }
    }

    /// The elements as a `Vec<T>`, copied to the host; `T` must be the tensor's dtype.
    ///
    /// ```
    /// let t = nn::Tensor::arange(0.0, 3.0, 1.0, nn::DType::I64).unwrap();
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 1, 2]);
    /// assert!(t.to_vec::<f32>().is_err());
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let host = self.cpu()?;
        host.read_cpu("to_vec", |d| d.as_slice::<T>().map(|s| s.to_vec()))?
            .ok_or(Error::DTypeMismatch {
                op: "to_vec",
                expected: self.dtype(),
                got: T::DTYPE,
            })
    }

    /// The elements converted to `f64`, whatever the dtype (booleans are 0 and 1).
    pub fn to_vec_f64(&self) -> Result<Vec<f64>> {
        self.to_dtype(DType::F64)?.to_vec::<f64>()
    }

    /// The single element of a one-element tensor, as `f64`.
    pub fn item(&self) -> Result<f64> {
        if self.numel() != 1 {
            return Err(Error::invalid(
                "item",
                format!(
                    "a tensor of shape {} has {} elements; item() needs exactly one",
                    self.shape,
                    self.numel()
                ),
            ));
        }
        Ok(self.to_vec_f64()?[0])
    }

    /// The raw little-endian bytes of the elements (a copy, taken under the storage's read lock).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.cpu()?.read_cpu("to_bytes", |d| d.as_bytes().to_vec())
    }

    /// Runs `f` on the raw little-endian bytes of the host data without copying them.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        self.read_cpu("with_bytes", |d| f(d.as_bytes()))
    }

    /// The raw little-endian bytes of the host data, borrowed under the storage's read lock (in-place writes
    /// to the tensor wait until the guard drops); an error for a tensor on a device or a view whose elements do
    /// not fill its storage in order (take [`dense`](Self::dense) first).
    pub(crate) fn host_bytes(&self, op: &'static str) -> Result<HostBytes<'_>> {
        self.check_dense(op)?;
        RwLockReadGuard::try_map(self.storage.data.read(), Buffer::host_bytes).map_err(|_| self.not_on_cpu(op))
    }

    /// The host elements as `&[T]`, borrowed under the storage's read lock; an error for a tensor on a device,
    /// of another dtype, or a view whose elements do not fill its storage in order (take [`dense`](Self::dense)
    /// first).
    pub(crate) fn host_slice<T: Element>(&self, op: &'static str) -> Result<HostSlice<'_, T>> {
        if !self.device().is_cpu() {
            return Err(self.not_on_cpu(op));
        }
        self.check_dense(op)?;
        RwLockReadGuard::try_map(self.storage.data.read(), |b| b.host().and_then(CpuData::as_slice::<T>)).map_err(
            |_| Error::DTypeMismatch {
                op,
                expected: T::DTYPE,
                got: self.dtype(),
            },
        )
    }

    /// Refuses a borrow of the storage's buffer as the elements of a view whose elements lie elsewhere in it.
    fn check_dense(&self, op: &'static str) -> Result<()> {
        if self.is_dense() {
            return Ok(());
        }
        Err(Error::invalid(
            op,
            "the elements of a view do not fill its storage in order; take .contiguous() first",
        ))
    }

    /// The marks of the modes kept here (see [`crate::module::mode`]).
    pub(crate) fn mode_marks(&self) -> ModeMarks {
        self.mode_marks
    }

    /// The marks of the modes kept here, to change (see [`crate::module::mode`]).
    pub(crate) fn mode_marks_mut(&mut self) -> &mut ModeMarks {
        &mut self.mode_marks
    }

    /// Whether another tensor handle shares this tensor's storage.
    pub(crate) fn storage_is_shared(&self) -> bool {
        Arc::strong_count(&self.storage) > 1
    }

    /// Puts `src`'s contents (same dtype, device and element count) into this tensor's storage, seen by every
    /// handle to it: moved when nothing else holds `src`, else copied. Returns the old contents as a tensor of
    /// their own (to put back with another call).
    pub(crate) fn replace_contents(&self, src: Tensor) -> Tensor {
        if self.shares_storage(&src) {
            return src;
        }
        if !self.is_dense() || !src.is_dense() {
            return self.replace_view_contents(src);
        }
        let new = match Arc::try_unwrap(src.storage) {
            Ok(mut storage) => storage.take_buffer().owned(),
            Err(shared) => shared.data.read().clone_buffer(),
        };
        self.bump_version();
        let old = std::mem::replace(&mut *self.storage.data.write(), new);
        Tensor::from_buffer(old, self)
    }

    /// [`replace_contents`](Self::replace_contents) where either side is a view: the elements are copied.
    fn replace_view_contents(&self, src: Tensor) -> Tensor {
        let copy = |t: &Tensor| {
            t.dense()
                .and_then(|d| if d.shares_storage(t) { d.deep_copy() } else { Ok(d) })
        };
        match (copy(self), src.dense()) {
            (Ok(old), Ok(new)) if self.write_back(&new).is_ok() => old,
            // Both tensors' elements are on one device in one dtype and shape (the callers' contract), so
            // copying them fails only where the allocator or the device does.
            _ => panic!(
                "cannot copy the elements of a view of shape {} on {}",
                self.shape,
                self.device()
            ),
        }
    }

    /// The tensor converted to `dtype`: the same handle when the dtype is already `dtype`, else new storage.
    ///
    /// ```
    /// use nn::{Tensor, DType};
    /// let t = Tensor::from_vec(vec![1.5f32, -2.5], [2]).unwrap();
    /// assert_eq!(t.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap(), vec![1, -2]);
    /// ```
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        self.converted("to_dtype", self.dtype(), dtype, Tensor::cast, Tensor::to_dtype)
    }

    /// The tensor converted from `from` to `to` by `convert` (the same handle when they are equal), recorded
    /// with the gradient converted back by `back`.
    fn converted<K: Copy + PartialEq + Send + Sync + 'static>(
        &self,
        name: &'static str,
        from: K,
        to: K,
        convert: fn(&Tensor, K) -> Result<Tensor>,
        back: fn(&Tensor, K) -> Result<Tensor>,
    ) -> Result<Tensor> {
        if to == from {
            return Ok(self.clone());
        }
        let mut out = convert(self, to)?;
        autograd::record_unary(name, self, &mut out, move |g| back(g, from));
        Ok(out)
    }

    /// The elements converted to `dtype`, in new storage.
    fn cast(&self, dtype: DType) -> Result<Tensor> {
        if !self.is_dense() {
            return self.dense()?.cast(dtype);
        }
        if !self.device().is_cpu() {
            // To and from bool on the device: `x != 0`, and `where(x, 1, 0)`.
            if dtype == DType::Bool && self.is_floating_point() {
                return self.detach().ne_scalar(0.0);
            }
            if self.dtype() == DType::Bool && device::element("to_dtype", dtype, self.device()).is_ok() {
                let [one, zero] = [1.0, 0.0].map(|v| Tensor::try_full(Shape::scalar(), v, dtype));
                let device = self.device();
                return self.where_cond(&one?.to_device(device)?, &zero?.to_device(device)?);
            }
        }
        if let Buffer::Device(b) = &*self.storage.data.read() {
            let buffer = device::to_dtype(self, b, dtype)?;
            return Ok(Tensor::from_parts(buffer, dtype, self.device(), self.shape.clone()));
        }
        let data = self.read_cpu("to_dtype", |d| cast::cast_data(d, dtype))?;
        Ok(Tensor::from_cpu(data, self.shape.clone()))
    }

    /// The tensor on `device`: the same handle when it is already there, else a copy there (host to device,
    /// device to host, or between devices through the host).
    ///
    /// A device that does not exist, or whose runtime is not compiled in (features `wgpu`, `cuda`), gives
    /// [`Error::DeviceUnavailable`].
    ///
    /// ```no_run
    /// use nn::{Device, Tensor};
    /// let t = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
    /// let on_gpu = t.to_device(Device::Wgpu(0))?;
    /// assert_eq!(on_gpu.cpu()?.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn to_device(&self, device: Device) -> Result<Tensor> {
        self.converted("to_device", self.device(), device, Tensor::moved, Tensor::to_device)
    }

    /// A copy of the elements on `device`.
    fn moved(&self, device: Device) -> Result<Tensor> {
        if !self.is_dense() {
            return self.dense()?.moved(device);
        }
        let buffer = match &*self.storage.data.read() {
            Buffer::Cpu(data) => device::upload(data.as_bytes(), device)?,
            Buffer::Raw(m) => device::upload(m.bytes(), device)?,
            Buffer::Device(b) => {
                let host = device::download(b, self.dtype(), self.device())?;
                if device.is_cpu() {
                    Buffer::Cpu(host)
                } else {
                    device::upload(host.as_bytes(), device)?
                }
            }
        };
        Ok(Tensor::from_parts(buffer, self.dtype(), device, self.shape.clone()))
    }

    /// The tensor in host memory.
    pub fn cpu(&self) -> Result<Tensor> {
        self.to_device(Device::Cpu)
    }

    /// A copy with its own storage (PyTorch's `clone()`), not tracking gradients.
    pub fn deep_copy(&self) -> Result<Tensor> {
        if !self.is_dense() {
            return self.dense();
        }
        let copy = self.storage.data.read().clone_buffer();
        Ok(Tensor::from_buffer(copy, self))
    }

    /// A handle to the same data that carries no autograd state (PyTorch's `detach()`).
    pub fn detach(&self) -> Tensor {
        Tensor {
            shape: self.shape.clone(),
            view: self.detached_view(),
            storage: self.storage.clone(),
            grad_meta: OnceLock::new(),
            mode_marks: ModeMarks::NONE,
        }
    }

    /// Detaches this handle from the graph in place (PyTorch's `detach_()`): it becomes a leaf that requires no
    /// gradient, on the same storage. The autograd state lives per handle, so other handles of the tensor keep
    /// theirs. A view is refused with PyTorch's error (`detach()` it instead).
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![1.0f32, 2.0], [2])?.requires_grad_(true)?;
    /// let mut y = x.mul_scalar(2.0)?;
    /// y.detach_()?;
    /// assert!(!y.requires_grad() && y.is_leaf());
    /// assert!(x.narrow(0, 0, 1)?.detach_().is_err());
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn detach_(&mut self) -> Result<()> {
        if self.is_view() {
            return Err(Error::autograd(
                "detach_",
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel \
                 (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP \
                 buckets, and hence detach_() cannot be called on these gradients. To fix this error, please \
                 refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
            ));
        }
        self.grad_meta = OnceLock::new();
        Ok(())
    }

    /// Whether gradients flow into this tensor.
    pub fn requires_grad(&self) -> bool {
        self.grad_meta().is_some_and(|m| m.requires_grad())
    }

    /// Sets whether gradients flow into this tensor (only floating-point tensors can require them; a computed
    /// tensor's flag cannot be turned off: [`detach`](Self::detach) it instead, as in PyTorch).
    pub fn set_requires_grad(&mut self, on: bool) -> Result<()> {
        if on && !self.is_floating_point() {
            return Err(Error::UnsupportedDType {
                op: "requires_grad",
                dtype: self.dtype(),
                hint: "; only floating-point tensors can require gradients",
            });
        }
        if !on && !self.is_leaf() {
            return Err(Error::autograd(
                "requires_grad_",
                "only a leaf's requires_grad can be turned off; detach() a computed tensor instead",
            ));
        }
        match self.grad_meta.get() {
            Some(meta) => meta.set_requires_grad(on),
            None if on => self.grad_meta = OnceLock::from(Arc::new(GradMeta::new(true))),
            None => {}
        }
        Ok(())
    }

    /// [`set_requires_grad`](Self::set_requires_grad) as a builder (PyTorch's `requires_grad_()`, which
    /// returns the tensor).
    ///
    /// ```
    /// # use nn::{Tensor, DType};
    /// let w = Tensor::ones([3], DType::F32).requires_grad_(true)?;
    /// w.mul(&w)?.sum_all()?.backward()?;
    /// assert_eq!(w.grad().unwrap().to_vec_f64()?, vec![2.0; 3]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn requires_grad_(mut self, on: bool) -> Result<Tensor> {
        self.set_requires_grad(on)?;
        Ok(self)
    }

    /// The accumulated gradient, if any.
    pub fn grad(&self) -> Option<Tensor> {
        self.grad_meta().and_then(|m| m.grad())
    }

    /// Whether no recorded operation computed this tensor (PyTorch's `is_leaf`): tensors made directly and
    /// parameters are leaves.
    pub fn is_leaf(&self) -> bool {
        self.grad_meta().is_none_or(|m| m.is_leaf())
    }

    /// The name of the operation that computed this tensor, for a tensor recorded by autograd (PyTorch's
    /// `grad_fn`, `"mul"` for `MulBackward0`).
    pub fn grad_fn_name(&self) -> Option<&'static str> {
        self.grad_meta()?.grad_fn().map(|(node, _)| node.name())
    }

    /// Makes a computed tensor keep its gradient in [`grad`](Self::grad) after a backward pass (PyTorch's
    /// `retain_grad()`); a leaf keeps it anyway.
    pub fn retain_grad(&self) -> Result<()> {
        let meta = self
            .grad_meta()
            .filter(|m| m.requires_grad())
            .ok_or_else(|| Error::autograd("retain_grad", "the tensor does not require grad"))?;
        if let Some((node, index)) = meta.grad_fn() {
            node.retain(index, meta);
        }
        Ok(())
    }

    /// Output `index` of `node`: this tensor with a fresh autograd state pointing there.
    pub(crate) fn attach(&mut self, node: &Arc<autograd::Node>, index: usize) {
        self.grad_meta = OnceLock::from(Arc::new(GradMeta::computed(node.clone(), index)));
    }

    /// The autograd state, shared with the `Param` this tensor belongs to.
    pub fn grad_meta(&self) -> Option<&Arc<GradMeta>> {
        self.grad_meta.get()
    }

    pub(crate) fn with_grad_meta(mut self, meta: Option<Arc<GradMeta>>) -> Tensor {
        self.grad_meta = meta.map(OnceLock::from).unwrap_or_default();
        self
    }

    /// Gives this tensor, which has no autograd state, the state `meta` through a shared handle (nothing when it
    /// has one): only for a recorded in-place write (`in_place`), where no other handle shares its storage.
    pub(crate) fn adopt_grad_meta(&self, meta: Arc<GradMeta>) {
        let _ = self.grad_meta.set(meta);
    }

    /// Copies `src` into this tensor's storage in place, casting its dtype (PyTorch's `copy_`).
    /// Shapes must be equal; a copy from the tensor's own storage does nothing.
    ///
    /// While autograd records, a copy into a tensor computed by recorded operations, or from a tensor that
    /// requires a gradient, is recorded as PyTorch's `CopyBackwards`: the gradient reaches `src` (cast back to
    /// its dtype and device) and the tensor's old history gets zeros. A float tensor that required no gradient
    /// then requires one, as in PyTorch, where it is no view and no other handle shares its storage (else the
    /// copy is refused: those handles would not see the new history); a leaf that requires a gradient is
    /// refused with PyTorch's sentence. Any other copy is not recorded: a copy into a parameter's data
    /// (PyTorch's `p.data.copy_(…)`) stays allowed.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0], [2]).unwrap().requires_grad_(true).unwrap();
    /// let z = Tensor::from_vec(vec![4.0f64, 5.0], [2]).unwrap().requires_grad_(true).unwrap();
    /// let y = x.mul_scalar(2.0).unwrap();
    /// y.copy_(&z).unwrap();
    /// y.mul_scalar(3.0).unwrap().sum_all().unwrap().backward().unwrap();
    /// assert_eq!(z.grad().unwrap().to_vec::<f64>().unwrap(), vec![3.0, 3.0]);
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 0.0]);
    /// ```
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
        let takes_history = autograd::is_grad_enabled() && src.requires_grad() && self.is_floating_point();
        if self.is_recorded_write() || takes_history {
            if src.shape != self.shape {
                return Err(Error::shapes("copy_", &self.shape, &src.shape, "equal shapes"));
            }
            let (dtype, device) = (src.dtype(), src.device());
            return in_place::in_place_recorded_without_copy(
                "copy_",
                &[self, src],
                || self.copy_unrecorded(src),
                || {
                    Box::new(move |g: &[Tensor], needs: &[bool]| {
                        Ok(vec![
                            needs[0].then(|| g[0].zeros_like()).transpose()?,
                            needs[1].then(|| g[0].to_dtype(dtype)?.to_device(device)).transpose()?,
                        ])
                    })
                },
            );
        }
        self.check_unrecorded_write("copy_", Some(src))?;
        self.copy_unrecorded(src)
    }

    /// [`copy_`](Self::copy_) without recording.
    fn copy_unrecorded(&self, src: &Tensor) -> Result<()> {
        if src.shape != self.shape {
            return Err(Error::shapes("copy_", &self.shape, &src.shape, "equal shapes"));
        }
        if self.shares_storage(src) && self.is_dense() && src.is_dense() {
            return Ok(());
        }
        if !self.is_dense() || self.shares_storage(src) {
            self.check_writable("copy_")?;
            let src = src.to_dtype(self.dtype())?.to_device(self.device())?.dense()?;
            let src = if src.shares_storage(self) {
                src.deep_copy()?
            } else {
                src
            };
            return self.write_back(&src);
        }
        if let Buffer::Device(b) = &*self.storage.data.read() {
            self.bump_version();
            return device::copy_into(self, b, src);
        }
        let src_host = src.cpu()?;
        let src_guard = src_host.storage.data.read();
        if src_guard.host_bytes().is_none() {
            return Err(src_host.not_on_cpu("copy_"));
        }
        if src_host.dtype() == self.dtype() {
            return self.write_cpu("copy_", |dst| dst.copy_from_buffer(&src_guard));
        }
        let Some(src_data) = src_guard.host() else {
            return Err(src_host.not_on_cpu("copy_"));
        };
        self.write_cpu("copy_", |dst| cast::cast_into(src_data, dst))
    }

    /// Puts `src`'s contents (same dtype, device and element count) into this tensor's storage for a load, and
    /// returns the old contents when `keep_old` (to undo it with [`replace_contents`](Self::replace_contents)).
    /// Without `keep_old`, host elements are copied into the storage's own memory (no new memory; raw bytes,
    /// such as a mapped file's pages, are read as they are) unless `src` is typed host memory nothing else
    /// holds, which is moved in.
    pub(crate) fn load_contents(&self, src: Tensor, keep_old: bool) -> Option<Tensor> {
        if keep_old || !self.device().is_cpu() || self.shares_storage(&src) || !self.is_dense() || !src.is_dense() {
            return Some(self.replace_contents(src));
        }
        let movable = Arc::strong_count(&src.storage) == 1 && matches!(&*src.storage.data.read(), Buffer::Cpu(_));
        if movable {
            drop(self.replace_contents(src));
            return None;
        }
        self.bump_version();
        let src_guard = src.storage.data.read();
        let mut dst_guard = self.storage.data.write();
        dst_guard.host_mut()?.copy_from_buffer(&src_guard);
        None
    }

    /// A tensor of its own storage holding `buffer`, with the dtype, device and shape of `like`.
    pub(crate) fn from_buffer(buffer: Buffer, like: &Tensor) -> Tensor {
        Tensor::from_parts(buffer, like.dtype(), like.device(), like.shape.clone())
    }

    /// A tensor of its own storage holding `buffer`, which holds `shape`'s elements of `dtype` on `device`.
    pub(crate) fn from_parts(buffer: Buffer, dtype: DType, device: Device, shape: Shape) -> Tensor {
        let storage = Storage::new(dtype, device, shape.numel(), buffer);
        Tensor {
            shape,
            view: None,
            storage: Arc::new(storage),
            grad_meta: OnceLock::new(),
            mode_marks: ModeMarks::NONE,
        }
    }

    /// Sets every element to `value` in place. Into a tensor computed by recorded operations, while autograd
    /// records, recorded as PyTorch's `FillBackward`: the tensor's old history gets zeros.
    pub fn fill_(&self, value: f64) -> Result<()> {
        self.fill_named("fill_", value)
    }

    /// Sets every element to zero in place (recorded as [`fill_`](Self::fill_) is, as PyTorch's `ZeroBackward`).
    pub fn zero_(&self) -> Result<()> {
        self.fill_named("zero_", 0.0)
    }

    /// [`fill_`](Self::fill_) under the name `op`.
    fn fill_named(&self, op: &'static str, value: f64) -> Result<()> {
        let fill = || {
            if !self.is_dense() {
                let values = Tensor::try_full(self.shape.clone(), value, self.dtype())?.to_device(self.device())?;
                return self.scatter_from(&values);
            }
            if !self.device().is_cpu() {
                let host = Tensor::full(self.shape.clone(), value, self.dtype());
                return self.copy_unrecorded(&host);
            }
            self.write_cpu(op, |d| d.fill(value))
        };
        if self.is_recorded_write() {
            return in_place::in_place_recorded_without_copy(op, &[self], fill, || {
                Box::new(|g: &[Tensor], needs: &[bool]| Ok(vec![needs[0].then(|| g[0].zeros_like()).transpose()?]))
            });
        }
        self.check_unrecorded_write(op, None)?;
        fill()
    }

    /// Whether a write into this tensor is recorded: autograd records and the tensor was computed by recorded
    /// operations (its history goes on, through the write's node).
    pub(crate) fn is_recorded_write(&self) -> bool {
        autograd::is_grad_enabled() && !self.is_leaf() && self.requires_grad()
    }

    /// `copy_` and `fill_` into a tensor that is not computed ([`is_recorded_write`](Self::is_recorded_write)
    /// is false) write without recording: while autograd records, copying from a tensor that requires a
    /// gradient would give a wrong gradient (none would reach it, and no handle of this tensor could carry the
    /// copy's history), so it is refused. Writing into a leaf (a parameter's data, as PyTorch's
    /// `p.data.copy_(…)`) is not recorded and stays allowed.
    fn check_unrecorded_write(&self, op: &'static str, src: Option<&Tensor>) -> Result<()> {
        if !autograd::is_grad_enabled() {
            return Ok(());
        }
        if src.is_some_and(Tensor::requires_grad) {
            return Err(Error::autograd(
                op,
                "an in-place copy from a tensor that requires grad is not recorded; use the source itself (or \
                 its to_dtype / to_device, which are), or copy under nn::no_grad()",
            ));
        }
        Ok(())
    }
}

/// A tensor's host bytes, borrowed under its storage's read lock ([`Tensor::host_bytes`]).
pub(crate) type HostBytes<'a> = MappedRwLockReadGuard<'a, [u8]>;

/// A tensor's host elements, borrowed under its storage's read lock ([`Tensor::host_slice`]).
pub(crate) type HostSlice<'a, T> = MappedRwLockReadGuard<'a, [T]>;

/// Resolves a possibly negative dimension index against a rank, or names the valid range.
pub(crate) fn normalize_dim(op: &'static str, dim: isize, rank: usize) -> Result<usize> {
    let r = rank.max(1) as isize;
    let d = if dim < 0 { dim + r } else { dim };
    if d < 0 || d >= r {
        return Err(Error::invalid(
            op,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -r,
                r - 1
            ),
        ));
    }
    Ok(d as usize)
}
