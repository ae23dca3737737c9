//! PReLU: `x > 0 ? x : w[c]·x` with one weight per channel `c` of dim 1 (or one weight for every element),
//! its input gradient, and the weight gradient `dw[c] = Σ over channel c of (x > 0 ? 0 : x·dy)`, reduced
//! on the device by one cube per channel (per slice of 16,384 elements per unit on a long
//! channel, so that no unit passes lavapipe's 65,535 loop iterations); and RReLU in training, a slope given per
//! element.
//!
//! The layout is `[outer, channels, inner]`: a tensor `[N, C, H, W]` is `outer = N`, `inner = H·W`; a single
//! weight is `channels = 1`.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{CUBE_SIZE, arg, check_operands, check_same, elements, launch, vector_size};
use crate::reduce::{channel_index, cube_sum};
use crate::{FloatType, GpuBuffer, Result, slices};

/// A tensor seen as `[outer, channels, inner]` around the weight's channel dimension.
pub use crate::layout::Layout;

#[cube]
fn prelu<C: Float, N: Size>(x: Vector<C, N>, w: C) -> Vector<C, N> {
    select_many(x.greater_than(&Vector::new(C::new(0.0))), x, x * Vector::new(w))
}

/// `output = prelu(input, weight)`; `inner_vectors` is `inner / N`.
#[cube(launch_unchecked)]
fn prelu_forward_kernel<F: Float, C: Float, N: Size>(
    input: &[Vector<F, N>],
    weight: &[F],
    output: &mut [Vector<F, N>],
    channels: usize,
    inner_vectors: usize,
) {
    if ABSOLUTE_POS < output.len() {
        let c = (ABSOLUTE_POS / inner_vectors) % channels;
        let x = Vector::<C, N>::cast_from(input[ABSOLUTE_POS]);
        output[ABSOLUTE_POS] = Vector::<F, N>::cast_from(prelu::<C, N>(x, C::cast_from(weight[c])));
    }
}

/// `dx = x > 0 ? dy : w[c]·dy`.
#[cube(launch_unchecked)]
fn prelu_backward_kernel<F: Float, C: Float, N: Size>(
    input: &[Vector<F, N>],
    weight: &[F],
    dy: &[Vector<F, N>],
    dx: &mut [Vector<F, N>],
    channels: usize,
    inner_vectors: usize,
) {
    if ABSOLUTE_POS < dx.len() {
        let c = (ABSOLUTE_POS / inner_vectors) % channels;
        let x = Vector::<C, N>::cast_from(input[ABSOLUTE_POS]);
        let g = Vector::<C, N>::cast_from(dy[ABSOLUTE_POS]);
        let w = Vector::new(C::cast_from(weight[c]));
        dx[ABSOLUTE_POS] = Vector::<F, N>::cast_from(select_many(x.greater_than(&Vector::new(C::new(0.0))), g, g * w));
    }
}

/// `dweight[c] = Σ (x > 0 ? 0 : x·dy)` over channel `c`: cube `c · slices + s` strides over slice `s` of the
/// channel's `outer·inner` elements, then halves its partial sums in shared memory, writing element `c · slices
/// + s` (of `F` with one slice, else partial sums in the compute type for [`slices::add`]).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn prelu_weight_grad_kernel<F: Float, C: Float, O: Float>(
    input: &[F],
    dy: &[F],
    dweight: &mut [O],
    channels: usize,
    inner: usize,
    per_channel: usize,
    slices: usize,
    per_slice: usize,
) {
    let cube = CUBE_POS;
    let (c, s) = (cube / slices, cube % slices);
    let unit = UNIT_POS as usize;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let mut acc = C::new(0.0);
    if c < channels {
        let (begin, end) = slices::range(s, per_channel, per_slice);
        let mut k = begin + unit;
        while k < end {
            let index = channel_index(k, c, channels, inner);
            let x = C::cast_from(input[index]);
            let g = C::cast_from(dy[index]);
            acc += select(x > C::new(0.0), C::new(0.0), x * g);
            k += CUBE_SIZE as usize;
        }
    }
    let total = cube_sum::<C>(acc, &mut partial);
    if unit == 0 && c < channels {
        dweight[cube] = O::cast_from(total);
    }
}

/// RReLU in training with slope `s` (in the compute type) for each element: `(x·s, s)` where `x <= 0`, `(x, 1)`
/// elsewhere, as PyTorch tests it (a NaN keeps the multiplier 1).
#[cube(launch_unchecked)]
fn rrelu_train_kernel<F: Float, C: Float>(input: &[F], slopes: &[C], output: &mut [F], noise: &mut [F]) {
    if ABSOLUTE_POS < output.len() {
        let x = C::cast_from(input[ABSOLUTE_POS]);
        let s = slopes[ABSOLUTE_POS];
        let draw = x <= C::new(0.0);
        output[ABSOLUTE_POS] = F::cast_from(select(draw, x * s, x));
        noise[ABSOLUTE_POS] = F::cast_from(select(draw, s, C::new(1.0)));
    }
}

fn check(op: &'static str, dtype: FloatType, x: &GpuBuffer, weight: &GpuBuffer, layout: Layout) -> Result<usize> {
    let len = layout.check(op, dtype, x)?;
    check_operands(op, dtype, x, &[(weight, layout.channels, "weight")])?;
    Ok(len)
}

/// `prelu(x, weight)` in a new buffer.
pub fn forward(dtype: FloatType, x: &GpuBuffer, weight: &GpuBuffer, layout: Layout) -> Result<GpuBuffer> {
    let output = GpuBuffer::uninit(x.device(), x.len());
    forward_into(dtype, x, weight, &output, layout)?;
    Ok(output)
}

/// `prelu(x, weight)` written into `output`, a buffer of `x`'s length on its device (it may be `x` itself:
/// each unit reads and writes only its own elements).
pub fn forward_into(
    dtype: FloatType,
    x: &GpuBuffer,
    weight: &GpuBuffer,
    output: &GpuBuffer,
    layout: Layout,
) -> Result<()> {
    let len = check("prelu", dtype, x, weight, layout)?;
    check_same("prelu", x, &[output])?;
    if len > 0 {
        with_float_type!(dtype, F => launch_forward::<F>(x, weight, output, layout));
    }
    Ok(())
}

/// `(dx, dweight)` of `prelu(x, weight)` for the output gradient `dy`.
pub fn backward(
    dtype: FloatType,
    x: &GpuBuffer,
    weight: &GpuBuffer,
    dy: &GpuBuffer,
    layout: Layout,
) -> Result<(GpuBuffer, GpuBuffer)> {
    let dx = backward_input(dtype, x, weight, dy, layout)?;
    let dweight = GpuBuffer::uninit(x.device(), weight.len());
    if !layout.is_empty() {
        with_float_type!(dtype, F => launch_weight_grad::<F>(x, dy, &dweight, layout));
    } else {
        dweight.write(&vec![0u8; weight.len()])?;
    }
    Ok((dx, dweight))
}

/// `dx` of `prelu(x, weight)` alone, for a weight that needs no gradient: `dy` where `x > 0`, `weight · dy`
/// elsewhere.
pub fn backward_input(
    dtype: FloatType,
    x: &GpuBuffer,
    weight: &GpuBuffer,
    dy: &GpuBuffer,
    layout: Layout,
) -> Result<GpuBuffer> {
    let len = check("prelu backward", dtype, x, weight, layout)?;
    check_same("prelu backward", x, &[dy])?;
    let dx = GpuBuffer::uninit(x.device(), x.len());
    if len > 0 {
        with_float_type!(dtype, F => launch_input_grad::<F>(x, weight, dy, &dx, layout));
    }
    Ok(dx)
}

/// RReLU in training: `(output, noise)` of `x` with one slope per element in `slopes`, a buffer of `x`'s
/// element count in `dtype`'s [compute type](FloatType::compute): `(x·s, s)` where `x <= 0`, `(x, 1)`
/// elsewhere.
pub fn rrelu_train(dtype: FloatType, x: &GpuBuffer, slopes: &GpuBuffer) -> Result<(GpuBuffer, GpuBuffer)> {
    let op = "rrelu_with_noise";
    let len = elements(op, x, dtype)?;
    check_operands(op, dtype.compute(), x, &[(slopes, len, "slopes")])?;
    let output = GpuBuffer::uninit(x.device(), x.len());
    let noise = GpuBuffer::uninit(x.device(), x.len());
    if len > 0 {
        // SAFETY: `x`, `output` and `noise` hold `len` elements of `F`, `slopes` `len` of `F::C` (checked
        // above); each unit reads and writes index `ABSOLUTE_POS < len` only.
        with_float_type!(dtype, F => unsafe {
            launch!(
                rrelu_train_kernel::<F, <F as Compute>::C>,
                x,
                len,
                arg(x, len),
                arg(slopes, len),
                arg(&output, len),
                arg(&noise, len),
            )
        });
    }
    Ok((output, noise))
}

fn launch_forward<F: Compute>(x: &GpuBuffer, weight: &GpuBuffer, output: &GpuBuffer, layout: Layout) {
    let len = layout.len();
    let vector = vector_size(len, layout.inner);
    // SAFETY: `x` and `output` hold `len` elements of `F`, `weight` holds `channels` (checked by `check`);
    // a vector never crosses a channel as `vector` divides `inner`, so `c < channels` indexes the weight.
    unsafe {
        launch!(
            prelu_forward_kernel::<F, F::C>,
            x,
            len / vector,
            vector,
            arg(x, len),
            arg(weight, layout.channels),
            arg(output, len),
            layout.channels,
            layout.inner / vector,
        )
    }
}

fn launch_input_grad<F: Compute>(x: &GpuBuffer, weight: &GpuBuffer, dy: &GpuBuffer, dx: &GpuBuffer, layout: Layout) {
    let len = layout.len();
    let vector = vector_size(len, layout.inner);
    // SAFETY: as in `launch_forward`; `dy` and `dx` hold `len` elements too (`check_same`).
    unsafe {
        launch!(
            prelu_backward_kernel::<F, F::C>,
            x,
            len / vector,
            vector,
            arg(x, len),
            arg(weight, layout.channels),
            arg(dy, len),
            arg(dx, len),
            layout.channels,
            layout.inner / vector,
        )
    }
}

fn launch_weight_grad<F: Compute>(x: &GpuBuffer, dy: &GpuBuffer, dweight: &GpuBuffer, layout: Layout) {
    let len = layout.len();
    let channels = layout.channels;
    let per_channel = layout.per_channel();
    let per_slice = CUBE_SIZE as usize * slices::ITERATIONS;
    let slices = slices::count(per_channel, per_slice);
    // SAFETY: `x` and `dy` hold `len` elements of `F` and `dweight` `channels` (checked by `backward_input`
    // and `backward`); cube `c · slices + s` reads elements `k < per_channel` of channel `c < channels`, at
    // indices `< len`, and writes element `c · slices + s` of `dweight` (one slice) or of `partials`
    // (`channels · slices` elements, added into `dweight` by `slices::add`).
    unsafe {
        if slices == 1 {
            launch!(
                prelu_weight_grad_kernel::<F, F::C, F>,
                x,
                channels * CUBE_SIZE as usize,
                arg(x, len),
                arg(dy, len),
                arg(dweight, channels),
                channels,
                layout.inner,
                per_channel,
                1,
                per_slice,
            );
        } else {
            let partials = slices::partials::<F>(x.device(), channels, slices);
            launch!(
                prelu_weight_grad_kernel::<F, F::C, F::C>,
                x,
                channels * slices * CUBE_SIZE as usize,
                arg(x, len),
                arg(dy, len),
                arg(&partials, channels * slices),
                channels,
                layout.inner,
                per_channel,
                slices,
                per_slice,
            );
            slices::add::<F>(&partials, dweight, channels, slices, per_channel, false);
        }
    }
}
