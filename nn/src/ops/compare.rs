//! Comparisons (`eq`, `ne`, `lt`, `le`, `gt`, `ge`) and logical operations (`logical_and`, `logical_or`,
//! `logical_xor`, `logical_not`) giving bool tensors, with PyTorch's broadcasting and type promotion, for every
//! dtype on the CPU and on devices (integers and bools compared exactly, word by word).

use kernels::GpuDevice;
use kernels::boolean::{self, CompareOp, Integer, LogicalOp};

use super::arith::operand;
use super::elementwise::{broadcast_shape, broadcast_strides, result_type, zip_broadcast};
use super::{DevicePath, Op, run};
use crate::tensor::device::{float_type, probe};
use crate::tensor::storage::{CpuData, with_cpu_data};
use crate::{DType, Result, Shape, Tensor};

/// Whether `a op b` holds, as PyTorch's comparisons: NaN compares false, except under `ne`.
#[inline(always)]
fn holds<T: PartialOrd>(op: CompareOp, a: T, b: T) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}

/// PyTorch's name of a comparison.
fn compare_name(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => "eq",
        CompareOp::Ne => "ne",
        CompareOp::Lt => "lt",
        CompareOp::Le => "le",
        CompareOp::Gt => "gt",
        CompareOp::Ge => "ge",
    }
}

/// A bool tensor of the shape `[a, b]` broadcast to, from host data: `f(a's data, b's, the shape, a's broadcast
/// strides, b's)`.
fn host_bools(
    name: &'static str,
    inputs: &[&Tensor],
    f: impl FnOnce(&CpuData, &CpuData, &Shape, &[usize], &[usize]) -> CpuData,
) -> Result<Tensor> {
    let (a, b) = (inputs[0], inputs[1]);
    let shape = broadcast_shape(name, a.shape(), b.shape())?;
    let (sa, sb) = (
        broadcast_strides(a.shape(), &shape),
        broadcast_strides(b.shape(), &shape),
    );
    let data = a.read_cpu(name, |da| b.read_cpu(name, |db| f(da, db, &shape, &sa, &sb)))??;
    Ok(Tensor::from_cpu(data, shape))
}

/// A bool tensor of the shape `[a, b]` broadcast to, on their device: `kernel(a, b, the shape)`.
fn device_bools(
    name: &'static str,
    inputs: &[&Tensor],
    kernel: impl FnOnce(
        kernels::binary::Operand<'_>,
        kernels::binary::Operand<'_>,
        &[usize],
    ) -> kernels::Result<kernels::GpuBuffer>,
) -> Result<Tensor> {
    let (a, b) = (inputs[0], inputs[1]);
    let shape = broadcast_shape(name, a.shape(), b.shape())?;
    let (ba, bb) = (a.gpu_buffer(name)?, b.gpu_buffer(name)?);
    let out = kernel(operand(&ba, a), operand(&bb, b), &shape).map_err(|e| a.kernel_error(name, e))?;
    Ok(a.with_gpu_as(out, shape, DType::Bool))
}

/// `a op b` broadcast, `a` and `b` of one dtype; inputs `[a, b]`, output bool.
#[derive(Clone, Copy)]
struct Compare(CompareOp);

impl Op for Compare {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        compare_name(self.0)
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let op = self.0;
        host_bools(self.name(), inputs, |da, db, shape, sa, sb| {
            with_cpu_data!(da, x => {
                let y = db.as_slice().expect("the operands were promoted to one dtype");
                CpuData::Bool(zip_broadcast(x, sa, y, sb, shape, |p, q| holds(op, p, q)))
            })
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (op, name, dtype) = (self.0, self.name(), inputs[0].dtype());
        let integer = match dtype {
            DType::U8 | DType::Bool => Some(Integer::Byte),
            DType::I32 => Some(Integer::I32),
            DType::I64 => Some(Integer::I64),
            _ => None,
        };
        let float = integer.is_none().then(|| float_type(name, dtype)).transpose()?;
        device_bools(name, inputs, |oa, ob, shape| match (integer, float) {
            (Some(kind), _) => boolean::compare_integers(op, kind, oa, ob, shape),
            (None, Some(float)) => boolean::compare(op, float, oa, ob, shape),
            (None, None) => unreachable!("a dtype is an integer or a float"),
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // The sweep with NaN and the infinities, against a column holding values of the sweep and a NaN.
        let mut xs = probe::inputs();
        xs.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0]);
        let n = xs.len();
        let a = Tensor::from_vec(xs, [1, n])?.to_dtype(dtype)?;
        let b = Tensor::from_vec(vec![0.75, -1.5, 0.0, f64::NAN, f64::INFINITY], [5, 1])?.to_dtype(dtype)?;
        let ops = [
            CompareOp::Eq,
            CompareOp::Ne,
            CompareOp::Lt,
            CompareOp::Le,
            CompareOp::Gt,
            CompareOp::Ge,
        ];
        Ok(ops
            .into_iter()
            .map(|op| (Compare(op), vec![a.clone(), b.clone()]))
            .collect())
    }
}

/// The dtype PyTorch compares a tensor of `dtype` and a Python number `value` in: the tensor's, unless the
/// number has a fraction and the tensor is integral (then the default `f32`), or the tensor is bool (`i64`).
fn scalar_compare_dtype(dtype: DType, value: f64) -> DType {
    if dtype.is_floating_point() {
        dtype
    } else if value.fract() != 0.0 || !value.is_finite() {
        DType::F32
    } else if dtype == DType::Bool {
        DType::I64
    } else {
        dtype
    }
}

impl Tensor {
    fn compare(&self, op: CompareOp, other: &Tensor) -> Result<Tensor> {
        let name = compare_name(op);
        broadcast_shape(name, self.shape(), other.shape())?;
        let dtype = result_type(self, other);
        run(&Compare(op), &[&self.to_dtype(dtype)?, &other.to_dtype(dtype)?])
    }

    fn compare_scalar(&self, op: CompareOp, value: f64) -> Result<Tensor> {
        let dtype = scalar_compare_dtype(self.dtype(), value);
        let value = Tensor::try_full(Shape::scalar(), value, dtype)?.to_device(self.device())?;
        run(&Compare(op), &[&self.to_dtype(dtype)?, &value])
    }

    /// `self == other` element by element, broadcasting (PyTorch's `torch.eq`): a bool tensor. The operands
    /// are compared in their promoted dtype; NaN equals nothing.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, f32::NAN], [3])?;
    /// let b = Tensor::from_vec(vec![1i64, 3, 0], [3])?;
    /// assert_eq!(a.eq(&b)?.to_vec::<bool>()?, vec![true, false, false]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn eq(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CompareOp::Eq, other)
    }

    /// `self == value` element by element (PyTorch's `x == 2`): a bool tensor. The number is compared in the
    /// tensor's dtype, as PyTorch compares a Python number; a number with a fraction beside an integer tensor
    /// compares in `f32`.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3], [3])?;
    /// assert_eq!(x.eq_scalar(2.0)?.to_vec::<bool>()?, vec![false, true, false]);
    /// assert_eq!(x.gt_scalar(1.5)?.to_vec::<bool>()?, vec![false, true, true]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn eq_scalar(&self, value: f64) -> Result<Tensor> {
        self.compare_scalar(CompareOp::Eq, value)
    }

    /// Whether every element equals `other`'s, with the same shape (PyTorch's `torch.equal`): false for other
    /// shapes, never an error for them; operands of two dtypes are compared in their promoted dtype.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
    /// assert!(a.equal(&Tensor::from_vec(vec![1i64, 2], [2])?)?);
    /// assert!(!a.equal(&Tensor::from_vec(vec![1.0f32, 2.0], [1, 2])?)?);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn equal(&self, other: &Tensor) -> Result<bool> {
        if self.shape() != other.shape() {
            return Ok(false);
        }
        Ok(self.eq(other)?.all()?.cpu()?.to_vec::<bool>()?[0])
    }

    /// This tensor as bools: itself when it is one, else `self != 0` (PyTorch's truth of a number).
    pub(crate) fn truth(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            Ok(self.clone())
        } else {
            self.ne_scalar(0.0)
        }
    }

    fn logical(&self, op: LogicalOp, other: &Tensor) -> Result<Tensor> {
        let name = logical_name(op);
        broadcast_shape(name, self.shape(), other.shape())?;
        run(&Logical(op), &[&self.truth()?, &other.truth()?])
    }

    /// Both true, element by element, broadcasting (PyTorch's `torch.logical_and`): any dtype, a non-zero
    /// number being true; a bool tensor.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![true, true, false], [3])?;
    /// let b = Tensor::from_vec(vec![2.0f32, 0.0, 1.0], [3])?;
    /// assert_eq!(a.logical_and(&b)?.to_vec::<bool>()?, vec![true, false, false]);
    /// assert_eq!(a.logical_or(&b)?.to_vec::<bool>()?, vec![true, true, true]);
    /// assert_eq!(a.logical_xor(&b)?.to_vec::<bool>()?, vec![false, true, true]);
    /// assert_eq!(b.logical_not()?.to_vec::<bool>()?, vec![false, true, false]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn logical_and(&self, other: &Tensor) -> Result<Tensor> {
        self.logical(LogicalOp::And, other)
    }

    /// Either true, as [`logical_and`](Self::logical_and).
    pub fn logical_or(&self, other: &Tensor) -> Result<Tensor> {
        self.logical(LogicalOp::Or, other)
    }

    /// Exactly one true, as [`logical_and`](Self::logical_and).
    pub fn logical_xor(&self, other: &Tensor) -> Result<Tensor> {
        self.logical(LogicalOp::Xor, other)
    }

    /// Not true (PyTorch's `torch.logical_not`): zero becomes true, anything else false; a bool tensor.
    pub fn logical_not(&self) -> Result<Tensor> {
        let yes = Tensor::from_vec(vec![true], Shape::scalar())?.to_device(self.device())?;
        run(&Logical(LogicalOp::Xor), &[&self.truth()?, &yes])
    }
}

/// The comparisons other than `eq`, each with its number form, documented after `eq` and `eq_scalar`.
macro_rules! comparisons {
    ($($op:ident, $method:ident, $scalar:ident, $symbol:literal, $nan:literal;)*) => {
        impl Tensor {
            $(
                #[doc = concat!("`self ", $symbol, " other`, as [`eq`](Self::eq) (", $nan, ").")]
                pub fn $method(&self, other: &Tensor) -> Result<Tensor> {
                    self.compare(CompareOp::$op, other)
                }

                #[doc = concat!("`self ", $symbol, " value`, as [`eq_scalar`](Self::eq_scalar).")]
                pub fn $scalar(&self, value: f64) -> Result<Tensor> {
                    self.compare_scalar(CompareOp::$op, value)
                }
            )*
        }
    };
}

comparisons! {
    Ne, ne, ne_scalar, "!=", "NaN differs from everything, itself included";
    Lt, lt, lt_scalar, "<", "false where either is NaN";
    Le, le, le_scalar, "<=", "false where either is NaN";
    Gt, gt, gt_scalar, ">", "false where either is NaN";
    Ge, ge, ge_scalar, ">=", "false where either is NaN";
}

/// PyTorch's name of a logical operation.
fn logical_name(op: LogicalOp) -> &'static str {
    match op {
        LogicalOp::And => "logical_and",
        LogicalOp::Or => "logical_or",
        LogicalOp::Xor => "logical_xor",
    }
}

/// `a op b` broadcast for bools `a` and `b`; inputs `[a, b]`, output bool. It moves no numbers through
/// arithmetic, so it is exact on every device.
#[derive(Clone, Copy)]
struct Logical(LogicalOp);

impl Op for Logical {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::Exact;

    fn name(&self) -> &'static str {
        logical_name(self.0)
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let f = match self.0 {
            LogicalOp::And => |p: bool, q: bool| p && q,
            LogicalOp::Or => |p: bool, q: bool| p || q,
            LogicalOp::Xor => |p: bool, q: bool| p != q,
        };
        host_bools(self.name(), inputs, |da, db, shape, sa, sb| {
            let (x, y) = (da.as_slice::<bool>(), db.as_slice::<bool>());
            let (x, y) = x.zip(y).expect("logical operations take bool operands");
            CpuData::Bool(zip_broadcast(x, sa, y, sb, shape, f))
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let op = self.0;
        device_bools(self.name(), inputs, |oa, ob, shape| boolean::logical(op, oa, ob, shape))
    }
}
