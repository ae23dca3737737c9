//! PyTorch's `F.conv2d` on `(N, C, H, W)` with stride, padding (before each spatial dimension; the output
//! size carries any padding after), dilation and groups. One unit per output element, accumulated in the
//! compute type (`f32` for the half types).

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// The sizes of one convolution.
///
/// ```
/// let g = kernels::conv2d::Geometry {
///     batch: 1, channels: 3, height: 8, width: 8, out_channels: 4, groups: 1,
///     kernel: [3, 3], out_size: [8, 8], padding: [1, 1], stride: [1, 1], dilation: [1, 1],
/// };
/// assert_eq!(g.output_len(), 256);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// `N`.
    pub batch: usize,
    /// `C`, input channels.
    pub channels: usize,
    /// `H`.
    pub height: usize,
    /// `W`.
    pub width: usize,
    /// `O`, output channels.
    pub out_channels: usize,
    /// Groups: `C` and `O` split into this many independent blocks.
    pub groups: usize,
    /// `(kH, kW)`.
    pub kernel: [usize; 2],
    /// `(Ho, Wo)`.
    pub out_size: [usize; 2],
    /// Zeros before the input, `(top, left)`.
    pub padding: [usize; 2],
    /// `(sH, sW)`.
    pub stride: [usize; 2],
    /// `(dH, dW)`.
    pub dilation: [usize; 2],
}

impl Geometry {
    /// Elements of the input.
    pub fn input_len(&self) -> usize {
        self.batch * self.channels * self.height * self.width
    }

    /// Elements of the weight `(O, C / groups, kH, kW)`.
    pub fn weight_len(&self) -> usize {
        self.out_channels * (self.channels / self.groups.max(1)) * self.kernel[0] * self.kernel[1]
    }

    /// Elements of the output `(N, O, Ho, Wo)`.
    pub fn output_len(&self) -> usize {
        self.batch * self.out_channels * self.out_size[0] * self.out_size[1]
    }
}

/// One output element per unit; the kernel size is compiled in (its loops unrolled), the rest of the
/// geometry comes as scalars.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn conv2d_kernel<F: Float, C: Float>(
    x: &[F],
    w: &[F],
    bias: &[F],
    out: &mut [F],
    sizes: Sizes,
    #[comptime] kh: usize,
    #[comptime] kw: usize,
    #[comptime] has_bias: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let plane = sizes.ho * sizes.wo;
        let ox = ABSOLUTE_POS % sizes.wo;
        let oy = (ABSOLUTE_POS / sizes.wo) % sizes.ho;
        let oc = (ABSOLUTE_POS / plane) % sizes.o;
        let n = ABSOLUTE_POS / (plane * sizes.o);
        let first_in = (oc / sizes.per_group_out) * sizes.per_group_in;
        let y0 = oy * sizes.sh;
        let x0 = ox * sizes.sw;
        let mut acc = C::new(0.0);
        if has_bias {
            acc = C::cast_from(bias[oc]);
        }
        for ci in 0..sizes.per_group_in {
            let x_plane = (n * sizes.c + first_in + ci) * sizes.h;
            let w_plane = (oc * sizes.per_group_in + ci) * kh;
            #[unroll]
            for ky in 0..kh {
                // Row in the padded input; inside the real input when `pt <= py < pt + h`.
                let py = y0 + ky * sizes.dh;
                if py >= sizes.pt && py < sizes.pt + sizes.h {
                    let x_row = (x_plane + py - sizes.pt) * sizes.w;
                    #[unroll]
                    for kx in 0..kw {
                        let px = x0 + kx * sizes.dw;
                        if px >= sizes.pl && px < sizes.pl + sizes.w {
                            acc += C::cast_from(x[x_row + px - sizes.pl]) * C::cast_from(w[(w_plane + ky) * kw + kx]);
                        }
                    }
                }
            }
        }
        out[ABSOLUTE_POS] = F::cast_from(acc);
    }
}

/// The geometry as the kernel reads it.
#[derive(CubeLaunch, CubeType)]
struct Sizes {
    c: usize,
    h: usize,
    w: usize,
    o: usize,
    per_group_in: usize,
    per_group_out: usize,
    ho: usize,
    wo: usize,
    pt: usize,
    pl: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
}

/// The convolution of `x` with `w` (and `bias`) in a new `(N, O, Ho, Wo)` buffer.
///
/// ```no_run
/// use kernels::conv2d::{conv2d, Geometry};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let g = Geometry {
///     batch: 1, channels: 1, height: 2, width: 2, out_channels: 1, groups: 1,
///     kernel: [1, 1], out_size: [2, 2], padding: [0, 0], stride: [1, 1], dilation: [1, 1],
/// };
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0, 3.0, 4.0]));
/// let w = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[2.0f32]));
/// let y = conv2d(FloatType::F32, &x, &w, None, g)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[2.0, 4.0, 6.0, 8.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn conv2d(
    dtype: FloatType,
    x: &GpuBuffer,
    w: &GpuBuffer,
    bias: Option<&GpuBuffer>,
    geometry: Geometry,
) -> Result<GpuBuffer> {
    let op = "conv2d";
    x.device().check_dtype(op, dtype)?;
    let g = geometry;
    let reach = |d: usize| g.dilation[d] * (g.kernel[d].max(1) - 1) + 1;
    let fits = |d: usize, size: usize| {
        g.out_size[d] == 0 || (g.out_size[d] - 1) * g.stride[d] + reach(d) <= size + 2 * g.padding[d] + g.stride[d]
    };
    let valid = g.groups > 0
        && g.channels.is_multiple_of(g.groups)
        && g.out_channels.is_multiple_of(g.groups)
        && g.stride.iter().all(|&s| s > 0)
        && g.dilation.iter().all(|&d| d > 0)
        && fits(0, g.height)
        && fits(1, g.width);
    if !valid {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("an inconsistent geometry {g:?}"),
        });
    }
    let mut operands = vec![(x, g.input_len(), "input"), (w, g.weight_len(), "weight")];
    if let Some(b) = bias {
        operands.push((b, g.out_channels, "bias"));
    }
    check_operands(op, dtype, x, &operands)?;
    let n = g.output_len();
    let out = GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let sizes = SizesLaunch::new(
        g.channels,
        g.height,
        g.width,
        g.out_channels,
        g.channels / g.groups,
        g.out_channels / g.groups,
        g.out_size[0],
        g.out_size[1],
        g.padding[0],
        g.padding[1],
        g.stride[0],
        g.stride[1],
        g.dilation[0],
        g.dilation[1],
    );
    let b = bias.unwrap_or(w);
    let b_len = if bias.is_some() { g.out_channels } else { 1 };
    with_float_type!(dtype, F => {
        // SAFETY: the buffers hold the geometry's element counts (checked). Unit `i < n` reads input rows
        // `py - pt < h` and columns `px - pl < w` of its batch's planes `first_in + ci < C`, weight elements
        // of its output channel `oc < O`, the bias at `oc` only when there is one, and writes `out[i]`.
        unsafe {
            launch!(
                conv2d_kernel::<F, <F as Compute>::C>,
                x,
                n,
                arg(x, g.input_len()),
                arg(w, g.weight_len()),
                arg(b, b_len),
                arg(&out, n),
                sizes,
                g.kernel[0],
                g.kernel[1],
                bias.is_some(),
            )
        }
    });
    Ok(out)
}
