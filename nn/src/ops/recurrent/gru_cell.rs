//! PyTorch's GRU cell update as one operation (its CUDA recurrences' `_thnn_fused_gru_cell`): from the gates'
//! input projection `ig = x·W_ihᵀ + b_ih` and hidden projection `hg = h·W_hhᵀ + b_hh` `(…, 3·hidden)`, gates
//! r, z, n, and the state `h` `(…, hidden)`:
//!
//! ```text
//! r = σ(hg_r + ig_r)    z = σ(hg_z + ig_z)    n = tanh(ig_n + hg_n·r)    h' = (h - n)·z + n
//! ```
//!
//! PyTorch's CPU cell computes the same formula as ten operations (two `chunk`s, adds, activations); here it is
//! one forward and one backward per step, on the CPU and on devices, computed in `f32` for the half types. The
//! backward recomputes the gates from the saved operands.

use kernels::activation::{Sigmoid, Tanh};
use kernels::{GpuDevice, HostFormula, Real};

use crate::ops::float::with_float_type;
use crate::ops::map::multiversion;
use crate::ops::{Op, probe_tensor, run, same_dtype};
use crate::tensor::autograd::{Backward, Saved};
use crate::tensor::device::float_type;
use crate::{DType, Error, Result, Shape, Tensor};

/// `h'` from `[ig, hg, h]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GruCell;

/// `(d_ig, d_hg, dh)` from `[ig, hg, h, dy]`.
#[derive(Clone, Copy, Debug)]
struct GruCellBackward;

/// The GRU cell update of `h` from the projections `ig`, `hg` (module doc); differentiable.
pub(crate) fn gru_cell(ig: &Tensor, hg: &Tensor, h: &Tensor) -> Result<Tensor> {
    sizes("gru_cell", [ig, hg, h])?;
    run(&GruCell, &[ig, hg, h])
}

/// Checks the operands of `op` (the projections of one shape, `h`'s but for a last dimension three times as
/// long, one float dtype) and returns `(units, hidden)`: `h`'s elements and its last dimension.
fn sizes(op: &'static str, [ig, hg, h]: [&Tensor; 3]) -> Result<(usize, usize)> {
    Error::check_float(op, h.dtype())?;
    same_dtype(op, h, &[Some(ig), Some(hg)])?;
    let Some(&hidden) = h.shape().last() else {
        return Err(Error::invalid(
            op,
            "the state must have at least one dimension, got a scalar",
        ));
    };
    let mut gates = h.shape().to_vec();
    if let Some(last) = gates.last_mut() {
        *last = 3 * hidden;
    }
    let gates = Shape::from(gates);
    Error::check_shapes(
        op,
        &gates,
        ig.shape(),
        "input gates of the state's shape with 3·hidden features",
    )?;
    Error::check_shapes(
        op,
        &gates,
        hg.shape(),
        "hidden gates of the state's shape with 3·hidden features",
    )?;
    Ok((h.numel(), hidden))
}

/// The three gates' parts `[r, z, n]` of one row of a projection.
#[inline(always)]
fn parts<T>(row: &[T], hidden: usize) -> [&[T]; 3] {
    let (r, zn) = row.split_at(hidden);
    let (z, n) = zn.split_at(hidden);
    [r, z, &n[..hidden]]
}

/// The gates `(r, z, n)` of feature `j`, from the rows' parts of the two projections.
#[inline(always)]
fn gates<T: Real>([ir, iz, i_n]: [&[T]; 3], [hr, hz, hn]: [&[T]; 3], j: usize) -> (T, T, T) {
    let r = Sigmoid::forward(hr[j] + ir[j], 0.0, 0.0);
    let z = Sigmoid::forward(hz[j] + iz[j], 0.0, 0.0);
    let n = Tanh::forward(i_n[j] + hn[j] * r, 0.0, 0.0);
    (r, z, n)
}

multiversion! {
    fn forward_rows<T: Real>(ig: &[T], hg: &[T], h: &[T], out: &mut [T], hidden: usize) {
        let rows = ig.chunks_exact(3 * hidden).zip(hg.chunks_exact(3 * hidden));
        for ((ig, hg), (h, out)) in rows.zip(h.chunks_exact(hidden).zip(out.chunks_exact_mut(hidden))) {
            let (ig, hg, out) = (parts(ig, hidden), parts(hg, hidden), &mut out[..hidden]);
            for j in 0..hidden {
                let (_, z, n) = gates(ig, hg, j);
                out[j] = (h[j] - n) * z + n;
            }
        }
    }
}

multiversion! {
    fn backward_rows<T: Real>(operands: [&[T]; 4], grads: [&mut [T]; 2], dh: &mut [T], hidden: usize) {
        let [ig, hg, h, dy] = operands;
        let [d_ig, d_hg] = grads;
        let projections = ig.chunks_exact(3 * hidden).zip(hg.chunks_exact(3 * hidden));
        let states = h.chunks_exact(hidden).zip(dy.chunks_exact(hidden));
        let gradients = d_ig.chunks_exact_mut(3 * hidden).zip(d_hg.chunks_exact_mut(3 * hidden));
        let rows = projections.zip(states).zip(gradients.zip(dh.chunks_exact_mut(hidden)));
        for (((ig, hg), (h, dy)), ((d_ig, d_hg), dh)) in rows {
            let (ig, hg) = (parts(ig, hidden), parts(hg, hidden));
            let (d_ir, d_izn) = d_ig.split_at_mut(hidden);
            let (d_iz, d_in) = d_izn.split_at_mut(hidden);
            let (d_hr, d_hzn) = d_hg.split_at_mut(hidden);
            let (d_hz, d_hn) = d_hzn.split_at_mut(hidden);
            for j in 0..hidden {
                let (r, z, n) = gates(ig, hg, j);
                let d = dy[j];
                // As PyTorch's autograd forms them through the cell's operations: `n` gets `dy` from the add
                // and `-(dy·z)` from the subtraction; sigmoid's and tanh's backward read their outputs.
                let dz = d * (h[j] - n);
                let da_n = Tanh::backward(n, d - d * z, 0.0, 0.0);
                let da_r = Sigmoid::backward(r, da_n * hg[2][j], 0.0, 0.0);
                let da_z = Sigmoid::backward(z, dz, 0.0, 0.0);
                (d_ir[j], d_hr[j]) = (da_r, da_r);
                (d_iz[j], d_hz[j]) = (da_z, da_z);
                (d_in[j], d_hn[j]) = (da_n, da_n * r);
                dh[j] = d * z;
            }
        }
    }
}

impl Op for GruCell {
    type Output = Tensor;
    const NAME: &'static str = "gru_cell";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (ig, hg, h) = (inputs[0], inputs[1], inputs[2]);
        let (units, hidden) = sizes(Self::NAME, [ig, hg, h])?;
        with_float_type!(h.dtype(), T => {
            let op = Self::NAME;
            let (igs, hgs, hs) = (ig.float_ref::<T>(op)?, hg.float_ref::<T>(op)?, h.float_ref::<T>(op)?);
            let mut out = vec![T::ZERO; units];
            if hidden > 0 {
                forward_rows(&igs, &hgs, &hs, &mut out, hidden);
            }
            Tensor::from_computed(out, h.shape().clone(), h.dtype())
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (ig, hg, h) = (inputs[0], inputs[1], inputs[2]);
        let (units, hidden) = sizes(Self::NAME, [ig, hg, h])?;
        let buffers = [
            ig.gpu_buffer(Self::NAME)?,
            hg.gpu_buffer(Self::NAME)?,
            h.gpu_buffer(Self::NAME)?,
        ];
        let out = kernels::gru_cell::forward(
            float_type(Self::NAME, h.dtype())?,
            [&buffers[0], &buffers[1], &buffers[2]],
            units,
            hidden,
        )
        .map_err(|e| h.kernel_error(Self::NAME, e))?;
        Ok(h.like_gpu(out))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(GruCell, probe_operands(dtype)?[..3].to_vec())])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let saved: Vec<Saved> = inputs.iter().map(|t| Saved::new(t)).collect();
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let op = "gru_cell";
            let (ig, hg, h) = (saved[0].get(op)?, saved[1].get(op)?, saved[2].get(op)?);
            let (d_ig, d_hg, dh) = run(&GruCellBackward, &[ig, hg, h, &g[0]])?;
            Ok(vec![
                needs[0].then_some(d_ig),
                needs[1].then_some(d_hg),
                needs[2].then_some(dh),
            ])
        }))
    }
}

impl Op for GruCellBackward {
    type Output = (Tensor, Tensor, Tensor);
    const NAME: &'static str = "gru_cell_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Self::Output> {
        let (ig, hg, h, dy) = (inputs[0], inputs[1], inputs[2], inputs[3]);
        let (units, hidden) = sizes(Self::NAME, [ig, hg, h])?;
        crate::ops::check_like(Self::NAME, h, dy, crate::ops::GRADIENT)?;
        with_float_type!(h.dtype(), T => {
            let op = Self::NAME;
            let (igs, hgs, hs, dys) = (ig.float_ref::<T>(op)?, hg.float_ref::<T>(op)?, h.float_ref::<T>(op)?, dy.float_ref::<T>(op)?);
            let mut d_ig = vec![T::ZERO; 3 * units];
            let mut d_hg = vec![T::ZERO; 3 * units];
            let mut dh = vec![T::ZERO; units];
            if hidden > 0 {
                backward_rows([&igs, &hgs, &hs, &dys], [&mut d_ig, &mut d_hg], &mut dh, hidden);
            }
            Ok((
                Tensor::from_computed(d_ig, ig.shape().clone(), ig.dtype())?,
                Tensor::from_computed(d_hg, hg.shape().clone(), hg.dtype())?,
                Tensor::from_computed(dh, h.shape().clone(), h.dtype())?,
            ))
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Self::Output> {
        let (ig, hg, h, dy) = (inputs[0], inputs[1], inputs[2], inputs[3]);
        let (units, hidden) = sizes(Self::NAME, [ig, hg, h])?;
        crate::ops::check_like(Self::NAME, h, dy, crate::ops::GRADIENT)?;
        let op = Self::NAME;
        let buffers = [
            ig.gpu_buffer(op)?,
            hg.gpu_buffer(op)?,
            h.gpu_buffer(op)?,
            dy.gpu_buffer(op)?,
        ];
        let (d_ig, d_hg, dh) = kernels::gru_cell::backward(
            float_type(op, h.dtype())?,
            [&buffers[0], &buffers[1], &buffers[2], &buffers[3]],
            units,
            hidden,
        )
        .map_err(|e| h.kernel_error(op, e))?;
        Ok((ig.like_gpu(d_ig), hg.like_gpu(d_hg), h.like_gpu(dh)))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(GruCellBackward, probe_operands(dtype)?.to_vec())])
    }
}

/// The probes' operands `[ig, hg, h, dy]`: three rows of five features, the projections scaled by 4 so that
/// the gates reach their saturated tails.
fn probe_operands(dtype: DType) -> Result<[Tensor; 4]> {
    Ok([
        probe_tensor(&[3, 15], 0.0, dtype)?.mul_scalar(4.0)?,
        probe_tensor(&[3, 15], 1.0, dtype)?.mul_scalar(4.0)?,
        probe_tensor(&[3, 5], 2.0, dtype)?,
        probe_tensor(&[3, 5], 3.0, dtype)?,
    ])
}
