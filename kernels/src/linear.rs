//! PyTorch's `F.linear`: `out[m, n] = bias[n] + Σ_k x[m, k]·w[n, k]`, and `matmul` of batches of matrices,
//! accumulated in the compute type (`f32` for the half types). Small products run on direct kernels (one unit
//! per output element, one launch; a sum of more than 16,384 terms in slices, one unit each,
//! whose partial sums a second kernel adds); products big enough to gain run on `cubek-matmul`'s tiled kernel
//! (`tiled_matmul.rs`); [`Kernel`] picks.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::binary::{BinaryOp, Operand, binary_in_place};
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::slices;
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
    /// Whether `batches` products of `rows × inner` by `inner × cols` matrices on `backend`'s GPUs are big enough
    /// for the tiled kernel to beat the direct one (software adapters: [`Kernel::tiled_pays_in_software`]).
    /// Measured on an NVIDIA H100 (`cargo bench -p kernels --bench matmul`, BENCHMARKS.md "On an NVIDIA H100"):
    /// the tiled kernel costs 20–40 µs more per call, and gains from 2²⁸ multiply-adds on CUDA (1.5× at 256 × 512 × 2048, 6.3× at 2048³; 2.1× slower at
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

    /// Whether the same product in `float32` is big enough for the tiled kernel to beat the direct one on a
    /// software adapter ([`GpuDevice::is_software`]: Mesa's lavapipe), where a launch costs little next to the
    /// arithmetic: from 2¹⁷ multiply-adds, with at least 16 rows and 16 columns. Measured on lavapipe (`cargo
    /// bench -p kernels --bench matmul`, BENCHMARKS.md "`cubek-convolution` and `cubek-matmul` routed on software
    /// adapters"): 1.2× at 256 × 36 × 16, 5× at 128³, 7.6× at 512³; 1.6× slower at 32 × 36 × 16 (18K), 2.7× at 4 ×
    /// 512 × 512 and 2.3× at 1 × 512 × 2048, whose few rows fill a fraction of each tile.
    ///
    /// ```
    /// use kernels::linear::Kernel;
    /// assert!(Kernel::tiled_pays_in_software(1, 256, 36, 16));
    /// assert!(!Kernel::tiled_pays_in_software(1, 32, 36, 16));
    /// assert!(!Kernel::tiled_pays_in_software(1, 1, 512, 2048));
    /// ```
    pub fn tiled_pays_in_software(batches: usize, rows: usize, inner: usize, cols: usize) -> bool {
        let multiply_adds = [batches, rows, inner, cols].iter().fold(1u128, |p, &d| p * d as u128);
        rows >= 16 && cols >= 16 && multiply_adds >= 1 << 17
    }

    fn tiled(self, dtype: FloatType, device: &GpuDevice, [batches, rows, inner, cols]: [usize; 4]) -> bool {
        match self {
            Kernel::Auto if device.is_software() => {
                dtype == FloatType::F32 && Kernel::tiled_pays_in_software(batches, rows, inner, cols)
            }
            Kernel::Auto => dtype != FloatType::F64 && Kernel::tiled_pays(device.backend(), batches, rows, inner, cols),
            Kernel::Direct => false,
            Kernel::Tiled => true,
        }
    }
}

/// `out = x·wᵀ (+ bias)`, `x` of `rows × inputs`, `w` of `outputs × inputs`: unit `o · slices + s` sums slice
/// `s` of the inputs (of `per_slice`) for output element `o` (the bias joins slice 0). `O` is `F` with one slice,
/// else the compute type (partial sums for [`slices::add`]).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn linear_kernel<F: Float, C: Float, O: Float>(
    x: &[F],
    w: &[F],
    bias: &[F],
    out: &mut [O],
    inputs: usize,
    outputs: usize,
    slices: usize,
    per_slice: usize,
    #[comptime] has_bias: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let o = ABSOLUTE_POS / slices;
        let (begin, end) = slices::range(ABSOLUTE_POS % slices, inputs, per_slice);
        let m = o / outputs;
        let n = o % outputs;
        let mut acc = C::new(0.0);
        if has_bias && begin == 0 {
            acc = C::cast_from(bias[n]);
        }
        for k in begin..end {
            acc += C::cast_from(x[m * inputs + k]) * C::cast_from(w[n * inputs + k]);
        }
        out[ABSOLUTE_POS] = O::cast_from(acc);
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
    let slices = slices::count(inputs, slices::ITERATIONS);
    with_float_type!(dtype, F => {
        type C = <F as Compute>::C;
        // SAFETY: `x`, `w` and `bias` hold `rows·inputs`, `outputs·inputs` and `outputs` elements (checked);
        // unit `u < rows·outputs·slices` reads row `u / slices / outputs` of `x` and row `u / slices % outputs`
        // of `w` at inputs `k < inputs` of its slice, the bias only when there is one, and writes `out[u]` (or
        // `partials[u]`, of `rows·outputs·slices` elements).
        unsafe {
            if slices == 1 {
                launch!(
                    linear_kernel::<F, C, F>,
                    x,
                    n,
                    arg(x, rows * inputs),
                    arg(w, outputs * inputs),
                    arg(b, b_len),
                    arg(&out, n),
                    inputs,
                    outputs,
                    1,
                    inputs,
                    bias.is_some(),
                )
            } else {
                let partials = slices::partials::<F>(x.device(), n, slices);
                launch!(
                    linear_kernel::<F, C, C>,
                    x,
                    n * slices,
                    arg(x, rows * inputs),
                    arg(w, outputs * inputs),
                    arg(b, b_len),
                    arg(&partials, n * slices),
                    inputs,
                    outputs,
                    slices,
                    slices::ITERATIONS,
                    bias.is_some(),
                );
                slices::add::<F>(&partials, &out, n, slices, 1, false);
            }
        }
    });
    Ok(out)
}

/// `out[p, i, j] = Σ_t a[p, i, t]·b[q, t, j]` with `q = p`, or `q = 0` when `shared` (one right side for every
/// batch); all row-major, `a` of `batches × n × k`, `b` of `(batches or 1) × k × m`. Unit `o · slices + s` sums
/// slice `s` of the `k` terms (of `per_slice`) for output element `o`; `O` as [`linear_kernel`]'s.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn matmul_kernel<F: Float, C: Float, O: Float>(
    a: &[F],
    b: &[F],
    out: &mut [O],
    n: usize,
    k: usize,
    m: usize,
    slices: usize,
    per_slice: usize,
    #[comptime] shared: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let o = ABSOLUTE_POS / slices;
        let (begin, end) = slices::range(ABSOLUTE_POS % slices, k, per_slice);
        let p = o / (n * m);
        let i = (o / m) % n;
        let j = o % m;
        let row = (p * n + i) * k;
        let mut column = j;
        if !shared {
            column += p * k * m;
        }
        let mut acc = C::new(0.0);
        for t in begin..end {
            acc += C::cast_from(a[row + t]) * C::cast_from(b[column + t * m]);
        }
        out[ABSOLUTE_POS] = O::cast_from(acc);
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
    let slices = slices::count(k, slices::ITERATIONS);
    with_float_type!(dtype, F => {
        type C = <F as Compute>::C;
        // SAFETY: `a` and `b` hold `batches·n·k` and `b_len` elements (checked); unit `u < batches·n·m·slices`
        // reads row `u / slices / m` of `a` and column `u / slices % m` of its batch's `b` (or the shared one),
        // at terms `t < k` of its slice, each inside those lengths, and writes `out[u]` (or `partials[u]`, of
        // `batches·n·m·slices` elements).
        unsafe {
            if slices == 1 {
                launch!(
                    matmul_kernel::<F, C, F>,
                    a,
                    len,
                    arg(a, batches * n * k),
                    arg(b, b_len),
                    arg(&out, len),
                    n,
                    k,
                    m,
                    1,
                    k,
                    shared,
                )
            } else {
                let partials = slices::partials::<F>(a.device(), len, slices);
                launch!(
                    matmul_kernel::<F, C, C>,
                    a,
                    len * slices,
                    arg(a, batches * n * k),
                    arg(b, b_len),
                    arg(&partials, len * slices),
                    n,
                    k,
                    m,
                    slices,
                    slices::ITERATIONS,
                    shared,
                );
                slices::add::<F>(&partials, &out, len, slices, 1, false);
            }
        }
    });
    Ok(out)
}
