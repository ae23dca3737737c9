//! Tensor operations on a device: layout moves (narrow, permute, cat), broadcast arithmetic, `x·a + b`, and
//! integer increments — the glue layers need between their kernels, with no trip through the host.

use kernels::binary::{self, BinaryOp};
use kernels::gather::{self, Element};

use super::memory::{buffer_of, float_type, kernel_error, open};
use super::probe;
use crate::tensor::Arith;
use crate::tensor::storage::Buffer;
use crate::{DType, Device, Error, Result, Shape, Tensor};

/// How elements of `dtype` move on a device, or an error naming `op` for dtypes no kernel moves.
fn element(op: &'static str, x: &Tensor) -> Result<Element> {
    match x.dtype() {
        DType::F16 => Ok(Element::F16),
        DType::BF16 => Ok(Element::BF16),
        DType::F32 | DType::I32 => Ok(Element::Bits32),
        DType::F64 | DType::I64 => Ok(Element::Bits64),
        dtype @ (DType::U8 | DType::Bool) => Err(Error::UnsupportedOnDevice {
            op,
            dtype,
            device: x.device(),
            reason: "1-byte elements are not moved by the device kernels; move the tensor with .cpu() first".into(),
        }),
    }
}

/// A new tensor of `shape` on `x`'s device holding `buffer`, in `x`'s dtype.
fn tensor_of(buffer: kernels::GpuBuffer, x: &Tensor, shape: Shape) -> Tensor {
    Tensor::from_parts(Buffer::Device(buffer), x.dtype(), x.device(), shape)
}

/// The elements of `x` at `offset + Σ index·strides` for every index of `shape` (narrow, permute).
pub(crate) fn gather(op: &'static str, x: &Tensor, shape: Shape, strides: &[usize], offset: usize) -> Result<Tensor> {
    let element = element(op, x)?;
    let out = gather::gather(&buffer_of(x, op)?, element, &shape, strides, offset)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(tensor_of(out, x, shape))
}

/// The tensors (checked: one dtype, equal sizes off `dim`) joined along `dim` into `out_shape`.
pub(crate) fn cat(tensors: &[&Tensor], dim: usize, out_shape: Shape) -> Result<Tensor> {
    let op = "cat";
    let first = tensors[0];
    for t in tensors {
        if t.device() != first.device() {
            return Err(Error::DeviceMismatch {
                op,
                lhs: first.device(),
                rhs: t.device(),
            });
        }
    }
    let element = element(op, first)?;
    let gpu = open(first.device())?;
    let out = kernels::GpuBuffer::uninit(&gpu, out_shape.numel() * first.dtype().size_in_bytes());
    let outer: usize = out_shape[..dim].iter().product();
    let out_row: usize = out_shape[dim..].iter().product();
    let mut col = 0;
    for t in tensors {
        let row: usize = t.shape()[dim..].iter().product();
        gather::place_rows(&buffer_of(t, op)?, &out, element, outer, row, out_row, col)
            .map_err(|e| kernel_error(e, op, t.dtype(), t.device()))?;
        col += row;
    }
    Ok(tensor_of(out, first, out_shape))
}

fn binary_op(op: Arith) -> BinaryOp {
    match op {
        Arith::Add => BinaryOp::Add,
        Arith::Sub => BinaryOp::Sub,
        Arith::Mul => BinaryOp::Mul,
        Arith::Div => BinaryOp::Div,
    }
}

/// Fails unless `op` in `dtype` passed its probe on `device`: a broadcast of the probe inputs against a
/// column, compared with the CPU.
fn verify_arith(op: Arith, name: &'static str, device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, name, dtype, || {
        let xs = probe::inputs();
        let n = xs.len();
        let a = Tensor::from_vec(xs.clone(), [1, n])?.to_dtype(dtype)?;
        let b = Tensor::from_vec(vec![0.75, -1.5, 3.0], [3, 1])?.to_dtype(dtype)?;
        let out_shape = Shape::from([3, n]);
        let got = arith_unchecked(op, &a.to_device(device)?, &b.to_device(device)?, out_shape)?;
        let want = match op {
            Arith::Add => a.add(&b)?,
            Arith::Sub => a.sub(&b)?,
            Arith::Mul => a.mul(&b)?,
            Arith::Div => a.div(&b)?,
        };
        probe::measure(&[(got, want)])
    })
}

fn arith_unchecked(op: Arith, a: &Tensor, b: &Tensor, out_shape: Shape) -> Result<Tensor> {
    let name = "arith";
    let dtype = float_type(name, a.dtype())?;
    let out = binary::binary(
        binary_op(op),
        dtype,
        &buffer_of(a, name)?,
        a.shape(),
        &buffer_of(b, name)?,
        b.shape(),
        &out_shape,
    )
    .map_err(|e| kernel_error(e, name, a.dtype(), a.device()))?;
    Ok(tensor_of(out, a, out_shape))
}

/// Checks that the device stores and computes `x`'s float dtype.
fn admit_float(op: &'static str, x: &Tensor) -> Result<()> {
    let dtype = float_type(op, x.dtype())?;
    open(x.device())?
        .check_dtype(op, dtype)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))
}

/// `op(a, b)` broadcast to `out_shape`, both (already promoted to one float dtype) on one device.
pub(crate) fn arith(op: Arith, name: &'static str, a: &Tensor, b: &Tensor, out_shape: Shape) -> Result<Tensor> {
    admit_float(name, a)?;
    verify_arith(op, name, a.device(), a.dtype())?;
    arith_unchecked(op, a, b, out_shape)
}

/// `a = op(a, b)` in place, `b` (in `a`'s dtype, not sharing its storage) broadcast to `a`'s shape.
pub(crate) fn arith_(op: Arith, name: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    admit_float(name, a)?;
    verify_arith(op, name, a.device(), a.dtype())?;
    binary::binary_in_place(
        binary_op(op),
        float_type(name, a.dtype())?,
        &buffer_of(a, name)?,
        a.shape(),
        &buffer_of(b, name)?,
        b.shape(),
    )
    .map_err(|e| kernel_error(e, name, a.dtype(), a.device()))
}

/// Fails unless `x·scale + shift` in `dtype` passed its probe on `device`.
fn verify_affine(device: Device, dtype: DType) -> Result<()> {
    probe::ensure(device, "affine", dtype, || {
        let xs = probe::inputs();
        let x = Tensor::from_vec(xs.clone(), [xs.len()])?.to_dtype(dtype)?;
        let got = affine_unchecked(&x.to_device(device)?, -1.25, 0.5)?;
        probe::measure(&[(got, x.affine(-1.25, 0.5)?)])
    })
}

fn affine_unchecked(x: &Tensor, scale: f64, shift: f64) -> Result<Tensor> {
    let op = "affine";
    let out = binary::affine(float_type(op, x.dtype())?, &buffer_of(x, op)?, scale, shift)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))?;
    Ok(tensor_of(out, x, x.shape().clone()))
}

/// `x·scale + shift` for a float `x` on a device.
pub(crate) fn affine(x: &Tensor, scale: f64, shift: f64) -> Result<Tensor> {
    admit_float("affine", x)?;
    verify_affine(x.device(), x.dtype())?;
    affine_unchecked(x, scale, shift)
}

/// `x = x·scale + shift` in place for a float `x` on a device.
pub(crate) fn affine_(x: &Tensor, scale: f64, shift: f64) -> Result<()> {
    let op = "affine";
    admit_float(op, x)?;
    verify_affine(x.device(), x.dtype())?;
    binary::affine_in_place(float_type(op, x.dtype())?, &buffer_of(x, op)?, scale, shift)
        .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))
}

/// `x += value` in place on a device: floats through `affine_`, `i64` and `i32` wrapping (as PyTorch's integer
/// arithmetic does); other dtypes are refused.
pub(crate) fn add_scalar_(x: &Tensor, value: f64) -> Result<()> {
    let op = "add_scalar_";
    match x.dtype() {
        dtype if dtype.is_floating_point() => affine_(x, 1.0, value),
        DType::I64 | DType::I32 => {
            binary::add_integer_in_place(&buffer_of(x, op)?, x.dtype().size_in_bytes(), value as i64)
                .map_err(|e| kernel_error(e, op, x.dtype(), x.device()))
        }
        dtype => Err(Error::UnsupportedOnDevice {
            op,
            dtype,
            device: x.device(),
            reason: "only floating-point, i64 and i32 tensors are incremented on a device".into(),
        }),
    }
}
