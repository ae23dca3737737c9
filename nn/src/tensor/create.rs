//! Tensor constructors.

use super::Tensor;
use super::storage::CpuData;
use crate::{DType, Element, Error, Result, Shape};

impl Tensor {
    /// A tensor owning `data`, laid out row-major in `shape`.
    ///
    /// ```
    /// let t = nn::Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], [2, 3]).unwrap();
    /// assert_eq!(t.shape(), &[2, 3]);
    /// assert!(nn::Tensor::from_vec(vec![1.0f32; 5], [2, 3]).is_err());
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        if data.len() != shape.numel() {
            return Err(Error::ElementCount {
                expected: shape.numel(),
                got: data.len(),
                shape,
            });
        }
        Ok(Tensor::from_cpu(CpuData::from_vec(data), shape))
    }

    /// A tensor copied from `data`, laid out row-major in `shape`.
    pub fn from_slice<T: Element>(data: &[T], shape: impl Into<Shape>) -> Result<Tensor> {
        Tensor::from_vec(data.to_vec(), shape)
    }

    /// A 1-dimensional tensor owning `data`.
    pub fn from_vec1<T: Element>(data: Vec<T>) -> Tensor {
        let n = data.len();
        Tensor::from_cpu(CpuData::from_vec(data), Shape::from([n]))
    }

    /// A 0-dimensional tensor holding one value, such as BatchNorm's `num_batches_tracked`.
    ///
    /// ```
    /// let t = nn::Tensor::scalar(7i64);
    /// assert_eq!(t.rank(), 0);
    /// assert_eq!(t.item().unwrap(), 7.0);
    /// ```
    pub fn scalar<T: Element>(value: T) -> Tensor {
        Tensor::from_cpu(CpuData::from_vec(vec![value]), Shape::scalar())
    }

    /// A tensor of `dtype` read from raw little-endian bytes (any alignment).
    ///
    /// ```
    /// let t = nn::Tensor::from_bytes(&[1, 0, 1], [3], nn::DType::Bool).unwrap();
    /// assert_eq!(t.to_vec::<bool>().unwrap(), vec![true, false, true]);
    /// ```
    pub fn from_bytes(bytes: &[u8], shape: impl Into<Shape>, dtype: DType) -> Result<Tensor> {
        let shape = shape.into();
        let size = dtype.size_in_bytes();
        // A length that is not whole elements is `CpuData::from_bytes`'s error.
        if bytes.len().is_multiple_of(size) && bytes.len() / size != shape.numel() {
            return Err(Error::ElementCount {
                expected: shape.numel(),
                got: bytes.len() / size,
                shape,
            });
        }
        Ok(Tensor::from_cpu(CpuData::from_bytes(dtype, bytes)?, shape))
    }

    /// A tensor of `shape` and `dtype` whose little-endian bytes are read from `reader`, straight into the
    /// tensor's storage (no intermediate buffer): how the loaders read a file. The storage is allocated before
    /// the read, so check the size against what the source holds first.
    ///
    /// ```
    /// let bytes = 1.5f32.to_le_bytes();
    /// let t = nn::Tensor::read_from(&mut &bytes[..], [1], nn::DType::F32).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), [1.5]);
    /// ```
    pub fn read_from(reader: &mut dyn std::io::Read, shape: impl Into<Shape>, dtype: DType) -> std::io::Result<Tensor> {
        let shape = shape.into();
        let n = shape.numel();
        Ok(Tensor::from_cpu(CpuData::read_from(dtype, n, reader)?, shape))
    }

    /// A tensor of `shape` and `dtype` read at byte `offset` of `file` (little-endian), as
    /// [`read_from`](Self::read_from) reads; a large tensor is read on the threads.
    pub(crate) fn read_at(file: &std::fs::File, offset: u64, shape: &[usize], dtype: DType) -> std::io::Result<Tensor> {
        let shape = Shape::from(shape);
        let n = shape.numel();
        Ok(Tensor::from_cpu(CpuData::read_at(dtype, n, file, offset)?, shape))
    }

    /// A tensor of zeros.
    ///
    /// # Panics
    /// Where the allocator refuses the tensor or its bytes overflow `isize::MAX` (the message names the shape
    /// and dtype), where `vec!` would abort; [`try_zeros`](Self::try_zeros) is the form returning an error.
    pub fn zeros(shape: impl Into<Shape>, dtype: DType) -> Tensor {
        Tensor::try_zeros(shape, dtype).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A tensor of zeros, or [`Error::Allocation`] where it cannot be allocated (PyTorch's "not enough
    /// memory").
    ///
    /// ```
    /// use nn::{DType, Error, Tensor};
    /// assert_eq!(Tensor::try_zeros([2, 3], DType::F32).unwrap().numel(), 6);
    /// let err = Tensor::try_zeros([1 << 40, 1 << 20], DType::F32).unwrap_err();
    /// assert!(matches!(err, Error::Allocation { .. }), "{err}");
    /// ```
    pub fn try_zeros(shape: impl Into<Shape>, dtype: DType) -> Result<Tensor> {
        let shape = shape.into();
        let n = allocatable("zeros", &shape, dtype, dtype.size_in_bytes())?;
        let data = CpuData::try_zeros(dtype, n).ok_or_else(|| refused("zeros", &shape, dtype))?;
        Ok(Tensor::from_cpu(data, shape))
    }

    /// A tensor of ones.
    pub fn ones(shape: impl Into<Shape>, dtype: DType) -> Tensor {
        Tensor::full(shape, 1.0, dtype)
    }

    /// A tensor filled with `value`, cast to `dtype`. Panics as [`zeros`](Self::zeros) does;
    /// [`try_full`](Self::try_full) returns the error.
    pub fn full(shape: impl Into<Shape>, value: f64, dtype: DType) -> Tensor {
        Tensor::try_full(shape, value, dtype).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A tensor filled with `value`, or [`Error::Allocation`] as [`try_zeros`](Self::try_zeros).
    pub fn try_full(shape: impl Into<Shape>, value: f64, dtype: DType) -> Result<Tensor> {
        let shape = shape.into();
        let n = allocatable("full", &shape, dtype, dtype.size_in_bytes())?;
        let mut data = CpuData::try_zeros(dtype, n).ok_or_else(|| refused("full", &shape, dtype))?;
        data.fill(value);
        Ok(Tensor::from_cpu(data, shape))
    }

    /// Zeros with this tensor's shape, dtype and device.
    pub fn zeros_like(&self) -> Result<Tensor> {
        Tensor::zeros(self.shape.clone(), self.dtype()).to_device(self.device())
    }

    /// Ones with this tensor's shape, dtype and device.
    pub fn ones_like(&self) -> Result<Tensor> {
        Tensor::ones(self.shape.clone(), self.dtype()).to_device(self.device())
    }

    /// `value` (cast to the dtype) with this tensor's shape, dtype and device (PyTorch's `full_like`).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2], nn::DType::I64);
    /// assert_eq!(x.full_like(7.9)?.to_vec::<i64>()?, vec![7, 7]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn full_like(&self, value: f64) -> Result<Tensor> {
        Tensor::try_full(self.shape.clone(), value, self.dtype())?.to_device(self.device())
    }
}

/// The element count of a tensor of `shape` and `dtype` about to be allocated by `op` at `bytes_per_element`,
/// or [`Error::Allocation`] when its bytes overflow `isize::MAX` (where `Vec` would panic with "capacity
/// overflow").
pub(super) fn allocatable(op: &'static str, shape: &Shape, dtype: DType, bytes_per_element: usize) -> Result<usize> {
    let numel = shape.numel();
    if numel
        .checked_mul(bytes_per_element)
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(refused(op, shape, dtype));
    }
    Ok(numel)
}

/// [`Error::Allocation`] for a tensor of `shape` and `dtype`.
pub(super) fn refused(op: &'static str, shape: &Shape, dtype: DType) -> Error {
    Error::Allocation {
        op,
        shape: shape.clone(),
        dtype,
        bytes: shape.numel().saturating_mul(dtype.size_in_bytes()),
    }
}
