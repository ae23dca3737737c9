//! PyTorch's loss functions (`torch.nn.functional.mse_loss`, `cross_entropy`, …), composed of recorded ops, so
//! they run on the input's device and their gradients come from autograd (binary cross-entropy records
//! PyTorch's own gradient formula, which stays finite where the input saturates at 0 or 1).
//!
//! Every function takes PyTorch's arguments in PyTorch's order; `reduction` is a [`Reduction`]. Bad arguments are
//! typed errors: an input and target of different shapes or dtypes, a class index out of range (it names the
//! index and the number of classes), a negative `beta`.
//!
//! Class indices (`cross_entropy`, `nll_loss`) are read on the host to check them and to build the per-class
//! selection, as PyTorch's CPU kernels check them; the selection then runs on the input's device.

use crate::functional::Activation;
use crate::tensor::autograd::{Saved, is_grad_enabled, record_function};
use crate::{DType, Error, Result, Shape, Tensor};

/// How a loss reduces its per-element values: PyTorch's `reduction` argument.
///
/// ```
/// use nn::functional::Reduction;
/// assert_eq!(Reduction::parse("sum").unwrap(), Reduction::Sum);
/// assert_eq!(Reduction::default().as_str(), "mean");
/// assert!(Reduction::parse("average").is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// `'none'`: the per-element losses, in the shape of the input (less the class dimension).
    None,
    /// `'mean'` (PyTorch's default): their mean; a weighted mean for the class-index losses with `weight`.
    #[default]
    Mean,
    /// `'sum'`: their sum.
    Sum,
}

impl Reduction {
    /// `"none"`, `"mean"` or `"sum"`, else an error naming the value.
    pub fn parse(s: &str) -> Result<Reduction> {
        match s {
            "none" => Ok(Reduction::None),
            "mean" => Ok(Reduction::Mean),
            "sum" => Ok(Reduction::Sum),
            other => Err(Error::invalid(
                "reduction",
                format!("{other:?} is not a valid value for reduction (expected 'none', 'mean' or 'sum')"),
            )),
        }
    }

    /// PyTorch's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Mean => "mean",
            Reduction::Sum => "sum",
        }
    }

    /// The per-element `loss` reduced.
    pub(super) fn apply(self, loss: Tensor) -> Result<Tensor> {
        match self {
            Reduction::None => Ok(loss),
            Reduction::Mean => loss.mean_all(),
            Reduction::Sum => loss.sum_all(),
        }
    }
}

/// `Ok` when `input` and `target` are float tensors of one shape and dtype.
fn check_pair(op: &'static str, input: &Tensor, target: &Tensor) -> Result<()> {
    Error::check_float(op, input.dtype())?;
    Error::check_shapes(
        op,
        input.shape(),
        target.shape(),
        "the target's shape must equal the input's",
    )?;
    crate::ops::same_dtype(op, input, &[Some(target)])?;
    Ok(())
}

/// [`check_pair`] and the element weight of the binary cross-entropies.
fn check_weighted_pair(op: &'static str, input: &Tensor, target: &Tensor, weight: Option<&Tensor>) -> Result<()> {
    check_pair(op, input, target)?;
    check_weight(op, input, weight, "weight must broadcast to the input's shape")
}

/// `Ok` when `weight` (if any) is a float tensor of `input`'s dtype whose shape broadcasts to the input's.
fn check_weight(op: &'static str, input: &Tensor, weight: Option<&Tensor>, what: &'static str) -> Result<()> {
    let Some(w) = weight else { return Ok(()) };
    crate::ops::same_dtype(op, input, &[Some(w)])?;
    let (ws, xs) = (w.shape().dims(), input.shape().dims());
    let broadcasts = ws.len() <= xs.len() && ws.iter().rev().zip(xs.iter().rev()).all(|(&a, &b)| a == b || a == 1);
    if !broadcasts {
        return Err(Error::shapes(op, w.shape(), input.shape(), what));
    }
    Ok(())
}

/// `Ok` unless `tensor` requires a gradient while recording: PyTorch's refusal for the arguments a loss has no
/// derivative for (`function`'s `argument`: the class weights of `nll_loss`, the weights of the binary
/// cross-entropies), where a silent missing gradient would be the alternative.
pub(super) fn check_not_differentiated(function: &'static str, argument: &str, tensor: Option<&Tensor>) -> Result<()> {
    match tensor {
        Some(t) if t.requires_grad() && is_grad_enabled() => Err(Error::autograd(
            function,
            format!(
                "The function '{function}' is not differentiable with respect to argument '{argument}'. This input \
                 cannot have requires_grad True."
            ),
        )),
        _ => Ok(()),
    }
}

/// Mean squared error, `(input - target)²` reduced (PyTorch's `mse_loss`).
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Reduction, mse_loss};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
/// let y = Tensor::from_vec(vec![0.0f32, 4.0], [2])?;
/// assert_eq!(mse_loss(&x, &y, Reduction::Mean)?.item()?, 2.5);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn mse_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    check_pair("mse_loss", input, target)?;
    let d = input.sub(target)?;
    reduction.apply(d.mul(&d)?)
}

/// Mean absolute error, `|input - target|` reduced (PyTorch's `l1_loss`).
pub fn l1_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    check_pair("l1_loss", input, target)?;
    reduction.apply(input.sub(target)?.abs()?)
}

/// PyTorch's `smooth_l1_loss`: with `z = |input - target|`, `z²/(2·beta)` below `beta` and `z - beta/2` above;
/// `beta = 0` is the L1 loss, a negative `beta` an error.
pub fn smooth_l1_loss(input: &Tensor, target: &Tensor, reduction: Reduction, beta: f64) -> Result<Tensor> {
    check_pair("smooth_l1_loss", input, target)?;
    if beta.is_nan() || beta < 0.0 {
        return Err(Error::invalid(
            "smooth_l1_loss",
            format!("beta is {beta}: smooth_l1_loss does not support negative values for beta"),
        ));
    }
    if beta == 0.0 {
        return l1_loss(input, target, reduction);
    }
    // With m = min(z, beta): m²/(2·beta) + (z - m) is both branches.
    let mut loss = {
        let _no_grad = crate::no_grad();
        let z = input.sub(target)?.abs()?;
        let m = z.clamp(f64::NEG_INFINITY, beta)?;
        m.mul(&m)?.mul_scalar(0.5 / beta)?.add(&z.sub(&m)?)?
    };
    record_clamped_difference("SmoothL1LossBackward0", input, target, &mut loss, 1.0 / beta, 1.0);
    reduction.apply(loss)
}

/// Records `loss`, an element-wise function of `d = input - target` computed outside autograd, with PyTorch's
/// gradient for the Huber-like losses: `clamp(d·scale, -bound, bound)` for the input, its negation for the target.
/// Written by hand, not differentiated through the forward's `min(|d|, bound)` branches, whose gradients cancel
/// in float (`(m - delta) + delta` loses `m`'s low bits when `delta` is far larger).
fn record_clamped_difference(
    name: &'static str,
    input: &Tensor,
    target: &Tensor,
    loss: &mut Tensor,
    scale: f64,
    bound: f64,
) {
    let (x, t) = (Saved::new(input), Saved::new(target));
    record_function(name, &[input, target], loss, move |grad, needs| {
        let d = x.get(name)?.sub(t.get(name)?)?;
        let g = d.mul_scalar(scale)?.clamp(-bound, bound)?.mul(grad)?;
        Ok(vec![
            needs[0].then(|| g.clone()),
            needs[1].then(|| g.neg()).transpose()?,
        ])
    });
}

/// PyTorch's `huber_loss`: with `z = |input - target|`, `z²/2` up to `delta` and `delta·(z - delta/2)` above;
/// `delta` must be positive.
pub fn huber_loss(input: &Tensor, target: &Tensor, reduction: Reduction, delta: f64) -> Result<Tensor> {
    check_pair("huber_loss", input, target)?;
    if delta.is_nan() || delta <= 0.0 {
        return Err(Error::invalid(
            "huber_loss",
            format!("delta is {delta}: huber_loss does not support non-positive values for delta"),
        ));
    }
    let mut loss = {
        let _no_grad = crate::no_grad();
        let z = input.sub(target)?.abs()?;
        let m = z.clamp(f64::NEG_INFINITY, delta)?;
        m.mul(&m)?.mul_scalar(0.5)?.add(&z.sub(&m)?.mul_scalar(delta)?)?
    };
    record_clamped_difference("HuberLossBackward0", input, target, &mut loss, 1.0, delta);
    reduction.apply(loss)
}

/// The options of [`cross_entropy`] and [`nll_loss`], with PyTorch's defaults.
///
/// ```
/// use nn::functional::{ClassLossOptions, Reduction};
/// let o = ClassLossOptions { label_smoothing: 0.1, ..Default::default() };
/// assert_eq!((o.ignore_index, o.reduction), (-100, Reduction::Mean));
/// ```
#[derive(Clone, Debug)]
pub struct ClassLossOptions {
    /// A weight per class (`C` values), or `None` for 1.
    pub weight: Option<Tensor>,
    /// A class index whose targets contribute nothing (nor to the weighted mean's denominator): -100.
    pub ignore_index: i64,
    /// The reduction: `Mean`.
    pub reduction: Reduction,
    /// In `[0, 1]`: the target becomes `(1 - label_smoothing)` on its class plus `label_smoothing / C` on every
    /// class. 0.
    pub label_smoothing: f64,
}

impl ClassLossOptions {
    /// `label_smoothing`, checked to be in `[0, 1]` for `op`.
    fn smoothing(&self, op: &'static str) -> Result<f64> {
        let eps = self.label_smoothing;
        if (0.0..=1.0).contains(&eps) {
            Ok(eps)
        } else {
            Err(Error::invalid(
                op,
                format!("label_smoothing must be between 0.0 and 1.0. Got: {eps}"),
            ))
        }
    }
}

impl Default for ClassLossOptions {
    fn default() -> ClassLossOptions {
        ClassLossOptions {
            weight: None,
            ignore_index: -100,
            reduction: Reduction::Mean,
            label_smoothing: 0.0,
        }
    }
}

/// `(batch, classes, spatial)` of an input of shape `(C)`, `(N, C)` or `(N, C, d1, …)`, and the shape of its
/// per-sample losses (`()`, `(N)`, `(N, d1, …)`).
fn class_layout(op: &'static str, input: &Tensor) -> Result<(usize, usize, usize, Vec<usize>)> {
    Error::check_float(op, input.dtype())?;
    let dims = input.shape().dims();
    match dims.len() {
        0 => Err(Error::invalid(
            op,
            "the input is a scalar: expected (C), (N, C) or (N, C, d1, ...)",
        )),
        1 => Ok((1, dims[0], 1, vec![])),
        _ => {
            let spatial = dims[2..].iter().product();
            let mut per_sample = vec![dims[0]];
            per_sample.extend_from_slice(&dims[2..]);
            Ok((dims[0], dims[1], spatial, per_sample))
        }
    }
}

/// `Ok` when `weight` (if any) holds one value per class of `input`'s dtype.
fn check_class_weight(op: &'static str, input: &Tensor, weight: Option<&Tensor>, classes: usize) -> Result<()> {
    let Some(w) = weight else { return Ok(()) };
    crate::ops::same_dtype(op, input, &[Some(w)])?;
    if w.shape().dims() != [classes] {
        return Err(Error::shapes(
            op,
            w.shape(),
            &Shape::from([classes]),
            "weight must have one value per class",
        ));
    }
    Ok(())
}

/// The class weights on the host, checked ([`check_class_weight`]): `C` finite-or-not values.
fn class_weights(op: &'static str, input: &Tensor, weight: Option<&Tensor>, classes: usize) -> Result<Vec<f64>> {
    check_class_weight(op, input, weight, classes)?;
    match weight {
        None => Ok(vec![1.0; classes]),
        Some(w) => w.to_vec_f64(),
    }
}

/// The per-element factors of the class-index losses, `K[n, c, s]`, such that the loss of sample `(n, s)` is
/// `-Σ_c K[n, c, s]·log_probs[n, c, s]`, and the weighted mean's denominator `Σ weight[target]` over the targets
/// not ignored. With label smoothing `ε`: `K = (1 - ε)·w[t]·[c = t] + ε/C·w[c]` (PyTorch's
/// `(1 - ε)·nll + ε/C·smooth`, with the same denominator).
fn class_factors(
    op: &'static str,
    input: &Tensor,
    target: &Tensor,
    options: &ClassLossOptions,
) -> Result<(Tensor, f64)> {
    let (batch, classes, spatial, per_sample) = class_layout(op, input)?;
    if !matches!(target.dtype(), DType::I64 | DType::I32) {
        return Err(Error::UnsupportedDType {
            op,
            dtype: target.dtype(),
            hint: "; class indices are int64 (or int32), class probabilities a float tensor of the input's shape",
        });
    }
    if target.shape().dims() != per_sample.as_slice() {
        return Err(Error::shapes(
            op,
            target.shape(),
            &Shape::from(per_sample.as_slice()),
            "the target of class indices must have the input's shape without its class dimension",
        ));
    }
    let eps = options.smoothing(op)?;
    let weights = class_weights(op, input, options.weight.as_ref(), classes)?;
    check_not_differentiated("nll_loss_forward", "weight", options.weight.as_ref())?;
    let targets = target.to_vec_f64()?;
    // The targets not ignored, as (position of their sample's first factor, class).
    let mut kept = Vec::with_capacity(targets.len());
    let mut denominator = 0.0;
    for n in 0..batch {
        for s in 0..spatial {
            let t = targets[n * spatial + s] as i64;
            if t == options.ignore_index {
                continue;
            }
            if t < 0 || t as usize >= classes {
                return Err(Error::invalid(
                    op,
                    format!(
                        "target {t} is out of bounds: the input has {classes} classes (at sample {n}, position {s})"
                    ),
                ));
            }
            denominator += weights[t as usize];
            kept.push((n * classes * spatial + s, t as usize));
        }
    }
    // A weighted mean over targets that all weigh 0 divides by 0 (PyTorch's NaN): each factor of a target not
    // ignored is divided by it here, so that its gradient is PyTorch's `-w / 0` (NaN, or infinite), while an
    // ignored target's stays 0; `select_classes` then divides by nothing more.
    let over = |v: f64| {
        if options.reduction == Reduction::Mean && denominator == 0.0 {
            v / 0.0
        } else {
            v
        }
    };
    let mut factors = vec![0.0f64; batch * classes * spatial];
    for (base, t) in kept {
        factors[base + t * spatial] += over((1.0 - eps) * weights[t]);
        if eps > 0.0 {
            for (c, w) in weights.iter().enumerate() {
                factors[base + c * spatial] += over(eps / classes as f64 * w);
            }
        }
    }
    let factors = Tensor::from_vec(factors, input.shape().clone())?
        .to_dtype(input.dtype())?
        .to_device(input.device())?;
    Ok((factors, denominator))
}

/// `-Σ_c factors·log_probs` per sample, reduced; the mean divides by `denominator`.
fn select_classes(log_probs: &Tensor, factors: &Tensor, denominator: f64, reduction: Reduction) -> Result<Tensor> {
    let class_dim = if log_probs.rank() == 1 { 0 } else { 1 };
    let per_sample = log_probs.mul(factors)?.sum_dims(&[class_dim], false)?.neg()?;
    match reduction {
        // Every target ignored or weighing 0: PyTorch's 0/0, NaN. The factors are already divided by the 0
        // (`class_factors`): zero gradients where every target is ignored, PyTorch's NaN where one weighs 0.
        Reduction::Mean if denominator == 0.0 => per_sample.sum_all()?.add_scalar(f64::NAN),
        Reduction::Mean => per_sample.sum_all()?.mul_scalar(1.0 / denominator),
        other => other.apply(per_sample),
    }
}

/// PyTorch's `nll_loss`: the negative log-likelihood of class indices `target` under log-probabilities `input`
/// (`(C)`, `(N, C)` or `(N, C, d1, …)`), weighted per class; `ignore_index` and `weight` as
/// [`ClassLossOptions`] (label smoothing must be 0).
pub fn nll_loss(input: &Tensor, target: &Tensor, options: &ClassLossOptions) -> Result<Tensor> {
    if options.label_smoothing != 0.0 {
        return Err(Error::invalid(
            "nll_loss",
            "nll_loss has no label smoothing: use cross_entropy",
        ));
    }
    let (factors, denominator) = class_factors("nll_loss", input, target, options)?;
    select_classes(input, &factors, denominator, options.reduction)
}

/// PyTorch's `cross_entropy`: the log-softmax of `input` over its class dimension (dim 1, or 0 for a `(C)`
/// input) against `target`, which is either class indices (an int64 tensor of the input's shape without the
/// class dimension; `ignore_index` and a weighted mean apply) or class probabilities (a float tensor of the
/// input's shape; the mean is over the samples). `weight` and `label_smoothing` apply to both.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{ClassLossOptions, cross_entropy};
/// let logits = Tensor::from_vec(vec![0.0f32, 0.0, 0.0, 0.0], [2, 2])?;
/// let target = Tensor::from_vec(vec![0i64, 1], [2])?;
/// let loss = cross_entropy(&logits, &target, &ClassLossOptions::default())?;
/// assert!((loss.item()? - 2f64.ln()).abs() < 1e-6);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn cross_entropy(input: &Tensor, target: &Tensor, options: &ClassLossOptions) -> Result<Tensor> {
    let op = "cross_entropy";
    let (_, classes, _, _) = class_layout(op, input)?;
    let class_dim = if input.rank() == 1 { 0 } else { 1 };
    if target.is_floating_point() {
        check_pair(op, input, target)?;
        if options.ignore_index >= 0 {
            return Err(Error::invalid(
                op,
                format!(
                    "ignore_index is not supported for floating point target (ignore_index {}: class \
                     probabilities ignore no class; a negative value, such as the default -100, is accepted)",
                    options.ignore_index
                ),
            ));
        }
        let eps = options.smoothing(op)?;
        check_class_weight(op, input, options.weight.as_ref(), classes)?;
        let log_probs = input.log_softmax(class_dim as isize)?;
        let mut target = target.clone();
        if eps > 0.0 {
            target = target.affine(1.0 - eps, eps / classes as f64)?;
        }
        let mut product = log_probs.mul(&target)?;
        if let Some(weight) = &options.weight {
            // The weight itself, broadcast along the class dimension: its gradient is PyTorch's here.
            let mut shape = vec![1; input.rank()];
            shape[class_dim] = classes;
            product = product.mul(&weight.to_device(input.device())?.reshape(shape)?)?;
        }
        let per_sample = product.sum_dims(&[class_dim as isize], false)?.neg()?;
        return match options.reduction {
            // PyTorch divides by numel / C, the count of samples (NaN for none).
            Reduction::Mean => per_sample.sum_all()?.mul_scalar(classes as f64 / input.numel() as f64),
            other => other.apply(per_sample),
        };
    }
    let (factors, denominator) = class_factors(op, input, target, options)?;
    select_classes(
        &input.log_softmax(class_dim as isize)?,
        &factors,
        denominator,
        options.reduction,
    )
}

/// PyTorch's `binary_cross_entropy`: `-weight·(t·log x + (1 - t)·log(1 - x))` for probabilities `input` in
/// `[0, 1]`, each log clamped at -100 as PyTorch does. Its gradients are PyTorch's: for the input
/// `weight·(x - t) / max(x·(1 - x), 1e-12)`, finite where `x` is exactly 0 or 1; for the target
/// `-weight·logit(x)`, unclamped (infinite where `x` is 0 or 1). On the CPU an input outside `[0, 1]` is an
/// error (PyTorch's CPU check); `weight` may not require a gradient (PyTorch has none for it).
///
/// ```
/// use nn::Tensor;
/// use nn::functional::{Reduction, binary_cross_entropy};
/// let x = Tensor::from_vec(vec![0.5f32, 0.5], [2])?.requires_grad_(true)?;
/// let t = Tensor::from_vec(vec![0.25f32, 1.0], [2])?.requires_grad_(true)?;
/// binary_cross_entropy(&x, &t, None, Reduction::Sum)?.backward()?;
/// assert_eq!(x.grad().unwrap().to_vec::<f32>()?, [1.0, -2.0]);
/// assert_eq!(t.grad().unwrap().to_vec::<f32>()?, [0.0, 0.0]); // logit(0.5) = 0
/// # Ok::<(), nn::Error>(())
/// ```
pub fn binary_cross_entropy(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "binary_cross_entropy";
    check_weighted_pair(op, input, target, weight)?;
    check_not_differentiated(op, "weight", weight)?;
    if input.device().is_cpu() {
        let values = input.to_vec_f64()?;
        if let Some(bad) = values.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(Error::invalid(
                op,
                format!("all elements of input should be between 0 and 1 (found {bad})"),
            ));
        }
    }
    let mut loss = {
        let _no_grad = crate::no_grad();
        let log_x = input.log()?.clamp(-100.0, f64::INFINITY)?;
        let log_1mx = input.affine(-1.0, 1.0)?.log()?.clamp(-100.0, f64::INFINITY)?;
        // -(t·log x + (1 - t)·log(1 - x)) = -(t·(log x - log(1 - x)) + log(1 - x))
        let loss = target.mul(&log_x.sub(&log_1mx)?)?.add(&log_1mx)?.neg()?;
        match weight {
            Some(w) => loss.mul(w)?,
            None => loss,
        }
    };
    let (x, t, w) = (Saved::new(input), Saved::new(target), weight.map(Saved::new));
    record_function(
        "BinaryCrossEntropyBackward0",
        &[input, target],
        &mut loss,
        move |grad, needs| {
            let x = x.get(op)?;
            let weighted = |g: Tensor| -> Result<Tensor> {
                match &w {
                    Some(w) => g.mul(w.get(op)?),
                    None => Ok(g),
                }
            };
            let grad_input = if needs[0] {
                let denominator = x.mul(&x.affine(-1.0, 1.0)?)?.clamp(1e-12, f64::INFINITY)?;
                Some(weighted(grad.mul(&x.sub(t.get(op)?)?)?.div(&denominator)?)?)
            } else {
                None
            };
            let grad_target = if needs[1] {
                // PyTorch's binary_cross_entropy_target_backward: -logit(x) = -log(x / (1 - x)).
                let logit = x.div(&x.affine(-1.0, 1.0)?)?.log()?;
                Some(weighted(grad.mul(&logit)?.neg()?)?)
            } else {
                None
            };
            Ok(vec![grad_input, grad_target])
        },
    );
    reduction.apply(loss)
}

/// PyTorch's `binary_cross_entropy_with_logits`: `(1 - t)·x - (1 + (pos_weight - 1)·t)·log σ(x)`, times
/// `weight`, stable for any logit. `pos_weight` (one value per class, broadcast along the last dimension) weighs
/// the positive targets.
pub fn binary_cross_entropy_with_logits(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    pos_weight: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "binary_cross_entropy_with_logits";
    check_weighted_pair(op, input, target, weight)?;
    check_weight(op, input, pos_weight, "pos_weight must broadcast to the input's shape")?;
    check_not_differentiated(op, "weight", weight)?;
    check_not_differentiated(op, "pos_weight", pos_weight)?;
    let log_sigmoid = Activation::LogSigmoid.forward(input)?;
    let weighted_log_sigmoid = match pos_weight {
        Some(p) => p.add_scalar(-1.0)?.mul(target)?.add_scalar(1.0)?.mul(&log_sigmoid)?,
        None => log_sigmoid,
    };
    let mut loss = target.affine(-1.0, 1.0)?.mul(input)?.sub(&weighted_log_sigmoid)?;
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduction.apply(loss)
}

/// The reductions of [`kl_div`]: PyTorch's four, `batchmean` the sum divided by the batch size (the size of
/// dimension 0), the one that gives the KL divergence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KlReduction {
    /// `'none'`.
    None,
    /// `'mean'` (PyTorch's default, which warns that it is not the KL divergence): over every element.
    #[default]
    Mean,
    /// `'sum'`.
    Sum,
    /// `'batchmean'`: the sum over the batch size.
    BatchMean,
}

impl KlReduction {
    /// `"none"`, `"mean"`, `"sum"` or `"batchmean"`.
    pub fn parse(s: &str) -> Result<KlReduction> {
        match s {
            "batchmean" => Ok(KlReduction::BatchMean),
            other => Ok(match Reduction::parse(other)? {
                Reduction::None => KlReduction::None,
                Reduction::Mean => KlReduction::Mean,
                Reduction::Sum => KlReduction::Sum,
            }),
        }
    }

    /// PyTorch's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            KlReduction::None => "none",
            KlReduction::Mean => "mean",
            KlReduction::Sum => "sum",
            KlReduction::BatchMean => "batchmean",
        }
    }
}

/// PyTorch's `kl_div(input, target)`: with log-probabilities `input`, `target·(log target - input)` (0 where the
/// target is 0), or `exp(target)·(target - input)` with `log_target`. (A negative target, which is no
/// probability, gives a finite value here where PyTorch's `xlogy` gives NaN.)
pub fn kl_div(input: &Tensor, target: &Tensor, reduction: KlReduction, log_target: bool) -> Result<Tensor> {
    check_pair("kl_div", input, target)?;
    let loss = if log_target {
        target.exp()?.mul(&target.sub(input)?)?
    } else {
        // xlogy(t, t) - t·input: log of the target raised to the smallest normal number, so a zero target
        // gives 0·log(tiny) = 0 as xlogy does.
        let tiny = match input.dtype() {
            DType::F64 => f64::MIN_POSITIVE,
            DType::F16 => 6.103_515_625e-5,
            _ => f32::MIN_POSITIVE as f64,
        };
        let mut xlogy = {
            let _no_grad = crate::no_grad();
            target.mul(&target.clamp(tiny, f64::INFINITY)?.log()?)?
        };
        let t = Saved::new(target);
        record_function("XlogyBackward0", &[target], &mut xlogy, move |grad, _| {
            // PyTorch's xlogy backward for xlogy(t, t): grad·log t + grad·t/t, NaN where t is 0 (the
            // derivative of t·log t there is -inf).
            let t = t.get("kl_div")?;
            Ok(vec![Some(grad.mul(&t.log()?)?.add(&grad.mul(&t.div(t)?)?)?)])
        });
        xlogy.sub(&target.mul(input)?)?
    };
    match reduction {
        KlReduction::None => Ok(loss),
        KlReduction::Mean => loss.mean_all(),
        KlReduction::Sum => loss.sum_all(),
        KlReduction::BatchMean => {
            let batch = if input.rank() == 0 { 1 } else { input.shape().dims()[0] };
            loss.sum_all()?.mul_scalar(1.0 / batch as f64)
        }
    }
}
