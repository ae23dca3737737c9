//! Optimizer updates as ops: Adam's (and AdamW's) and SGD's step of one parameter. On the CPU, for `f32` and
//! `f64`, one pass over the elements that reads the gradient once and writes the parameter and its state in
//! place (PyTorch's single-tensor loops run up to ten passes, each with a new tensor); elsewhere (the half types,
//! devices, operands sharing storage) the same formula as a composition of element-wise ops, each its own
//! kernel.
//!
//! Both paths compute the same operations in the same order, each rounded to the parameter's dtype, so they
//! agree bit for bit on the CPU (`tests` checks it); the order is PyTorch's `_single_tensor_adam` and
//! `_single_tensor_sgd`.

use kernels::{GpuDevice, Real};

use super::map::multiversion;
use super::{Op, probe_tensor, run};
use crate::tensor::storage::CpuData;
use crate::{DType, Result, Tensor, threads};

/// One Adam or AdamW update, with its hyperparameters and the step number (counted from 1) it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AdamStep {
    /// Learning rate.
    pub(crate) lr: f64,
    /// Decay of the running averages of the gradient and its square.
    pub(crate) betas: (f64, f64),
    /// Added to the denominator.
    pub(crate) eps: f64,
    /// L2 penalty added to the gradient (Adam) or decoupled decay of the parameter (AdamW).
    pub(crate) weight_decay: f64,
    /// Whether the weight decay is AdamW's.
    pub(crate) decoupled: bool,
    /// Whether the denominator uses the maximum of the squared averages so far.
    pub(crate) amsgrad: bool,
    /// Whether to step along the gradient instead of against it.
    pub(crate) maximize: bool,
    /// The step number, from 1.
    pub(crate) step: f64,
}

impl AdamStep {
    /// Updates `param` from `grad`, with its running averages `exp_avg` and `exp_avg_sq` and, with `amsgrad`,
    /// `max_exp_avg_sq`: all in place, all of one shape and dtype (the caller's state holds them so).
    pub(crate) fn apply(
        &self,
        param: &Tensor,
        grad: &Tensor,
        exp_avg: &Tensor,
        exp_avg_sq: &Tensor,
        max_exp_avg_sq: Option<&Tensor>,
    ) -> Result<()> {
        let mut inputs = vec![param, grad, exp_avg, exp_avg_sq];
        inputs.extend(max_exp_avg_sq.filter(|_| self.amsgrad));
        run(self, &inputs)
    }

    /// The step size `lr / (1 - β₁^t)` and `sqrt(1 - β₂^t)`: the bias corrections both paths divide by.
    fn bias_corrected(&self) -> (f64, f64) {
        let (beta1, beta2) = self.betas;
        (
            self.lr / (1.0 - beta1.powf(self.step)),
            (1.0 - beta2.powf(self.step)).sqrt(),
        )
    }

    /// The formula's constants in `R`, each rounded once as the composed ops round them.
    fn scalars<R: Real>(&self) -> AdamScalars<R> {
        let (beta1, beta2) = self.betas;
        let weight = 1.0 - beta1;
        let (step_size, bias_correction2_sqrt) = self.bias_corrected();
        AdamScalars {
            decay: (self.decoupled && self.weight_decay != 0.0).then(|| R::of(1.0 - self.lr * self.weight_decay)),
            l2: (!self.decoupled && self.weight_decay != 0.0).then(|| R::of(self.weight_decay)),
            maximize: self.maximize,
            lerp_from_start: weight < 0.5,
            lerp_weight: R::of(if weight < 0.5 { weight } else { 1.0 - weight }),
            beta2: R::of(beta2),
            one_minus_beta2: R::of(1.0 - beta2),
            bias_correction2_sqrt: R::of(bias_correction2_sqrt),
            eps: R::of(self.eps),
            neg_step_size: R::of(-step_size),
        }
    }

    /// The update as element-wise ops (the device path, and the CPU's for the half types and for operands that
    /// share storage): PyTorch's `_single_tensor_adam` line by line.
    fn composed(
        &self,
        param: &Tensor,
        grad: &Tensor,
        exp_avg: &Tensor,
        exp_avg_sq: &Tensor,
        max: Option<&Tensor>,
    ) -> Result<()> {
        let (beta1, beta2) = self.betas;
        if self.decoupled && self.weight_decay != 0.0 {
            param.mul_scalar_(1.0 - self.lr * self.weight_decay)?;
        }
        let l2 = if self.decoupled { 0.0 } else { self.weight_decay };
        let g = decayed_gradient(grad, param, l2, self.maximize)?;
        exp_avg.lerp_(&g, 1.0 - beta1)?;
        // exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2).
        exp_avg_sq.mul_scalar_(beta2)?;
        exp_avg_sq.add_(&g.mul_scalar(1.0 - beta2)?.mul(&g)?)?;
        let second = match max {
            Some(max) => {
                max.copy_(&max.maximum(exp_avg_sq)?)?;
                max
            }
            None => exp_avg_sq,
        };
        let (step_size, bias_correction2_sqrt) = self.bias_corrected();
        let bias_correction2_sqrt =
            Tensor::full(Vec::<usize>::new(), bias_correction2_sqrt, param.dtype()).to_device(param.device())?;
        let denom = second.sqrt()?.div(&bias_correction2_sqrt)?.add_scalar(self.eps)?;
        // param.addcdiv_(exp_avg, denom, value=-step_size): (value·exp_avg) / denom, in PyTorch's order.
        param.add_(&exp_avg.mul_scalar(-step_size)?.div(&denom)?)
    }
}

/// [`AdamStep`]'s constants in the parameter's float type.
#[derive(Clone, Copy)]
struct AdamScalars<R> {
    /// AdamW's factor `1 - lr·weight_decay` on the parameter, first.
    decay: Option<R>,
    /// Adam's L2 penalty: `g + weight_decay·param`.
    l2: Option<R>,
    maximize: bool,
    /// `lerp`'s branch: `t + w·(g - t)` (true) or `g - (g - t)·w` (false, `w` already `1 - weight`).
    lerp_from_start: bool,
    lerp_weight: R,
    beta2: R,
    one_minus_beta2: R,
    bias_correction2_sqrt: R,
    eps: R,
    neg_step_size: R,
}

/// One element's update: the composed ops' operations in their order, each rounded in `R`.
#[inline(always)]
fn adam<R: Real>(s: &AdamScalars<R>, param: &mut R, grad: R, exp_avg: &mut R, exp_avg_sq: &mut R, max: Option<&mut R>) {
    let mut p = *param;
    if let Some(decay) = s.decay {
        p = p * decay;
    }
    let mut g = if s.maximize { -grad } else { grad };
    if let Some(l2) = s.l2 {
        g = g + p * l2;
    }
    let diff = g - *exp_avg;
    *exp_avg = if s.lerp_from_start {
        *exp_avg + diff * s.lerp_weight
    } else {
        g - diff * s.lerp_weight
    };
    *exp_avg_sq = *exp_avg_sq * s.beta2 + g * s.one_minus_beta2 * g;
    let second = match max {
        Some(max) => {
            *max = max.max_nan(*exp_avg_sq);
            *max
        }
        None => *exp_avg_sq,
    };
    let denom = second.sqrt() / s.bias_correction2_sqrt + s.eps;
    *param = p + *exp_avg * s.neg_step_size / denom;
}

/// `grad`, negated when maximising, plus `weight_decay·param` when non-zero: the gradient every optimizer's
/// update starts from (PyTorch's `grad.add(param, alpha=weight_decay)` in its single-tensor loops).
pub(crate) fn decayed_gradient(grad: &Tensor, param: &Tensor, weight_decay: f64, maximize: bool) -> Result<Tensor> {
    let g = if maximize { grad.neg()? } else { grad.clone() };
    if weight_decay != 0.0 {
        g.add(&param.mul_scalar(weight_decay)?)
    } else {
        Ok(g)
    }
}

/// One SGD update, with its hyperparameters, and whether it is the first with a momentum buffer (which then
/// starts as the gradient).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SgdStep {
    /// Learning rate.
    pub(crate) lr: f64,
    /// Momentum factor (0: no buffer).
    pub(crate) momentum: f64,
    /// Dampening of the momentum.
    pub(crate) dampening: f64,
    /// L2 penalty added to the gradient.
    pub(crate) weight_decay: f64,
    /// Nesterov momentum.
    pub(crate) nesterov: bool,
    /// Whether to step along the gradient instead of against it.
    pub(crate) maximize: bool,
    /// Whether the momentum buffer is new: it takes the gradient instead of decaying.
    pub(crate) first: bool,
}

impl SgdStep {
    /// Updates `param` from `grad` and, with a momentum, its `momentum_buffer` (of `param`'s shape and dtype),
    /// all in place.
    pub(crate) fn apply(&self, param: &Tensor, grad: &Tensor, momentum_buffer: Option<&Tensor>) -> Result<()> {
        let mut inputs = vec![param, grad];
        inputs.extend(momentum_buffer.filter(|_| self.momentum != 0.0));
        run(self, &inputs)
    }

    /// The formula's constants in `R`.
    fn scalars<R: Real>(&self) -> SgdScalars<R> {
        SgdScalars {
            l2: (self.weight_decay != 0.0).then(|| R::of(self.weight_decay)),
            maximize: self.maximize,
            first: self.first,
            nesterov: self.nesterov,
            momentum: R::of(self.momentum),
            one_minus_dampening: R::of(1.0 - self.dampening),
            neg_lr: R::of(-self.lr),
        }
    }

    /// The update as element-wise ops: PyTorch's `_single_tensor_sgd` line by line.
    fn composed(&self, param: &Tensor, grad: &Tensor, buf: Option<&Tensor>) -> Result<()> {
        let mut g = decayed_gradient(grad, param, self.weight_decay, self.maximize)?;
        if let Some(buf) = buf {
            if self.first {
                buf.copy_(&g)?;
            } else {
                buf.mul_scalar_(self.momentum)?;
                buf.add_(&g.mul_scalar(1.0 - self.dampening)?)?;
            }
            g = if self.nesterov {
                g.add(&buf.mul_scalar(self.momentum)?)?
            } else {
                buf.clone()
            };
        }
        param.add_(&g.mul_scalar(-self.lr)?)
    }
}

/// [`SgdStep`]'s constants in the parameter's float type.
#[derive(Clone, Copy)]
struct SgdScalars<R> {
    l2: Option<R>,
    maximize: bool,
    first: bool,
    nesterov: bool,
    momentum: R,
    one_minus_dampening: R,
    neg_lr: R,
}

/// One element's SGD update: the composed ops' operations in their order, each rounded in `R`.
#[inline(always)]
fn sgd<R: Real>(s: &SgdScalars<R>, param: &mut R, grad: R, buf: Option<&mut R>) {
    let p = *param;
    let mut g = if s.maximize { -grad } else { grad };
    if let Some(l2) = s.l2 {
        g = g + p * l2;
    }
    if let Some(buf) = buf {
        *buf = if s.first {
            g
        } else {
            *buf * s.momentum + g * s.one_minus_dampening
        };
        g = if s.nesterov { g + *buf * s.momentum } else { *buf };
    }
    *param = p + g * s.neg_lr;
}

/// A run of consecutive elements of a parameter, its gradient and its state tensors, updated by one thread.
struct Piece<'a, R> {
    param: &'a mut [R],
    grad: &'a [R],
    state: Vec<&'a mut [R]>,
}

/// Runs `update` over `whole` (its slices all of one length) in pieces of [`map::CHUNK`](super::map::CHUNK)
/// elements, split over the threads.
fn for_each_piece<R: Real>(whole: Piece<'_, R>, update: impl Fn(&mut Piece<'_, R>) + Sync) {
    let Piece { param, grad, state } = whole;
    const PIECE: usize = super::map::CHUNK;
    let mut state: Vec<_> = state.into_iter().map(|s| s.chunks_mut(PIECE)).collect();
    let mut pieces: Vec<Piece<'_, R>> = param
        .chunks_mut(PIECE)
        .zip(grad.chunks(PIECE))
        .map(|(param, grad)| Piece {
            param,
            grad,
            state: state.iter_mut().filter_map(Iterator::next).collect(),
        })
        .collect();
    let parts = threads::parts_for(pieces.len(), 2);
    threads::for_each_piece(&mut pieces, 1, parts, |_, run| run.iter_mut().for_each(&update));
}

multiversion! {
    fn adam_piece<R: Real>(s: AdamScalars<R>, param: &mut [R], grad: &[R], exp_avg: &mut [R], exp_avg_sq: &mut [R], max: Option<&mut [R]>) {
        match max {
            Some(max) => {
                for ((((p, &g), m), v), x) in param.iter_mut().zip(grad).zip(exp_avg).zip(exp_avg_sq).zip(max.iter_mut()) {
                    adam(&s, p, g, m, v, Some(x));
                }
            }
            None => {
                for (((p, &g), m), v) in param.iter_mut().zip(grad).zip(exp_avg).zip(exp_avg_sq) {
                    adam(&s, p, g, m, v, None);
                }
            }
        }
    }
}

multiversion! {
    fn sgd_piece<R: Real>(s: SgdScalars<R>, param: &mut [R], grad: &[R], buf: Option<&mut [R]>) {
        match buf {
            Some(buf) => {
                for ((p, &g), b) in param.iter_mut().zip(grad).zip(buf.iter_mut()) {
                    sgd(&s, p, g, Some(b));
                }
            }
            None => {
                for (p, &g) in param.iter_mut().zip(grad) {
                    sgd(&s, p, g, None);
                }
            }
        }
    }
}

/// Whether `inputs` can take the single pass: `f32` or `f64`, one dtype and shape, no two sharing storage (any
/// other case takes the composition, which broadcasts, converts, copies an aliased operand, or names the
/// mismatch in its error).
fn single_pass(inputs: &[&Tensor]) -> bool {
    let first = inputs[0];
    matches!(first.dtype(), DType::F32 | DType::F64)
        && inputs
            .iter()
            .all(|t| t.dtype() == first.dtype() && t.shape() == first.shape())
        && inputs
            .iter()
            .enumerate()
            .all(|(i, a)| inputs[i + 1..].iter().all(|b| !a.shares_storage(b)))
}

/// Runs `update` on the host data of `inputs` (`[param, grad, state...]`, checked by [`single_pass`]): the
/// gradient read, the parameter and the state written, each locked once.
fn with_host_data(
    name: &'static str,
    inputs: &[&Tensor],
    update: impl FnOnce(&mut CpuData, &CpuData, Vec<&mut CpuData>),
) -> Result<()> {
    /// Write-locks `rest` one after another, then runs `update` with all of them.
    fn lock_state(
        name: &'static str,
        rest: &[&Tensor],
        held: Vec<&mut CpuData>,
        update: impl FnOnce(Vec<&mut CpuData>),
    ) -> Result<()> {
        match rest.split_first() {
            None => {
                update(held);
                Ok(())
            }
            Some((first, rest)) => first.write_cpu(name, move |data| {
                // The held borrows, shortened to this lock's (a `Vec` of references is covariant).
                let mut held: Vec<&mut CpuData> = held;
                held.push(data);
                lock_state(name, rest, held, update)
            })?,
        }
    }
    inputs[1].read_cpu(name, |grad| {
        inputs[0].write_cpu(name, |param| {
            lock_state(name, &inputs[2..], Vec::new(), |state| update(param, grad, state))
        })?
    })?
}

/// The whole of host data of one dtype as one [`Piece`] of `R`s, or `None` for another dtype.
fn slices<'a, R: crate::Element>(
    param: &'a mut CpuData,
    grad: &'a CpuData,
    state: Vec<&'a mut CpuData>,
) -> Option<Piece<'a, R>> {
    let state = state
        .into_iter()
        .map(|s| s.as_mut_slice::<R>())
        .collect::<Option<Vec<_>>>()?;
    Some(Piece {
        param: param.as_mut_slice::<R>()?,
        grad: grad.as_slice::<R>()?,
        state,
    })
}

/// An update that runs as a single pass on the host: its formula over one run of elements.
trait SinglePass: Sync {
    /// Updates `piece` (consecutive elements of the parameter, its gradient and its state).
    fn update_piece<R: Real>(&self, piece: &mut Piece<'_, R>);
}

impl SinglePass for AdamStep {
    fn update_piece<R: Real>(&self, piece: &mut Piece<'_, R>) {
        let Piece { param, grad, state } = piece;
        let s = self.scalars::<R>();
        match &mut state[..] {
            [m, v] => adam_piece(s, param, grad, m, v, None),
            [m, v, max] => adam_piece(s, param, grad, m, v, Some(&mut **max)),
            _ => unreachable!("`AdamStep::apply` passes two or three state tensors"),
        }
    }
}

impl SinglePass for SgdStep {
    fn update_piece<R: Real>(&self, piece: &mut Piece<'_, R>) {
        let Piece { param, grad, state } = piece;
        sgd_piece(self.scalars::<R>(), param, grad, state.first_mut().map(|b| &mut **b));
    }
}

/// Runs `update` over the host data of `inputs` (`[param, grad, state...]`, admitted by [`single_pass`]), in
/// pieces split over the threads.
fn on_host(name: &'static str, inputs: &[&Tensor], update: &impl SinglePass) -> Result<()> {
    with_host_data(name, inputs, |param, grad, state| {
        if param.dtype() == DType::F32 {
            if let Some(whole) = slices::<f32>(param, grad, state) {
                for_each_piece(whole, |piece| update.update_piece(piece));
            }
        } else if let Some(whole) = slices::<f64>(param, grad, state) {
            for_each_piece(whole, |piece| update.update_piece(piece));
        }
    })
}

impl Op for AdamStep {
    type Output = ();
    const NAME: &'static str = "adam";

    /// Inputs `[param, grad, exp_avg, exp_avg_sq]`, then `max_exp_avg_sq` with `amsgrad`.
    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        if !single_pass(inputs) {
            return self.composed(inputs[0], inputs[1], inputs[2], inputs[3], inputs.get(4).copied());
        }
        on_host(self.name(), inputs, self)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        self.composed(inputs[0], inputs[1], inputs[2], inputs[3], inputs.get(4).copied())
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let n = 300;
        let operands = |amsgrad: bool| -> Result<Vec<Tensor>> {
            let mut t = vec![
                probe_tensor(&[n], 0.0, dtype)?,
                probe_tensor(&[n], 0.3, dtype)?,
                probe_tensor(&[n], 0.7, dtype)?,
                probe_tensor(&[n], 1.1, dtype)?.abs()?,
            ];
            if amsgrad {
                t.push(probe_tensor(&[n], 1.9, dtype)?.abs()?);
            }
            Ok(t)
        };
        let adam = AdamStep { step: 3.0, ..*self };
        let amsgrad = AdamStep {
            amsgrad: true,
            weight_decay: 0.01,
            ..adam
        };
        Ok(vec![(adam, operands(self.amsgrad)?), (amsgrad, operands(true)?)])
    }
}

impl Op for SgdStep {
    type Output = ();
    const NAME: &'static str = "sgd";

    /// Inputs `[param, grad]`, then `momentum_buffer` with a momentum.
    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        if !single_pass(inputs) {
            return self.composed(inputs[0], inputs[1], inputs.get(2).copied());
        }
        on_host(self.name(), inputs, self)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        self.composed(inputs[0], inputs[1], inputs.get(2).copied())
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let operands = || -> Result<Vec<Tensor>> {
            [0.0, 0.3, 0.7]
                .iter()
                .map(|&phase| probe_tensor(&[300], phase, dtype))
                .collect()
        };
        let momentum = SgdStep {
            lr: 0.1,
            momentum: 0.9,
            dampening: 0.1,
            weight_decay: 0.01,
            nesterov: false,
            maximize: false,
            first: false,
        };
        let nesterov = SgdStep {
            dampening: 0.0,
            nesterov: true,
            maximize: true,
            ..momentum
        };
        let plain = SgdStep {
            momentum: 0.0,
            ..momentum
        };
        let mut plain_operands = operands()?;
        plain_operands.pop();
        Ok(vec![
            (momentum, operands()?),
            (nesterov, operands()?),
            (
                SgdStep {
                    first: true,
                    ..momentum
                },
                operands()?,
            ),
            (plain, plain_operands),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Generator;

    /// Past the thread split (two pieces of `map::CHUNK` per thread on two threads), with a remainder.
    const N: usize = 4 * super::super::map::CHUNK + 77;

    const ADAM: AdamStep = AdamStep {
        lr: 1e-3,
        betas: (0.9, 0.999),
        eps: 1e-8,
        weight_decay: 0.0,
        decoupled: false,
        amsgrad: false,
        maximize: false,
        step: 1.0,
    };

    /// The variants that take each branch of the formula.
    fn variants() -> Vec<AdamStep> {
        vec![
            ADAM,
            AdamStep { step: 7.0, ..ADAM },
            AdamStep {
                weight_decay: 0.1,
                maximize: true,
                step: 3.0,
                ..ADAM
            },
            AdamStep {
                weight_decay: 0.01,
                decoupled: true,
                lr: 0.05,
                ..ADAM
            },
            AdamStep {
                amsgrad: true,
                step: 4.0,
                ..ADAM
            },
            // 1 - beta1 ≥ 0.5: lerp's other branch.
            AdamStep {
                betas: (0.3, 0.6),
                eps: 1e-3,
                step: 2.0,
                ..ADAM
            },
        ]
    }

    /// A parameter, its gradient, and running averages as after earlier steps (the squares non-negative).
    fn operands(dtype: DType, seed: u64) -> Vec<Tensor> {
        let mut g = Generator::new(seed);
        let mut t = |square: bool| {
            let t = Tensor::randn_with([N], DType::F64, &mut g);
            let t = if square {
                t.mul(&t).unwrap().mul_scalar(0.01).unwrap()
            } else {
                t
            };
            t.to_dtype(dtype).unwrap()
        };
        vec![t(false), t(false), t(false).mul_scalar(0.1).unwrap(), t(true), t(true)]
    }

    fn copies(ts: &[Tensor]) -> Vec<Tensor> {
        ts.iter().map(|t| t.deep_copy().unwrap()).collect()
    }

    fn bits(t: &Tensor) -> Vec<u64> {
        match t.dtype() {
            DType::F32 => t.to_vec::<f32>().unwrap().iter().map(|x| x.to_bits() as u64).collect(),
            _ => t
                .to_dtype(DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect(),
        }
    }

    fn assert_same(what: &str, fused: &[Tensor], composed: &[Tensor]) {
        for (i, (a, b)) in fused.iter().zip(composed).enumerate() {
            let (a, b) = (bits(a), bits(b));
            let first = a.iter().zip(&b).position(|(x, y)| x != y);
            assert!(
                first.is_none(),
                "{what}: operand {i} differs first at element {first:?}"
            );
        }
    }

    #[test]
    fn the_single_pass_equals_the_composed_ops_bit_for_bit() {
        for dtype in [DType::F32, DType::F64] {
            for (k, step) in variants().into_iter().enumerate() {
                let fused = operands(dtype, k as u64);
                let composed = copies(&fused);
                let max = |t: &[Tensor]| t.get(4).filter(|_| step.amsgrad).cloned();
                step.apply(&fused[0], &fused[1], &fused[2], &fused[3], max(&fused).as_ref())
                    .unwrap();
                step.composed(
                    &composed[0],
                    &composed[1],
                    &composed[2],
                    &composed[3],
                    max(&composed).as_ref(),
                )
                .unwrap();
                assert_same(&format!("{dtype:?} {step:?}"), &fused, &composed);
                assert_ne!(
                    bits(&fused[0]),
                    bits(&operands(dtype, k as u64)[0]),
                    "the parameter moved"
                );
            }
        }
    }

    #[test]
    fn a_gradient_sharing_the_parameters_storage_is_read_before_it_changes() {
        // `p.grad = p` (the same storage): the composition, which copies an operand that aliases its target.
        let step = AdamStep { step: 2.0, ..ADAM };
        let aliased = operands(DType::F32, 9);
        let separate = copies(&aliased);
        step.apply(&aliased[0], &aliased[0].clone(), &aliased[2], &aliased[3], None)
            .unwrap();
        step.composed(
            &separate[0],
            &separate[0].deep_copy().unwrap(),
            &separate[2],
            &separate[3],
            None,
        )
        .unwrap();
        let (param_and_average, expected) = ([&aliased[0], &aliased[2]], [&separate[0], &separate[2]]);
        assert_same(
            "Adam, aliased",
            &param_and_average.map(Tensor::clone),
            &expected.map(Tensor::clone),
        );
        let sgd = SgdStep {
            lr: 0.1,
            momentum: 0.5,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: true,
            maximize: false,
            first: false,
        };
        let aliased = operands(DType::F64, 10);
        let separate = copies(&aliased);
        sgd.apply(&aliased[0], &aliased[0].clone(), Some(&aliased[2])).unwrap();
        sgd.composed(&separate[0], &separate[0].deep_copy().unwrap(), Some(&separate[2]))
            .unwrap();
        assert_same(
            "SGD, aliased",
            &[aliased[0].clone(), aliased[2].clone()],
            &[separate[0].clone(), separate[2].clone()],
        );
    }

    #[test]
    fn sgds_single_pass_equals_the_composed_ops_bit_for_bit() {
        let momentum = SgdStep {
            lr: 0.01,
            momentum: 0.9,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            maximize: false,
            first: false,
        };
        let variants = [
            momentum,
            SgdStep {
                first: true,
                ..momentum
            },
            SgdStep {
                dampening: 0.25,
                weight_decay: 0.05,
                ..momentum
            },
            SgdStep {
                nesterov: true,
                maximize: true,
                ..momentum
            },
            SgdStep {
                nesterov: true,
                first: true,
                weight_decay: 1e-4,
                ..momentum
            },
            SgdStep {
                momentum: 0.0,
                lr: 0.3,
                ..momentum
            },
        ];
        for dtype in [DType::F32, DType::F64] {
            for (k, step) in variants.into_iter().enumerate() {
                let fused = operands(dtype, 20 + k as u64)[..3].to_vec();
                let composed = copies(&fused);
                let buf = |t: &[Tensor]| t.get(2).filter(|_| step.momentum != 0.0).cloned();
                step.apply(&fused[0], &fused[1], buf(&fused).as_ref()).unwrap();
                step.composed(&composed[0], &composed[1], buf(&composed).as_ref())
                    .unwrap();
                assert_same(&format!("{dtype:?} {step:?}"), &fused, &composed);
                assert_ne!(
                    bits(&fused[0]),
                    bits(&operands(dtype, 20 + k as u64)[0]),
                    "the parameter moved"
                );
            }
        }
    }

    #[test]
    fn state_of_another_shape_is_an_error_not_a_pass_over_the_elements() {
        // Six elements each, but the running average is (2, 3): the composition's error, nothing written.
        let param = Tensor::from_vec(vec![1.0f32; 6], [6]).unwrap();
        let grad = Tensor::from_vec(vec![0.5f32; 6], [6]).unwrap();
        let exp_avg = Tensor::zeros([2, 3], DType::F32);
        let exp_avg_sq = Tensor::zeros([6], DType::F32);
        let err = ADAM.apply(&param, &grad, &exp_avg, &exp_avg_sq, None).unwrap_err();
        assert!(matches!(err, crate::Error::ShapeMismatch { .. }), "{err}");
        assert_eq!(param.to_vec::<f32>().unwrap(), vec![1.0; 6]);
    }

    #[test]
    fn half_types_round_after_each_operation() {
        for dtype in [DType::F16, DType::BF16] {
            let step = AdamStep { step: 5.0, ..ADAM };
            let half = operands(dtype, 3);
            // The same operations on f32 copies, rounded to the half type after each: computed here op by op.
            let wide: Vec<Vec<f32>> = half
                .iter()
                .map(|t| t.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap())
                .collect();
            step.apply(&half[0], &half[1], &half[2], &half[3], None).unwrap();
            let round = |x: f32| -> f32 {
                let t = Tensor::from_vec(vec![x], [1]).unwrap().to_dtype(dtype).unwrap();
                t.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap()[0]
            };
            let s = step.scalars::<f32>();
            for i in (0..N).step_by(997) {
                let (p, g, mut m, mut v) = (wide[0][i], wide[1][i], wide[2][i], wide[3][i]);
                let diff = round(g - m);
                m = round(m + round(diff * s.lerp_weight));
                v = round(round(v * s.beta2) + round(round(g * s.one_minus_beta2) * g));
                let denom = round(round(round(v.sqrt()) / s.bias_correction2_sqrt) + s.eps);
                let want = round(p + round(round(m * s.neg_step_size) / denom));
                let got = half[0].to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap()[i];
                assert_eq!(got.to_bits(), want.to_bits(), "{dtype:?} element {i}");
            }
        }
    }
}
