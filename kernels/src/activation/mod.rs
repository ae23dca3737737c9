//! The activation family: which [`Formula`] each activation is, and the host functions that launch it on
//! a buffer of any [`FloatType`] the device accepts.
//!
//! ```no_run
//! use kernels::activation;
//! use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
//! let device = GpuDevice::open(Backend::Wgpu, 0)?;
//! let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[-1.0f32, 2.0]));
//! let y = activation::forward::<activation::Relu>([0.0, 0.0], FloatType::F32, &x)?;
//! assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[0.0, 2.0]));
//! # Ok::<(), kernels::KernelError>(())
//! ```

mod elu;
mod gelu;
mod gelu_tanh;
mod hard;
mod hardtanh;
mod leaky_relu;
mod relu;
mod relu6;
mod shrink;
pub(crate) mod sigmoid;
mod softplus;
mod softsign;
pub(crate) mod tanh;
mod threshold;

pub use elu::{Celu, CeluOfResult, Elu, EluOfResult, SELU_ALPHA, SELU_SCALE, Selu, SeluOfResult};
pub use gelu::Gelu;
pub use gelu_tanh::GeluTanh;
pub use hard::{Hardsigmoid, Hardswish};
pub use hardtanh::Hardtanh;
pub use leaky_relu::LeakyRelu;
pub use relu::Relu;
pub use relu6::Relu6;
pub use shrink::{Hardshrink, Softshrink};
pub use sigmoid::{Sigmoid, Silu};
pub use softplus::{LogSigmoid, Mish, Softplus};
pub use softsign::Softsign;
pub use tanh::{Tanh, Tanhshrink};
pub use threshold::Threshold;

use cubecl::prelude::*;

use crate::dtype::with_float_type;
use crate::formula::{backward_kernel, forward_in_place_kernel, forward_kernel};
use crate::launch::{arg, check_same, elements, launch, vector_size};
use crate::{FloatType, Formula, GpuBuffer, GpuDevice, HostFormula, Result};

/// The type a kernel computes in for storage type `F`: `f32` for the half types, `F` otherwise.
pub(crate) trait Compute: Float + CubeElement {
    /// The compute type.
    type C: Float + LaunchArg<RuntimeArg = Self::C> + FromF64;
}

/// Conversion of a host constant into a compute type.
pub(crate) trait FromF64 {
    /// `value`, rounded to the type.
    fn from_f64(value: f64) -> Self;
}
impl FromF64 for f32 {
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}
impl FromF64 for f64 {
    fn from_f64(value: f64) -> Self {
        value
    }
}
impl Compute for half::f16 {
    type C = f32;
}
impl Compute for half::bf16 {
    type C = f32;
}
impl Compute for f32 {
    type C = f32;
}
impl Compute for f64 {
    type C = f64;
}

/// `A(input)` in a new buffer. `scalars` are the activation's two constants `[a, b]`, as its formula documents
/// (LeakyReLU's slope, Threshold's threshold and value, Hardtanh's bounds, ELU's and CELU's alpha, Softplus's
/// beta and threshold, the shrinks' lambda); the others ignore them.
pub fn forward<A: Formula + HostFormula>(scalars: [f64; 2], dtype: FloatType, input: &GpuBuffer) -> Result<GpuBuffer> {
    let output = GpuBuffer::uninit(input.device(), input.len());
    forward_into::<A>(scalars, dtype, input, &output)?;
    Ok(output)
}

/// `A(input)` written into `output`, a buffer of the same length on the same device.
pub fn forward_into<A: Formula + HostFormula>(
    scalars: [f64; 2],
    dtype: FloatType,
    input: &GpuBuffer,
    output: &GpuBuffer,
) -> Result<()> {
    admit::<A>(input.device(), "activation", dtype)?;
    check_same("activation", input, &[output])?;
    let len = elements("activation", input, dtype)?;
    if len > 0 {
        with_float_type!(dtype, F => launch::<F, A>(Buffers::Forward { input, output }, len, scalars));
    }
    Ok(())
}

/// `A(data)` written over `data`.
pub fn forward_in_place<A: Formula + HostFormula>(scalars: [f64; 2], dtype: FloatType, data: &GpuBuffer) -> Result<()> {
    admit::<A>(data.device(), "activation", dtype)?;
    let len = elements("activation", data, dtype)?;
    if len > 0 {
        with_float_type!(dtype, F => launch::<F, A>(Buffers::InPlace(data), len, scalars));
    }
    Ok(())
}

/// The input's gradient from `saved` (the input, or the output where the formula's gradient reads it) and
/// the output's gradient `dy`, in a new buffer.
pub fn backward<A: Formula + HostFormula>(
    scalars: [f64; 2],
    dtype: FloatType,
    saved: &GpuBuffer,
    dy: &GpuBuffer,
) -> Result<GpuBuffer> {
    admit::<A>(saved.device(), "activation backward", dtype)?;
    check_same("activation backward", saved, &[dy])?;
    let len = elements("activation backward", saved, dtype)?;
    let dx = GpuBuffer::uninit(saved.device(), saved.len());
    if len > 0 {
        with_float_type!(dtype, F => launch::<F, A>(Buffers::Backward { saved, dy, dx: &dx }, len, scalars));
    }
    Ok(dx)
}

/// `Ok` when the device stores and computes `dtype`, and runs `A`'s functions in it.
fn admit<A: HostFormula>(device: &GpuDevice, op: &'static str, dtype: FloatType) -> Result<()> {
    device.check_dtype(op, dtype)?;
    if A::TRANSCENDENTAL {
        device.check_math(op, dtype)?;
    }
    Ok(())
}

/// The buffers of one launch of a formula's kernels.
enum Buffers<'a> {
    Forward {
        input: &'a GpuBuffer,
        output: &'a GpuBuffer,
    },
    InPlace(&'a GpuBuffer),
    Backward {
        saved: &'a GpuBuffer,
        dy: &'a GpuBuffer,
        dx: &'a GpuBuffer,
    },
}

/// Launches `A`'s kernel for `buffers`, each of `len > 0` elements of `F`, with the constants `s`.
fn launch<F: Compute, A: Formula>(buffers: Buffers<'_>, len: usize, s: [f64; 2]) {
    let vector = vector_size(len, len);
    let units = len / vector;
    let (a, b) = (F::C::from_f64(s[0]), F::C::from_f64(s[1]));
    // SAFETY: every buffer holds `len` elements of `F` (`elements` checked the first, `check_same` compared the
    // others' lengths with it, or they were made with its byte length); the grid covers `units` vectors of
    // `vector` elements, and each unit reads and writes only its own vector, guarding its index.
    unsafe {
        match buffers {
            Buffers::Forward { input, output } => launch!(
                forward_kernel::<F, F::C, A>,
                input,
                units,
                vector,
                arg(input, len),
                arg(output, len),
                a,
                b,
            ),
            Buffers::InPlace(data) => launch!(
                forward_in_place_kernel::<F, F::C, A>,
                data,
                units,
                vector,
                arg(data, len),
                a,
                b,
            ),
            Buffers::Backward { saved, dy, dx } => launch!(
                backward_kernel::<F, F::C, A>,
                saved,
                units,
                vector,
                arg(saved, len),
                arg(dy, len),
                arg(dx, len),
                a,
                b,
            ),
        }
    }
}
