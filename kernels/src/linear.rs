//! PyTorch's `F.linear`: `out[m, n] = bias[n] + Σ_k x[m, k]·w[n, k]`, and `matmul` of batches of matrices,
//! accumulated in the compute type (`f32` for the half types). One unit per output element.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::{FloatType, GpuBuffer, Result};

/// `out = x·wᵀ (+ bias)`, `x` of `rows × inputs`, `w` of `outputs × inputs`.
#[cube(launch_unchecked)]
fn linear_kernel<F: Float, C: Float>(
    x: &[F],
    w: &[F],
    bias: &[F],
    out: &mut [F],
    inputs: usize,
    outputs: usize,
    #[comptime] has_bias: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let m = ABSOLUTE_POS / outputs;
        let n = ABSOLUTE_POS % outputs;
        let mut acc = C::new(0.0);
        if has_bias {
            acc = C::cast_from(bias[n]);
        }
        for k in 0..inputs {
            acc += C::cast_from(x[m * inputs + k]) * C::cast_from(w[n * inputs + k]);
        }
        out[ABSOLUTE_POS] = F::cast_from(acc);
    }
}

/// `x·wᵀ + bias` for `x` of `rows × inputs` and `w` of `outputs × inputs`, in a new `rows × outputs` buffer.
///
/// ```no_run
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0]));
/// let w = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 1.0, 0.0, 2.0]));
/// let y = kernels::linear::linear(FloatType::F32, &x, &w, None, 1, 2, 2)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[3.0, 4.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn linear(
    dtype: FloatType,
    x: &GpuBuffer,
    w: &GpuBuffer,
    bias: Option<&GpuBuffer>,
    rows: usize,
    inputs: usize,
    outputs: usize,
) -> Result<GpuBuffer> {
    let op = "linear";
    x.device().check_dtype(op, dtype)?;
    let mut operands = vec![(x, rows * inputs, "input"), (w, outputs * inputs, "weight")];
    if let Some(b) = bias {
        operands.push((b, outputs, "bias"));
    }
    check_operands(op, dtype, x, &operands)?;
    let n = rows * outputs;
    let out = GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let b = bias.unwrap_or(w);
    let b_len = if bias.is_some() { outputs } else { 1 };
    with_float_type!(dtype, F => {
        // SAFETY: `x`, `w` and `bias` hold `rows·inputs`, `outputs·inputs` and `outputs` elements (checked);
        // unit `i < rows·outputs` reads row `i / outputs` of `x` and row `i % outputs` of `w` and the bias only
        // when there is one, and writes `out[i]`.
        unsafe {
            launch!(
                linear_kernel::<F, <F as Compute>::C>,
                x,
                n,
                arg(x, rows * inputs),
                arg(w, outputs * inputs),
                arg(b, b_len),
                arg(&out, n),
                inputs,
                outputs,
                bias.is_some(),
            )
        }
    });
    Ok(out)
}

/// `out[p, i, j] = Σ_t a[p, i, t]·b[q, t, j]` with `q = p`, or `q = 0` when `shared` (one right side for every
/// batch); all row-major, `a` of `batches × n × k`, `b` of `(batches or 1) × k × m`.
#[cube(launch_unchecked)]
fn matmul_kernel<F: Float, C: Float>(
    a: &[F],
    b: &[F],
    out: &mut [F],
    n: usize,
    k: usize,
    m: usize,
    #[comptime] shared: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let p = ABSOLUTE_POS / (n * m);
        let i = (ABSOLUTE_POS / m) % n;
        let j = ABSOLUTE_POS % m;
        let row = (p * n + i) * k;
        let mut column = j;
        if !shared {
            column += p * k * m;
        }
        let mut acc = C::new(0.0);
        for t in 0..k {
            acc += C::cast_from(a[row + t]) * C::cast_from(b[column + t * m]);
        }
        out[ABSOLUTE_POS] = F::cast_from(acc);
    }
}

/// The matrix products `a[p] @ b[p]` (or `a[p] @ b` when `shared`) of `batches` row-major `n × k` matrices
/// `a` and `k × m` matrices `b`, accumulated in the compute type, in a new `batches × n × m` buffer.
///
/// ```no_run
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let a = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0]));
/// let b = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 0.0, 0.0, 2.0]));
/// let y = kernels::linear::matmul(FloatType::F32, &a, &b, [1, 1, 2, 2], true)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[1.0, 4.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn matmul(
    dtype: FloatType,
    a: &GpuBuffer,
    b: &GpuBuffer,
    [batches, n, k, m]: [usize; 4],
    shared: bool,
) -> Result<GpuBuffer> {
    let op = "matmul";
    a.device().check_dtype(op, dtype)?;
    let b_len = if shared { k * m } else { batches * k * m };
    check_operands(
        op,
        dtype,
        a,
        &[(a, batches * n * k, "left side"), (b, b_len, "right side")],
    )?;
    let len = batches * n * m;
    if k == 0 {
        // Sums of nothing: zeros, and no kernel bound to the empty operands.
        return Ok(GpuBuffer::from_bytes(a.device(), &crate::sum::filled(dtype, 0.0, len)));
    }
    let out = GpuBuffer::uninit(a.device(), len * dtype.size_in_bytes());
    if len == 0 {
        return Ok(out);
    }
    with_float_type!(dtype, F => {
        // SAFETY: `a` and `b` hold `batches·n·k` and `b_len` elements (checked); unit `u < batches·n·m` reads
        // row `u / m` of `a` (`k` elements) and column `u % m` of its batch's `b` (or the shared one), each
        // inside those lengths, and writes `out[u]`.
        unsafe {
            launch!(
                matmul_kernel::<F, <F as Compute>::C>,
                a,
                len,
                arg(a, batches * n * k),
                arg(b, b_len),
                arg(&out, len),
                n,
                k,
                m,
                shared,
            )
        }
    });
    Ok(out)
}
