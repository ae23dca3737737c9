//! 2-d convolution: on the CPU direct kernels over packed operands, no im2col matrix: the forward
//! (`direct.rs`), the weight's gradient (`weight_grad.rs`) and, for stride 1, the input's gradient as the
//! forward's kernel on the flipped weight (other strides: a matrix product per group, its columns added back
//! where the patches were read); on a device the direct convolution kernels. The transposed convolution is
//! the input's gradient run forward (`transposed.rs`); the 1-d forms are the 2-d ones on rows (`one_dim.rs`).

mod direct;
mod one_dim;
mod transposed;
mod weight_grad;

pub use one_dim::{Conv1dOptions, ConvTranspose1dOptions, Padding1d, conv_transpose1d, conv1d};
pub(crate) use transposed::smallest_output;
pub use transposed::{ConvTranspose2dOptions, conv_transpose2d};

use kernels::GpuDevice;

use super::float::{Float, with_float_type};
use super::gemm::Mat;
use super::map;
use super::{Op, probe_tensor, run, with_optional};
use crate::tensor::autograd::{Backward, Saved};
use crate::threads;
use crate::{DType, Error, Result, Shape, Tensor};

/// How a convolution pads its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding2d {
    /// Zeros added on both sides: `(height, width)`.
    Explicit(usize, usize),
    /// No padding (PyTorch's `padding='valid'`).
    Valid,
    /// Padding that keeps the spatial size at stride 1 (PyTorch's `padding='same'`); an odd total puts the
    /// extra row or column at the end, as PyTorch does.
    Same,
}

/// The arguments of a 2-d convolution besides its tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dOptions {
    /// Step between applications, `(height, width)`.
    pub stride: [usize; 2],
    /// Padding of the input.
    pub padding: Padding2d,
    /// Spacing between kernel elements, `(height, width)`.
    pub dilation: [usize; 2],
    /// Number of blocked groups of channels.
    pub groups: usize,
}

impl Default for Conv2dOptions {
    fn default() -> Self {
        Conv2dOptions {
            stride: [1, 1],
            padding: Padding2d::Explicit(0, 0),
            dilation: [1, 1],
            groups: 1,
        }
    }
}

/// Padding before and after, per spatial dimension.
fn pads(opts: &Conv2dOptions, kernel: [usize; 2]) -> [(usize, usize); 2] {
    match opts.padding {
        Padding2d::Explicit(h, w) => [(h, h), (w, w)],
        Padding2d::Valid => [(0, 0), (0, 0)],
        Padding2d::Same => {
            let total = |d: usize| opts.dilation[d] * (kernel[d] - 1);
            [
                (total(0) / 2, total(0) - total(0) / 2),
                (total(1) / 2, total(1) - total(1) / 2),
            ]
        }
    }
}

/// PyTorch's `F.conv2d(x, weight, bias, stride, padding, dilation, groups)` on `(N, C, H, W)` or `(C, H, W)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{conv2d, Conv2dOptions, Padding2d};
/// let x = Tensor::ones([1, 1, 3, 3], nn::DType::F32);
/// let w = Tensor::ones([1, 1, 3, 3], nn::DType::F32);
/// let opts = Conv2dOptions { padding: Padding2d::Explicit(1, 1), ..Default::default() };
/// let y = conv2d(&x, &w, None, &opts).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![4.0, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0]);
/// ```
pub fn conv2d(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>, opts: &Conv2dOptions) -> Result<Tensor> {
    if x.rank() == 3 {
        return conv2d(&x.unsqueeze(0)?, weight, bias, opts)?.squeeze(0);
    }
    let geo = geometry(x, weight, bias, opts)?;
    if geo.c == 0 && geo.n > 0 {
        // A sum over no input channel: the bias (or zero) at every output position. (PyTorch 2.5.1 returns an
        // empty tensor of the input's shape here, which is no convolution's output shape.)
        let zeros = Tensor::zeros([geo.n, geo.o, geo.ho, geo.wo], x.dtype()).to_device(x.device())?;
        return match bias {
            Some(b) => zeros.add(&b.reshape([1, geo.o, 1, 1])?),
            None => Ok(zeros),
        };
    }
    run(&Conv2d { geo }, &with_optional(&[x, weight], &[bias]))
}

/// The convolution of `(N, C, H, W)` by `(O, C / groups, kH, kW)` of these sizes; inputs `[x, weight]` and
/// `bias` when there is one.
struct Conv2d {
    geo: Geometry,
}

impl Op for Conv2d {
    type Output = Tensor;
    const NAME: &'static str = "conv2d";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, weight, bias) = (inputs[0], inputs[1], inputs.get(2).copied());
        let geo = self.geo;
        with_float_type!(x.dtype(), T => {
            let xs = x.float_ref::<T>("conv2d")?;
            let ws = weight.float_ref::<T>("conv2d")?;
            let bs = bias.map(|b| b.float_ref::<T>("conv2d")).transpose()?;
            let shape = Shape::from([geo.n, geo.o, geo.ho, geo.wo]);
            let out = map::filled::<T>(shape.numel(), |out| direct::conv2d::<T>(&geo, &xs, &ws, bs.as_deref(), out));
            Tensor::from_cpu(out, shape).to_dtype(x.dtype())
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, weight, bias) = (inputs[0], inputs[1], inputs.get(2).copied());
        let g = self.geo;
        let geometry = g.kernel_geometry();
        let (weight, bias) = (weight.gpu_buffer(Self::NAME)?, Tensor::gpu_buffer_of(bias, Self::NAME)?);
        x.gpu_op(Self::NAME, Shape::from([g.n, g.o, g.ho, g.wo]), |dtype, x| {
            kernels::conv2d::conv2d(dtype, x, &weight, bias.as_ref(), geometry)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(probe_cases(dtype)?
            .into_iter()
            .map(|(geo, inputs)| (Conv2d { geo }, inputs))
            .collect())
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let geo = self.geo;
        let needs_x = inputs[0].requires_grad();
        let needs_w = inputs[1].requires_grad();
        // The input's gradient reads the weight, the weight's reads the input: save only what is needed.
        let x = needs_w.then(|| Saved::new(inputs[0]));
        let w = needs_x.then(|| Saved::new(inputs[1]));
        let has_bias = inputs.len() > 2;
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let dy = &g[0];
            let mut grads = vec![None, None];
            if needs[0]
                && let Some(w) = &w
            {
                grads[0] = Some(run(&Conv2dGrad::input(geo), &[dy, w.get("conv2d")?])?);
            }
            if needs[1]
                && let Some(x) = &x
            {
                grads[1] = Some(run(&Conv2dGrad::weight(geo), &[x.get("conv2d")?, dy])?);
            }
            if has_bias {
                grads.push(needs[2].then(|| dy.sum_dims(&[0, 2, 3], false)).transpose()?);
            }
            Ok(grads)
        }))
    }
}

/// The convolutions the probe runs, with their inputs `[x, weight, bias]`: one with stride, padding, dilation
/// and groups all different from 1, and one with enough taps per output, and whole vectors of output channels,
/// that a software adapter runs it on `cubek-convolution`'s kernel (`kernels::conv2d::Kernel::channels_last_pays`).
fn probe_cases(dtype: DType) -> Result<Vec<(Geometry, Vec<Tensor>)>> {
    let every = Conv2dOptions {
        stride: [2, 1],
        padding: Padding2d::Explicit(1, 1),
        dilation: [1, 2],
        groups: 2,
    };
    let channels = kernels::conv2d::Kernel::SOFTWARE_TAPS.div_ceil(9);
    let wide = Conv2dOptions {
        padding: Padding2d::Explicit(1, 1),
        ..Default::default()
    };
    let cases = [
        (every, [2, 4, 5, 6], [6, 2, 3, 2], 0.0),
        (wide, [2, channels, 4, 5], [8, channels, 3, 3], 3.0),
    ];
    cases
        .into_iter()
        .map(|(opts, x, w, phase)| {
            let inputs = vec![
                probe_tensor(&x, phase, dtype)?,
                probe_tensor(&w, phase + 1.0, dtype)?,
                probe_tensor(&[w[0]], phase + 2.0, dtype)?,
            ];
            Ok((geometry(&inputs[0], &inputs[1], inputs.get(2), &opts)?, inputs))
        })
        .collect()
}

/// Which gradient of a convolution a [`Conv2dGrad`] computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GradOf {
    Input,
    Weight,
}

/// A gradient of a convolution from its output's gradient `dy`: the input's from inputs `[dy, weight]`, the
/// weight's from `[x, dy]`. On the CPU in `f64`, on a device by `kernels::conv2d`'s backward kernels. The
/// input's gradient is linear in `dy` and in the weight, and has gradients itself: it is the transposed
/// convolution.
struct Conv2dGrad {
    geo: Geometry,
    of: GradOf,
}

impl Conv2dGrad {
    /// The input's gradient from `[dy, weight]`.
    fn input(geo: Geometry) -> Conv2dGrad {
        Conv2dGrad { geo, of: GradOf::Input }
    }

    /// The weight's gradient from `[x, dy]`.
    fn weight(geo: Geometry) -> Conv2dGrad {
        Conv2dGrad {
            geo,
            of: GradOf::Weight,
        }
    }
}

impl Conv2dGrad {
    fn shape(&self) -> Shape {
        let g = &self.geo;
        match self.of {
            GradOf::Input => Shape::from([g.n, g.c, g.h, g.w]),
            GradOf::Weight => Shape::from([g.o, g.c / g.g.max(1), g.kh, g.kw]),
        }
    }
}

impl Op for Conv2dGrad {
    type Output = Tensor;
    const NAME: &'static str = "conv2d_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let dtype = inputs[0].dtype();
        with_float_type!(dtype, T => {
            let a = inputs[0].float_ref::<T>(Self::NAME)?;
            let b = inputs[1].float_ref::<T>(Self::NAME)?;
            let values = match self.of {
                GradOf::Input => input_grad_host::<T>(&self.geo, &a, &b),
                GradOf::Weight => weight_grad_host::<T>(&self.geo, &a, &b),
            };
            Tensor::from_computed(values, self.shape(), dtype)
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let geometry = self.geo.kernel_geometry();
        let other = inputs[1].gpu_buffer(Self::NAME)?;
        inputs[0].gpu_op(Self::NAME, self.shape(), |dtype, first| match self.of {
            GradOf::Input => kernels::conv2d::conv2d_input_grad(dtype, first, &other, geometry),
            GradOf::Weight => kernels::conv2d::conv2d_weight_grad(dtype, first, &other, geometry),
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // The forward's probe geometry (stride, padding, dilation and groups all different from 1), both ways.
        let (geo, inputs) = probe_cases(dtype)?.remove(0);
        let dy = probe_tensor(&[geo.n, geo.o, geo.ho, geo.wo], 3.0, dtype)?;
        Ok(vec![
            (Conv2dGrad::input(geo), vec![dy.clone(), inputs[1].clone()]),
            (Conv2dGrad::weight(geo), vec![inputs[0].clone(), dy]),
        ])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        // Only the input's gradient runs forward (as the transposed convolution); the weight's runs inside
        // backward passes, which record nothing.
        if self.of == GradOf::Weight {
            return None;
        }
        // dx = f(dy, w), linear in each: ⟨g, f(dy, w)⟩ is the forward convolution of g by w read against dy,
        // and the weight's gradient of a convolution of g against dy.
        let geo = self.geo;
        let dy = inputs[1].requires_grad().then(|| Saved::new(inputs[0]));
        let w = inputs[0].requires_grad().then(|| Saved::new(inputs[1]));
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let g = &g[0];
            let mut grads = vec![None, None];
            if needs[0]
                && let Some(w) = &w
            {
                grads[0] = Some(run(&Conv2d { geo }, &[g, w.get(Self::NAME)?])?);
            }
            if needs[1]
                && let Some(dy) = &dy
            {
                grads[1] = Some(run(&Conv2dGrad::weight(geo), &[g, dy.get(Self::NAME)?])?);
            }
            Ok(grads)
        }))
    }
}

/// PyTorch's checks of a convolution's tensors (`check_shape_forward`), for any number of spatial dimensions:
/// the weight's rank and groups ([`check_weight`]), its channels times the groups the input's, the bias one value per output channel, a kernel of at least one tap, the padded input (its
/// spatial sizes with `padding(kernel)`, the padding on both sides of each, added) at least the dilated kernel.
fn check_convolution(
    op: &'static str,
    (x, weight, bias): (&Tensor, &Tensor, Option<&Tensor>),
    groups: usize,
    padding: impl Fn(&[usize]) -> Vec<(usize, usize)>,
    dilation: &[usize],
) -> Result<()> {
    let (xs, ws) = (x.shape(), weight.shape());
    check_weight(op, xs, ws, groups)?;
    let pads = padding(&ws.dims()[2..]);
    let shown: Vec<usize> = xs
        .dims()
        .iter()
        .enumerate()
        .map(|(d, &s)| if d < 2 { s } else { s + pads[d - 2].1 - pads[d - 2].0 })
        .collect();
    let shown = Shape::from(shown);
    if xs[1] != ws[1] * groups {
        return Err(Error::invalid(
            op,
            format!(
                "Given groups={groups}, weight of size {ws}, expected input{shown} to have {} channels, but got {} channels instead",
                ws[1] * groups,
                xs[1]
            ),
        ));
    }
    if let Some(b) = bias
        && b.shape() != &[ws[0]]
    {
        return Err(Error::invalid(
            op,
            format!(
                "Given weight of size {ws}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
                ws[0],
                b.shape()
            ),
        ));
    }
    let padded: Vec<usize> = xs.dims()[2..]
        .iter()
        .zip(pads)
        .map(|(s, (before, after))| s + before + after)
        .collect();
    let kernel: Vec<usize> = ws.dims()[2..]
        .iter()
        .zip(dilation)
        .map(|(&k, &d)| d * (k - 1) + 1)
        .collect();
    if padded.iter().zip(&kernel).any(|(p, k)| p < k) {
        let sizes = |v: &[usize]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" x ");
        return Err(Error::invalid(
            op,
            format!(
                "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                sizes(&padded),
                sizes(&kernel)
            ),
        ));
    }
    check_dtypes(op, x, [Some(weight), bias])
}

/// PyTorch's checks of a (plain or transposed) convolution's weight against its input's rank and the groups:
/// the same rank, a first dimension of at least `groups` and divisible by it, at least one kernel tap.
fn check_weight(op: &'static str, xs: &Shape, ws: &Shape, groups: usize) -> Result<()> {
    if ws.rank() != xs.rank() {
        return Err(Error::invalid(
            op,
            format!(
                "Expected {}-dimensional input for {}-dimensional weight {ws}, but got {}-dimensional input of size {xs} instead",
                ws.rank(),
                ws.rank(),
                xs.rank()
            ),
        ));
    }
    if groups == 0 {
        return Err(Error::invalid(op, "non-positive groups is not supported"));
    }
    if ws[0] < groups {
        return Err(Error::invalid(
            op,
            format!(
                "Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of size {ws} instead"
            ),
        ));
    }
    if !ws[0].is_multiple_of(groups) {
        return Err(Error::invalid(
            op,
            format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{ws}] instead"
            ),
        ));
    }
    if ws.dims()[2..].contains(&0) {
        return Err(Error::invalid(op, format!("weight of size {ws} has no kernel taps")));
    }
    Ok(())
}

/// Fails unless each of `tensors` has `x`'s dtype.
fn check_dtypes<const N: usize>(op: &'static str, x: &Tensor, tensors: [Option<&Tensor>; N]) -> Result<()> {
    for t in tensors.into_iter().flatten() {
        if t.dtype() != x.dtype() {
            return Err(Error::DTypeMismatch {
                op,
                expected: x.dtype(),
                got: t.dtype(),
            });
        }
    }
    Ok(())
}

/// Checks a convolution's arguments (`x` of rank 4) and works out its sizes.
fn geometry(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>, opts: &Conv2dOptions) -> Result<Geometry> {
    let op = "conv2d";
    if x.rank() != 4 {
        return Err(Error::invalid(
            op,
            format!(
                "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {}",
                x.shape()
            ),
        ));
    }
    if opts.stride.contains(&0) {
        return Err(Error::invalid(op, "non-positive stride is not supported"));
    }
    if opts.dilation.contains(&0) {
        return Err(Error::invalid(op, "non-positive dilation is not supported"));
    }
    if matches!(opts.padding, Padding2d::Same) && opts.stride != [1, 1] {
        return Err(Error::invalid(
            op,
            "padding='same' is not supported for strided convolutions",
        ));
    }
    let [n, c, h, w] = [0, 1, 2, 3].map(|d| x.shape()[d]);
    let padding = |k: &[usize]| pads(opts, [k[0], k[1]]).to_vec();
    check_convolution(op, (x, weight, bias), opts.groups, padding, &opts.dilation)?;
    if x.numel() == 0 && n != 0 && c != 0 {
        return Err(Error::invalid(
            op,
            format!(
                "Only zero batch or zero channel inputs are supported, but got input shape: {}",
                x.shape()
            ),
        ));
    }
    let g = opts.groups;
    let [o, _, kh, kw] = [0, 1, 2, 3].map(|d| weight.shape()[d]);
    let [(pt, pb), (pl, pr)] = pads(opts, [kh, kw]);
    // The padded input covers the dilated kernel (checked).
    let span = |size: usize, before: usize, after: usize, k: usize, d: usize, s: usize| {
        (size + before + after - (d * (k - 1) + 1)) / s + 1
    };
    let ho = span(h, pt, pb, kh, opts.dilation[0], opts.stride[0]);
    let wo = span(w, pl, pr, kw, opts.dilation[1], opts.stride[1]);
    let geo = Geometry {
        n,
        c,
        h,
        w,
        o,
        g,
        kh,
        kw,
        ho,
        wo,
        pt,
        pl,
        stride: opts.stride,
        dilation: opts.dilation,
    };
    Ok(geo)
}

/// Sizes of one convolution: input `(n, c, h, w)`, `o` output channels in `g` groups, kernel `(kh, kw)`,
/// output `(ho, wo)`, padding before `(pt, pl)`.
#[derive(Clone, Copy)]
struct Geometry {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    o: usize,
    g: usize,
    kh: usize,
    kw: usize,
    ho: usize,
    wo: usize,
    pt: usize,
    pl: usize,
    stride: [usize; 2],
    dilation: [usize; 2],
}

impl Geometry {
    /// The same sizes as the device kernels take them.
    fn kernel_geometry(&self) -> kernels::conv2d::Geometry {
        kernels::conv2d::Geometry {
            batch: self.n,
            channels: self.c,
            height: self.h,
            width: self.w,
            out_channels: self.o,
            groups: self.g,
            kernel: [self.kh, self.kw],
            out_size: [self.ho, self.wo],
            padding: [self.pt, self.pl],
            stride: self.stride,
            dilation: self.dilation,
        }
    }
}

/// Images per chunk of the batch for the host convolutions: as many as keep im2col's columns within
/// [`COLS_BUDGET`], at least one.
fn batch_chunk(geo: &Geometry) -> usize {
    let (k, p) = ((geo.c / geo.g) * geo.kh * geo.kw, geo.ho * geo.wo);
    (COLS_BUDGET / (k * p).max(1)).clamp(1, geo.n.max(1))
}

/// Scatter-adds below which the input gradient's columns are added back on the calling thread.
const SCATTER_WORK: usize = 1 << 16;

/// Adds one input channel's columns back into its padded plane `dst` (row `tap · stride + column` of `cols`
/// for kernel tap `tap`, its `p` columns from `column`): the reverse of `im2col` for one image and channel.
fn add_patches<T: Float>(geo: &Geometry, wp: usize, cols: &[T], column: usize, stride: usize, dst: &mut [T]) {
    let (wo, [sh, sw], [dh, dw]) = (geo.wo, geo.stride, geo.dilation);
    for ki in 0..geo.kh {
        for kj in 0..geo.kw {
            let src = &cols[(ki * geo.kw + kj) * stride + column..][..geo.ho * wo];
            for (oh, src) in src.chunks(wo).enumerate() {
                let row = &mut dst[(oh * sh + ki * dh) * wp + kj * dw..];
                for (&v, d) in src.iter().zip(row.iter_mut().step_by(sw)) {
                    *d = *d + v;
                }
            }
        }
    }
}

/// `(first image, images)` of each chunk of `n` images, `chunk` at a time.
fn batch_chunks(n: usize, chunk: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(chunk).map(move |n0| (n0, chunk.min(n - n0)))
}

/// Columns of im2col kept below this many elements: larger batches run in chunks.
const COLS_BUDGET: usize = 1 << 22;

/// The size of a padded input plane: the rows and columns the kernel reaches, past the padding before (the
/// padding after is what it reaches), and at least the input with its padding before. The output is not
/// empty.
fn padded_size(geo: &Geometry) -> (usize, usize) {
    let (h, w, kh, kw, ho, wo) = (geo.h, geo.w, geo.kh, geo.kw, geo.ho, geo.wo);
    let (pt, pl, stride, dilation) = (geo.pt, geo.pl, geo.stride, geo.dilation);
    let hp = ((ho - 1) * stride[0] + (kh - 1) * dilation[0] + 1).max(h + pt);
    let wp = ((wo - 1) * stride[1] + (kw - 1) * dilation[1] + 1).max(w + pl);
    (hp, wp)
}

/// Whether the input is its own padded plane ([`padded_size`]): no padding to add, read in place.
fn reads_in_place(geo: &Geometry) -> bool {
    geo.pt == 0 && geo.pl == 0 && padded_size(geo) == (geo.h, geo.w)
}

/// The images of a chunk as the host kernels read them: in place where the convolution needs no padding
/// ([`reads_in_place`]), else copied into padded planes ([`padded_size`]) whose borders were zeroed once.
struct PaddedChunks<T> {
    padded: Vec<T>,
    in_place: bool,
}

impl<T: Float> PaddedChunks<T> {
    /// Room for chunks of up to `images` images.
    fn new(geo: &Geometry, images: usize) -> PaddedChunks<T> {
        let in_place = reads_in_place(geo);
        let (hp, wp) = padded_size(geo);
        let padded = if in_place {
            Vec::new()
        } else {
            vec![T::ZERO; images * geo.c * hp * wp]
        };
        PaddedChunks { padded, in_place }
    }

    /// Images `n0..n0 + nb` of `x` (`(n, c, h, w)`) as `(nb, c, hp, wp)`.
    fn images<'a>(&'a mut self, geo: &Geometry, x: &'a [T], n0: usize, nb: usize) -> &'a [T] {
        let image = geo.c * geo.h * geo.w;
        let src = &x[n0 * image..(n0 + nb) * image];
        if self.in_place {
            return src;
        }
        pad_planes(geo, src, &mut self.padded);
        let (hp, wp) = padded_size(geo);
        &self.padded[..nb * geo.c * hp * wp]
    }
}

/// Copies the input planes of `x` into the interiors of the padded planes ([`padded_size`]) of `padded`, `pt`
/// rows and `pl` columns in; the borders are left as they are (zeros the caller wrote once). The one padding
/// step of the forward's and the weight gradient's chunks.
fn pad_planes<T: Copy>(geo: &Geometry, x: &[T], padded: &mut [T]) {
    if geo.h * geo.w == 0 {
        return;
    }
    // Rows of a few values as arrays of their length, which compile to a few moves: a copy of a row of
    // runtime length becomes a call to memcpy, which cost more than the copy (the reference model's rows
    // have 3 values; memmove was 8 % of its convolutions' time).
    macro_rules! by_width {
        ($($w:literal)*) => {
            match geo.w {
                $($w => pad_rows::<T, $w>(geo, x, padded),)*
                _ => pad_rows_any(geo, x, padded),
            }
        };
    }
    by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
}

/// [`pad_planes`] for rows of `W` values.
fn pad_rows<T: Copy, const W: usize>(geo: &Geometry, x: &[T], padded: &mut [T]) {
    let (hp, wp) = padded_size(geo);
    let (rows, _) = x.as_chunks::<W>();
    for (plane, dst) in rows.chunks(geo.h).zip(padded.chunks_mut(hp * wp)) {
        for (r, row) in plane.iter().enumerate() {
            let at = (r + geo.pt) * wp + geo.pl;
            *dst[at..]
                .first_chunk_mut::<W>()
                .expect("a padded plane holds each input row") = *row;
        }
    }
}

/// [`pad_planes`] for rows of any length.
fn pad_rows_any<T: Copy>(geo: &Geometry, x: &[T], padded: &mut [T]) {
    let (hp, wp) = padded_size(geo);
    for (plane, dst) in x.chunks(geo.h * geo.w).zip(padded.chunks_mut(hp * wp)) {
        for (r, row) in plane.chunks(geo.w).enumerate() {
            let at = (r + geo.pt) * wp + geo.pl;
            dst[at..at + geo.w].copy_from_slice(row);
        }
    }
}

/// The rows `gi * og .. (gi + 1) * og` of `dy` (`(n, o, p)`) for images `n0..n0 + nb`, as one `(og, nb · p)`
/// matrix (column `ni · p + pi`), the layout `im2col`'s columns have.
fn group_rows<T: Float>(geo: &Geometry, dy: &[T], n0: usize, nb: usize, gi: usize, out: &mut [T]) {
    let (o, og, p) = (geo.o, geo.o / geo.g, geo.ho * geo.wo);
    for oi in 0..og {
        for ni in 0..nb {
            let src = ((n0 + ni) * o + gi * og + oi) * p;
            out[(oi * nb + ni) * p..(oi * nb + ni + 1) * p].copy_from_slice(&dy[src..src + p]);
        }
    }
}

/// The weight's gradient `(o, c / g, kh, kw)` of a convolution of `x` from the output's gradient `dy`, by the
/// direct kernel of `weight_grad.rs`.
fn weight_grad_host<T: Float>(geo: &Geometry, x: &[T], dy: &[T]) -> Vec<T> {
    let mut dw = vec![T::ZERO; geo.o * (geo.c / geo.g) * geo.kh * geo.kw];
    weight_grad::weight_grad(geo, x, dy, &mut dw);
    dw
}

/// The input's gradient `(n, c, h, w)` of a convolution by `w` from the output's gradient `dy`: per group and
/// chunk of the batch, `wᵀ (k, og) @ dy (og, nb·p)` gives each patch's gradient, added back where the patch
/// was read (the reverse of `im2col`), in a padded plane whose border is then dropped.
fn input_grad_host<T: Float>(geo: &Geometry, dy: &[T], w: &[T]) -> Vec<T> {
    if let Some(dx) = input_grad_direct(geo, dy, w) {
        return dx;
    }
    let (n, c, h, wd, o, g) = (geo.n, geo.c, geo.h, geo.w, geo.o, geo.g);
    let (kh, kw, ho, wo) = (geo.kh, geo.kw, geo.ho, geo.wo);
    let (cg, og) = (c / g, o / g);
    let (k, p) = (cg * kh * kw, ho * wo);
    let mut dx = vec![T::ZERO; n * c * h * wd];
    if dx.is_empty() || p == 0 || og == 0 || k == 0 {
        return dx;
    }
    let (hp, wp) = padded_size(geo);
    let plane = hp * wp;
    let mut padded = vec![T::ZERO; n * c * plane];
    let chunk = batch_chunk(geo);
    let mut cols = vec![T::ZERO; k * chunk * p];
    let mut rows = vec![T::ZERO; og * chunk * p];
    for (n0, nb) in batch_chunks(n, chunk) {
        for gi in 0..g {
            group_rows(geo, dy, n0, nb, gi, &mut rows[..og * nb * p]);
            let wg = &w[gi * og * k..(gi + 1) * og * k];
            T::gemm(
                T::ONE,
                Mat::row_major(wg, og, k).t(),
                Mat::row_major(&rows[..og * nb * p], og, nb * p),
                T::ZERO,
                &mut cols[..k * nb * p],
            );
            // Each column back where its patch was read: the chunk's planes of the group's channels, split
            // over the threads (a plane is written by one part only).
            let cols = &cols[..k * nb * p];
            let planes = &mut padded[n0 * c * plane..(n0 + nb) * c * plane];
            let parts = threads::parts_for(nb * cg * k * p, SCATTER_WORK);
            threads::for_each_piece(planes, plane, parts, |at, piece| {
                for (i, dst) in piece.chunks_mut(plane).enumerate() {
                    let (ni, channel) = ((at / plane + i) / c, (at / plane + i) % c);
                    if channel / cg == gi {
                        add_patches(geo, wp, &cols[(channel % cg) * kh * kw * nb * p..], ni * p, nb * p, dst);
                    }
                }
            });
        }
    }
    for (dst, src) in dx.chunks_mut(h * wd).zip(padded.chunks(plane)) {
        for (r, row) in dst.chunks_mut(wd).enumerate() {
            let at = (r + geo.pt) * wp + geo.pl;
            row.copy_from_slice(&src[at..at + wd]);
        }
    }
    dx
}

/// The input's gradient of a convolution of stride 1 as the direct kernel's convolution of `dy` by the
/// weight flipped and with its input and output channels swapped, padded by the kernel's reach less the
/// forward's padding: `None` where that padding would be negative (the forward padded by more than the kernel
/// reaches) or the stride is not 1, which `input_grad_host` computes the im2col way.
fn input_grad_direct<T: Float>(geo: &Geometry, dy: &[T], w: &[T]) -> Option<Vec<T>> {
    let (kh, kw, g) = (geo.kh, geo.kw, geo.g);
    let reach = [geo.dilation[0] * (kh - 1), geo.dilation[1] * (kw - 1)];
    if geo.stride != [1, 1] || geo.pt > reach[0] || geo.pl > reach[1] {
        return None;
    }
    let (cg, og) = (geo.c / g, geo.o / g);
    let transposed = Geometry {
        n: geo.n,
        c: geo.o,
        h: geo.ho,
        w: geo.wo,
        o: geo.c,
        g,
        kh,
        kw,
        ho: geo.h,
        wo: geo.w,
        pt: reach[0] - geo.pt,
        pl: reach[1] - geo.pl,
        stride: [1, 1],
        dilation: geo.dilation,
    };
    // (c, o / g, kh, kw): channel gi·cg + ci reads output channel gi·og + oi's taps in reverse.
    let mut flipped = vec![T::ZERO; w.len()];
    for gi in 0..g {
        for oi in 0..og {
            for ci in 0..cg {
                let src = ((gi * og + oi) * cg + ci) * kh * kw;
                let dst = ((gi * cg + ci) * og + oi) * kh * kw;
                for tap in 0..kh * kw {
                    flipped[dst + tap] = w[src + kh * kw - 1 - tap];
                }
            }
        }
    }
    let mut dx = vec![T::ZERO; geo.n * geo.c * geo.h * geo.w];
    direct::conv2d(&transposed, dy, &flipped, None, &mut dx);
    Some(dx)
}
