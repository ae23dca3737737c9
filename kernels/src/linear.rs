//! PyTorch's `F.linear`: `out[m, n] = bias[n] + Σ_k x[m, k]·w[n, k]`, and `matmul` of batches of matrices,
//! accumulated in the compute type (`f32` for the half types). Small products run on direct kernels (one unit
//! per output element, one launch); products big enough to gain run on `cubek-matmul`'s tiled kernel
//! ([`crate::tiled_matmul`]); [`Kernel`] picks.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::binary::{BinaryOp, Operand, binary_in_place};
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::tiled_matmul::{self, Matrices};
use crate::{Backend, FloatType, GpuBuffer, GpuDevice, Result};

/// Which kernel a matrix product runs on.
///
/// ```
/// assert_eq!(kernels::linear::Kernel::default(), kernels::linear::Kernel::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// The tiled kernel where the product is big enough to gain ([`Kernel::tiled_pays`]) and the routine takes
    /// the dtype and device, else the direct one.
    #[default]
    Auto,
    /// One unit per output element.
    Direct,
    /// `cubek-matmul`'s tiled kernel; an [`crate::KernelError::Unsupported`] error where it does not take the
    /// problem.
    Tiled,
}

impl Kernel {
    /// Whether `batches` products of `rows × inner` by `inner × cols` matrices on `backend` are big enough for
    /// the tiled kernel to beat the direct one. Measured on an NVIDIA H100 (`cargo bench -p kernels --bench
    /// matmul`, BENCHMARKS.md "On an NVIDIA H100"): the tiled kernel costs 20–40 µs more per
    /// call, and gains from 2²⁸ multiply-adds on CUDA (1.5× at 256 × 512 × 2048, 6.3× at 2048³; 2.1× slower at
    /// 512³) and from 2³⁰ through Vulkan (1.25× at 1024³, 4.4× at 2048³; 1.2× slower at 2²⁸).
    ///
    /// ```
    /// use kernels::{Backend, linear::Kernel};
    /// assert!(Kernel::tiled_pays(Backend::Cuda, 1, 1024, 1024, 1024));
    /// assert!(!Kernel::tiled_pays(Backend::Cuda, 1, 512, 512, 512));
    /// assert!(!Kernel::tiled_pays(Backend::Wgpu, 1, 256, 512, 2048));
    /// ```
    pub fn tiled_pays(backend: Backend, batches: usize, rows: usize, inner: usize, cols: usize) -> bool {
        let multiply_adds = [batches, rows, inner, cols].iter().fold(1u128, |p, &d| p * d as u128);
        multiply_adds
            >= match backend {
                Backend::Cuda => 1 << 28,
                Backend::Wgpu => 1 << 30,
            }
    }

    fn tiled(self, dtype: FloatType, device: &GpuDevice, [batches, rows, inner, cols]: [usize; 4]) -> bool {
        match self {
            Kernel::Auto => dtype != FloatType::F64 && Kernel::tiled_pays(device.backend(), batches, rows, inner, cols),
            Kernel::Direct => false,
            Kernel::Tiled => true,
        }
    }
}

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
    linear_on(Kernel::Auto, dtype, x, w, bias, rows, inputs, outputs)
}

/// [`linear`] on the kernel `kernel` picks.
#[allow(clippy::too_many_arguments)]
pub fn linear_on(
    kernel: Kernel,
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
    if n > 0 && inputs > 0 && kernel.tiled(dtype, x.device(), [1, rows, inputs, outputs]) {
        let x = Matrices::row_major(x, 1, rows, inputs);
        let w = Matrices::transposed(w, 1, inputs, outputs);
        match tiled_matmul::product(op, dtype, x, w) {
            Ok(out) => {
                if let Some(bias) = bias {
                    let y = Operand {
                        buffer: &out,
                        shape: &[rows, outputs],
                    };
                    binary_in_place(
                        BinaryOp::Add,
                        dtype,
                        y,
                        Operand {
                            buffer: bias,
                            shape: &[outputs],
                        },
                    )?;
                }
                return Ok(out);
            }
            Err(e) if kernel == Kernel::Tiled => return Err(e),
            Err(_) => {}
        }
    }
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
pub fn matmul(dtype: FloatType, a: &GpuBuffer, b: &GpuBuffer, sizes: [usize; 4], shared: bool) -> Result<GpuBuffer> {
    matmul_on(Kernel::Auto, dtype, a, b, sizes, shared)
}

/// [`matmul`] on the kernel `kernel` picks.
pub fn matmul_on(
    kernel: Kernel,
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
    // One right side for every batch: the batches of `a` are one taller matrix.
    let (a_batches, rows) = if shared { (1, batches * n) } else { (batches, n) };
    if len > 0 && kernel.tiled(dtype, a.device(), [a_batches, rows, k, m]) {
        let a = Matrices::row_major(a, a_batches, rows, k);
        let b = Matrices::row_major(b, a_batches, k, m);
        match tiled_matmul::product(op, dtype, a, b) {
            Ok(out) => return Ok(out),
            Err(e) if kernel == Kernel::Tiled => return Err(e),
            Err(_) => {}
        }
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
