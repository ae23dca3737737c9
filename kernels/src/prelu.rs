//! PReLU: `x > 0 ? x : w[c]·x` with one weight per channel `c` of dim 1 (or one weight for every element),
//! its input gradient, and the weight gradient `dw[c] = Σ over channel c of (x > 0 ? 0 : x·dy)`, reduced
//! on the device by one cube per channel.
//!
//! The layout is `[outer, channels, inner]`: a tensor `[N, C, H, W]` is `outer = N`, `inner = H·W`; a single
//! weight is `channels = 1`.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{CUBE_SIZE, arg, check_same, cube_count, cube_dim, elements, vector_size};
use crate::reduce::{channel_index, cube_sum};
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// A tensor's shape seen as `[outer, channels, inner]` around the weight's channel dimension.
///
/// ```
/// let layout = kernels::prelu::Layout { outer: 2, channels: 3, inner: 16 };
/// assert_eq!(layout.len(), 96);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Elements before the channel dimension (the batch).
    pub outer: usize,
    /// Weights: the channel count, or 1 for a single shared weight.
    pub channels: usize,
    /// Elements after the channel dimension.
    pub inner: usize,
}

impl Layout {
    /// Elements in the tensor.
    pub fn len(&self) -> usize {
        self.outer * self.channels * self.inner
    }

    /// Whether the tensor is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements of one channel (`outer · inner`).
    pub fn per_channel(&self) -> usize {
        self.outer * self.inner
    }
}

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

/// `dweight[c] = Σ (x > 0 ? 0 : x·dy)` over channel `c`: cube `c` strides over the channel's
/// `outer·inner` elements, then halves its partial sums in shared memory.
#[cube(launch_unchecked)]
fn prelu_weight_grad_kernel<F: Float, C: Float>(
    input: &[F],
    dy: &[F],
    dweight: &mut [F],
    channels: usize,
    inner: usize,
    per_channel: usize,
) {
    let c = CUBE_POS;
    let unit = UNIT_POS as usize;
    let mut partial = Shared::<[C]>::new_slice(CUBE_SIZE as usize);
    let mut acc = C::new(0.0);
    if c < channels {
        let mut k = unit;
        while k < per_channel {
            let index = channel_index(k, c, channels, inner);
            let x = C::cast_from(input[index]);
            let g = C::cast_from(dy[index]);
            acc += select(x > C::new(0.0), C::new(0.0), x * g);
            k += CUBE_SIZE as usize;
        }
    }
    let total = cube_sum::<C>(acc, &mut partial);
    if unit == 0 && c < channels {
        dweight[c] = F::cast_from(total);
    }
}

fn check(op: &'static str, dtype: FloatType, x: &GpuBuffer, weight: &GpuBuffer, layout: Layout) -> Result<usize> {
    x.device().check_dtype(op, dtype)?;
    let len = elements(op, x, dtype)?;
    let weights = elements(op, weight, dtype)?;
    if len != layout.len() || weights != layout.channels {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{len} elements and {weights} weights do not fit the layout {layout:?}"),
        });
    }
    if !weight.device().same(x.device()) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("input on {} and weight on {}", x.device(), weight.device()),
        });
    }
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
    let len = check("prelu backward", dtype, x, weight, layout)?;
    check_same("prelu backward", x, &[dy])?;
    let dx = GpuBuffer::uninit(x.device(), x.len());
    let dweight = GpuBuffer::uninit(x.device(), weight.len());
    if len > 0 {
        with_float_type!(dtype, F => launch_backward::<F>(x, weight, dy, &dx, &dweight, layout));
    } else {
        dweight.write(&vec![0u8; weight.len()])?;
    }
    Ok((dx, dweight))
}

fn launch_forward<F: Compute>(x: &GpuBuffer, weight: &GpuBuffer, output: &GpuBuffer, layout: Layout) {
    let len = layout.len();
    let vector = vector_size(len, layout.inner);
    // SAFETY: `x` and `output` hold `len` elements of `F`, `weight` holds `channels` (checked by `check`);
    // a vector never crosses a channel as `vector` divides `inner`, so `c < channels` indexes the weight.
    unsafe {
        prelu_forward_kernel::launch_unchecked::<F, F::C>(
            x.device().client(),
            cube_count(x, len / vector),
            cube_dim(),
            vector,
            arg(x, len),
            arg(weight, layout.channels),
            arg(output, len),
            layout.channels,
            layout.inner / vector,
        )
    }
}

fn launch_backward<F: Compute>(
    x: &GpuBuffer,
    weight: &GpuBuffer,
    dy: &GpuBuffer,
    dx: &GpuBuffer,
    dweight: &GpuBuffer,
    layout: Layout,
) {
    let len = layout.len();
    let vector = vector_size(len, layout.inner);
    let client = x.device().client();
    // SAFETY: as in `launch_forward`; `dy` and `dx` hold `len` elements (`check_same`), `dweight` holds
    // `channels`; the reduction reads indices `< len` and writes `dweight[c]` for `c < channels` only.
    unsafe {
        prelu_backward_kernel::launch_unchecked::<F, F::C>(
            client,
            cube_count(x, len / vector),
            cube_dim(),
            vector,
            arg(x, len),
            arg(weight, layout.channels),
            arg(dy, len),
            arg(dx, len),
            layout.channels,
            layout.inner / vector,
        );
        prelu_weight_grad_kernel::launch_unchecked::<F, F::C>(
            client,
            cube_count(x, layout.channels * CUBE_SIZE as usize),
            cube_dim(),
            arg(x, len),
            arg(dy, len),
            arg(dweight, layout.channels),
            layout.channels,
            layout.inner,
            layout.outer * layout.inner,
        );
    }
}
