//! PReLU, `x > 0 ? x : w·x` with one weight or one per channel: forward (into a new tensor or a given one)
//! and backward (`dx` and `dweight`), on the CPU and on devices; and RReLU, whose training draws a slope per
//! element.

use kernels::layout::Layout;
use kernels::{GpuDevice, Real};

use super::activation::Activation;
use super::elementwise::{BinaryFn, UnaryFn};
use super::{GRADIENT, OUTPUT, Op, check_like, run, same_dtype};
use crate::tensor::autograd::{Backward as BackwardFn, Saved, is_grad_enabled};
use crate::tensor::device::{float_type, probe};
use crate::{DType, Error, Result, Tensor};

/// PyTorch's `x > 0 ? x : w * x`, for one weight.
#[derive(Clone, Copy, Debug)]
struct PreluFn {
    weight: f64,
}

impl UnaryFn for PreluFn {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        if x > R::ZERO { x } else { R::of(self.weight) * x }
    }
}

/// PReLU's `dx`: `dy` where `x > 0`, `w · dy` elsewhere.
#[derive(Clone, Copy, Debug)]
struct PreluGrad(PreluFn);

impl BinaryFn for PreluGrad {
    #[inline(always)]
    fn apply<R: Real>(&self, x: R, dy: R) -> R {
        if x > R::ZERO { dy } else { R::of(self.0.weight) * dy }
    }
}

/// Validates a PReLU weight against an input, PyTorch's rules: one weight, or one per channel (dimension 1);
/// returns the input seen around the weight's channels (one weight: one channel covering everything).
fn prelu_layout(op: &'static str, x: &Tensor, weight: &Tensor) -> Result<Layout> {
    let n = weight.numel();
    if weight.rank() > 1 {
        return Err(Error::invalid(
            op,
            format!("the weight must be 1-dimensional; got shape {}", weight.shape()),
        ));
    }
    if n == 0 {
        return Err(Error::invalid(op, "the weight is empty"));
    }
    if n == 1 {
        return Ok(Layout {
            outer: 1,
            channels: 1,
            inner: x.numel(),
        });
    }
    let channels = if x.rank() >= 2 { x.shape()[1] } else { 0 };
    if channels != n {
        return Err(Error::invalid(
            op,
            format!(
                "{n} weights need an input with {n} channels in dimension 1; the input has shape {}",
                x.shape()
            ),
        ));
    }
    Ok(Layout::around(x.shape(), 1))
}

/// The probe's operands: the probe sweep as `n` channels of one element, `n` weights, gradients beside.
fn probe_operands(dtype: DType) -> Result<[Tensor; 3]> {
    let xs = probe::inputs();
    let n = xs.len();
    let weights: Vec<f64> = (0..n).map(|i| 0.25 - 0.01 * i as f64).collect();
    Ok([
        Tensor::from_vec(xs, [1, n, 1])?.to_dtype(dtype)?,
        Tensor::from_vec(weights, [n])?.to_dtype(dtype)?,
        Tensor::from_vec(probe::gradients(n), [1, n, 1])?.to_dtype(dtype)?,
    ])
}

/// `prelu(x, w)` on the CPU, into `out` or a new tensor.
fn cpu_forward(op: &'static str, x: &Tensor, w: &Tensor, out: Option<&Tensor>) -> Result<Option<Tensor>> {
    let layout = prelu_layout(op, x, w)?;
    let weights = w.to_vec_f64()?;
    let formulas: Vec<PreluFn> = weights.iter().map(|&weight| PreluFn { weight }).collect();
    match out {
        None if layout.channels == 1 => x.map_float(op, &formulas[0]).map(Some),
        None => x.map_float_blocks(op, layout.inner, &formulas).map(Some),
        Some(out) if layout.channels == 1 => x.map_float_into(op, &formulas[0], out).map(|_| None),
        Some(out) => x.map_float_blocks_into(op, layout.inner, &formulas, out).map(|_| None),
    }
}

/// `x`'s and `w`'s device buffers, the dtype and the kernels' layout, for a device path of `op`.
fn device_operands(
    op: &'static str,
    x: &Tensor,
    w: &Tensor,
) -> Result<(kernels::GpuBuffer, kernels::GpuBuffer, kernels::FloatType, Layout)> {
    same_dtype(op, x, &[Some(w)])?;
    let layout = prelu_layout(op, x, w)?;
    Ok((x.gpu_buffer(op)?, w.gpu_buffer(op)?, float_type(op, x.dtype())?, layout))
}

/// `prelu(x, w)` in a new tensor; inputs `[x, w]`.
#[derive(Clone, Copy)]
struct Forward;

/// `out = prelu(x, w)`; inputs `[x, w, out]`.
#[derive(Clone, Copy)]
struct ForwardInto;

/// `(dx, dweight)`; inputs `[x, w, dy]`.
#[derive(Clone, Copy)]
struct Backward;

/// `dx` alone; inputs `[x, w, dy]`.
#[derive(Clone, Copy)]
struct InputBackward;

/// `dx` on the CPU: `dy` where `x > 0`, `w · dy` elsewhere.
fn cpu_input_grad(op: &'static str, x: &Tensor, w: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let layout = prelu_layout(op, x, w)?;
    let weights = w.to_vec_f64()?;
    x.zip_float_blocks(dy, op, layout.inner, |block| {
        PreluGrad(PreluFn {
            weight: weights[block % layout.channels],
        })
    })
}

impl Op for Forward {
    type Output = Tensor;
    const NAME: &'static str = "prelu";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let y = cpu_forward("prelu", inputs[0], inputs[1], None)?;
        y.ok_or_else(|| Error::invalid("prelu", "the forward made no output"))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let x = inputs[0];
        let (xb, wb, dtype, layout) = device_operands("prelu", x, inputs[1])?;
        let y = kernels::prelu::forward(dtype, &xb, &wb, layout).map_err(|e| x.kernel_error("prelu", e))?;
        Ok(x.like_gpu(y))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let [x, w, _] = probe_operands(dtype)?;
        Ok(vec![(Forward, vec![x, w])])
    }
    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn BackwardFn>> {
        let (x, w) = (Saved::new(inputs[0]), Saved::new(inputs[1]));
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let (x, w) = (x.get("prelu")?, w.get("prelu")?);
            if needs[1] {
                let (dx, dw) = run(&Backward, &[x, w, &g[0]])?;
                Ok(vec![needs[0].then_some(dx), Some(dw)])
            } else {
                Ok(vec![Some(run(&InputBackward, &[x, w, &g[0]])?), None])
            }
        }))
    }
}

impl Op for ForwardInto {
    type Output = ();
    const NAME: &'static str = "prelu";
    const WRITES: usize = 2;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        cpu_forward("prelu_into", inputs[0], inputs[1], Some(inputs[2])).map(|_| ())
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let x = inputs[0];
        let (xb, wb, dtype, layout) = device_operands("prelu_into", x, inputs[1])?;
        kernels::prelu::forward_into(dtype, &xb, &wb, &inputs[2].gpu_buffer("prelu_into")?, layout)
            .map_err(|e| x.kernel_error("prelu_into", e))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let [x, w, _] = probe_operands(dtype)?;
        let out = x.zeros_like()?;
        Ok(vec![(ForwardInto, vec![x, w, out])])
    }
}

impl Op for Backward {
    type Output = (Tensor, Tensor);
    const NAME: &'static str = "prelu_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<(Tensor, Tensor)> {
        let (x, w, dy, op) = (inputs[0], inputs[1], inputs[2], "prelu_backward");
        let layout = prelu_layout(op, x, w)?;
        let dx = cpu_input_grad(op, x, w, dy)?;
        let (xs, dys) = (x.to_vec_f64()?, dy.to_vec_f64()?);
        let mut sums = vec![0.0f64; layout.channels];
        let block = layout.inner.max(1);
        for (b, (xb, db)) in xs.chunks(block).zip(dys.chunks(block)).enumerate() {
            let s: f64 = xb
                .iter()
                .zip(db)
                .filter(|(x, _)| x.partial_cmp(&&0.0) != Some(std::cmp::Ordering::Greater))
                .map(|(x, d)| x * d)
                .sum();
            sums[b % layout.channels] += s;
        }
        let dweight = Tensor::from_vec(sums, w.shape().clone())?.to_dtype(w.dtype())?;
        Ok((dx, dweight))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<(Tensor, Tensor)> {
        let (x, w, op) = (inputs[0], inputs[1], "prelu_backward");
        let (xb, wb, dtype, layout) = device_operands(op, x, w)?;
        let (dx, dw) = kernels::prelu::backward(dtype, &xb, &wb, &inputs[2].gpu_buffer(op)?, layout)
            .map_err(|e| x.kernel_error(op, e))?;
        Ok((x.like_gpu(dx), w.like_gpu(dw)))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Backward, probe_operands(dtype)?.into())])
    }
}

impl Op for InputBackward {
    type Output = Tensor;
    const NAME: &'static str = "prelu_input_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        cpu_input_grad(Self::NAME, inputs[0], inputs[1], inputs[2])
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, w, op) = (inputs[0], inputs[1], Self::NAME);
        let (xb, wb, dtype, layout) = device_operands(op, x, w)?;
        let dx = kernels::prelu::backward_input(dtype, &xb, &wb, &inputs[2].gpu_buffer(op)?, layout)
            .map_err(|e| x.kernel_error(op, e))?;
        Ok(x.like_gpu(dx))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(InputBackward, probe_operands(dtype)?.into())])
    }
}

/// PReLU: `x` if `x > 0` else `weight * x`, with one weight or one per channel (dimension 1).
///
/// ```
/// use nn::{Tensor, functional::prelu};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// assert_eq!(prelu(&x, &w).unwrap().to_vec::<f32>().unwrap(), vec![-0.5, 2.0, -1.5, 4.0]);
/// ```
pub fn prelu(x: &Tensor, weight: &Tensor) -> Result<Tensor> {
    prelu_layout("prelu", x, weight)?;
    run(&Forward, &[x, weight])
}

/// [`prelu`] written into `out`, an existing tensor of `x`'s shape, dtype and device (no allocation; `out` may
/// be `x` itself, for PReLU in place).
///
/// ```
/// use nn::{Tensor, functional::prelu_into};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// let out = Tensor::zeros([2, 2], nn::DType::F32);
/// prelu_into(&x, &w, &out).unwrap();
/// assert_eq!(out.to_vec::<f32>().unwrap(), vec![-0.5, 2.0, -1.5, 4.0]);
/// prelu_into(&x, &w, &x).unwrap(); // in place
/// assert_eq!(x.to_vec::<f32>().unwrap(), vec![-0.5, 2.0, -1.5, 4.0]);
/// ```
pub fn prelu_into(x: &Tensor, weight: &Tensor, out: &Tensor) -> Result<()> {
    let op = "prelu_into";
    prelu_layout(op, x, weight)?;
    check_like(op, x, out, OUTPUT)?;
    run(&ForwardInto, &[x, weight, out])
}

/// PReLU's backward: `(dx, dweight)`. `dx` is `dy` where `x > 0` and `weight · dy` elsewhere; `dweight` sums
/// `x · dy` over the elements where `x ≤ 0`, per channel (accumulated in `f64`, returned in the weight's dtype).
///
/// ```
/// use nn::{Tensor, functional::prelu_backward};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// let dy = Tensor::ones([2, 2], nn::DType::F32);
/// let (dx, dw) = prelu_backward(&x, &w, &dy).unwrap();
/// assert_eq!(dx.to_vec::<f32>().unwrap(), vec![0.5, 1.0, 0.5, 1.0]);
/// assert_eq!(dw.to_vec::<f32>().unwrap(), vec![-4.0, 0.0]);
/// ```
pub fn prelu_backward(x: &Tensor, weight: &Tensor, dy: &Tensor) -> Result<(Tensor, Tensor)> {
    let op = "prelu_backward";
    check_like(op, x, dy, GRADIENT)?;
    prelu_layout(op, x, weight)?;
    run(&Backward, &[x, weight, dy])
}

/// PReLU's input gradient alone, for a weight that needs none (PyTorch skips the weight's reduction then):
/// the `dx` of [`prelu_backward`].
///
/// ```
/// use nn::{Tensor, functional::prelu_input_backward};
/// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0, 4.0], [2, 2]).unwrap();
/// let w = Tensor::from_vec(vec![0.5f32, 0.1], [2]).unwrap();
/// let dx = prelu_input_backward(&x, &w, &Tensor::ones([2, 2], nn::DType::F32)).unwrap();
/// assert_eq!(dx.to_vec::<f32>().unwrap(), vec![0.5, 1.0, 0.5, 1.0]);
/// ```
pub fn prelu_input_backward(x: &Tensor, weight: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let op = "prelu_input_backward";
    check_like(op, x, dy, GRADIENT)?;
    prelu_layout(op, x, weight)?;
    run(&InputBackward, &[x, weight, dy])
}

/// PyTorch's `F.rrelu(input, lower=1/8, upper=1/3, training=False, inplace=False)`: `x` where `x > 0`, `a · x`
/// elsewhere, where in training each element has its own slope `a` drawn from `U(lower, upper)` (reproducible
/// with [`manual_seed`](crate::manual_seed), though not PyTorch's numbers) and in evaluation
/// `a = (lower + upper) / 2`. In place, `x`
/// is changed and a handle to it returned. `lower` may not exceed `upper`.
///
/// ```
/// use nn::{Tensor, functional::rrelu};
/// let x = Tensor::from_vec(vec![-1.0f64, 2.0], [2]).unwrap();
/// let y = rrelu(&x, 0.1, 0.3, false, false).unwrap();
/// assert_eq!(y.to_vec::<f64>().unwrap(), vec![-0.2, 2.0]);
/// let y = rrelu(&x, 0.1, 0.3, true, false).unwrap().to_vec::<f64>().unwrap();
/// assert!((-0.3..=-0.1).contains(&y[0]) && y[1] == 2.0);
/// assert!(rrelu(&x, 0.3, 0.1, false, false).is_err());
/// ```
pub fn rrelu(x: &Tensor, lower: f64, upper: f64, training: bool, inplace: bool) -> Result<Tensor> {
    let op = "rrelu";
    if lower > upper || lower.is_nan() || upper.is_nan() {
        return Err(Error::invalid(
            op,
            format!("the lower bound {lower} must not exceed the upper bound {upper}"),
        ));
    }
    match (training, inplace) {
        (false, false) => Activation::Rrelu { lower, upper }.forward(x),
        (false, true) => Activation::Rrelu { lower, upper }.forward_(x).map(|()| x.clone()),
        (true, false) => Ok(rrelu_train(op, x, lower, upper)?.0),
        (true, true) if x.requires_grad() && is_grad_enabled() => {
            super::in_place_recorded(op, x, |original| Ok(rrelu_train(op, original, lower, upper)?.0))?;
            Ok(x.clone())
        }
        (true, true) => {
            x.copy_(&rrelu_train(op, x, lower, upper)?.0)?;
            Ok(x.clone())
        }
    }
}

/// PyTorch's `rrelu_with_noise`: [`rrelu`] that, in training, also writes each element's multiplier into
/// `noise` (a tensor of `x`'s shape, dtype and device): the drawn slope where `x <= 0`, `1` elsewhere (a NaN
/// included, as PyTorch). The output is `x · noise` then (for half types, as in PyTorch, with the slope before
/// its rounding to the dtype). In evaluation `noise` is left alone. The bounds are not checked, as in PyTorch.
///
/// ```
/// use nn::{Tensor, functional::rrelu_with_noise};
/// let x = Tensor::from_vec(vec![-1.0f64, 2.0], [2]).unwrap();
/// let noise = x.zeros_like().unwrap();
/// let y = rrelu_with_noise(&x, &noise, 0.1, 0.3, true).unwrap();
/// let (y, noise) = (y.to_vec::<f64>().unwrap(), noise.to_vec::<f64>().unwrap());
/// assert_eq!(noise[1], 1.0);
/// assert_eq!(y, vec![-noise[0], 2.0]);
/// ```
pub fn rrelu_with_noise(x: &Tensor, noise: &Tensor, lower: f64, upper: f64, training: bool) -> Result<Tensor> {
    let op = "rrelu_with_noise";
    check_like(op, x, noise, NOISE)?;
    if !training {
        return Activation::Rrelu { lower, upper }.forward(x);
    }
    let (y, drawn) = rrelu_train(op, x, lower, upper)?;
    noise.copy_(&drawn)?;
    Ok(y)
}

/// PyTorch's `rrelu_with_noise_backward`: the input gradient of [`rrelu_with_noise`] from the output gradient
/// `dy`: `dy · noise` in training, the leaky ReLU gradient with slope `(lower + upper) / 2` in evaluation.
///
/// ```
/// use nn::{Tensor, functional::rrelu_with_noise_backward};
/// let x = Tensor::from_vec(vec![-1.0f64, 2.0], [2]).unwrap();
/// let noise = Tensor::from_vec(vec![0.25f64, 1.0], [2]).unwrap();
/// let dy = Tensor::from_vec(vec![4.0f64, 4.0], [2]).unwrap();
/// let dx = rrelu_with_noise_backward(&dy, &x, &noise, 0.1, 0.3, true).unwrap();
/// assert_eq!(dx.to_vec::<f64>().unwrap(), vec![1.0, 4.0]);
/// let dx = rrelu_with_noise_backward(&dy, &x, &noise, 0.1, 0.3, false).unwrap();
/// assert_eq!(dx.to_vec::<f64>().unwrap(), vec![0.8, 4.0]);
/// ```
pub fn rrelu_with_noise_backward(
    dy: &Tensor,
    x: &Tensor,
    noise: &Tensor,
    lower: f64,
    upper: f64,
    training: bool,
) -> Result<Tensor> {
    let op = "rrelu_with_noise_backward";
    check_like(op, x, dy, GRADIENT)?;
    if !training {
        return Activation::Rrelu { lower, upper }.backward(x, dy);
    }
    check_like(op, x, noise, NOISE)?;
    dy.mul(noise)
}

/// What [`check_like`] says of RReLU's noise.
const NOISE: &str = "a noise tensor of the input's shape";

/// RReLU in training: `(y, noise)` of `x`; inputs `[x]`. `x·s` and `s` where `x <= 0`, `x` and `1` elsewhere
/// (PyTorch's test: a NaN keeps the multiplier 1), with a slope `s` drawn for each element `x <= 0` in order, as
/// PyTorch's CPU kernel draws it (`uniform_real_distribution<double>` between the bounds in the compute type),
/// on the host for both paths, so a device computes what the CPU does. As in PyTorch, `x·s` is computed in the
/// compute type (`f32` for half types) with `s` unrounded, and `noise` holds `s` rounded to the dtype.
#[derive(Clone, Copy)]
struct RreluTrain {
    lower: f64,
    upper: f64,
    /// Where the slopes come from: the default generator, or (the parity probe) a generator of this seed.
    seed: Option<u64>,
}

impl RreluTrain {
    /// The op drawing from the default generator ([`manual_seed`](crate::manual_seed)).
    fn new(lower: f64, upper: f64) -> RreluTrain {
        RreluTrain {
            lower,
            upper,
            seed: None,
        }
    }

    /// The slope of each element of `xs`: a draw for each element `<= 0`, in order, rounded to `dtype`'s compute
    /// type (`f64` for `f64`, `f32` otherwise); 1 elsewhere.
    fn slopes(&self, xs: &[f64], dtype: DType) -> Vec<f64> {
        let (from, to) = (opmath(dtype, self.lower), opmath(dtype, self.upper));
        let draw = |g: &mut crate::random::Generator| -> Vec<f64> {
            xs.iter()
                // PyTorch's `Activation.cpp` is compiled without FMA: the scaling rounds twice.
                .map(|&v| {
                    if v <= 0.0 {
                        opmath(dtype, g.unit() * (to - from) + from)
                    } else {
                        1.0
                    }
                })
                .collect()
        };
        match self.seed {
            Some(seed) => draw(&mut crate::random::Generator::new(seed)),
            None => crate::random::with_global(draw),
        }
    }
}

/// `v` rounded to `dtype`'s compute type: itself for `f64`, to `f32` otherwise.
fn opmath(dtype: DType, v: f64) -> f64 {
    if dtype == DType::F64 { v } else { v as f32 as f64 }
}

impl Op for RreluTrain {
    type Output = (Tensor, Tensor);
    const NAME: &'static str = "rrelu_with_noise";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<(Tensor, Tensor)> {
        let x = inputs[0];
        let xs = x.to_vec_f64()?;
        let slopes = self.slopes(&xs, x.dtype());
        let (y, noise): (Vec<f64>, Vec<f64>) = xs
            .iter()
            .zip(&slopes)
            .map(|(&v, &s)| {
                if v <= 0.0 {
                    (opmath(x.dtype(), v * s), s)
                } else {
                    (v, 1.0)
                }
            })
            .unzip();
        let made = |values: Vec<f64>| Tensor::from_vec(values, x.shape().clone())?.to_dtype(x.dtype());
        Ok((made(y)?, made(noise)?))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<(Tensor, Tensor)> {
        let (x, op) = (inputs[0], Self::NAME);
        let dtype = float_type(op, x.dtype())?;
        let compute = if x.dtype() == DType::F64 {
            DType::F64
        } else {
            DType::F32
        };
        // Which elements draw a slope depends on their sign: the input is read back to the host for it.
        let slopes = Tensor::from_vec(self.slopes(&x.to_vec_f64()?, x.dtype()), [x.numel()])?
            .to_dtype(compute)?
            .to_device(x.device())?;
        let (y, noise) = kernels::prelu::rrelu_train(dtype, &x.gpu_buffer(op)?, &slopes.gpu_buffer(op)?)
            .map_err(|e| x.kernel_error(op, e))?;
        Ok((x.like_gpu(y), x.like_gpu(noise)))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let xs = probe::inputs();
        let n = xs.len();
        let x = Tensor::from_vec(xs, [n])?.to_dtype(dtype)?;
        Ok(vec![(RreluTrain { seed: Some(1), ..*self }, vec![x])])
    }
    fn gradient(&self, _: &[&Tensor], (_, noise): &(Tensor, Tensor)) -> Option<Box<dyn BackwardFn>> {
        // y = x · noise: dy · noise (the noise output gets no gradient through to x).
        let noise = Saved::new(noise);
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(g[0].mul(noise.get("rrelu_with_noise")?)?)])
        }))
    }
}

/// RReLU in training, `(y, noise)`: the float dtypes only.
fn rrelu_train(op: &'static str, x: &Tensor, lower: f64, upper: f64) -> Result<(Tensor, Tensor)> {
    Error::check_float(op, x.dtype())?;
    run(&RreluTrain::new(lower, upper), &[x])
}
