//! Host elements kept as the raw little-endian bytes they came in: a memory-mapped file's pages
//! ([`io::load_safetensors_mmap`](crate::io::load_safetensors_mmap)), or the bytes a checkpoint reader returned.
//!
//! Copying such a tensor into a tensor in host memory (`copy_`, a load into a module) or to a device reads the
//! bytes directly, whatever their alignment; an operation that needs typed elements copies them once into a
//! buffer of their own, kept beside the bytes; a write in place moves the tensor to that buffer first (a mapped
//! file is never written, and bytes of its own are freed).

use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use super::Tensor;
use super::storage::{Buffer, CpuData};
use crate::{DType, Device, Error, Result, Shape};

/// Where raw bytes live.
#[derive(Debug)]
pub(crate) enum Bytes {
    /// A read-only mapping of a file, shared by the tensors made from it.
    File(Arc<Mmap>),
    /// Bytes of their own.
    Memory(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::File(map) => map,
            Bytes::Memory(v) => v,
        }
    }
}

/// `len` elements of `dtype` at byte `start` of some bytes (any alignment), and their typed copy once made.
#[derive(Debug)]
pub(crate) struct Raw {
    bytes: Bytes,
    start: usize,
    dtype: DType,
    len: usize,
    host: OnceLock<CpuData>,
}

impl Raw {
    /// The elements at `start..` of `bytes`, or `None` when the range lies outside them or the dtype is bool
    /// (whose bytes must be checked to be 0 or 1, so the caller reads them into a buffer instead).
    fn new(bytes: Bytes, start: usize, dtype: DType, len: usize) -> Option<Raw> {
        let end = len.checked_mul(dtype.size_in_bytes())?.checked_add(start)?;
        (dtype != DType::Bool && end <= bytes.as_slice().len()).then_some(Raw {
            bytes,
            start,
            dtype,
            len,
            host: OnceLock::new(),
        })
    }

    /// The elements' dtype.
    pub(crate) fn dtype(&self) -> DType {
        self.dtype
    }

    /// The elements' little-endian bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes.as_slice()[self.start..self.start + self.len * self.dtype.size_in_bytes()]
    }

    /// The elements as a typed buffer: copied out of the bytes on the first call, then kept.
    pub(crate) fn host(&self) -> &CpuData {
        self.host
            .get_or_init(|| CpuData::from_pod_bytes(self.dtype, self.bytes()))
    }

    /// The elements as a buffer of their own (the kept copy, or a new one).
    pub(crate) fn into_host(mut self) -> CpuData {
        match self.host.take() {
            Some(data) => data,
            None => CpuData::from_pod_bytes(self.dtype, self.bytes()),
        }
    }
}

impl Tensor {
    /// A tensor of `shape` whose elements of `dtype` are the bytes at `start..` of `bytes`, left where they are
    /// (bool elements are read at once, and must be 0 or 1).
    fn from_raw_parts(bytes: Bytes, start: usize, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let shape = Shape::from(shape);
        let len = shape.numel();
        let available = bytes.as_slice().len();
        let outside = || {
            Error::invalid(
                "from_raw_bytes",
                format!("{len} elements of {dtype} at byte {start} lie outside the {available} bytes given"),
            )
        };
        let buffer = if dtype == DType::Bool {
            let slice = start.checked_add(len).and_then(|end| bytes.as_slice().get(start..end));
            Buffer::Cpu(CpuData::from_bytes(dtype, slice.ok_or_else(outside)?)?)
        } else {
            Buffer::Raw(Raw::new(bytes, start, dtype, len).ok_or_else(outside)?)
        };
        Ok(Tensor::from_parts(buffer, dtype, Device::Cpu, shape))
    }

    /// A tensor of `shape` whose elements of `dtype` are at byte `start` of a mapped file, read in place.
    pub(crate) fn from_mapped(file: &Arc<Mmap>, start: usize, shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::from_raw_parts(Bytes::File(file.clone()), start, shape, dtype)
    }

    /// A tensor of `shape` whose elements of `dtype` are exactly `bytes` (little-endian, any alignment), kept
    /// as they are: a load copies them into the module without a typed buffer in between.
    pub(crate) fn from_raw_bytes(bytes: Vec<u8>, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let expected = Shape::from(shape).numel().checked_mul(dtype.size_in_bytes());
        if expected != Some(bytes.len()) {
            return Err(Error::invalid(
                "from_raw_bytes",
                format!("{} bytes do not hold shape {shape:?} of {dtype}", bytes.len()),
            ));
        }
        Tensor::from_raw_parts(Bytes::Memory(bytes), 0, shape, dtype)
    }
}
