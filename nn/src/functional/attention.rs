//! Attention: PyTorch's `F.scaled_dot_product_attention`, and the masks attention layers pass it.
//!
//! A mask becomes an additive bias in the query's dtype, built on the host from the mask's values: `0` where a
//! position is attended, `-inf` where not, a float mask's own values. A row of the bias that masks every key
//! gives zeros, as PyTorch 2.5.1's `_safe_softmax` does (not NaN): its bias is set to 0 and its weights are
//! multiplied by 0, so its gradient is 0 too.

use crate::ops::elementwise::broadcast_shape;
use crate::{DType, Error, Result, Shape, Tensor};

const OP: &str = "scaled_dot_product_attention";

/// An additive attention bias and, where it masks whole rows, the `0`/`1` factor of each row's weights.
pub(crate) struct AttentionBias {
    /// Added to the scores: broadcasts to `(..., L, S)`.
    pub bias: Option<Tensor>,
    /// `(..., L, 1)`: 0 for rows every key of which is masked, 1 elsewhere; absent when there is none.
    pub keep: Option<Tensor>,
}

impl AttentionBias {
    /// The bias of `mask` (booleans: `true` attends, PyTorch's `scaled_dot_product_attention` convention; or
    /// floats, added) and of a causal mask (`is_causal`: key `j` is masked for query `i < j`) for scores of
    /// `(L, S)`, in `dtype` on `like`'s device. A float mask that requires a gradient is added as it is
    /// (differentiable), its fully masked rows then not zeroed.
    pub(crate) fn new(mask: Option<&Tensor>, is_causal: bool, l: usize, s: usize, like: &Tensor) -> Result<Self> {
        let dtype = like.dtype();
        if let Some(m) = mask
            && m.requires_grad()
            && m.is_floating_point()
        {
            let m = if m.dtype() == dtype {
                m.clone()
            } else {
                m.to_dtype(dtype)?
            };
            let bias = match is_causal {
                true => m.add(&Self::new(None, true, l, s, like)?.bias.expect("a causal bias"))?,
                false => m,
            };
            return Ok(AttentionBias {
                bias: Some(bias),
                keep: None,
            });
        }
        let scores = Shape::from([l, s]);
        let shape = match mask {
            Some(m) => broadcast_shape(OP, m.shape(), &scores)?,
            None if is_causal => scores,
            None => {
                return Ok(AttentionBias { bias: None, keep: None });
            }
        };
        let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        let mut values = match mask {
            Some(m) => {
                let wide = m.cpu()?.to_dtype(DType::F64)?.expand(&dims)?.to_vec::<f64>()?;
                match m.dtype() {
                    DType::Bool => wide
                        .into_iter()
                        .map(|keep| if keep != 0.0 { 0.0 } else { f64::NEG_INFINITY })
                        .collect(),
                    _ => wide,
                }
            }
            None => vec![0.0; shape.numel()],
        };
        if is_causal {
            for (k, v) in values.iter_mut().enumerate() {
                let (i, j) = ((k / s) % l, k % s);
                if j > i {
                    *v = f64::NEG_INFINITY;
                }
            }
        }
        let mut keep = vec![1.0; values.len() / s.max(1)];
        let mut any_masked_row = false;
        if s > 0 {
            for (row, kept) in values.chunks_mut(s).zip(keep.iter_mut()) {
                if row.iter().all(|&v| v == f64::NEG_INFINITY) {
                    row.fill(0.0);
                    *kept = 0.0;
                    any_masked_row = true;
                }
            }
        }
        let on = |values: Vec<f64>, shape: Shape| -> Result<Tensor> {
            Tensor::from_vec(values, shape)?
                .to_dtype(dtype)?
                .to_device(like.device())
        };
        let mut keep_shape = shape.to_vec();
        *keep_shape.last_mut().expect("a shape of rank 2 or more") = 1;
        Ok(AttentionBias {
            keep: match any_masked_row {
                true => Some(on(keep, Shape::from(keep_shape))?),
                false => None,
            },
            bias: Some(on(values, shape)?),
        })
    }
}

/// Refuses a mask that is neither boolean nor float nor of the query's dtype, with PyTorch's sentence.
fn check_mask(mask: &Tensor, query: &Tensor) -> Result<()> {
    let dtype = mask.dtype();
    if dtype == DType::Bool || dtype.is_floating_point() {
        return Ok(());
    }
    Err(Error::invalid(
        OP,
        format!(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and  \
             query.dtype: {} instead.",
            DType::cpp_name(dtype),
            DType::cpp_name(query.dtype())
        ),
    ))
}

/// The query's, key's and value's checks: ranks, one float dtype, the key's and value's lengths and the
/// query's and key's embedding sizes, batch dimensions that broadcast (their shape is returned).
fn check_inputs(q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Shape> {
    if q.rank() < 2 || k.rank() < 2 || v.rank() < 2 {
        return Err(Error::invalid(
            OP,
            format!(
                "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: {} key.dim: \
                 {} and value.dim: {} instead.",
                q.rank(),
                k.rank(),
                v.rank()
            ),
        ));
    }
    if q.dtype() != k.dtype() || q.dtype() != v.dtype() {
        return Err(Error::invalid(
            OP,
            format!(
                "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and \
                 value.dtype: {} instead.",
                DType::cpp_name(q.dtype()),
                DType::cpp_name(k.dtype()),
                DType::cpp_name(v.dtype())
            ),
        ));
    }
    Error::check_float(OP, q.dtype())?;
    let last = |t: &Tensor, back: usize| t.shape()[t.rank() - back];
    if last(q, 1) != last(k, 1) {
        return Err(Error::shapes(
            OP,
            q.shape(),
            k.shape(),
            "query (..., L, E) and key (..., S, E) with one embedding size E",
        ));
    }
    if last(k, 2) != last(v, 2) {
        return Err(Error::shapes(
            OP,
            k.shape(),
            v.shape(),
            "key (..., S, E) and value (..., S, Ev) with one length S",
        ));
    }
    let batch = |t: &Tensor| Shape::from(&t.shape()[..t.rank() - 2]);
    let qk = broadcast_shape(OP, &batch(q), &batch(k))?;
    broadcast_shape(OP, &qk, &batch(v))
}

/// `t` `(batch..., n, m)` with its batch dimensions expanded to `batch` and flattened: `(B, n, m)`.
fn batched(t: &Tensor, batch: &Shape) -> Result<Tensor> {
    let r = t.rank();
    let (n, m) = (t.shape()[r - 2], t.shape()[r - 1]);
    let own = &t.shape()[..r - 2];
    let t = if own == &batch[..] {
        t.clone()
    } else {
        let mut sizes: Vec<isize> = batch.iter().map(|&d| d as isize).collect();
        sizes.extend([n as isize, m as isize]);
        t.expand(&sizes)?
    };
    t.reshape([batch.numel(), n, m])
}

/// Attention weights `softmax(scores + bias)` (rows that mask every key zeroed) times `value`, with dropout
/// `dropout_p` on the weights: the shared core of [`scaled_dot_product_attention`] and the attention layers.
/// `scores` are `(..., L, S)`, `value` `(B, S, Ev)` with `B` the scores' batch.
pub(crate) fn attend(scores: Tensor, bias: &AttentionBias, value: &Tensor, dropout_p: f64) -> Result<Tensor> {
    let scores = match &bias.bias {
        Some(b) => scores.add(b)?,
        None => scores,
    };
    let mut weights = scores.softmax(-1)?;
    if let Some(keep) = &bias.keep {
        weights = weights.mul(keep)?;
    }
    if dropout_p > 0.0 {
        weights = crate::ops::dropout(&weights, dropout_p, true)?;
    }
    let r = weights.rank();
    let (l, s) = (weights.shape()[r - 2], weights.shape()[r - 1]);
    weights.reshape([value.shape()[0], l, s])?.matmul(value)
}

/// PyTorch's `F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
/// is_causal=False, scale=None)`: `softmax(query @ keyᵀ · scale + bias) @ value`, `scale` by default
/// `1/sqrt(E)`, over query `(..., L, E)`, key `(..., S, E)` and value `(..., S, Ev)` whose batch dimensions
/// broadcast; the result is `(..., L, Ev)`.
///
/// `attn_mask` broadcasts to `(..., L, S)`: booleans (`true`: the query attends to the key) or floats added to
/// the scores. `is_causal` masks key `j` for query `i < j`; it is refused together with `attn_mask`, as
/// PyTorch's documentation says. A query whose every key is masked gets zeros, as PyTorch's. Dropout applies
/// to the weights whenever `dropout_p > 0`.
///
/// ```
/// use nn::{Tensor, functional::scaled_dot_product_attention};
/// let q = Tensor::from_vec(vec![1.0f32, 0.0], [1, 1, 2])?;
/// let k = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], [1, 2, 2])?;
/// let v = Tensor::from_vec(vec![1.0f32, 3.0], [1, 2, 1])?;
/// let out = scaled_dot_product_attention(&q, &k, &v, None, 0.0, false, Some(0.0))?;
/// assert_eq!(out.to_vec::<f32>()?, vec![2.0]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn scaled_dot_product_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
) -> Result<Tensor> {
    let batch = check_inputs(query, key, value)?;
    if let Some(m) = attn_mask {
        check_mask(m, query)?;
        if is_causal {
            return Err(Error::invalid(
                OP,
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
            ));
        }
    }
    if !(0.0..=1.0).contains(&dropout_p) {
        return Err(Error::invalid(
            OP,
            format!("dropout probability has to be between 0 and 1, but got {dropout_p}"),
        ));
    }
    let r = query.rank();
    let (l, e) = (query.shape()[r - 2], query.shape()[r - 1]);
    let s = key.shape()[key.rank() - 2];
    let ev = value.shape()[value.rank() - 1];
    let scale = scale.unwrap_or(1.0 / (e as f64).sqrt());
    let q = batched(query, &batch)?.mul_scalar(scale)?;
    let k = batched(key, &batch)?;
    let v = batched(value, &batch)?;
    let mut scores_shape = batch.to_vec();
    scores_shape.extend([l, s]);
    let scores = q.matmul(&k.transpose(-2, -1)?)?.reshape(scores_shape)?;
    let bias = AttentionBias::new(attn_mask, is_causal, l, s, query)?;
    let out = attend(scores, &bias, &v, dropout_p)?;
    let mut out_shape = batch.to_vec();
    out_shape.extend([l, ev]);
    out.reshape(out_shape)
}
