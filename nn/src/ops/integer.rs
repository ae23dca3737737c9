//! Arithmetic between integer and bool tensors, as PyTorch's on those dtypes: `+ - *` wrapping in two's
//! complement, `maximum` / `minimum`, the floor and truncating divisions and the two remainders, and for
//! bools `+` as or, `*` as and; on the CPU and on devices (`kernels::integer`, exact on the integers'
//! words). A zero divisor is PyTorch's `ZeroDivisionError` on the CPU; on a device it gives an unspecified
//! value, as PyTorch's CUDA kernels do. The float forms are in `arith.rs`, whose methods send integer
//! results here.

use kernels::GpuDevice;
use kernels::boolean::{self, Integer, LogicalOp};

use super::arith::operand;
use super::elementwise::{broadcast_shape, broadcast_strides, result_type, zip_broadcast};
use super::{DevicePath, Op, run};
use crate::tensor::storage::CpuData;
use crate::{DType, Error, Result, Tensor};

pub(crate) use kernels::integer::IntegerOp;

/// Whether a zero divisor is PyTorch's `ZeroDivisionError` (on the CPU).
fn divides(op: IntegerOp) -> bool {
    matches!(
        op,
        IntegerOp::Remainder | IntegerOp::Fmod | IntegerOp::FloorDivide | IntegerOp::TruncDivide
    )
}

/// PyTorch's CPU kernel of the operation, named in its error for bool operands.
fn cpu_kernel(op: IntegerOp) -> &'static str {
    match op {
        IntegerOp::Remainder => "remainder_cpu",
        IntegerOp::Fmod => "fmod_cpu",
        IntegerOp::FloorDivide => "div_floor_cpu",
        IntegerOp::TruncDivide => "div_trunc_cpu",
        _ => "",
    }
}

/// The dtype `a op b` computes in (`torch.result_type`), after PyTorch's refusals of bool operands: any bool
/// operand of a subtraction, and bools in the divisions and remainders.
pub(crate) fn checked_result_type(name: &'static str, op: Option<IntegerOp>, a: &Tensor, b: &Tensor) -> Result<DType> {
    if op == Some(IntegerOp::Sub) {
        bool_subtraction(
            name,
            [a.dtype(), b.dtype()].iter().filter(|d| **d == DType::Bool).count(),
        )?;
    }
    let dtype = result_type(a, b);
    if dtype == DType::Bool
        && let Some(op) = op.filter(|op| divides(*op))
    {
        return Err(Error::invalid(
            name,
            format!("\"{}\" not implemented for 'Bool'", cpu_kernel(op)),
        ));
    }
    Ok(dtype)
}

/// PyTorch's refusal of a subtraction with `bools` bool operands (a tensor, or a tensor and a number).
pub(crate) fn bool_subtraction(name: &'static str, bools: usize) -> Result<()> {
    match bools {
        0 => Ok(()),
        1 => Err(Error::invalid(
            name,
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a \
             mask, use the `~` or `logical_not()` operator instead.",
        )),
        _ => Err(Error::invalid(
            name,
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or \
             `logical_xor()` operator instead.",
        )),
    }
}

/// `-x` of an integer tensor (wrapping: `-i64::MIN` is itself); a bool tensor is PyTorch's error.
pub(crate) fn integer_neg(x: &Tensor) -> Result<Tensor> {
    if x.dtype() == DType::Bool {
        return Err(Error::invalid(
            "neg",
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, \
             use the `~` or `logical_not()` operator instead.",
        ));
    }
    let zero = Tensor::zeros([], x.dtype()).to_device(x.device())?;
    integer_binary("neg", IntegerOp::Sub, &zero, x, x.dtype())
}

/// PyTorch's `canCast(from, to)` for an in-place result: never a float into an integer or bool tensor, never
/// a non-bool into a bool tensor; else the error PyTorch raises.
pub(crate) fn check_cast(name: &'static str, from: DType, to: DType) -> Result<()> {
    let refused = (from.is_floating_point() && !to.is_floating_point()) || (from != DType::Bool && to == DType::Bool);
    if refused {
        return Err(Error::invalid(
            name,
            format!(
                "result type {} can't be cast to the desired output type {}",
                DType::scalar_type_name(from),
                DType::scalar_type_name(to)
            ),
        ));
    }
    Ok(())
}

/// `a op b` in `dtype` (an integer or bool dtype, from [`checked_result_type`]), broadcasting.
pub(crate) fn integer_binary(
    name: &'static str,
    op: IntegerOp,
    a: &Tensor,
    b: &Tensor,
    dtype: DType,
) -> Result<Tensor> {
    // Refused before the casts, naming the operands as given.
    broadcast_shape(name, a.shape(), b.shape())?;
    let (a, b) = (a.to_dtype(dtype)?, b.to_dtype(dtype)?);
    run(&IntegerBinary { name, op }, &[&a, &b])
}

/// `a op b` of two tensors of one integer or bool dtype; inputs `[a, b]`.
struct IntegerBinary {
    name: &'static str,
    op: IntegerOp,
}

/// The integer arithmetic of one element type.
trait HostInteger: Copy + Ord + Send + Sync + Default {
    fn apply(op: IntegerOp, a: Self, b: Self) -> Self;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl HostInteger for $t {
            #[inline(always)]
            fn apply(op: IntegerOp, a: $t, b: $t) -> $t {
                match op {
                    IntegerOp::Add => a.wrapping_add(b),
                    IntegerOp::Sub => a.wrapping_sub(b),
                    IntegerOp::Mul => a.wrapping_mul(b),
                    IntegerOp::Maximum => a.max(b),
                    IntegerOp::Minimum => a.min(b),
                    IntegerOp::Fmod => a.wrapping_rem(b),
                    IntegerOp::TruncDivide => a.wrapping_div(b),
                    IntegerOp::Remainder => {
                        let r = a.wrapping_rem(b);
                        #[allow(unused_comparisons, reason = "u8 is never negative")]
                        let other_sign = (r < 0) != (b < 0);
                        if r != 0 && other_sign { r.wrapping_add(b) } else { r }
                    }
                    IntegerOp::FloorDivide => {
                        // c10's `div_floor_integer`: one less than the truncated quotient where the signs
                        // differ and the division is not exact.
                        let q = a.wrapping_div(b);
                        #[allow(unused_comparisons, reason = "u8 is never negative")]
                        let signs_differ = (a < 0) != (b < 0);
                        if signs_differ && a.wrapping_rem(b) != 0 { q.wrapping_sub(1) } else { q }
                    }
                }
            }
        }
    )*};
}
integer!(i64, i32, u8);

impl HostInteger for bool {
    #[inline(always)]
    fn apply(op: IntegerOp, a: bool, b: bool) -> bool {
        match op {
            IntegerOp::Add | IntegerOp::Maximum => a | b,
            IntegerOp::Mul | IntegerOp::Minimum => a & b,
            // Refused by `checked_result_type` before the operation runs.
            _ => unreachable!("{op:?} of bools is refused before it runs"),
        }
    }
}

fn zip<T: HostInteger>(op: IntegerOp, x: &[T], y: &[T], a: &Tensor, b: &Tensor, out: &crate::Shape) -> Vec<T> {
    let (sa, sb) = (broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out));
    zip_broadcast(x, &sa, y, &sb, out, |p, q| T::apply(op, p, q))
}

impl Op for IntegerBinary {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::Exact;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (a, b, op) = (inputs[0], inputs[1], self.op);
        let out_shape = broadcast_shape(self.name, a.shape(), b.shape())?;
        let data = a.read_cpu(self.name, |da| {
            b.read_cpu(self.name, |db| {
                // A zero divisor is refused only where the division runs (an empty result divides nothing).
                let zero_divisor = divides(op)
                    && out_shape.numel() > 0
                    && match db {
                        CpuData::I64(v) => v.contains(&0),
                        CpuData::I32(v) => v.contains(&0),
                        CpuData::U8(v) => v.contains(&0),
                        _ => false,
                    };
                if zero_divisor {
                    return Err(Error::invalid(self.name, "ZeroDivisionError"));
                }
                Ok(match (da, db) {
                    (CpuData::I64(x), CpuData::I64(y)) => CpuData::I64(zip(op, x, y, a, b, &out_shape)),
                    (CpuData::I32(x), CpuData::I32(y)) => CpuData::I32(zip(op, x, y, a, b, &out_shape)),
                    (CpuData::U8(x), CpuData::U8(y)) => CpuData::U8(zip(op, x, y, a, b, &out_shape)),
                    (CpuData::Bool(x), CpuData::Bool(y)) => CpuData::Bool(zip(op, x, y, a, b, &out_shape)),
                    _ => {
                        return Err(Error::UnsupportedDType {
                            op: self.name,
                            dtype: a.dtype(),
                            hint: "; integer arithmetic takes two tensors of one integer or bool dtype",
                        });
                    }
                })
            })?
        })??;
        Ok(Tensor::from_cpu(data, out_shape))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (a, b, name) = (inputs[0], inputs[1], self.name);
        let out_shape = broadcast_shape(name, a.shape(), b.shape())?;
        let (ba, bb) = (a.gpu_buffer(name)?, b.gpu_buffer(name)?);
        let (oa, ob) = (operand(&ba, a), operand(&bb, b));
        let out = match a.dtype() {
            DType::Bool => {
                // `+` and `maximum` of bools are `or`, `*` and `minimum` `and` (the others are refused first).
                let logical = match self.op {
                    IntegerOp::Add | IntegerOp::Maximum => LogicalOp::Or,
                    _ => LogicalOp::And,
                };
                boolean::logical(logical, oa, ob, &out_shape)
            }
            dtype => {
                let kind = match dtype {
                    DType::U8 => Integer::Byte,
                    DType::I32 => Integer::I32,
                    _ => Integer::I64,
                };
                kernels::integer::integer_binary(self.op, kind, oa, ob, &out_shape)
            }
        }
        .map_err(|e| a.kernel_error(name, e))?;
        Ok(a.with_gpu_as(out, out_shape, a.dtype()))
    }
}
