//! PyTorch's `F.conv2d` on `(N, C, H, W)` with stride, padding (before each spatial dimension; the output
//! size carries any padding after), dilation and groups. One unit per output element, accumulated in the
//! compute type (`f32` for the half types).

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::gather::metadata;
use crate::launch::{arg, cube_count, cube_dim, elements};
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

/// Indices of the geometry in the kernel's metadata.
const C_IN: usize = 0;
const H: usize = 1;
const W: usize = 2;
const O: usize = 3;
const GROUPS: usize = 4;
const KH: usize = 5;
const KW: usize = 6;
const HO: usize = 7;
const WO: usize = 8;
const PT: usize = 9;
const PL: usize = 10;
const SH: usize = 11;
const SW: usize = 12;
const DH: usize = 13;
const DW: usize = 14;
const META: usize = 15;

#[cube(launch_unchecked)]
fn conv2d_kernel<F: Float, C: Float>(
    x: &[F],
    w: &[F],
    bias: &[F],
    out: &mut [F],
    g: &[u32],
    #[comptime] has_bias: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let (c_in, h, wd) = (g[C_IN] as usize, g[H] as usize, g[W] as usize);
        let (o, kh, kw) = (g[O] as usize, g[KH] as usize, g[KW] as usize);
        let (ho, wo) = (g[HO] as usize, g[WO] as usize);
        let per_group_in = c_in / (g[GROUPS] as usize);
        let per_group_out = o / (g[GROUPS] as usize);
        let ox = ABSOLUTE_POS % wo;
        let oy = (ABSOLUTE_POS / wo) % ho;
        let oc = (ABSOLUTE_POS / (wo * ho)) % o;
        let n = ABSOLUTE_POS / (wo * ho * o);
        let first_in = (oc / per_group_out) * per_group_in;
        let mut acc = C::new(0.0);
        if has_bias {
            acc = C::cast_from(bias[oc]);
        }
        for ci in 0..per_group_in {
            let x_plane = (n * c_in + first_in + ci) * h;
            let w_plane = (oc * per_group_in + ci) * kh;
            for ky in 0..kh {
                // Row in the padded input; inside the real input when `pt <= py < pt + h`.
                let py = oy * (g[SH] as usize) + ky * (g[DH] as usize);
                let pt = g[PT] as usize;
                if py >= pt && py < pt + h {
                    for kx in 0..kw {
                        let px = ox * (g[SW] as usize) + kx * (g[DW] as usize);
                        let pl = g[PL] as usize;
                        if px >= pl && px < pl + wd {
                            let xv = C::cast_from(x[(x_plane + py - pt) * wd + px - pl]);
                            acc += xv * C::cast_from(w[(w_plane + ky) * kw + kx]);
                        }
                    }
                }
            }
        }
        out[ABSOLUTE_POS] = F::cast_from(acc);
    }
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
    for (buffer, want, name) in operands {
        let have = elements(op, buffer, dtype)?;
        if have != want || !buffer.device().same(x.device()) {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!(
                    "the {name} holds {have} elements, expected {want} on {} for {g:?}",
                    x.device()
                ),
            });
        }
    }
    let n = g.output_len();
    let out = GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let mut meta = [0usize; META];
    meta[C_IN] = g.channels;
    meta[H] = g.height;
    meta[W] = g.width;
    meta[O] = g.out_channels;
    meta[GROUPS] = g.groups;
    [meta[KH], meta[KW]] = g.kernel;
    [meta[HO], meta[WO]] = g.out_size;
    [meta[PT], meta[PL]] = g.padding;
    [meta[SH], meta[SW]] = g.stride;
    [meta[DH], meta[DW]] = g.dilation;
    let meta = metadata(op, x, meta.iter())?;
    let b = bias.unwrap_or(w);
    let b_len = if bias.is_some() { g.out_channels } else { 1 };
    with_float_type!(dtype, F => {
        // SAFETY: the buffers hold the geometry's element counts (checked). Unit `i < n` reads input rows
        // `py - pt < h` and columns `px - pl < w` of its batch's planes `first_in + ci < C`, weight elements
        // of its output channel `oc < O`, the bias at `oc` only when there is one, and writes `out[i]`.
        unsafe {
            conv2d_kernel::launch_unchecked::<F, <F as Compute>::C>(
                x.device().client(),
                cube_count(x, n),
                cube_dim(),
                arg(x, g.input_len()),
                arg(w, g.weight_len()),
                arg(b, b_len),
                arg(&out, n),
                arg(&meta, META),
                bias.is_some(),
            )
        }
    });
    Ok(out)
}
