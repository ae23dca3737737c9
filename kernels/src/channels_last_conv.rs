//! `cubek-convolution`'s direct convolution (the maintained cubecl 0.11 kernel that runs without tensor-core
//! instructions) for nn's `(N, C, H, W)` tensors: it reads channels-last `(N, H, W, C)` inputs and `(O, kH, kW,
//! C / groups)` weights and writes a channels-last output, so the operands are permuted around it with
//! [`gather`]. [`crate::conv2d::conv2d`] runs it where [`crate::conv2d::Kernel::channels_last_pays`]: it is
//! measured next to nn's direct kernel in `benches/conv2d.rs`, with and without the permutes.

use cubecl::prelude::*;
use cubecl::zspace::{Shape, Strides};
use cubek_convolution::{ConvolutionArgs, DirectTensors, launch_direct};

use crate::conv2d::{Geometry, check_forward};
use crate::gather::{Element, gather};

use crate::{FloatType, GpuBuffer, KernelError, Result};

/// How `dtype`'s elements move, and cubecl's element type, for the types this path takes.
fn types(dtype: FloatType) -> (Element, cubecl::ir::ElemType) {
    match dtype {
        FloatType::F32 => (Element::Bits32, f32::elem_type_native()),
        FloatType::F16 => (Element::F16, half::f16::elem_type_native()),
        FloatType::BF16 => (Element::BF16, half::bf16::elem_type_native()),
        FloatType::F64 => (Element::Bits64, f64::elem_type_native()),
    }
}

/// A contiguous row-major binding of `shape` over `buffer`.
///
/// # Safety
/// `buffer` must hold at least `shape`'s element count of the launch's dtype.
unsafe fn binding(buffer: &GpuBuffer, shape: &[usize]) -> TensorBinding {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    // SAFETY: the caller's contract: the buffer holds every element these strides address.
    unsafe {
        TensorBinding::from_raw_parts(
            buffer.handle().clone(),
            Strides::new(&strides),
            shape.iter().copied().collect::<Shape>(),
        )
    }
}

/// The `(N, H, W, C)` input and `(O, kH, kW, C / groups)` weight of `g`, permuted from nn's layouts.
pub fn to_channels_last(dtype: FloatType, x: &GpuBuffer, w: &GpuBuffer, g: Geometry) -> Result<(GpuBuffer, GpuBuffer)> {
    let (element, _) = types(dtype);
    let (c, h, wd) = (g.channels, g.height, g.width);
    let cg = c / g.groups.max(1);
    let [kh, kw] = g.kernel;
    let x = gather(x, element, &[g.batch, h, wd, c], &[c * h * wd, wd, 1, h * wd], 0)?;
    let w = gather(
        w,
        element,
        &[g.out_channels, kh, kw, cg],
        &[cg * kh * kw, kw, 1, kh * kw],
        0,
    )?;
    Ok((x, w))
}

/// The convolution of channels-last operands into a new channels-last `(N, Ho, Wo, O)` buffer.
pub fn conv2d_channels_last(
    dtype: FloatType,
    x: &GpuBuffer,
    w: &GpuBuffer,
    bias: Option<&GpuBuffer>,
    g: Geometry,
) -> Result<GpuBuffer> {
    let op = "conv2d (cubek-convolution)";
    check_forward(op, dtype, x, w, bias, g)?;
    let (_, elem) = types(dtype);
    let device = x.device();
    let cg = g.channels / g.groups;
    let [ho, wo] = g.out_size;
    let size = dtype.size_in_bytes();
    if g.output_len() == 0 || g.input_len() == 0 || g.weight_len() == 0 {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("an empty convolution {g:?}: nn's conv2d takes those"),
        });
    }
    let out = GpuBuffer::uninit(device, g.output_len() * size);
    // SAFETY: each buffer holds exactly its binding's element count of `dtype` (the input, weight and bias were
    // checked above, on one device; the output was made with `output_len` elements).
    let tensors = unsafe {
        DirectTensors {
            input: binding(x, &[g.batch, g.height, g.width, g.channels]),
            weight: binding(w, &[g.out_channels, g.kernel[0], g.kernel[1], cg]),
            bias: bias.map(|b| binding(b, &[g.out_channels])),
            out: binding(&out, &[g.batch, ho, wo, g.out_channels]),
        }
    };
    let args = ConvolutionArgs {
        stride: g.stride,
        padding: g.padding,
        dilation: g.dilation,
    };
    launch_direct::<2>(device.client(), tensors, args, g.groups, elem).map_err(|e| KernelError::Unsupported {
        op,
        dtype,
        device: device.to_string(),
        reason: format!("{e:?}"),
    })?;
    Ok(out)
}

/// [`crate::conv2d::conv2d`]'s result through `cubek-convolution`: nn's operands permuted to channels-last, the
/// kernel, and its output permuted back to `(N, O, Ho, Wo)`.
pub fn conv2d(
    dtype: FloatType,
    x: &GpuBuffer,
    w: &GpuBuffer,
    bias: Option<&GpuBuffer>,
    g: Geometry,
) -> Result<GpuBuffer> {
    g.check("conv2d (cubek-convolution)")?;
    let (element, _) = types(dtype);
    let (x, w) = to_channels_last(dtype, x, w, g)?;
    let out = conv2d_channels_last(dtype, &x, &w, bias, g)?;
    let [ho, wo] = g.out_size;
    let o = g.out_channels;
    gather(&out, element, &[g.batch, o, ho, wo], &[ho * wo * o, 1, wo * o, o], 0)
}
