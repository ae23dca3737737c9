//! PyTorch's `F.conv2d` on `(N, C, H, W)` with stride, padding (before each spatial dimension; the output
//! size carries any padding after), dilation and groups. One unit per output element, accumulated in the
//! compute type (`f32` for the half types). The weight's gradient sums over every position of the batch: past
//! 16,384 positions each unit sums a slice of them and a second kernel adds the slices.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::launch::{arg, check_operands, launch};
use crate::slices;
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
    /// Fails unless the sizes fit together: groups dividing both channel counts, positive strides and
    /// dilations, an output that the padded input covers.
    pub(crate) fn check(&self, op: &'static str) -> Result<()> {
        let g = self;
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
        if valid {
            Ok(())
        } else {
            Err(KernelError::InvalidArgument {
                op,
                message: format!("an inconsistent geometry {g:?}"),
            })
        }
    }

    /// The geometry as the kernels read it.
    fn sizes(&self) -> SizesLaunch {
        let g = self;
        SizesLaunch::new(
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
        )
    }

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

/// The input's gradient: one input element per unit, summing over the output positions and weights that
/// read it (forward's loops turned around).
#[cube(launch_unchecked)]
#[allow(clippy::manual_is_multiple_of)] // `%` is what the cube macro translates for the device.
fn conv2d_input_grad_kernel<F: Float, C: Float>(
    dy: &[F],
    w: &[F],
    dx: &mut [F],
    sizes: Sizes,
    #[comptime] kh: usize,
    #[comptime] kw: usize,
) {
    if ABSOLUTE_POS < dx.len() {
        let ix = ABSOLUTE_POS % sizes.w;
        let iy = (ABSOLUTE_POS / sizes.w) % sizes.h;
        let c = (ABSOLUTE_POS / (sizes.w * sizes.h)) % sizes.c;
        let n = ABSOLUTE_POS / (sizes.w * sizes.h * sizes.c);
        let group = c / sizes.per_group_in;
        let ci = c - group * sizes.per_group_in;
        // Position in the padded input.
        let py = iy + sizes.pt;
        let px = ix + sizes.pl;
        let mut acc = C::new(0.0);
        for j in 0..sizes.per_group_out {
            let oc = group * sizes.per_group_out + j;
            let dy_plane = (n * sizes.o + oc) * sizes.ho;
            let w_plane = (oc * sizes.per_group_in + ci) * kh;
            #[unroll]
            for ky in 0..kh {
                let reach_y = ky * sizes.dh;
                if py >= reach_y && (py - reach_y) % sizes.sh == 0 {
                    let oy = (py - reach_y) / sizes.sh;
                    if oy < sizes.ho {
                        #[unroll]
                        for kx in 0..kw {
                            let reach_x = kx * sizes.dw;
                            if px >= reach_x && (px - reach_x) % sizes.sw == 0 {
                                let ox = (px - reach_x) / sizes.sw;
                                if ox < sizes.wo {
                                    acc += C::cast_from(dy[(dy_plane + oy) * sizes.wo + ox])
                                        * C::cast_from(w[(w_plane + ky) * kw + kx]);
                                }
                            }
                        }
                    }
                }
            }
        }
        dx[ABSOLUTE_POS] = F::cast_from(acc);
    }
}

/// The weight's gradient: unit `e · slices + s` sums, for weight element `e = (oc, ci, ky, kx)`, the products
/// over slice `s` of the output positions: the rows `(n, oy)` of the `row_slice`-th block of `rows_per_slice`
/// (`row_slice = s / column_slices`), and in each the columns `ox` of the `s % column_slices`-th block of
/// `columns_per_slice`. `O` is `F` with one slice, else the compute type (partial sums for [`slices::add`]).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn conv2d_weight_grad_kernel<F: Float, C: Float, O: Float>(
    x: &[F],
    dy: &[F],
    dw: &mut [O],
    sizes: Sizes,
    batch: usize,
    slices: usize,
    column_slices: usize,
    rows_per_slice: usize,
    columns_per_slice: usize,
    #[comptime] kh: usize,
    #[comptime] kw: usize,
) {
    if ABSOLUTE_POS < dw.len() {
        let e = ABSOLUTE_POS / slices;
        let s = ABSOLUTE_POS % slices;
        let (first_row, end_row) = slices::range(s / column_slices, batch * sizes.ho, rows_per_slice);
        let (first_column, end_column) = slices::range(s % column_slices, sizes.wo, columns_per_slice);
        let kx = e % kw;
        let ky = (e / kw) % kh;
        let ci = (e / (kw * kh)) % sizes.per_group_in;
        let oc = e / (kw * kh * sizes.per_group_in);
        let c = (oc / sizes.per_group_out) * sizes.per_group_in + ci;
        let mut acc = C::new(0.0);
        for q in first_row..end_row {
            let n = q / sizes.ho;
            let oy = q % sizes.ho;
            let py = oy * sizes.sh + ky * sizes.dh;
            if py >= sizes.pt && py < sizes.pt + sizes.h {
                let x_row = ((n * sizes.c + c) * sizes.h + py - sizes.pt) * sizes.w;
                let dy_row = ((n * sizes.o + oc) * sizes.ho + oy) * sizes.wo;
                for ox in first_column..end_column {
                    let px = ox * sizes.sw + kx * sizes.dw;
                    if px >= sizes.pl && px < sizes.pl + sizes.w {
                        acc += C::cast_from(x[x_row + px - sizes.pl]) * C::cast_from(dy[dy_row + ox]);
                    }
                }
            }
        }
        dw[ABSOLUTE_POS] = O::cast_from(acc);
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

/// Which kernel a forward convolution runs on.
///
/// ```
/// assert_eq!(kernels::conv2d::Kernel::default(), kernels::conv2d::Kernel::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// `cubek-convolution`'s where it measured faster ([`Kernel::channels_last_pays`]), else the direct one.
    #[default]
    Auto,
    /// nn's direct kernel: one unit per output element, on `(N, C, H, W)` operands.
    Direct,
    /// `cubek-convolution`'s direct kernel on operands permuted to channels-last and back
    /// ([`crate::channels_last_conv::conv2d`]); an error where it does not take the problem.
    ChannelsLast,
}

impl Kernel {
    /// Taps per output (`C / groups · kH · kW`) from which the channels-last kernel, permutes included, beat the
    /// direct one on Mesa's lavapipe (`cargo bench -p kernels --bench conv2d`, BENCHMARKS.md "`cubek-convolution`
    /// routed on software adapters").
    pub const SOFTWARE_TAPS: usize = 64;

    /// Whether a `dtype` convolution of geometry `g` gains from the channels-last kernel on a device that
    /// `is_software` ([`GpuDevice::is_software`](crate::GpuDevice::is_software)): on a software adapter, in
    /// `float32`, from [`Kernel::SOFTWARE_TAPS`] taps per output, where a group's output channels are a multiple
    /// of 4. Half types stay on the direct kernel, which accumulates in `float32` as PyTorch does (cubek's
    /// accumulates in the element type); so do GPUs: on an H200 the direct kernel, against cubek's with the
    /// permutes, was faster for each of the bench's 16 shapes through Vulkan and for 15 on CUDA (2 % slower on
    /// ResNet-50's 1×1), BENCHMARKS.md "On an NVIDIA H200: device tests, nn's convolution next to
    /// `cubek-convolution`".
    ///
    /// ```
    /// use kernels::FloatType;
    /// use kernels::conv2d::{Geometry, Kernel};
    /// let g = |channels, kernel| Geometry {
    ///     batch: 8, channels, height: 16, width: 16, out_channels: 64, groups: 1,
    ///     kernel, out_size: [16, 16], padding: [kernel[0] / 2, kernel[1] / 2], stride: [1, 1], dilation: [1, 1],
    /// };
    /// assert!(Kernel::channels_last_pays(true, FloatType::F32, g(64, [3, 3])));
    /// assert!(!Kernel::channels_last_pays(false, FloatType::F32, g(64, [3, 3])));
    /// assert!(!Kernel::channels_last_pays(true, FloatType::F16, g(64, [3, 3])));
    /// assert!(!Kernel::channels_last_pays(true, FloatType::F32, g(4, [1, 1])));
    /// assert!(!Kernel::channels_last_pays(true, FloatType::F32, Geometry { out_channels: 14, ..g(64, [3, 3]) }));
    /// ```
    pub fn channels_last_pays(is_software: bool, dtype: FloatType, g: Geometry) -> bool {
        let groups = g.groups.max(1);
        let taps = g.channels / groups * g.kernel[0] * g.kernel[1];
        // cubek's kernel computes a vector of 4 output channels per unit where a group's count allows it; with
        // 2 (the reference model's 14 channels) it gained only 6–10 % alone and nothing inside the model.
        let whole_vectors = (g.out_channels / groups).is_multiple_of(4);
        is_software && dtype == FloatType::F32 && taps >= Kernel::SOFTWARE_TAPS && whole_vectors
    }

    fn channels_last(self, dtype: FloatType, device: &crate::GpuDevice, g: Geometry) -> bool {
        match self {
            Kernel::Auto => {
                let empty = [g.output_len(), g.input_len(), g.weight_len()].contains(&0);
                !empty && Kernel::channels_last_pays(device.is_software(), dtype, g)
            }
            Kernel::Direct => false,
            Kernel::ChannelsLast => true,
        }
    }
}

/// The convolution of `x` with `w` (and `bias`) in a new `(N, O, Ho, Wo)` buffer, on the kernel
/// [`Kernel::Auto`] picks.
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
    conv2d_on(Kernel::Auto, dtype, x, w, bias, geometry)
}

/// [`conv2d`] on `kernel`.
pub fn conv2d_on(
    kernel: Kernel,
    dtype: FloatType,
    x: &GpuBuffer,
    w: &GpuBuffer,
    bias: Option<&GpuBuffer>,
    geometry: Geometry,
) -> Result<GpuBuffer> {
    let op = "conv2d";
    let g = geometry;
    check_forward(op, dtype, x, w, bias, g)?;
    if kernel.channels_last(dtype, x.device(), g) {
        match crate::channels_last_conv::conv2d(dtype, x, w, bias, g) {
            Ok(out) => return Ok(out),
            Err(e) if kernel == Kernel::ChannelsLast => return Err(e),
            // Auto: cubek refused this problem; the direct kernel takes every one.
            Err(_) => {}
        }
    }
    let n = g.output_len();
    let out = GpuBuffer::uninit(x.device(), n * dtype.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    let sizes = g.sizes();
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

/// Checks a forward convolution's `dtype` on `x`'s device, its geometry, and that the input, weight and bias
/// hold the geometry's counts on that device (for [`conv2d`] and the channels-last kernel).
pub(crate) fn check_forward(
    op: &'static str,
    dtype: FloatType,
    x: &GpuBuffer,
    w: &GpuBuffer,
    bias: Option<&GpuBuffer>,
    g: Geometry,
) -> Result<()> {
    x.device().check_dtype(op, dtype)?;
    g.check(op)?;
    let mut operands = vec![(x, g.input_len(), "input"), (w, g.weight_len(), "weight")];
    if let Some(b) = bias {
        operands.push((b, g.out_channels, "bias"));
    }
    check_operands(op, dtype, x, &operands)
}

/// The buffer a gradient kernel writes: [`Gradient::Ready`] when nothing needs launching (an empty gradient,
/// or zeros where an operand is empty), else [`Gradient::Launch`] with `n` uninitialised elements.
enum Gradient {
    Ready(GpuBuffer),
    Launch(GpuBuffer),
}

/// Checks `dtype` and the geometry and that each operand holds its count (on the first one's device), and
/// makes the `n`-element gradient's buffer.
fn gradient_buffer(
    dtype: FloatType,
    g: Geometry,
    n: usize,
    operands: &[(&GpuBuffer, usize, &str)],
) -> Result<Gradient> {
    let op = "conv2d_backward";
    let on = operands[0].0;
    on.device().check_dtype(op, dtype)?;
    g.check(op)?;
    check_operands(op, dtype, on, operands)?;
    let bytes = n * dtype.size_in_bytes();
    Ok(if n == 0 {
        Gradient::Ready(GpuBuffer::uninit(on.device(), 0))
    } else if operands.iter().any(|&(_, len, _)| len == 0) {
        Gradient::Ready(GpuBuffer::from_bytes(on.device(), &vec![0u8; bytes]))
    } else {
        Gradient::Launch(GpuBuffer::uninit(on.device(), bytes))
    })
}

/// The gradient of [`conv2d`]'s input from the output's gradient `dy` `(N, O, Ho, Wo)` and the weight, in a new
/// `(N, C, H, W)` buffer.
pub fn conv2d_input_grad(dtype: FloatType, dy: &GpuBuffer, w: &GpuBuffer, geometry: Geometry) -> Result<GpuBuffer> {
    let g = geometry;
    let n = g.input_len();
    let operands = [(dy, g.output_len(), "output gradient"), (w, g.weight_len(), "weight")];
    let dx = match gradient_buffer(dtype, g, n, &operands)? {
        Gradient::Ready(zeros) => return Ok(zeros),
        Gradient::Launch(dx) => dx,
    };
    with_float_type!(dtype, F => {
        // SAFETY: `dy` and `w` hold the geometry's element counts (checked). Unit `i < n` reads `dy` at output
        // rows `oy < Ho` and columns `ox < Wo` of its batch's planes `oc < O`, weight elements of those output
        // channels and its input channel's offset `ci < C / groups`, and writes `dx[i]`.
        unsafe {
            launch!(
                conv2d_input_grad_kernel::<F, <F as Compute>::C>,
                dy,
                n,
                arg(dy, g.output_len()),
                arg(w, g.weight_len()),
                arg(&dx, n),
                g.sizes(),
                g.kernel[0],
                g.kernel[1],
            )
        }
    });
    Ok(dx)
}

/// The gradient of [`conv2d`]'s weight from the input and the output's gradient `dy`, in a new
/// `(O, C / groups, kH, kW)` buffer.
pub fn conv2d_weight_grad(dtype: FloatType, x: &GpuBuffer, dy: &GpuBuffer, geometry: Geometry) -> Result<GpuBuffer> {
    let g = geometry;
    let n = g.weight_len();
    let operands = [(x, g.input_len(), "input"), (dy, g.output_len(), "output gradient")];
    let dw = match gradient_buffer(dtype, g, n, &operands)? {
        Gradient::Ready(zeros) => return Ok(zeros),
        Gradient::Launch(dw) => dw,
    };
    // Slices of whole rows `(n, oy)` and, where a row alone is too long, of columns: each unit loops at most
    // `rows · (1 + columns) <= ITERATIONS` times.
    let rows = g.batch * g.out_size[0];
    let columns_per_slice = g.out_size[1].min(slices::ITERATIONS / 2);
    let rows_per_slice = (slices::ITERATIONS / (columns_per_slice + 1)).max(1);
    let column_slices = slices::count(g.out_size[1], columns_per_slice);
    let slices = slices::count(rows, rows_per_slice) * column_slices;
    with_float_type!(dtype, F => {
        type C = <F as Compute>::C;
        // SAFETY: `x` and `dy` hold the geometry's element counts (checked). Unit `u < n·slices` reads `x` at
        // rows `py - pt < H` and columns `px - pl < W` of its input channel `c < C` for the batch elements
        // `q / Ho < N` of its slice's rows `q < N·Ho`, `dy` of its output channel `oc < O` at `oy < Ho`,
        // `ox < Wo`, and writes `dw[u]` (or `partials[u]`, of `n·slices` elements).
        unsafe {
            if slices == 1 {
                launch!(
                    conv2d_weight_grad_kernel::<F, C, F>,
                    x,
                    n,
                    arg(x, g.input_len()),
                    arg(dy, g.output_len()),
                    arg(&dw, n),
                    g.sizes(),
                    g.batch,
                    1,
                    1,
                    rows,
                    g.out_size[1],
                    g.kernel[0],
                    g.kernel[1],
                )
            } else {
                let partials = slices::partials::<F>(x.device(), n, slices);
                launch!(
                    conv2d_weight_grad_kernel::<F, C, C>,
                    x,
                    n * slices,
                    arg(x, g.input_len()),
                    arg(dy, g.output_len()),
                    arg(&partials, n * slices),
                    g.sizes(),
                    g.batch,
                    slices,
                    column_slices,
                    rows_per_slice,
                    columns_per_slice,
                    g.kernel[0],
                    g.kernel[1],
                );
                slices::add::<F>(&partials, &dw, n, slices, 1, false);
            }
        }
    });
    Ok(dw)
}
