//! PyTorch's `F.pad` (constant, reflect, replicate and circular padding, negative padding as cropping) and
//! `F.pixel_shuffle` / `F.pixel_unshuffle`, composed of recorded layout ops (`narrow`, `cat`, `index_select`,
//! `reshape`, `permute`): they run on the input's device and their gradients come from autograd.

use crate::{Error, Result, Tensor};

/// How [`pad`] fills what it adds: PyTorch's `mode` (and `value`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode {
    /// `'constant'` with this value.
    Constant(f64),
    /// `'reflect'`: the input mirrored about its edge, the edge not repeated.
    Reflect,
    /// `'replicate'`: the edge value repeated.
    Replicate,
    /// `'circular'`: the input wrapped around.
    Circular,
}

impl PadMode {
    /// PyTorch's mode name (`"constant"`, `"reflect"`, `"replicate"`, `"circular"`), with `value` for
    /// `"constant"`.
    pub fn parse(mode: &str, value: f64) -> Result<PadMode> {
        match mode {
            "constant" => Ok(PadMode::Constant(value)),
            "reflect" => Ok(PadMode::Reflect),
            "replicate" => Ok(PadMode::Replicate),
            "circular" => Ok(PadMode::Circular),
            other => Err(Error::invalid("pad", format!("Unrecognised padding mode {other}"))),
        }
    }
}

/// PyTorch's `F.pad(input, pad, mode, value)`: `pad` holds `(before, after)` pairs from the last dimension
/// backwards; a negative entry crops. The modes other than `Constant` pad the last 1, 2 or 3 dimensions of an
/// input with one or two more (batch and channels).
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{PadMode, pad};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [1, 3])?;
/// let y = pad(&x, &[2, 1], PadMode::Reflect)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 2.0, 1.0, 2.0, 3.0, 2.0]);
/// let z = pad(&x, &[1, -1], PadMode::Constant(9.0))?;
/// assert_eq!(z.to_vec::<f32>()?, vec![9.0, 1.0, 2.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn pad(x: &Tensor, pad: &[i64], mode: PadMode) -> Result<Tensor> {
    let op = "pad";
    if !pad.len().is_multiple_of(2) {
        return Err(Error::invalid(op, "Padding length must be divisible by 2"));
    }
    let (k, rank) = (pad.len() / 2, x.rank());
    if k > rank {
        return Err(Error::invalid(
            op,
            format!(
                "Padding length should be less than or equal to two times the input dimension but got padding \
                 length {} and input of dimension {rank}",
                pad.len()
            ),
        ));
    }
    let dims = x.shape().dims().to_vec();
    if !matches!(mode, PadMode::Constant(_)) {
        if k > 3 || (rank != k + 1 && rank != k + 2) {
            return Err(Error::invalid(
                op,
                "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now",
            ));
        }
        let first = if rank == k + 2 { 1 } else { 0 };
        if dims[first..].contains(&0) {
            return Err(Error::invalid(
                op,
                format!(
                    "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero \
                     dimensions for input, but got: {}",
                    k + 1,
                    k + 2,
                    x.shape()
                ),
            ));
        }
    }
    let pairs: Vec<(usize, i64, i64)> = pad
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| (rank - 1 - i, pair[0], pair[1]))
        .collect();
    for &(d, before, after) in &pairs {
        let size = dims[d] as i64;
        match mode {
            PadMode::Constant(_) if size + before.min(0) < 0 || size + before.min(0) + after.min(0) < 0 => {
                return Err(Error::invalid(op, "narrow(): length must be non-negative."));
            }
            PadMode::Reflect if before >= size || after >= size => {
                return Err(Error::invalid(
                    op,
                    format!(
                        "Argument #4: Padding size should be less than the corresponding input dimension, but got: \
                         padding ({before}, {after}) at dimension {d} of input {}",
                        x.shape()
                    ),
                ));
            }
            PadMode::Circular if before > size || after > size => {
                return Err(Error::invalid(
                    op,
                    "Padding value causes wrapping around more than once.",
                ));
            }
            PadMode::Circular if size + before + after < 0 => {
                return Err(Error::invalid(
                    op,
                    "Negative padding value is resulting in an empty dimension",
                ));
            }
            _ => {}
        }
    }
    // PyTorch's reflection and replication refuse an output empty in every padded dimension, in its words.
    if matches!(mode, PadMode::Reflect | PadMode::Replicate) {
        let sizes: Vec<(i64, i64)> = pairs
            .iter()
            .map(|&(d, b, a)| (dims[d] as i64, dims[d] as i64 + b + a))
            .collect();
        if sizes.iter().all(|&(_, out)| out < 1) {
            let message = match (sizes.as_slice(), mode) {
                ([(w, ow)], _) => format!("input (W: {w}) is too small. Calculated output W: {ow}"),
                ([(w, ow), (h, oh)], PadMode::Replicate) => {
                    format!("input (H: {h}, W: {w} ) is too small. Calculated output H: {oh} W: {ow}")
                }
                ([(w, ow), (h, oh)], _) => {
                    format!("input (H: {h}, W: {w}) is too small. Calculated output H: {oh} W: {ow}")
                }
                ([(w, ow), (h, oh), (d, od), ..], _) => {
                    format!("input (D: {d} H: {h}, W: {w}) is too small. Calculated output D: {od} H: {oh} W: {ow}")
                }
                _ => String::new(),
            };
            if !message.is_empty() {
                return Err(Error::invalid(op, message));
            }
        }
    }
    // PyTorch's constant padding that adds anything wants every padded dimension left non-empty.
    if matches!(mode, PadMode::Constant(_)) && pad.iter().any(|&p| p > 0) {
        for &(d, before, after) in pairs.iter().rev() {
            let size = dims[d] as i64;
            if size + before + after <= 0 {
                return Err(Error::invalid(
                    op,
                    format!(
                        "The input size {size}, plus negative padding {before} and {after} resulted in a negative \
                         output size, which is invalid. Check dimension {d} of your input."
                    ),
                ));
            }
        }
    }
    let mut y = x.clone();
    for &(d, before, after) in &pairs {
        y = pad_dim(&y, d, (before, after), mode)?;
    }
    Ok(y)
}

/// `x` padded in dimension `d` by `before` and `after` (negative: cropped), as PyTorch does: reflection and
/// replication read the whole input (a crop on one side does not move the other side's mirror); constant and
/// circular padding crop first and fill from what is left.
fn pad_dim(x: &Tensor, d: usize, (before, after): (i64, i64), mode: PadMode) -> Result<Tensor> {
    let dim = d as isize;
    let gather = |t: &Tensor, index: Vec<i64>| -> Result<Tensor> {
        let n = index.len();
        t.index_select(dim, &Tensor::from_vec(index, [n])?.to_device(x.device())?)
    };
    let size = x.shape()[d] as i64;
    match mode {
        PadMode::Reflect => {
            let mirror = |j: i64| {
                if j.abs() >= size {
                    2 * (size - 1) - j.abs()
                } else {
                    j.abs()
                }
            };
            return gather(x, (-before..size + after).map(mirror).collect());
        }
        PadMode::Replicate => return gather(x, (-before..size + after).map(|j| j.clamp(0, size - 1)).collect()),
        _ => {}
    }
    let start = (-before).max(0);
    let kept = (size - start - (-after).max(0)).max(0);
    let y = x.narrow(dim, start as usize, kept as usize)?;
    let (before, after) = (before.max(0), after.max(0));
    if before == 0 && after == 0 {
        return Ok(y);
    }
    let PadMode::Constant(value) = mode else {
        if kept == 0 {
            return Err(Error::invalid(
                "pad",
                "Padding value causes wrapping around more than once.",
            ));
        }
        return gather(&y, (-before..kept + after).map(|j| j.rem_euclid(kept)).collect());
    };
    let filler = |n: i64| -> Result<Tensor> {
        let mut shape = y.shape().dims().to_vec();
        shape[d] = n as usize;
        Tensor::try_full(shape, value, x.dtype())?.to_device(x.device())
    };
    let mut parts = Vec::new();
    if before > 0 {
        parts.push(filler(before)?);
    }
    parts.push(y.clone());
    if after > 0 {
        parts.push(filler(after)?);
    }
    Tensor::cat(&parts.iter().collect::<Vec<_>>(), dim)
}

/// PyTorch's `F.pixel_shuffle(input, upscale_factor)`: `(*, C·r², H, W)` to `(*, C, H·r, W·r)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{pixel_shuffle, pixel_unshuffle};
/// let x = Tensor::from_vec((0..8).map(|v| v as f32).collect(), [1, 8, 1, 1])?;
/// let y = pixel_shuffle(&x, 2)?;
/// assert_eq!(y.shape(), &[1, 2, 2, 2]);
/// assert_eq!(pixel_unshuffle(&y, 2)?.to_vec::<f32>()?, x.to_vec::<f32>()?);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn pixel_shuffle(x: &Tensor, upscale_factor: usize) -> Result<Tensor> {
    let (op, r) = ("pixel_shuffle", upscale_factor);
    let [lead, c, h, w] = spatial_layout(op, x)?;
    if r == 0 {
        return Err(Error::invalid(
            op,
            "pixel_shuffle expects a positive upscale_factor, but got 0",
        ));
    }
    if !c.is_multiple_of(r * r) {
        return Err(Error::invalid(
            op,
            format!(
                "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of \
                 upscale_factor, but input.size(-3)={c} is not divisible by {}",
                r * r
            ),
        ));
    }
    let oc = c / (r * r);
    let y = x
        .reshape([lead, oc, r, r, h, w])?
        .permute(&[0, 1, 4, 2, 5, 3])?
        .reshape([lead, oc, h * r, w * r])?;
    y.reshape(with_leading(x, &[oc, h * r, w * r]))
}

/// PyTorch's `F.channel_shuffle(input, groups)` (`nn.ChannelShuffle`): `(N, C, *)` with its channels split
/// into `groups` groups of `C / groups`, then interleaved: channel `j` of group `g` goes to `j·groups + g`.
/// A view, a transpose and one copy, so it runs on the input's device and differentiates.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::channel_shuffle;
/// let x = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], [1, 6, 1])?;
/// assert_eq!(channel_shuffle(&x, 3)?.to_vec::<f32>()?, vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn channel_shuffle(x: &Tensor, groups: usize) -> Result<Tensor> {
    let op = "channel_shuffle";
    let dims = x.shape().dims();
    if dims.len() <= 2 {
        return Err(Error::invalid(
            op,
            format!("channel_shuffle expects input with > 2 dims, but got input with sizes {dims:?}"),
        ));
    }
    if groups == 0 {
        return Err(Error::invalid(
            op,
            "Number of groups to divide channels in must be positive. Value of groups:0",
        ));
    }
    let c = dims[1];
    if !c.is_multiple_of(groups) {
        return Err(Error::invalid(
            op,
            format!("Number of channels must be divisible by groups. Got {c} channels and {groups} groups."),
        ));
    }
    let mut split = vec![dims[0], groups, c / groups];
    split.extend_from_slice(&dims[2..]);
    x.reshape(split)?.transpose(1, 2)?.reshape(dims.to_vec())
}

/// PyTorch's `F.pixel_unshuffle(input, downscale_factor)`: `(*, C, H·r, W·r)` to `(*, C·r², H, W)`.
pub fn pixel_unshuffle(x: &Tensor, downscale_factor: usize) -> Result<Tensor> {
    let (op, r) = ("pixel_unshuffle", downscale_factor);
    let [lead, c, h, w] = spatial_layout(op, x)?;
    if r == 0 {
        return Err(Error::invalid(
            op,
            "pixel_unshuffle expects a positive downscale_factor, but got 0",
        ));
    }
    for (name, size, dim) in [("height", h, -2), ("width", w, -1)] {
        if !size.is_multiple_of(r) {
            return Err(Error::invalid(
                op,
                format!(
                    "pixel_unshuffle expects {name} to be divisible by downscale_factor, but input.size({dim})={size} \
                     is not divisible by {r}"
                ),
            ));
        }
    }
    let (oh, ow) = (h / r, w / r);
    let y = x
        .reshape([lead, c, oh, r, ow, r])?
        .permute(&[0, 1, 3, 5, 2, 4])?
        .reshape([lead, c * r * r, oh, ow])?;
    y.reshape(with_leading(x, &[c * r * r, oh, ow]))
}

/// `[leading, C, H, W]` of an input of rank 3 or more (`leading` the product of the dims before `C`).
fn spatial_layout(op: &'static str, x: &Tensor) -> Result<[usize; 4]> {
    let rank = x.rank();
    if rank < 3 {
        return Err(Error::invalid(
            op,
            format!("{op} expects input to have at least 3 dimensions, but got input with {rank} dimension(s)"),
        ));
    }
    let d = x.shape().dims();
    Ok([d[..rank - 3].iter().product(), d[rank - 3], d[rank - 2], d[rank - 1]])
}

/// `x`'s leading dims (all but the last three) followed by `tail`.
fn with_leading(x: &Tensor, tail: &[usize]) -> Vec<usize> {
    let d = x.shape().dims();
    d[..d.len() - 3].iter().chain(tail).copied().collect()
}
