//! PyTorch's margin, ranking and embedding losses (`margin_ranking_loss`, `hinge_embedding_loss`,
//! `soft_margin_loss`, `multilabel_soft_margin_loss`, `multilabel_margin_loss`, `multi_margin_loss`,
//! `cosine_embedding_loss`, `triplet_margin_loss`, `triplet_margin_with_distance_loss`), composed of recorded
//! ops: they run on the input's device and their gradients come from autograd.
//!
//! Where PyTorch selects by the target (`where(target == 1, …)`, class indices), the target is read on the host
//! and the selection is a product by a mask of zeros and ones: a non-finite input where the target masks it out
//! gives NaN where PyTorch gives 0.

use super::distance::pairwise_distance;
use super::loss::{Reduction, check_not_differentiated};
use crate::functional::{Activation, relu};
use crate::{DType, Error, Result, Tensor};

/// A tensor of `target`'s shape, in `like`'s dtype and on its device: 1 where `keep(target)`, else 0.
fn mask(target: &Tensor, like: &Tensor, keep: impl Fn(f64) -> bool) -> Result<Tensor> {
    let values: Vec<f64> = target
        .to_vec_f64()?
        .into_iter()
        .map(|t| if keep(t) { 1.0 } else { 0.0 })
        .collect();
    Tensor::from_vec(values, target.shape().clone())?
        .to_dtype(like.dtype())?
        .to_device(like.device())
}

/// PyTorch's `F.margin_ranking_loss(x1, x2, target, margin=0, reduction='mean')`:
/// `max(0, -target · (x1 - x2) + margin)`.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Reduction, margin_ranking_loss};
/// let a = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
/// let b = Tensor::from_vec(vec![2.0f32, 0.0], [2])?;
/// let y = Tensor::from_vec(vec![1.0f32, 1.0], [2])?;
/// assert_eq!(margin_ranking_loss(&a, &b, &y, 0.5, Reduction::Sum)?.item()?, 1.5);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn margin_ranking_loss(
    x1: &Tensor,
    x2: &Tensor,
    target: &Tensor,
    margin: f64,
    reduction: Reduction,
) -> Result<Tensor> {
    if x1.rank() != x2.rank() || x1.rank() != target.rank() {
        return Err(Error::invalid(
            "margin_ranking_loss",
            format!(
                "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: \
                 torch.Size({}), input2: torch.Size({}), target: torch.Size({})",
                x1.shape(),
                x2.shape(),
                target.shape()
            ),
        ));
    }
    let loss = target.neg()?.mul(&x1.sub(x2)?)?.add_scalar(margin)?;
    reduction.apply(loss.clamp(0.0, f64::INFINITY)?)
}

/// PyTorch's `F.hinge_embedding_loss(input, target, margin=1.0, reduction='mean')`: `x` where the target is
/// not -1, plus `max(0, margin - x)` where it is not 1 (a target of ±1 takes one of them).
pub fn hinge_embedding_loss(input: &Tensor, target: &Tensor, margin: f64, reduction: Reduction) -> Result<Tensor> {
    let margin_part = input
        .affine(-1.0, margin)?
        .clamp(0.0, f64::INFINITY)?
        .mul(&mask(target, input, |t| t != 1.0)?)?;
    let self_part = input.mul(&mask(target, input, |t| t != -1.0)?)?;
    reduction.apply(margin_part.add(&self_part)?)
}

/// PyTorch's `F.soft_margin_loss(input, target, reduction='mean')`: `log(1 + exp(-target · x))`.
///
/// As PyTorch, it refuses a target that requires a gradient.
pub fn soft_margin_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    check_not_differentiated("soft_margin_loss", "target", Some(target))?;
    let z = input.neg()?.mul(target)?;
    reduction.apply(z.exp()?.add_scalar(1.0)?.log()?)
}

/// PyTorch's `F.multilabel_soft_margin_loss(input, target, weight=None, reduction='mean')`: the mean over the
/// classes (the last dimension) of `-(t · log σ(x) + (1 - t) · log σ(-x))`, times `weight`.
pub fn multilabel_soft_margin_loss(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    let log_sigmoid = |x: &Tensor| Activation::LogSigmoid.forward(x);
    let positive = target.mul(&log_sigmoid(input)?)?;
    let negative = target.affine(-1.0, 1.0)?.mul(&log_sigmoid(&input.neg()?)?)?;
    let mut loss = positive.add(&negative)?.neg()?;
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    let classes = input.shape().dims().last().copied().unwrap_or(1);
    let loss = loss.sum_dims(&[-1], false)?.div_scalar(classes as f64)?;
    reduction.apply(loss)
}

/// The values of an int64 `target`, else PyTorch's refusal of its dtype.
fn long_values(op: &'static str, target: &Tensor) -> Result<Vec<i64>> {
    if target.dtype() != DType::I64 {
        return Err(Error::invalid(
            op,
            format!(
                "expected scalar type Long but found {}",
                target.dtype().scalar_type_name()
            ),
        ));
    }
    target.to_vec::<i64>()
}

/// `(N, C)` of a `(C)` (N = 1) or `(N, C)` input, or of a scalar (1, 1): PyTorch's rule for the class-index
/// margin losses.
fn rows_and_classes(op: &'static str, input: &Tensor) -> Result<(usize, usize)> {
    match input.shape().dims() {
        [c] if *c > 0 => Ok((1, *c)),
        [n, c] if *c > 0 => Ok((*n, *c)),
        [] => Ok((1, 1)),
        _ => Err(Error::invalid(
            op,
            format!(
                "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
                input.shape()
            ),
        )),
    }
}

/// The class indices of a `(C)` or `(N, C)` input's `(N)` (or scalar) target, checked against `classes`:
/// PyTorch's `multi_margin_loss` rules.
fn class_targets(op: &'static str, input: &Tensor, target: &Tensor) -> Result<(usize, usize, Vec<usize>)> {
    let dims = input.shape().dims();
    let (n, classes) = rows_and_classes(op, input)?;
    if target.numel() != n || (dims.len() == 2 && target.rank() != 1) {
        return Err(Error::invalid(
            op,
            format!("inconsistent target size, expected {n} but got {}", target.shape()),
        ));
    }
    let indices = long_values(op, target)?;
    let mut classes_of = Vec::with_capacity(n);
    for &t in &indices {
        if t < 0 || t as usize >= classes {
            return Err(Error::invalid(op, "target out of range"));
        }
        classes_of.push(t as usize);
    }
    Ok((n, classes, classes_of))
}

/// PyTorch's `F.multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction='mean')`: for each sample
/// of a `(N, C)` or `(C)` input and class index `y`, `Σ_{i ≠ y} max(0, margin - x[y] + x[i])^p · weight[y] / C`;
/// `p` is 1 or 2; as PyTorch, it refuses a `weight` that requires a gradient.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Reduction, multi_margin_loss};
/// let x = Tensor::from_vec(vec![0.1f64, 0.2, 0.4, 0.8], [1, 4])?;
/// let y = Tensor::from_vec(vec![3i64], [1])?;
/// let loss = multi_margin_loss(&x, &y, 1, 1.0, None, Reduction::Mean)?.item()?;
/// assert!((loss - 0.325).abs() < 1e-12); // PyTorch's documented example
/// # Ok::<(), nn::Error>(())
/// ```
pub fn multi_margin_loss(
    input: &Tensor,
    target: &Tensor,
    p: u32,
    margin: f64,
    weight: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "multi_margin_loss";
    if p != 1 && p != 2 {
        return Err(Error::invalid(op, "only p == 1 and p == 2 supported"));
    }
    check_not_differentiated(op, "weight", weight)?;
    let (n, classes, targets) = class_targets(op, input, target)?;
    if let Some(w) = weight
        && (w.rank() != 1 || w.numel() != classes)
    {
        return Err(Error::invalid(
            op,
            format!("inconsistent weight size, expected {classes} but got {}", w.shape()),
        ));
    }
    let x = input.reshape([n, classes])?;
    let mut one_hot = vec![0.0; n * classes];
    for (i, &t) in targets.iter().enumerate() {
        one_hot[i * classes + t] = 1.0;
    }
    let one_hot = Tensor::from_vec(one_hot, [n, classes])?
        .to_dtype(input.dtype())?
        .to_device(input.device())?;
    let x_target = x.mul(&one_hot)?.sum_dims(&[1], true)?;
    let z = relu(&x.sub(&x_target)?.add_scalar(margin)?)?;
    let mut h = if p == 2 { z.mul(&z)? } else { z };
    h = h.mul(&one_hot.affine(-1.0, 1.0)?)?;
    if let Some(w) = weight {
        let index = Tensor::from_vec(targets.iter().map(|&t| t as i64).collect(), [n])?.to_device(w.device())?;
        h = h.mul(&w.index_select(0, &index)?.unsqueeze(1)?)?;
    }
    let loss = h.sum_dims(&[1], false)?.div_scalar(classes as f64)?;
    let loss = if input.rank() == 2 { loss } else { loss.reshape([])? };
    reduction.apply(loss)
}

/// PyTorch's `F.multilabel_margin_loss(input, target, reduction='mean')`: each sample's target holds class
/// indices up to the first -1; the loss is `Σ_j Σ_{i not a target} max(0, 1 - (x[y_j] - x[i])) / C` over its
/// targets `y_j`, for a `(C)` or `(N, C)` input and an int64 target of its shape.
pub fn multilabel_margin_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    let op = "multilabel_margin_loss";
    let (n, classes) = rows_and_classes(op, input)?;
    if target.shape() != input.shape() {
        return Err(Error::invalid(
            op,
            format!(
                "inconsistent target size: {} for input of size: {}",
                target.shape(),
                input.shape()
            ),
        ));
    }
    let indices = long_values(op, target)?;
    // weights[n][j][i]: how often class j is among sample n's targets, where class i is not one.
    let mut weights = vec![0.0; n * classes * classes];
    for (s, row) in indices.chunks(classes).enumerate() {
        let mut count = vec![0.0; classes];
        for &t in row {
            if t < 0 {
                break;
            }
            if t as usize >= classes {
                return Err(Error::invalid(op, "argument #2 'target' is out of range"));
            }
            count[t as usize] += 1.0;
        }
        for j in 0..classes {
            for i in 0..classes {
                if count[i] == 0.0 {
                    weights[(s * classes + j) * classes + i] = count[j];
                }
            }
        }
    }
    let weights = Tensor::from_vec(weights, [n, classes, classes])?
        .to_dtype(input.dtype())?
        .to_device(input.device())?;
    let x = input.reshape([n, classes])?;
    // 1 - x[j] + x[i], (n, j, i).
    let z = x.unsqueeze(1)?.sub(&x.unsqueeze(2)?)?.add_scalar(1.0)?;
    let loss = relu(&z)?
        .mul(&weights)?
        .sum_dims(&[1, 2], false)?
        .div_scalar(classes as f64)?;
    let loss = if input.rank() == 2 { loss } else { loss.reshape([])? };
    reduction.apply(loss)
}

/// PyTorch's `F.cosine_embedding_loss(x1, x2, target, margin=0, reduction='mean')`: `1 - cos(x1, x2)` where the
/// target is 1, `max(0, cos(x1, x2) - margin)` where it is -1 (0 elsewhere), for `(N, D)` inputs and an `(N)`
/// target, or `(D)` inputs and a scalar target.
pub fn cosine_embedding_loss(
    x1: &Tensor,
    x2: &Tensor,
    target: &Tensor,
    margin: f64,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "cosine_embedding_loss";
    let dim = match target.rank() {
        0 | 1 => target.rank(),
        _ => {
            return Err(Error::invalid(
                op,
                "0D or 1D target tensor expected, multi-target not supported",
            ));
        }
    };
    if x1.rank() != dim + 1 || x2.rank() != dim + 1 {
        return Err(Error::invalid(
            op,
            format!(
                "{dim}D target tensor expects {}D input tensors, but found inputs with sizes {} and {}.",
                dim + 1,
                x1.shape(),
                x2.shape()
            ),
        ));
    }
    const EPSILON: f64 = 1e-12;
    let d = dim as isize;
    let prod = x1.mul(x2)?.sum_dims(&[d], false)?;
    let mag1 = x1.mul(x1)?.sum_dims(&[d], false)?.add_scalar(EPSILON)?;
    let mag2 = x2.mul(x2)?.sum_dims(&[d], false)?.add_scalar(EPSILON)?;
    let cos = prod.div(&mag1.mul(&mag2)?.sqrt()?)?;
    let positive = cos.affine(-1.0, 1.0)?.mul(&mask(target, &cos, |t| t == 1.0)?)?;
    let negative = cos
        .add_scalar(-margin)?
        .clamp(0.0, f64::INFINITY)?
        .mul(&mask(target, &cos, |t| t == -1.0)?)?;
    reduction.apply(positive.add(&negative)?)
}

/// A distance between two batches of embeddings: [`triplet_margin_with_distance_loss`]'s `distance_function`.
pub type Distance<'a> = &'a dyn Fn(&Tensor, &Tensor) -> Result<Tensor>;

/// Fails unless the triplet's tensors have one rank (PyTorch's sentence).
fn check_triplet(op: &'static str, anchor: &Tensor, positive: &Tensor, negative: &Tensor) -> Result<()> {
    let (a, p, n) = (anchor.rank(), positive.rank(), negative.rank());
    if a == p && p == n {
        return Ok(());
    }
    Err(Error::invalid(
        op,
        format!(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but \
             got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        ),
    ))
}

/// `max(0, margin + d(a, p) - d(a, n))`, `d(a, n)` the smaller of it and `d(p, n)` with `swap`.
fn triplet(
    (anchor, positive, negative): (&Tensor, &Tensor, &Tensor),
    distance: Distance<'_>,
    margin: f64,
    swap: bool,
    reduction: Reduction,
) -> Result<Tensor> {
    let d_pos = distance(anchor, positive)?;
    let mut d_neg = distance(anchor, negative)?;
    if swap {
        let d_swap = distance(positive, negative)?;
        d_neg = Tensor::stack(&[&d_neg, &d_swap], 0)?.min_dim(0, false)?.0;
    }
    let loss = d_pos.sub(&d_neg)?.add_scalar(margin)?.clamp(0.0, f64::INFINITY)?;
    reduction.apply(loss)
}

/// PyTorch's `F.triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
/// reduction='mean')`: `max(0, margin + d(a, p) - d(a, n))` with `d` the [`pairwise_distance`] of norm `p`.
#[allow(clippy::too_many_arguments)]
pub fn triplet_margin_loss(
    anchor: &Tensor,
    positive: &Tensor,
    negative: &Tensor,
    margin: f64,
    p: f64,
    eps: f64,
    swap: bool,
    reduction: Reduction,
) -> Result<Tensor> {
    check_triplet("triplet_margin_loss", anchor, positive, negative)?;
    let distance = |a: &Tensor, b: &Tensor| pairwise_distance(a, b, p, eps, false);
    triplet((anchor, positive, negative), &distance, margin, swap, reduction)
}

/// PyTorch's `F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=None,
/// margin=1.0, swap=False, reduction='mean')`: [`triplet_margin_loss`] with any distance (`None`:
/// [`pairwise_distance`] with its defaults); `margin` must be positive.
pub fn triplet_margin_with_distance_loss(
    anchor: &Tensor,
    positive: &Tensor,
    negative: &Tensor,
    distance_function: Option<Distance<'_>>,
    margin: f64,
    swap: bool,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "triplet_margin_with_distance_loss";
    if margin <= 0.0 {
        return Err(Error::invalid(
            op,
            format!("margin must be greater than 0, got {}", crate::error::py_float(margin)),
        ));
    }
    check_triplet(op, anchor, positive, negative)?;
    let default = |a: &Tensor, b: &Tensor| pairwise_distance(a, b, 2.0, 1e-6, false);
    let distance = distance_function.unwrap_or(&default);
    triplet((anchor, positive, negative), distance, margin, swap, reduction)
}
