//! 2-d pooling ops over `(N, C, H, W)`: max pooling with its indices, average pooling (a window's sum over
//! PyTorch's divisor), and their gradients. Which input positions each output reads is a
//! [`Pooling`] (a table of windows per axis, built by `functional::pooling` from PyTorch's arguments), so the
//! same ops serve strided and adaptive windows.
//!
//! Both paths walk each window in row-major order as PyTorch's CPU kernels do: max pooling keeps the first
//! largest (a NaN wins, a later NaN replaces it), average pooling sums in the dtype's compute type and divides
//! as PyTorch does ([`Divisor`]). The CPU's backward adds each output's gradient into the input's in output
//! order, as PyTorch's does; the device's gathers the same terms in the same order.

use std::sync::Arc;

use kernels::pool2d::{self as kernel, Divisor, Pooling};
use kernels::{GpuDevice, Real};

use super::map;
use super::{Op, run};
use crate::tensor::autograd::{Backward, Saved};
use crate::tensor::cast::cast_data;
use crate::tensor::storage::CpuData;
use crate::threads;
use crate::{DType, Element, Error, Result, Shape, Tensor};

/// Window taps a split part should hold at least.
const MIN_TAPS: usize = 1 << 15;

/// Max pooling of `x` (`(N, C, H, W)`, `N·C = pooling.planes`); outputs `(values, indices)`, the indices
/// (`int64`) each maximum's position in its `H·W` plane, as PyTorch's `max_pool2d_with_indices`.
pub(crate) struct MaxPool2d {
    pub(crate) pooling: Arc<Pooling>,
}

/// Average pooling of `x` (`(N, C, H, W)`): each window's sum over its divisor.
pub(crate) struct AvgPool2d {
    pub(crate) pooling: Arc<Pooling>,
    pub(crate) divisor: Divisor,
}

/// The input gradient of [`MaxPool2d`]; inputs `[g, indices]`, the input's `shape`.
struct MaxPool2dBackward {
    pooling: Arc<Pooling>,
    shape: Shape,
}

/// The input gradient of [`AvgPool2d`]; inputs `[g]`, the input's `shape`.
struct AvgPool2dBackward {
    pooling: Arc<Pooling>,
    divisor: Divisor,
    shape: Shape,
}

/// The output's shape: the input's with the pooled sizes.
fn output_shape(x: &Shape, p: &Pooling) -> Shape {
    let mut shape = x.to_vec();
    let rank = shape.len();
    shape[rank - 2] = p.rows.output();
    shape[rank - 1] = p.cols.output();
    Shape::from(shape)
}

/// Fails unless `x`'s last two dimensions and planes are `pooling`'s input.
fn check_input(op: &'static str, x: &Tensor, p: &Pooling) -> Result<()> {
    let s = x.shape();
    let fits =
        s.len() >= 2 && s[s.len() - 2] == p.rows.input && s[s.len() - 1] == p.cols.input && s.numel() == p.input_len();
    if fits {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            format!(
                "an input of shape {s} for a pooling of {} planes of {}x{}",
                p.planes, p.rows.input, p.cols.input
            ),
        ))
    }
}

/// `$body` with `$v` bound to `$x`'s host values as a slice of `f32` or `f64` (`f16` / `bf16` widened to
/// `f32`, PyTorch's compute type; other dtypes refused naming `$op`), read in place where no widening is needed.
macro_rules! on_host {
    ($x:expr, $op:expr, $v:ident => $body:expr) => {
        $x.read_cpu($op, |d| match d {
            CpuData::F32($v) => Ok($body),
            CpuData::F64($v) => Ok($body),
            CpuData::F16(_) | CpuData::BF16(_) => {
                let CpuData::F32(wide) = cast_data(d, DType::F32) else {
                    unreachable!("a cast to f32")
                };
                let $v = &wide;
                Ok($body)
            }
            other => Err(Error::float_only($op, other.dtype())),
        })?
    };
}

/// A tensor of `dtype` from the host values [`on_host!`] computed in.
fn narrowed(values: CpuData, shape: Shape, dtype: DType) -> Tensor {
    let values = if values.dtype() == dtype {
        values
    } else {
        cast_data(&values, dtype)
    };
    Tensor::from_cpu(values, shape)
}

/// Runs `f(plane, out)` for every plane's `per_plane` outputs of `out`, over the threads when the `taps` the
/// planes read pay for it.
fn per_plane<T: Send>(out: &mut [T], per_plane: usize, taps: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if per_plane == 0 {
        return;
    }
    let parts = threads::parts_for(taps, MIN_TAPS);
    threads::for_each_piece(out, per_plane, parts, |at, piece| {
        for (k, plane) in piece.chunks_mut(per_plane).enumerate() {
            f(at / per_plane + k, plane);
        }
    });
}

/// The taps all windows of `p` read, for the thread split.
fn taps(p: &Pooling) -> usize {
    let sum = |c: &[usize]| c.iter().sum::<usize>();
    p.planes
        .saturating_mul(sum(&p.rows.count))
        .saturating_mul(sum(&p.cols.count))
}

/// Each output's maximum's position in its plane of `x`.
fn argmax<T: Real>(x: &[T], p: &Pooling) -> Vec<i64> {
    let (r, c) = (&p.rows, &p.cols);
    let (plane_len, out_w) = (r.input * c.input, c.output());
    let mut at = vec![0i64; p.output_len()];
    per_plane(&mut at, r.output() * out_w, taps(p), |plane, out| {
        let xs = &x[plane * plane_len..(plane + 1) * plane_len];
        for (oh, out_row) in out.chunks_mut(out_w).enumerate() {
            let (h0, hc) = (r.first[oh], r.count[oh]);
            for (ow, slot) in out_row.iter_mut().enumerate() {
                let (w0, wc) = (c.first[ow], c.count[ow]);
                let mut best_at = h0 * c.input + w0;
                let mut best = xs[best_at];
                for i in 0..hc {
                    let row = (h0 + i * r.step) * c.input + w0;
                    let taps = &xs[row..row + (wc - 1) * c.step + 1];
                    for (j, &v) in taps.iter().step_by(c.step).enumerate() {
                        #[allow(clippy::eq_op)]
                        if v > best || v != v {
                            best = v;
                            best_at = row + j * c.step;
                        }
                    }
                }
                *slot = best_at as i64;
            }
        }
    });
    at
}

/// The elements of `x` (any dtype) at `at` (positions in planes of `plane_len`, `per_plane` per plane).
fn pick(x: &CpuData, at: &[i64], per_plane: usize, plane_len: usize) -> CpuData {
    fn gather<T: Copy>(x: &[T], at: &[i64], per_plane: usize, plane_len: usize) -> Vec<T> {
        at.iter()
            .enumerate()
            .map(|(u, &a)| x[(u / per_plane) * plane_len + a as usize])
            .collect()
    }
    match x {
        CpuData::F16(v) => CpuData::F16(gather(v, at, per_plane, plane_len)),
        CpuData::BF16(v) => CpuData::BF16(gather(v, at, per_plane, plane_len)),
        CpuData::F32(v) => CpuData::F32(gather(v, at, per_plane, plane_len)),
        CpuData::F64(v) => CpuData::F64(gather(v, at, per_plane, plane_len)),
        CpuData::I64(v) => CpuData::I64(gather(v, at, per_plane, plane_len)),
        CpuData::I32(v) => CpuData::I32(gather(v, at, per_plane, plane_len)),
        CpuData::U8(v) => CpuData::U8(gather(v, at, per_plane, plane_len)),
        CpuData::Bool(v) => CpuData::Bool(gather(v, at, per_plane, plane_len)),
    }
}

/// `sum / divisor` of output `(oh, ow)`, as PyTorch divides.
#[inline(always)]
fn divided<T: Real>(sum: T, p: &Pooling, divisor: Divisor, oh: usize, ow: usize) -> T {
    let (dh, dw) = (p.rows.divisor[oh], p.cols.divisor[ow]);
    match divisor {
        Divisor::Product => sum / T::of((dh * dw) as f64),
        Divisor::PerAxis => sum / T::of(dh as f64) / T::of(dw as f64),
    }
}

/// Each window's sum over its divisor.
fn mean<T: Real + Element>(x: &[T], p: &Pooling, divisor: Divisor) -> CpuData {
    let (r, c) = (&p.rows, &p.cols);
    let (plane_len, out_w) = (r.input * c.input, c.output());
    map::filled(p.output_len(), |out: &mut [T]| {
        per_plane(out, r.output() * out_w, taps(p), |plane, out| {
            let xs = &x[plane * plane_len..(plane + 1) * plane_len];
            for (oh, out_row) in out.chunks_mut(out_w).enumerate() {
                let (h0, hc) = (r.first[oh], r.count[oh]);
                for (ow, slot) in out_row.iter_mut().enumerate() {
                    let (w0, wc) = (c.first[ow], c.count[ow]);
                    let mut sum = T::ZERO;
                    for i in h0..h0 + hc {
                        for &v in &xs[i * c.input + w0..i * c.input + w0 + wc] {
                            sum = sum + v;
                        }
                    }
                    *slot = divided(sum, p, divisor, oh, ow);
                }
            }
        })
    })
}

/// The input gradient of a pooling from the output gradient `g`: a zeroed plane of the input's gradient per
/// plane, into which `add(g's plane, dx's plane)` adds each output's share, in output order.
fn spread<T: Real + Element>(g: &[T], p: &Pooling, add: impl Fn(usize, &[T], &mut [T]) + Sync) -> CpuData {
    let (plane_len, per_out) = (p.rows.input * p.cols.input, p.rows.output() * p.cols.output());
    map::filled(p.input_len(), |dx: &mut [T]| {
        dx.fill(T::ZERO);
        per_plane(dx, plane_len, taps(p), |plane, dx| {
            add(plane, &g[plane * per_out..(plane + 1) * per_out], dx)
        });
    })
}

/// [`MaxPool2d`]'s input gradient: each output's gradient added at its maximum's position.
fn max_grad<T: Real + Element>(g: &[T], at: &[i64], p: &Pooling) -> CpuData {
    let per_out = p.rows.output() * p.cols.output();
    spread(g, p, |plane, g, dx| {
        for (&d, &a) in g.iter().zip(&at[plane * per_out..(plane + 1) * per_out]) {
            dx[a as usize] = dx[a as usize] + d;
        }
    })
}

/// [`AvgPool2d`]'s input gradient: each output's gradient over its divisor, added over its window.
fn mean_grad<T: Real + Element>(g: &[T], p: &Pooling, divisor: Divisor) -> CpuData {
    let (r, c) = (&p.rows, &p.cols);
    spread(g, p, |_, g, dx| {
        for (oh, g_row) in g.chunks(c.output()).enumerate() {
            let (h0, hc) = (r.first[oh], r.count[oh]);
            for (ow, &d) in g_row.iter().enumerate() {
                let (w0, wc) = (c.first[ow], c.count[ow]);
                let delta = divided(d, p, divisor, oh, ow);
                for i in h0..h0 + hc {
                    for v in &mut dx[i * c.input + w0..i * c.input + w0 + wc] {
                        *v = *v + delta;
                    }
                }
            }
        }
    })
}

impl Op for MaxPool2d {
    type Output = (Tensor, Tensor);
    const NAME: &'static str = "max_pool2d";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<(Tensor, Tensor)> {
        let (x, p) = (inputs[0], &*self.pooling);
        check_input(Self::NAME, x, p)?;
        if p.rows.count.contains(&0) || p.cols.count.contains(&0) {
            return Err(Error::invalid(
                Self::NAME,
                "a window that holds no element of the input",
            ));
        }
        let at = on_host!(x, Self::NAME, v => argmax(v, p))?;
        let shape = output_shape(x.shape(), p);
        let per_plane = p.rows.output() * p.cols.output();
        let picked = x.read_cpu(Self::NAME, |d| pick(d, &at, per_plane, p.rows.input * p.cols.input))?;
        Ok((Tensor::from_cpu(picked, shape.clone()), Tensor::from_vec(at, shape)?))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<(Tensor, Tensor)> {
        let (x, p) = (inputs[0], &*self.pooling);
        check_input(Self::NAME, x, p)?;
        let dtype = crate::tensor::device::float_type(Self::NAME, x.dtype())?;
        let (values, at) =
            kernel::max_forward(dtype, &x.gpu_buffer(Self::NAME)?, p).map_err(|e| x.kernel_error(Self::NAME, e))?;
        let shape = output_shape(x.shape(), p);
        Ok((x.with_gpu(values, shape.clone()), x.with_gpu_as(at, shape, DType::I64)))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let (pooling, x) = probe_case(dtype, true)?;
        Ok(vec![(MaxPool2d { pooling }, vec![x])])
    }

    fn gradient(&self, inputs: &[&Tensor], output: &(Tensor, Tensor)) -> Option<Box<dyn Backward>> {
        let backward = MaxPool2dBackward {
            pooling: self.pooling.clone(),
            shape: inputs[0].shape().clone(),
        };
        let at = Saved::new(&output.1);
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(run(&backward, &[&g[0], at.get(Self::NAME)?])?)])
        }))
    }
}

impl Op for MaxPool2dBackward {
    type Output = Tensor;
    const NAME: &'static str = "max_pool2d_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (g, at, p) = (inputs[0], inputs[1], &*self.pooling);
        let dx = at.read_cpu(Self::NAME, |d| match d {
            CpuData::I64(at) => on_host!(g, Self::NAME, v => max_grad(v, at, p)),
            other => Err(Error::invalid(
                Self::NAME,
                format!("int64 indices expected, got {}", other.dtype()),
            )),
        })??;
        Ok(narrowed(dx, self.shape.clone(), g.dtype()))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (g, at, p) = (inputs[0], inputs[1], &*self.pooling);
        let dtype = crate::tensor::device::float_type(Self::NAME, g.dtype())?;
        let dx = kernel::max_backward(dtype, &g.gpu_buffer(Self::NAME)?, &at.gpu_buffer(Self::NAME)?, p)
            .map_err(|e| g.kernel_error(Self::NAME, e))?;
        Ok(g.with_gpu(dx, self.shape.clone()))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let (pooling, x) = probe_case(dtype, true)?;
        let (y, at) = MaxPool2d {
            pooling: pooling.clone(),
        }
        .cpu(&[&x])?;
        let g = super::probe_tensor(y.shape(), 0.5, dtype)?;
        let shape = x.shape().clone();
        Ok(vec![(MaxPool2dBackward { pooling, shape }, vec![g, at])])
    }
}

impl Op for AvgPool2d {
    type Output = Tensor;
    const NAME: &'static str = "avg_pool2d";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, p) = (inputs[0], &*self.pooling);
        check_input(Self::NAME, x, p)?;
        let y = on_host!(x, Self::NAME, v => mean(v, p, self.divisor))?;
        Ok(narrowed(y, output_shape(x.shape(), p), x.dtype()))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, p) = (inputs[0], &*self.pooling);
        check_input(Self::NAME, x, p)?;
        let shape = output_shape(x.shape(), p);
        x.gpu_op(Self::NAME, shape, |dtype, xb| {
            kernel::mean_forward(dtype, xb, p, self.divisor)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        [Divisor::Product, Divisor::PerAxis]
            .into_iter()
            .map(|divisor| {
                let (pooling, x) = probe_case(dtype, false)?;
                Ok((AvgPool2d { pooling, divisor }, vec![x]))
            })
            .collect()
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let backward = AvgPool2dBackward {
            pooling: self.pooling.clone(),
            divisor: self.divisor,
            shape: inputs[0].shape().clone(),
        };
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(run(&backward, &[&g[0]])?)])
        }))
    }
}

impl Op for AvgPool2dBackward {
    type Output = Tensor;
    const NAME: &'static str = "avg_pool2d_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (g, p) = (inputs[0], &*self.pooling);
        let dx = on_host!(g, Self::NAME, v => mean_grad(v, p, self.divisor))?;
        Ok(narrowed(dx, self.shape.clone(), g.dtype()))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (g, p) = (inputs[0], &*self.pooling);
        let dtype = crate::tensor::device::float_type(Self::NAME, g.dtype())?;
        let dx = kernel::mean_backward(dtype, &g.gpu_buffer(Self::NAME)?, p, self.divisor)
            .map_err(|e| g.kernel_error(Self::NAME, e))?;
        Ok(g.with_gpu(dx, self.shape.clone()))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        [Divisor::Product, Divisor::PerAxis]
            .into_iter()
            .map(|divisor| {
                let (pooling, x) = probe_case(dtype, false)?;
                let y = AvgPool2d {
                    pooling: pooling.clone(),
                    divisor,
                }
                .cpu(&[&x])?;
                let g = super::probe_tensor(y.shape(), 0.5, dtype)?;
                let shape = x.shape().clone();
                Ok((
                    AvgPool2dBackward {
                        pooling,
                        divisor,
                        shape,
                    },
                    vec![g],
                ))
            })
            .collect()
    }
}

/// The probe's pooling and input: `(2, 3, 5, 6)` of large magnitudes, windows that overlap, are clipped by
/// the padding and (for the max) dilated; the max's input holds ties, a NaN and `-inf`s.
fn probe_case(dtype: DType, max: bool) -> Result<(Arc<Pooling>, Tensor)> {
    let mut values = super::probe_tensor(&[2, 3, 5, 6], 0.0, DType::F64)?
        .mul_scalar(1000.0)?
        .to_vec::<f64>()?;
    if max {
        (values[0], values[1], values[7]) = (5000.0, 5000.0, 5000.0);
        values[20] = f64::NAN;
        (values[40], values[41], values[46], values[47]) = (
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        );
    }
    let x = Tensor::from_vec(values, [2, 3, 5, 6])?.to_dtype(dtype)?;
    // Rows: windows of 3 at stride 2, padding 1, over 5; columns: of 2 at stride 1 (dilation 2 for the max).
    let rows = kernels::pool2d::Windows {
        input: 5,
        step: 1,
        first: vec![0, 1, 3],
        count: vec![2, 3, 2],
        divisor: vec![3, 3, 3],
    };
    let cols = if max {
        kernels::pool2d::Windows {
            input: 6,
            step: 2,
            first: vec![0, 1, 2, 3],
            count: vec![2, 2, 2, 2],
            divisor: vec![1, 1, 1, 1],
        }
    } else {
        kernels::pool2d::Windows {
            input: 6,
            step: 1,
            first: vec![0, 1, 2, 4],
            count: vec![2, 3, 3, 2],
            divisor: vec![2, 3, 3, 2],
        }
    };
    Ok((Arc::new(Pooling { planes: 6, rows, cols }), x))
}
