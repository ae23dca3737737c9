//! Embedding lookup: `index_select` of the table's rows (on the CPU and on devices), whose gradient leaves the
//! padding row out.

use super::index::{IndexSelect, index_type};
use super::run;
use crate::tensor::storage::CpuData;
use crate::{Error, Result, Tensor};

/// PyTorch's `F.embedding(indices, weight)`: the rows of `weight` (`(num, dim)`) at `indices` (`int64` or
/// `int32`, any shape), giving `indices.shape + (dim,)`.
///
/// ```
/// use nn::{Tensor, functional::embedding};
/// let w = Tensor::from_vec(vec![0.0f32, 0.0, 1.0, 1.0, 2.0, 2.0], [3, 2]).unwrap();
/// let i = Tensor::from_vec(vec![2i64, 0], [2]).unwrap();
/// assert_eq!(embedding(&i, &w).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 2.0, 0.0, 0.0]);
/// ```
pub fn embedding(indices: &Tensor, weight: &Tensor) -> Result<Tensor> {
    embedding_padded(indices, weight, None)
}

/// PyTorch's `F.embedding(indices, weight, padding_idx)`: [`embedding`] whose row `padding_idx` gets no
/// gradient (its lookups still return it).
///
/// ```
/// use nn::{Tensor, functional::embedding_padded};
/// let mut w = Tensor::from_vec(vec![0.0f64, 0.0, 1.0, 1.0], [2, 2]).unwrap();
/// w.set_requires_grad(true).unwrap();
/// let i = Tensor::from_vec(vec![1i64, 0, 1], [3]).unwrap();
/// embedding_padded(&i, &w, Some(0)).unwrap().sum_all().unwrap().backward().unwrap();
/// assert_eq!(w.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 0.0, 2.0, 2.0]);
/// ```
pub fn embedding_padded(indices: &Tensor, weight: &Tensor, padding_idx: Option<usize>) -> Result<Tensor> {
    check_lookup(indices, weight)?;
    lookup(indices, weight, padding_idx)
}

/// The lookup of [`embedding_padded`], its arguments checked ([`check_lookup`]).
fn lookup(indices: &Tensor, weight: &Tensor, padding_idx: Option<usize>) -> Result<Tensor> {
    let op = "embedding";
    let lookup = IndexSelect {
        dim: 0,
        skip: padding_idx,
        name: op,
    };
    let rows = run(&lookup, &[weight, &indices.reshape([indices.numel()])?])?;
    let mut shape = indices.shape().to_vec();
    shape.push(weight.shape()[1]);
    rows.reshape(shape)
}

/// `Ok` when `weight` is a 2-d table and `indices` int64 or int32.
fn check_lookup(indices: &Tensor, weight: &Tensor) -> Result<()> {
    Error::check_rank(
        "embedding",
        weight.shape(),
        2,
        "the weight must be (num_embeddings, embedding_dim)",
    )?;
    index_type("embedding", indices).map(|_| ())
}

/// The options of PyTorch's `F.embedding` / `nn.Embedding` beyond the table, with PyTorch's defaults.
///
/// ```
/// use nn::functional::EmbeddingOptions;
/// let o = EmbeddingOptions { max_norm: Some(1.0), ..Default::default() };
/// assert_eq!((o.norm_type, o.scale_grad_by_freq, o.padding_idx), (2.0, false, None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmbeddingOptions {
    /// A row whose lookups get no gradient (the layer also zeroes it at construction). `None`.
    pub padding_idx: Option<usize>,
    /// Before each lookup, every row looked up whose `norm_type`-norm exceeds this is scaled in place to
    /// `max_norm / (norm + 1e-7)` times itself (PyTorch's `embedding_renorm_`, outside autograd). `None`.
    pub max_norm: Option<f64>,
    /// The `p` of `max_norm`'s norm: positive, or infinite for the largest magnitude. 2.
    pub norm_type: f64,
    /// Whether a row's gradient is divided by how many times the batch looks it up. `false`.
    pub scale_grad_by_freq: bool,
    /// PyTorch's sparse gradient. nn has no sparse tensors: the gradient is dense, with the same values (so
    /// every optimizer takes it); the flag is kept for the repr and the port. `false`.
    pub sparse: bool,
}

impl Default for EmbeddingOptions {
    fn default() -> EmbeddingOptions {
        EmbeddingOptions {
            padding_idx: None,
            max_norm: None,
            norm_type: 2.0,
            scale_grad_by_freq: false,
            sparse: false,
        }
    }
}

/// PyTorch's `F.embedding(indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)`:
/// [`embedding_padded`] with the other options of [`EmbeddingOptions`]. With `max_norm`, the rows looked up are
/// renormalised in `weight` itself first (its version counter moves, as PyTorch's does); an index out of range
/// is an error before anything is written.
///
/// ```
/// use nn::{Tensor, functional::{EmbeddingOptions, embedding_with}};
/// let w = Tensor::from_vec(vec![3.0f64, 4.0, 0.3, 0.4], [2, 2]).unwrap();
/// let i = Tensor::from_vec(vec![0i64, 0], [2]).unwrap();
/// let options = EmbeddingOptions { max_norm: Some(1.0), ..Default::default() };
/// let y = embedding_with(&i, &w, &options).unwrap();
/// // Row 0 (norm 5) is scaled to norm 1 in the table itself; row 1 was not looked up.
/// let scale = 1.0 / (5.0 + 1e-7);
/// assert_eq!(w.to_vec::<f64>().unwrap(), vec![3.0 * scale, 4.0 * scale, 0.3, 0.4]);
/// assert_eq!(y.to_vec::<f64>().unwrap()[..2], [3.0 * scale, 4.0 * scale]);
/// ```
pub fn embedding_with(indices: &Tensor, weight: &Tensor, options: &EmbeddingOptions) -> Result<Tensor> {
    let op = "embedding";
    check_lookup(indices, weight)?;
    // Only a gradient scaled by frequency needs the lookups' counts: none in inference.
    let scaled = options.scale_grad_by_freq && weight.requires_grad() && crate::is_grad_enabled();
    let needs_rows = options.max_norm.is_some() || scaled;
    let rows = if needs_rows {
        super::index::indices(op, &indices.cpu()?, 0, weight.shape()[0])?
    } else {
        Vec::new()
    };
    if let Some(max_norm) = options.max_norm {
        if options.norm_type.is_nan() || options.norm_type <= 0.0 {
            return Err(Error::invalid(
                op,
                format!("norm_type is {}: max_norm's norm needs a positive p", options.norm_type),
            ));
        }
        renorm(weight, &rows, max_norm, options.norm_type)?;
    }
    if !scaled {
        return lookup(indices, weight, options.padding_idx);
    }
    let mut out = {
        let _no_grad = crate::no_grad();
        lookup(indices, weight, options.padding_idx)?
    };
    // Each lookup's share of its row's gradient: 1 / (the lookups of that row in the batch); 0 for padding.
    let mut counts = std::collections::HashMap::<usize, usize>::with_capacity(rows.len());
    rows.iter().for_each(|&r| *counts.entry(r).or_default() += 1);
    let shares: Vec<f64> = rows
        .iter()
        .map(|&r| {
            if Some(r) == options.padding_idx {
                0.0
            } else {
                1.0 / counts[&r] as f64
            }
        })
        .collect();
    let (count, dim) = (rows.len(), weight.shape()[1]);
    let shares = Tensor::from_vec(shares, [count, 1])?
        .to_dtype(weight.dtype())?
        .to_device(weight.device())?;
    let flat = indices.reshape([count])?.to_device(weight.device())?;
    let like = weight.detach();
    crate::tensor::autograd::record_function("EmbeddingBackward0", &[weight], &mut out, move |grad, _| {
        let scaled = grad.reshape([count, dim])?.mul(&shares)?;
        Ok(vec![Some(like.zeros_like()?.index_add(0, &flat, &scaled)?)])
    });
    Ok(out)
}

/// PyTorch's `embedding_renorm_`: each distinct row of `rows` whose `p`-norm exceeds `max_norm` is multiplied
/// in place by `max_norm / (norm + 1e-7)`. The norm is accumulated in f64 and rounded to the table's dtype, the
/// scale rounded to it too, as PyTorch computes them. On the CPU only those rows are written; on a device the
/// table is rebuilt from its rows and the renormalised ones (rows kept are multiplied by exactly 1).
fn renorm(weight: &Tensor, rows: &[usize], max_norm: f64, p: f64) -> Result<()> {
    let op = "embedding";
    Error::check_float(op, weight.dtype())?;
    let mut distinct = rows.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let dim = weight.shape()[1];
    let dtype = weight.dtype();
    // A value rounded to the table's dtype, in f64.
    let round = move |v: f64| -> f64 {
        match dtype {
            crate::DType::F64 => v,
            crate::DType::F16 => half::f16::from_f64(v).to_f64(),
            crate::DType::BF16 => half::bf16::from_f64(v).to_f64(),
            _ => v as f32 as f64,
        }
    };
    // The factor for a row's values, or None where its norm is within max_norm.
    let factor = move |values: &mut dyn Iterator<Item = f64>| -> Option<f64> {
        let norm = if p.is_infinite() {
            values.map(f64::abs).fold(0.0, f64::max)
        } else {
            values.map(|v| v.abs().powf(p)).sum::<f64>().powf(1.0 / p)
        };
        let norm = round(norm);
        (norm > max_norm).then(|| round(max_norm / (norm + 1e-7)))
    };
    let _no_grad = crate::no_grad();
    if weight.device().is_cpu() {
        return weight.write_cpu(op, |data| {
            macro_rules! scale_rows {
                ($v:expr, $to:expr, $from:expr) => {
                    for &r in &distinct {
                        let row = &mut $v[r * dim..(r + 1) * dim];
                        if let Some(s) = factor(&mut row.iter().map(|&x| $to(x))) {
                            row.iter_mut().for_each(|x| *x = $from($to(*x) * s));
                        }
                    }
                };
            }
            match data {
                CpuData::F32(v) => scale_rows!(v, |x: f32| x as f64, |y: f64| y as f32),
                CpuData::F64(v) => scale_rows!(v, |x: f64| x, |y: f64| y),
                CpuData::F16(v) => scale_rows!(v, |x: half::f16| x.to_f64(), half::f16::from_f64),
                CpuData::BF16(v) => scale_rows!(v, |x: half::bf16| x.to_f64(), half::bf16::from_f64),
                _ => {}
            }
        });
    }
    if distinct.is_empty() {
        return Ok(());
    }
    let index = Tensor::from_vec(distinct.iter().map(|&r| r as i64).collect::<Vec<_>>(), [distinct.len()])?
        .to_device(weight.device())?;
    let old = weight.index_select(0, &index)?.to_vec_f64()?;
    let (mut new, mut keep) = (old.clone(), vec![1.0f64; weight.shape()[0]]);
    let mut changed = false;
    for (k, &r) in distinct.iter().enumerate() {
        let row = &mut new[k * dim..(k + 1) * dim];
        if let Some(s) = factor(&mut row.iter().copied()) {
            row.iter_mut().for_each(|x| *x = round(*x * s));
            keep[r] = 0.0;
            changed = true;
        } else {
            row.iter_mut().for_each(|x| *x = 0.0);
        }
    }
    if !changed {
        return Ok(());
    }
    let on_device = |values: Vec<f64>, shape: [usize; 2]| -> Result<Tensor> {
        Tensor::from_vec(values, shape)?
            .to_dtype(dtype)?
            .to_device(weight.device())
    };
    let keep = on_device(keep, [weight.shape()[0], 1])?;
    let new = on_device(new, [distinct.len(), dim])?;
    let rebuilt = weight.mul(&keep)?.index_add(0, &index, &new)?;
    weight.copy_(&rebuilt)
}
