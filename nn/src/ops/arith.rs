//! Arithmetic: broadcast `add` / `sub` / `mul` / `div` / `maximum` / `minimum` (on devices too), their in-place
//! forms, and the scalar forms `x·scale + shift` (`affine`, `add_scalar`, `mul_scalar`, and in place).

use kernels::GpuBuffer;
use kernels::binary::{self, BinaryOp, Operand};
use kernels::{GpuDevice, Real};

use super::elementwise::{BinaryFn, UnaryFn, broadcast_shape, in_place_operand, map_in_place, promote_pair};
use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Saved, is_grad_enabled};
use crate::tensor::device::{float_type, probe};
use crate::tensor::storage::CpuData;
use crate::{DType, Error, Result, Tensor};

/// `(da, db)` of `f(a, b)` from the output's gradient `g`, before the sums over broadcast dimensions.
#[derive(Clone, Copy)]
enum BinaryGrads {
    /// From `g` alone (add, sub): the operands are not saved.
    OfGradient(fn(g: &Tensor) -> Result<(Tensor, Tensor)>),
    /// Reading the operands (mul, div): `grad(i, a, b, g)` is operand `i`'s, reading what `reads[i]` marks
    /// (`[a, b]`). An operand is saved only when a needed gradient reads it (a frozen weight times an
    /// activation keeps neither), and only needed gradients are computed.
    OfOperands {
        reads: [[bool; 2]; 2],
        grad: fn(i: usize, a: Option<&Tensor>, b: Option<&Tensor>, g: &Tensor) -> Result<Tensor>,
    },
}

/// An operand a gradient formula reads: saved whenever `reads` says so, so its absence is a bug, reported.
fn saved(t: Option<&Tensor>) -> Result<&Tensor> {
    t.ok_or_else(|| Error::autograd("backward", "an operand the gradient reads was not saved"))
}

/// A binary formula, the device kernel that computes it and its gradients, where there are.
trait Arith: BinaryFn {
    const KERNEL: Option<BinaryOp>;
    const GRADS: Option<BinaryGrads>;
}

/// `f(a, b)` broadcast, `a` and `b` promoted to one float dtype; inputs `[a, b]`.
#[derive(Clone, Copy)]
struct Binary<F> {
    name: &'static str,
    f: F,
}

/// `a = f(a, b)`, `b` in `a`'s dtype broadcast to its shape and not sharing its storage; inputs `[a, b]`.
struct BinaryInPlace<F>(Binary<F>);

/// The probe's operands for a binary operation: the probe sweep as a row, against a column of three values.
fn binary_probe(dtype: DType) -> Result<Vec<Tensor>> {
    let xs = probe::inputs();
    let n = xs.len();
    Ok(vec![
        Tensor::from_vec(xs, [1, n])?.to_dtype(dtype)?,
        Tensor::from_vec(vec![0.75, -1.5, 3.0], [3, 1])?.to_dtype(dtype)?,
    ])
}

impl<F: Arith> Binary<F> {
    /// Probed where the formula has a kernel.
    const DEVICE: DevicePath = match F::KERNEL {
        Some(_) => DevicePath::Probed,
        None => DevicePath::None,
    };

    /// Whether `a = f(a, b)` under autograd needs `a`'s value before the change: a gradient that reads `a` is
    /// needed (`mul_` by a `b` that requires grad). Else the change runs in place with nothing copied, as
    /// PyTorch's `add_` does.
    fn reads_the_changed_operand(&self, a: &Tensor, b: &Tensor) -> bool {
        match F::GRADS {
            None | Some(BinaryGrads::OfGradient(_)) => false,
            Some(BinaryGrads::OfOperands { reads, .. }) => {
                (a.requires_grad() && reads[0][0]) || (b.requires_grad() && reads[1][0])
            }
        }
    }

    /// The device kernel, or the refusal of a formula without one.
    fn kernel(&self, a: &Tensor) -> Result<BinaryOp> {
        F::KERNEL.ok_or_else(|| super::cpu_only(self.name, a))
    }
}

/// A tensor's device memory as a broadcast operand.
pub(super) fn operand<'a>(buffer: &'a GpuBuffer, t: &'a Tensor) -> Operand<'a> {
    Operand {
        buffer,
        shape: t.shape(),
    }
}

impl<F: Arith> Op for Binary<F> {
    type Output = Tensor;
    const DEVICE: DevicePath = Binary::<F>::DEVICE;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].zip_float(inputs[1], self.name, &self.f)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (a, b) = (inputs[0], inputs[1]);
        let out_shape = broadcast_shape(self.name, a.shape(), b.shape())?;
        let (kernel, b_buffer) = (self.kernel(a)?, b.gpu_buffer(self.name)?);
        a.gpu_op(self.name, out_shape.clone(), |dtype, a_buffer| {
            binary::binary(kernel, dtype, operand(a_buffer, a), operand(&b_buffer, b), &out_shape)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Binary { ..*self }, binary_probe(dtype)?)])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let grads = F::GRADS?;
        let (name, a_shape, b_shape) = (self.name, inputs[0].shape().clone(), inputs[1].shape().clone());
        let needs = [inputs[0].requires_grad(), inputs[1].requires_grad()];
        let kept = match grads {
            BinaryGrads::OfGradient(_) => [None, None],
            BinaryGrads::OfOperands { reads, .. } => std::array::from_fn(|j| {
                let read = (needs[0] && reads[0][j]) || (needs[1] && reads[1][j]);
                read.then(|| Saved::new(inputs[j]))
            }),
        };
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let (da, db) = match grads {
                BinaryGrads::OfGradient(f) => {
                    let (da, db) = f(&g[0])?;
                    (Some(da), Some(db))
                }
                BinaryGrads::OfOperands { grad, .. } => {
                    let a = kept[0].as_ref().map(|t| t.get(name)).transpose()?;
                    let b = kept[1].as_ref().map(|t| t.get(name)).transpose()?;
                    (
                        needs[0].then(|| grad(0, a, b, &g[0])).transpose()?,
                        needs[1].then(|| grad(1, a, b, &g[0])).transpose()?,
                    )
                }
            };
            Ok(vec![
                da.filter(|_| needs[0]).map(|d| d.sum_to(&a_shape)).transpose()?,
                db.filter(|_| needs[1]).map(|d| d.sum_to(&b_shape)).transpose()?,
            ])
        }))
    }
}

impl<F: Arith> Op for BinaryInPlace<F> {
    type Output = ();
    const DEVICE: DevicePath = Binary::<F>::DEVICE;

    fn name(&self) -> &'static str {
        self.0.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        inputs[0].zip_float_(inputs[1], self.0.name, &self.0.f)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let (a, b) = (inputs[0], inputs[1]);
        let (kernel, name) = (self.0.kernel(a)?, self.0.name);
        let (a_buffer, b_buffer) = (a.gpu_buffer(name)?, b.gpu_buffer(name)?);
        binary::binary_in_place(
            kernel,
            float_type(name, a.dtype())?,
            operand(&a_buffer, a),
            operand(&b_buffer, b),
        )
        .map_err(|e| a.kernel_error(name, e))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Three copies of the sweep, into which the column broadcasts.
        let xs = probe::inputs();
        let n = xs.len();
        let rows: Vec<f64> = xs.iter().cycle().take(3 * n).copied().collect();
        let inputs = vec![
            Tensor::from_vec(rows, [3, n])?.to_dtype(dtype)?,
            binary_probe(dtype)?.swap_remove(1),
        ];
        Ok(vec![(BinaryInPlace(Binary { ..self.0 }), inputs)])
    }
}

macro_rules! binary_fn {
    ($(#[$doc:meta])* $vis:vis $name:ident, $method:ident, $method_:ident, $kernel:expr, |$a:ident, $b:ident| $body:expr,
     grads: $grads:expr) => {
        #[derive(Clone, Copy, Debug, Default)]
        struct $name;
        impl BinaryFn for $name {
            #[inline(always)]
            fn apply<R: Real>(&self, $a: R, $b: R) -> R {
                $body
            }
        }
        impl Arith for $name {
            const KERNEL: Option<BinaryOp> = $kernel;
            const GRADS: Option<BinaryGrads> = $grads;
        }
        impl Tensor {
            $(#[$doc])*
            $vis fn $method(&self, other: &Tensor) -> Result<Tensor> {
                let name = stringify!($method);
                let (a, b, _) = promote_pair(name, self, other)?;
                broadcast_shape(name, a.shape(), b.shape())?;
                run(&Binary { name, f: $name }, &[&a, &b])
            }
            $(#[$doc])*
            ///
            /// In place: `other` broadcasts to this tensor's shape.
            $vis fn $method_(&self, other: &Tensor) -> Result<()> {
                let name = stringify!($method_);
                let other = in_place_operand(name, self, other)?;
                if (self.requires_grad() || other.requires_grad()) && is_grad_enabled() {
                    let binary = Binary { name: stringify!($method), f: $name };
                    // Made before the write, so it saves `other` as it is now.
                    let backward = binary.gradient(&[self, &other], self);
                    return match backward.filter(|_| !binary.reads_the_changed_operand(self, &other)) {
                        Some(backward) => super::in_place_recorded_without_copy(
                            name,
                            &[self, &other],
                            || super::dispatch(&BinaryInPlace(binary), &[self, &other]),
                            || backward,
                        ),
                        None => super::in_place_recorded(name, self, |original| original.$method(&other)),
                    };
                }
                run(&BinaryInPlace(Binary { name, f: $name }), &[self, &other])
            }
        }
    };
}

binary_fn!(/// `a + b`, broadcasting.
    pub Add, add, add_, Some(BinaryOp::Add), |a, b| a + b,
    grads: Some(BinaryGrads::OfGradient(|g| Ok((g.clone(), g.clone())))));
binary_fn!(/// `a - b`, broadcasting.
    pub Sub, sub, sub_, Some(BinaryOp::Sub), |a, b| a - b,
    grads: Some(BinaryGrads::OfGradient(|g| Ok((g.clone(), g.neg()?)))));
binary_fn!(/// `a * b`, broadcasting.
pub Mul, mul, mul_, Some(BinaryOp::Mul), |a, b| a * b,
grads: Some(BinaryGrads::OfOperands {
    reads: [[false, true], [true, false]],
    grad: |i, a, b, g| g.mul(saved(if i == 0 { b } else { a })?),
}));
binary_fn!(/// `a / b`, broadcasting.
pub Div, div, div_, Some(BinaryOp::Div), |a, b| a / b,
grads: Some(BinaryGrads::OfOperands {
    reads: [[false, true], [true, true]],
    grad: |i, a, b, g| {
        let da = g.div(saved(b)?)?;
        if i == 0 { Ok(da) } else { da.mul(saved(a)?)?.div(saved(b)?)?.neg() }
    },
}));
binary_fn!(/// The larger of `a` and `b` (NaN if either is), broadcasting.
    pub Maximum, maximum, maximum_, Some(BinaryOp::Maximum), |a, b| a.max_nan(b), grads: None);
binary_fn!(/// The smaller of `a` and `b` (NaN if either is), broadcasting.
    pub Minimum, minimum, minimum_, Some(BinaryOp::Minimum), |a, b| a.min_nan(b), grads: None);
binary_fn!(/// `a / b`, 0 where `b` is 0 (PyTorch's `(a / b).masked_fill_(b == 0, 0)` in the gradients of `std` and
    /// `norm`), broadcasting; not differentiable.
    #[allow(dead_code, reason = "the macro makes every function's in-place form; this one's is not used")]
    pub(crate) DivOrZero, div_or_zero, div_or_zero_, Some(BinaryOp::DivOrZero),
    |a, b| if b == R::ZERO { R::ZERO } else { a / b }, grads: None);

/// `x·scale + shift` for a float `x`, in a new tensor; inputs `[x]`.
#[derive(Clone, Copy)]
pub(super) struct Affine {
    name: &'static str,
    scale: f64,
    shift: f64,
}

impl Affine {
    /// `x·scale + shift`, named `name` in errors.
    pub(super) fn new(name: &'static str, scale: f64, shift: f64) -> Affine {
        Affine { name, scale, shift }
    }
}

impl UnaryFn for Affine {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        x * R::of(self.scale) + R::of(self.shift)
    }
}

/// The probe's input of the scalar operations: the probe sweep.
fn sweep(dtype: DType) -> Result<Vec<Tensor>> {
    let xs = probe::inputs();
    let n = xs.len();
    Ok(vec![Tensor::from_vec(xs, [n])?.to_dtype(dtype)?])
}

impl Op for Affine {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].map_float(self.name, self)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        inputs[0].map_gpu(self.name, |dtype, x| binary::affine(dtype, x, self.scale, self.shift))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(*self, sweep(dtype)?)])
    }

    fn gradient(&self, _: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let scale = self.scale;
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(g[0].mul_scalar(scale)?)])
        }))
    }
}

/// `x = x·scale + shift` for floats, on the CPU and on devices; with `integers`, PyTorch's integer `x += shift`
/// too (wrapping, the shift truncated to the integer type). Inputs `[x]`.
struct AffineInPlace {
    affine: Affine,
    integers: bool,
}

impl Op for AffineInPlace {
    type Output = ();

    fn name(&self) -> &'static str {
        self.affine.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        let x = inputs[0];
        if x.is_floating_point() || !self.integers {
            return x.map_float_(self.affine.name, &self.affine);
        }
        let value = self.affine.shift;
        x.write_cpu(self.affine.name, |d| -> Result<()> {
            match d {
                CpuData::I64(v) => map_in_place(v, |x| x.wrapping_add(value as i64)),
                CpuData::I32(v) => map_in_place(v, |x| x.wrapping_add(value as i32)),
                CpuData::U8(v) => map_in_place(v, |x| x.wrapping_add(value as i64 as u8)),
                CpuData::F32(_) | CpuData::F64(_) | CpuData::F16(_) | CpuData::BF16(_) => {
                    unreachable!("floats are mapped above")
                }
                CpuData::Bool(_) => {
                    return Err(Error::UnsupportedDType {
                        op: self.affine.name,
                        dtype: DType::Bool,
                        hint: "; arithmetic on bool tensors is not defined",
                    });
                }
            }
            Ok(())
        })?
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let x = inputs[0];
        let Affine { name, scale, shift } = self.affine;
        match x.dtype() {
            dtype if dtype.is_floating_point() => {
                binary::affine_in_place(float_type(name, dtype)?, &x.gpu_buffer(name)?, scale, shift)
            }
            DType::I64 | DType::I32 if self.integers => {
                binary::add_integer_in_place(&x.gpu_buffer(name)?, x.dtype().size_in_bytes(), shift as i64)
            }
            dtype => {
                return Err(Error::UnsupportedOnDevice {
                    op: name,
                    dtype,
                    device: x.device(),
                    reason: "only floating-point, i64 and i32 tensors are incremented on a device".into(),
                });
            }
        }
        .map_err(|e| x.kernel_error(name, e))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let case = AffineInPlace {
            affine: self.affine,
            integers: self.integers,
        };
        Ok(vec![(case, sweep(dtype)?)])
    }
}

impl Tensor {
    /// `x * scale + shift` in one pass.
    pub fn affine(&self, scale: f64, shift: f64) -> Result<Tensor> {
        run(
            &Affine {
                name: "affine",
                scale,
                shift,
            },
            &[self],
        )
    }

    /// `x + value`; integer tensors stay integer (the value is truncated to the integer type).
    pub fn add_scalar(&self, value: f64) -> Result<Tensor> {
        if !self.is_floating_point() {
            let out = self.deep_copy()?;
            out.add_scalar_(value)?;
            return Ok(out);
        }
        run(
            &Affine {
                name: "add_scalar",
                scale: 1.0,
                shift: value,
            },
            &[self],
        )
    }

    /// `x - value`: [`add_scalar`](Self::add_scalar) of `-value` (the same rounding); `&x - value` panics
    /// where this errs.
    pub fn sub_scalar(&self, value: f64) -> Result<Tensor> {
        self.add_scalar(-value)
    }

    /// `x / value`, divided as PyTorch divides by a number: by the number itself, never its reciprocal, in the
    /// compute type (`f32` for `f16` and `bf16`, the quotient then rounded to the tensor's dtype); an integer or
    /// bool tensor divides as `f32` (true division). `&x / value` panics where this errs.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], [2])?;
    /// assert_eq!(x.div_scalar(3.0)?.to_vec::<f32>()?, vec![1.0 / 3.0, 1.0]);
    /// let steps = Tensor::from_vec(vec![3i64, 4], [2])?;
    /// assert_eq!(steps.div_scalar(2.0)?.dtype(), DType::F32);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn div_scalar(&self, value: f64) -> Result<Tensor> {
        match self.dtype() {
            DType::F32 | DType::F64 => self.div(&self.number(value)?),
            DType::F16 | DType::BF16 => self.to_dtype(DType::F32)?.div_scalar(value)?.to_dtype(self.dtype()),
            _ => self.to_dtype(DType::F32)?.div_scalar(value),
        }
    }

    /// `x /= value` in place, as [`div_scalar`](Self::div_scalar) divides; floating-point dtypes only.
    pub fn div_scalar_(&self, value: f64) -> Result<()> {
        match self.dtype() {
            DType::F32 | DType::F64 => self.div_(&self.number(value)?),
            DType::F16 | DType::BF16 => self.copy_(&self.div_scalar(value)?),
            dtype => Err(Error::float_only("div_scalar_", dtype)),
        }
    }

    /// `value` as a 0-d tensor of this tensor's dtype, on its device.
    fn number(&self, value: f64) -> Result<Tensor> {
        Tensor::full([], value, self.dtype()).to_device(self.device())
    }

    /// `x * value` (signed zeros kept: the shift is `-0.0`, which adds nothing to any value).
    pub fn mul_scalar(&self, value: f64) -> Result<Tensor> {
        run(
            &Affine {
                name: "mul_scalar",
                scale: value,
                shift: -0.0,
            },
            &[self],
        )
    }

    /// `-x`.
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![1.5f32, 0.0], [2]).unwrap();
    /// let y = x.neg().unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(y, vec![-1.5, 0.0]);
    /// assert!(y[1].is_sign_negative());
    /// ```
    pub fn neg(&self) -> Result<Tensor> {
        run(
            &Affine {
                name: "neg",
                scale: -1.0,
                shift: -0.0,
            },
            &[self],
        )
    }

    /// PyTorch's `lerp_(end, weight)` in place: `x + weight·(end - x)` for `weight < 0.5`, else
    /// `end - (end - x)·(1 - weight)` (exact at both ends), `end` broadcast to `x`'s shape.
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![0.0f32, 10.0], [2]).unwrap();
    /// x.lerp_(&nn::Tensor::from_vec(vec![4.0f32, 20.0], [2]).unwrap(), 0.25).unwrap();
    /// assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 12.5]);
    /// ```
    pub fn lerp_(&self, end: &Tensor, weight: f64) -> Result<()> {
        let diff = end.sub(self)?;
        if weight < 0.5 {
            self.add_(&diff.mul_scalar(weight)?)
        } else {
            self.copy_(&end.sub(&diff.mul_scalar(1.0 - weight)?)?)
        }
    }

    /// `x += value` in place, for every dtype but bool (BatchNorm's `num_batches_tracked += 1`). On a computed
    /// tensor while autograd records, recorded as PyTorch's `add_` of a number: the gradient passes unchanged.
    pub fn add_scalar_(&self, value: f64) -> Result<()> {
        let op = AffineInPlace {
            affine: Affine {
                name: "add_scalar_",
                scale: 1.0,
                shift: value,
            },
            integers: true,
        };
        self.affine_in_place(op, |g| Ok(g.clone()))
    }

    /// `x *= value` in place; floating-point dtypes only. On a computed tensor while autograd records,
    /// recorded as PyTorch's `mul_` by a number: the gradient is multiplied by `value`.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap().requires_grad_(true).unwrap();
    /// let y = x.mul_scalar(2.0).unwrap();
    /// y.mul_scalar_(3.0).unwrap();
    /// y.sum_all().unwrap().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![6.0, 6.0]);
    /// ```
    pub fn mul_scalar_(&self, value: f64) -> Result<()> {
        let op = AffineInPlace {
            affine: Affine {
                name: "mul_scalar_",
                scale: value,
                shift: -0.0,
            },
            integers: false,
        };
        self.affine_in_place(op, move |g| g.mul_scalar(value))
    }

    /// Runs `op` in place, recorded where this tensor requires a gradient and autograd records: its node's
    /// backward is `grad`, which needs nothing of the old value, so nothing is copied (a leaf that requires
    /// a gradient is refused, as in PyTorch).
    fn affine_in_place(
        &self,
        op: AffineInPlace,
        grad: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
    ) -> Result<()> {
        if !(self.requires_grad() && is_grad_enabled()) {
            return run(&op, &[self]);
        }
        let name = op.affine.name;
        super::in_place_recorded_without_copy(
            name,
            &[self],
            || super::dispatch(&op, &[self]),
            || Box::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(grad(&g[0])?)])),
        )
    }
}
