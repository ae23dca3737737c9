//! [`MultiheadAttention`] (and its output projection, [`NonDynamicallyQuantizableLinear`]): PyTorch's
//! `nn.MultiheadAttention`, what `F.multi_head_attention_forward` computes.

use super::linear::{linear_forward, linear_repr};
use crate::functional::attention::scaled_dot_product_attention;
use crate::hooks::TensorArgs;
use crate::module::ExtraRepr;
use crate::{DType, Error, Forward, Module, Param, Result, Shape, Tensor, init};

const OP: &str = "MultiheadAttention";

/// PyTorch's `NonDynamicallyQuantizableLinear`, the output projection of [`MultiheadAttention`]: a `Linear` by
/// another name (its `repr` says so), its weight and bias read by the attention directly (its hooks do not run,
/// as PyTorch's do not).
#[derive(Module)]
#[module(extra_repr)]
pub struct NonDynamicallyQuantizableLinear {
    /// `(out_features, in_features)`.
    pub weight: Param,
    /// `(out_features)`, when the layer has a bias.
    pub bias: Option<Param>,
    /// Size of each input sample.
    pub in_features: usize,
    /// Size of each output sample.
    pub out_features: usize,
    training: bool,
    hooks: crate::Hooks,
}

impl NonDynamicallyQuantizableLinear {
    /// The layer as PyTorch's `Linear` initialises it (drawing its bias too), the bias then zeroed (what
    /// `MultiheadAttention` does to it).
    fn new(features: usize, bias: bool) -> Result<NonDynamicallyQuantizableLinear> {
        let weight = Tensor::zeros([features, features], DType::F32);
        init::kaiming_uniform_(&weight, 5f64.sqrt())?;
        let bias = bias
            .then(|| -> Result<Param> {
                let b = Tensor::zeros([features], DType::F32);
                init::bias_uniform_(&b, features)?;
                init::zeros_(&b)?;
                Ok(Param::new(b))
            })
            .transpose()?;
        Ok(NonDynamicallyQuantizableLinear {
            weight: Param::new(weight),
            bias,
            in_features: features,
            out_features: features,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for NonDynamicallyQuantizableLinear {
    fn extra_repr(&self) -> String {
        linear_repr(self.in_features, self.out_features, &self.bias)
    }
}

reads_input!(NonDynamicallyQuantizableLinear, |fc, x| linear_forward(
    x, &fc.weight, &fc.bias
));

/// The input of [`MultiheadAttention`]: PyTorch's `forward(query, key, value, key_padding_mask=None,
/// need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False)`.
///
/// `key_padding_mask` `(N, S)` (or `(S)` unbatched) and `attn_mask` `(L, S)` or `(N·num_heads, L, S)` are
/// booleans (`true`: the key is *not* attended, the opposite of `scaled_dot_product_attention`'s) or floats
/// added to the scores. `is_causal` is a hint that `attn_mask` is the causal mask: the mask is required and
/// used.
#[derive(Clone, Debug)]
pub struct AttentionInput {
    /// `(L, N, E)` (`(N, L, E)` with `batch_first`), or `(L, E)` unbatched.
    pub query: Tensor,
    /// `(S, N, kdim)`, or `(S, kdim)`.
    pub key: Tensor,
    /// `(S, N, vdim)`, or `(S, vdim)`.
    pub value: Tensor,
    /// Keys to ignore, per batch element.
    pub key_padding_mask: Option<Tensor>,
    /// Whether to return the attention weights too.
    pub need_weights: bool,
    /// Keys each query must not attend to.
    pub attn_mask: Option<Tensor>,
    /// Whether the returned weights are averaged over the heads.
    pub average_attn_weights: bool,
    /// Whether `attn_mask` is the causal mask.
    pub is_causal: bool,
}

impl AttentionInput {
    /// PyTorch's defaults for everything but the three tensors.
    pub fn new(query: Tensor, key: Tensor, value: Tensor) -> AttentionInput {
        AttentionInput {
            query,
            key,
            value,
            key_padding_mask: None,
            need_weights: true,
            attn_mask: None,
            average_attn_weights: true,
            is_causal: false,
        }
    }

    /// With `key_padding_mask`.
    pub fn key_padding_mask(mut self, mask: Tensor) -> AttentionInput {
        self.key_padding_mask = Some(mask);
        self
    }

    /// With `attn_mask`.
    pub fn attn_mask(mut self, mask: Tensor) -> AttentionInput {
        self.attn_mask = Some(mask);
        self
    }

    /// With `need_weights`.
    pub fn need_weights(mut self, need: bool) -> AttentionInput {
        self.need_weights = need;
        self
    }

    /// With `average_attn_weights`.
    pub fn average_attn_weights(mut self, average: bool) -> AttentionInput {
        self.average_attn_weights = average;
        self
    }

    /// With `is_causal`.
    pub fn is_causal(mut self, causal: bool) -> AttentionInput {
        self.is_causal = causal;
        self
    }
}

impl From<(Tensor, Tensor, Tensor)> for AttentionInput {
    fn from((query, key, value): (Tensor, Tensor, Tensor)) -> AttentionInput {
        AttentionInput::new(query, key, value)
    }
}

impl TensorArgs for AttentionInput {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        let mut all = vec![&mut self.query, &mut self.key, &mut self.value];
        all.extend(self.key_padding_mask.as_mut());
        all.extend(self.attn_mask.as_mut());
        all
    }
}

/// PyTorch's `nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
/// add_zero_attn=False, kdim=None, vdim=None, batch_first=False)`, with its state-dict keys (`in_proj_weight`,
/// or `q_proj_weight` / `k_proj_weight` / `v_proj_weight` where `kdim` or `vdim` differ from `embed_dim`;
/// `in_proj_bias`, `bias_k`, `bias_v`, `out_proj.weight`, `out_proj.bias`) and initialisation (Xavier-uniform
/// projections, zero biases, Xavier-normal `bias_k` / `bias_v`).
///
/// Its forward returns the output `(L, N, E)` and, with `need_weights`, the weights `(N, L, S)` (averaged) or
/// `(N, num_heads, L, S)`. Without `need_weights` it runs
/// [`scaled_dot_product_attention`](crate::functional::scaled_dot_product_attention), where a query whose
/// every key is masked gets zeros; with them, PyTorch's softmax gives NaN there, and so does this.
///
/// ```
/// use nn::prelude::*;
/// use nn::layers::AttentionInput;
/// let mha = MultiheadAttention::new(8, 2).unwrap();
/// assert_eq!(
///     mha.to_string(),
///     "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n)"
/// );
/// let x = Tensor::zeros([5, 3, 8], DType::F32);
/// let (out, weights) = mha.forward(AttentionInput::new(x.clone(), x.clone(), x)).unwrap();
/// assert_eq!(out.shape(), &[5, 3, 8]);
/// assert_eq!(weights.unwrap().shape(), &[3, 5, 5]);
/// ```
#[derive(Module)]
pub struct MultiheadAttention {
    /// `(3·embed_dim, embed_dim)`: the query, key and value projections stacked, where `kdim` and `vdim` equal
    /// `embed_dim`.
    pub in_proj_weight: Option<Param>,
    /// `(embed_dim, embed_dim)`, where `kdim` or `vdim` differ from `embed_dim`.
    pub q_proj_weight: Option<Param>,
    /// `(embed_dim, kdim)`, where `kdim` or `vdim` differ from `embed_dim`.
    pub k_proj_weight: Option<Param>,
    /// `(embed_dim, vdim)`, where `kdim` or `vdim` differ from `embed_dim`.
    pub v_proj_weight: Option<Param>,
    /// `(3·embed_dim)`, with `bias`.
    pub in_proj_bias: Option<Param>,
    /// `(1, 1, embed_dim)`, appended to the keys with `add_bias_kv`.
    pub bias_k: Option<Param>,
    /// `(1, 1, embed_dim)`, appended to the values with `add_bias_kv`.
    pub bias_v: Option<Param>,
    /// The output projection.
    pub out_proj: NonDynamicallyQuantizableLinear,
    /// Size of the queries and of the output.
    #[module(skip)]
    pub embed_dim: usize,
    /// Size of the keys.
    #[module(skip)]
    pub kdim: usize,
    /// Size of the values.
    #[module(skip)]
    pub vdim: usize,
    /// Number of heads, dividing `embed_dim`.
    #[module(skip)]
    pub num_heads: usize,
    /// Dropout probability on the attention weights (in training).
    #[module(skip)]
    pub dropout: f64,
    /// Whether a zero key and value are appended.
    #[module(skip)]
    pub add_zero_attn: bool,
    /// Whether inputs and output are `(N, L, E)` rather than `(L, N, E)`.
    #[module(skip)]
    pub batch_first: bool,
    training: bool,
    hooks: crate::Hooks,
}

/// A square (or `(rows, cols)`) parameter initialised by `init`, in `f32`.
fn param(shape: &[usize], fill: impl Fn(&Tensor) -> Result<()>) -> Result<Param> {
    let t = Tensor::zeros(shape, DType::F32);
    fill(&t)?;
    Ok(Param::new(t))
}

/// Every constructor argument of [`MultiheadAttention`] after `embed_dim` and `num_heads`, PyTorch's defaults by
/// [`Default`].
#[derive(Clone, Copy, Debug)]
pub struct MultiheadAttentionOptions {
    /// `dropout=0.0`.
    pub dropout: f64,
    /// `bias=True`.
    pub bias: bool,
    /// `add_bias_kv=False`.
    pub add_bias_kv: bool,
    /// `add_zero_attn=False`.
    pub add_zero_attn: bool,
    /// `kdim=None` (`embed_dim`).
    pub kdim: Option<usize>,
    /// `vdim=None` (`embed_dim`).
    pub vdim: Option<usize>,
    /// `batch_first=False`.
    pub batch_first: bool,
}

impl Default for MultiheadAttentionOptions {
    fn default() -> Self {
        MultiheadAttentionOptions {
            dropout: 0.0,
            bias: true,
            add_bias_kv: false,
            add_zero_attn: false,
            kdim: None,
            vdim: None,
            batch_first: false,
        }
    }
}

impl MultiheadAttention {
    /// PyTorch's defaults; `embed_dim` must be a positive multiple of `num_heads`.
    pub fn new(embed_dim: usize, num_heads: usize) -> Result<MultiheadAttention> {
        MultiheadAttention::with_options(embed_dim, num_heads, MultiheadAttentionOptions::default())
    }

    /// Every constructor argument.
    pub fn with_options(
        embed_dim: usize,
        num_heads: usize,
        options: MultiheadAttentionOptions,
    ) -> Result<MultiheadAttention> {
        if embed_dim == 0 || num_heads == 0 {
            return Err(Error::invalid(
                OP,
                format!(
                    "embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and \
                     num_heads={num_heads} instead"
                ),
            ));
        }
        if !embed_dim.is_multiple_of(num_heads) {
            return Err(Error::invalid(OP, "embed_dim must be divisible by num_heads"));
        }
        crate::ops::dropout::check_p(options.dropout)?;
        let (kdim, vdim) = (options.kdim.unwrap_or(embed_dim), options.vdim.unwrap_or(embed_dim));
        let packed = kdim == embed_dim && vdim == embed_dim;
        let xavier = |t: &Tensor| init::xavier_uniform_(t, 1.0);
        let separate = |cols: usize| (!packed).then(|| param(&[embed_dim, cols], xavier)).transpose();
        let bias_kv = || {
            options
                .add_bias_kv
                .then(|| param(&[1, 1, embed_dim], |t| init::xavier_normal_(t, 1.0)))
                .transpose()
        };
        // PyTorch's order of draws: the output projection (a `Linear`'s initialisation, its bias then zeroed),
        // then the input projections, then `bias_k` and `bias_v`.
        let out_proj = NonDynamicallyQuantizableLinear::new(embed_dim, options.bias)?;
        Ok(MultiheadAttention {
            in_proj_weight: packed.then(|| param(&[3 * embed_dim, embed_dim], xavier)).transpose()?,
            q_proj_weight: separate(embed_dim)?,
            k_proj_weight: separate(kdim)?,
            v_proj_weight: separate(vdim)?,
            in_proj_bias: options
                .bias
                .then(|| param(&[3 * embed_dim], init::zeros_))
                .transpose()?,
            bias_k: bias_kv()?,
            bias_v: bias_kv()?,
            out_proj,
            embed_dim,
            kdim,
            vdim,
            num_heads,
            dropout: options.dropout,
            add_zero_attn: options.add_zero_attn,
            batch_first: options.batch_first,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }

    /// An independent copy: the same configuration, mode and hooks, the parameters' values copied (what
    /// PyTorch's `copy.deepcopy` gives).
    pub(crate) fn deep_copy(&self) -> Result<MultiheadAttention> {
        let copy = |p: &Option<Param>| p.as_ref().map(deep_copy_param).transpose();
        Ok(MultiheadAttention {
            in_proj_weight: copy(&self.in_proj_weight)?,
            q_proj_weight: copy(&self.q_proj_weight)?,
            k_proj_weight: copy(&self.k_proj_weight)?,
            v_proj_weight: copy(&self.v_proj_weight)?,
            in_proj_bias: copy(&self.in_proj_bias)?,
            bias_k: copy(&self.bias_k)?,
            bias_v: copy(&self.bias_v)?,
            out_proj: NonDynamicallyQuantizableLinear {
                weight: deep_copy_param(&self.out_proj.weight)?,
                bias: copy(&self.out_proj.bias)?,
                in_features: self.out_proj.in_features,
                out_features: self.out_proj.out_features,
                training: self.out_proj.training,
                hooks: self.out_proj.hooks.clone(),
            },
            training: self.training,
            hooks: self.hooks.clone(),
            ..*self
        })
    }

    /// The input projections of `query`, `key` and `value` (`(L, N, E)`, `(S, N, kdim)`, `(S, N, vdim)`):
    /// one product where the three are one tensor (or key and value are), as PyTorch's.
    fn project(&self, query: &Tensor, key: &Tensor, value: &Tensor) -> Result<[Tensor; 3]> {
        let e = self.embed_dim;
        let bias = self.in_proj_bias.as_ref().map(Param::data);
        let bias_rows = |start: usize, len: usize| bias.as_ref().map(|b| b.narrow(0, start, len)).transpose();
        let Some(w) = &self.in_proj_weight else {
            let weight = |p: &Option<Param>| p.as_ref().map(Param::data).ok_or_else(|| missing("q/k/v_proj_weight"));
            let (wq, wk, wv) = (
                weight(&self.q_proj_weight)?,
                weight(&self.k_proj_weight)?,
                weight(&self.v_proj_weight)?,
            );
            return Ok([
                query.linear(&wq, bias_rows(0, e)?.as_ref())?,
                key.linear(&wk, bias_rows(e, e)?.as_ref())?,
                value.linear(&wv, bias_rows(2 * e, e)?.as_ref())?,
            ]);
        };
        let w = w.data();
        if same_tensor(key, value) {
            if same_tensor(query, key) {
                let qkv = query.linear(&w, bias.as_ref())?.chunk(3, -1)?;
                let [q, k, v]: [Tensor; 3] = qkv.try_into().map_err(|_| missing("three projections"))?;
                return Ok([q, k, v]);
            }
            let q = query.linear(&w.narrow(0, 0, e)?, bias_rows(0, e)?.as_ref())?;
            let kv = key
                .linear(&w.narrow(0, e, 2 * e)?, bias_rows(e, 2 * e)?.as_ref())?
                .chunk(2, -1)?;
            let [k, v]: [Tensor; 2] = kv.try_into().map_err(|_| missing("two projections"))?;
            return Ok([q, k, v]);
        }
        Ok([
            query.linear(&w.narrow(0, 0, e)?, bias_rows(0, e)?.as_ref())?,
            key.linear(&w.narrow(0, e, e)?, bias_rows(e, e)?.as_ref())?,
            value.linear(&w.narrow(0, 2 * e, e)?, bias_rows(2 * e, e)?.as_ref())?,
        ])
    }
}

/// Whether `a` and `b` are one tensor (PyTorch's `is`): self-attention's one projection keys on it.
fn same_tensor(a: &Tensor, b: &Tensor) -> bool {
    a.shares_storage(b) && a.shape() == b.shape()
}

/// A copy of `p` with its own storage, requiring a gradient as `p` does.
pub(crate) fn deep_copy_param(p: &Param) -> Result<Param> {
    Ok(Param::with_requires_grad(p.data().deep_copy()?, p.requires_grad()))
}

fn missing(what: &str) -> Error {
    Error::invalid(OP, format!("the layer lacks its {what} (a field was changed by hand?)"))
}

/// `t` with a zero column appended along its last dimension (`F.pad(t, (0, 1))`).
fn pad_last(t: &Tensor) -> Result<Tensor> {
    let mut shape = t.shape().to_vec();
    *shape.last_mut().expect("a mask of rank 1 or more") = 1;
    let zeros = Tensor::zeros(shape, t.dtype()).to_device(t.device())?;
    Tensor::cat(&[t, &zeros], -1)
}

/// PyTorch's `_canonical_mask`: a boolean mask as floats (`-inf` where `true`) in `dtype`, a float mask as it is.
pub(crate) fn canonical_mask(mask: Option<&Tensor>, name: &str, dtype: DType) -> Result<Option<Tensor>> {
    let Some(mask) = mask else { return Ok(None) };
    match mask.dtype() {
        DType::Bool => {
            let masked = mask.to_dtype(dtype)?;
            // 1 → -inf, 0 → 0, exactly: log(1 - m) is log(0) = -inf or log(1) = 0.
            Ok(Some(masked.affine(-1.0, 1.0)?.log()?))
        }
        d if d.is_floating_point() => Ok(Some(mask.clone())),
        _ => Err(Error::invalid(
            OP,
            format!("only bool and floating types of {name} are supported"),
        )),
    }
}

/// PyTorch's `torch.Size([..])` of a shape, for messages.
fn size(shape: &Shape) -> String {
    format!("torch.Size({shape})")
}

impl MultiheadAttention {
    /// Refuses what PyTorch's `_mha_shape_check` refuses; whether the query is batched.
    fn check_shapes(&self, input: &AttentionInput) -> Result<bool> {
        let (q, k, v) = (&input.query, &input.key, &input.value);
        let fail = |m: String| Err(Error::invalid(OP, m));
        let (label, rank, kpm_rank) = match q.rank() {
            3 => ("batched (3-D)", 3, 2),
            2 => ("unbatched (2-D)", 2, 1),
            r => {
                return fail(format!(
                    "query should be unbatched 2D or batched 3D tensor but received {r}-D query tensor"
                ));
            }
        };
        if k.rank() != rank || v.rank() != rank {
            return fail(format!(
                "For {label} `query`, expected `key` and `value` to be {rank}-D but found {}-D and {}-D tensors \
                 respectively",
                k.rank(),
                v.rank()
            ));
        }
        if let Some(r) = input
            .key_padding_mask
            .as_ref()
            .map(Tensor::rank)
            .filter(|&r| r != kpm_rank)
        {
            return fail(format!(
                "For {label} `query`, expected `key_padding_mask` to be `None` or {kpm_rank}-D but found {r}-D \
                 tensor instead"
            ));
        }
        if let Some(m) = &input.attn_mask {
            if !matches!(m.rank(), 2 | 3) {
                return fail(format!(
                    "For {label} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor \
                     instead",
                    m.rank()
                ));
            }
            let expected = [self.num_heads, q.shape()[0], k.shape()[0]];
            if rank == 2 && m.rank() == 3 && m.shape() != &expected {
                return fail(format!(
                    "Expected `attn_mask` shape to be ({}, {}, {}) but got {}",
                    expected[0],
                    expected[1],
                    expected[2],
                    size(m.shape())
                ));
            }
        }
        Ok(rank == 3)
    }

    /// PyTorch's `F.multi_head_attention_forward` on sequence-first inputs.
    fn attention(&self, input: &AttentionInput) -> Result<(Tensor, Option<Tensor>)> {
        let is_batched = self.check_shapes(input)?;
        let (h, e) = (self.num_heads, self.embed_dim);
        let head_dim = e / h;
        let (mut query, mut key, mut value) = (input.query.clone(), input.key.clone(), input.value.clone());
        let mut key_padding_mask = input.key_padding_mask.clone();
        if !is_batched {
            query = query.unsqueeze(1)?;
            key = key.unsqueeze(1)?;
            value = value.unsqueeze(1)?;
            key_padding_mask = key_padding_mask.map(|m| m.unsqueeze(0)).transpose()?;
        }
        let (tgt_len, bsz, embed) = (query.shape()[0], query.shape()[1], query.shape()[2]);
        let src_len = key.shape()[0];
        let dtype = query.dtype();
        Error::check_float(OP, dtype)?;
        let key_padding_mask = canonical_mask(key_padding_mask.as_ref(), "key_padding_mask", dtype)?;
        let mut is_causal = input.is_causal;
        if is_causal && input.attn_mask.is_none() {
            return Err(Error::invalid(
                OP,
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method \
                 `generate_square_subsequent_mask` to create this mask.",
            ));
        }
        let mut attn_mask = if is_causal && key_padding_mask.is_none() && !input.need_weights {
            None
        } else {
            if key_padding_mask.is_some() {
                is_causal = false;
            }
            canonical_mask(input.attn_mask.as_ref(), "attn_mask", dtype)?
        };
        if embed != e {
            return Err(Error::invalid(
                OP,
                format!("was expecting embedding dimension of {e}, but got {embed}"),
            ));
        }
        let packed = self.in_proj_weight.is_some();
        if packed && key.shape() != value.shape() {
            return Err(Error::invalid(
                OP,
                format!(
                    "key shape {} does not match value shape {}",
                    size(key.shape()),
                    size(value.shape())
                ),
            ));
        }
        if !packed && key.shape()[..2] != value.shape()[..2] {
            return Err(Error::invalid(
                OP,
                format!(
                    "key's sequence and batch dims {} do not match value's {}",
                    size(&Shape::from(&key.shape()[..2])),
                    size(&Shape::from(&value.shape()[..2]))
                ),
            ));
        }
        let (kd, vd) = (key.shape()[2], value.shape()[2]);
        if !packed && (kd != self.kdim || vd != self.vdim) {
            return Err(Error::shapes(
                OP,
                key.shape(),
                value.shape(),
                "key (S, N, kdim) and value (S, N, vdim) of the layer's kdim and vdim",
            ));
        }
        let [q, mut k, mut v] = self.project(&query, &key, &value)?;
        if let Some(m) = &attn_mask {
            match m.rank() {
                2 => {
                    if m.shape() != &[tgt_len, src_len] {
                        return Err(Error::invalid(
                            OP,
                            format!(
                                "The shape of the 2D attn_mask is {}, but should be ({tgt_len}, {src_len}).",
                                size(m.shape())
                            ),
                        ));
                    }
                    attn_mask = Some(m.unsqueeze(0)?);
                }
                3 => {
                    if m.shape() != &[bsz * h, tgt_len, src_len] {
                        return Err(Error::invalid(
                            OP,
                            format!(
                                "The shape of the 3D attn_mask is {}, but should be ({}, {tgt_len}, {src_len}).",
                                size(m.shape()),
                                bsz * h
                            ),
                        ));
                    }
                }
                r => {
                    return Err(Error::invalid(
                        OP,
                        format!("attn_mask's dimension {r} is not supported"),
                    ));
                }
            }
        }
        let mut key_padding_mask = key_padding_mask;
        if let (Some(bk), Some(bv)) = (&self.bias_k, &self.bias_v) {
            let repeat = |b: &Param| b.data().expand(&[1, bsz as isize, e as isize]);
            k = Tensor::cat(&[&k, &repeat(bk)?], 0)?;
            v = Tensor::cat(&[&v, &repeat(bv)?], 0)?;
            attn_mask = attn_mask.as_ref().map(pad_last).transpose()?;
            key_padding_mask = key_padding_mask.as_ref().map(pad_last).transpose()?;
        }
        let heads = |t: &Tensor| -> Result<Tensor> { t.reshape([t.shape()[0], bsz * h, head_dim])?.transpose(0, 1) };
        let q = heads(&q)?;
        k = heads(&k)?;
        v = heads(&v)?;
        if self.add_zero_attn {
            let zeros = Tensor::zeros([bsz * h, 1, head_dim], dtype).to_device(k.device())?;
            k = Tensor::cat(&[&k, &zeros], 1)?;
            v = Tensor::cat(&[&v, &zeros], 1)?;
            attn_mask = attn_mask.as_ref().map(pad_last).transpose()?;
            key_padding_mask = key_padding_mask.as_ref().map(pad_last).transpose()?;
        }
        let src_len = k.shape()[1];
        if let Some(kpm) = key_padding_mask {
            if kpm.shape() != &[bsz, src_len] {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "expecting key_padding_mask shape of ({bsz}, {src_len}), but got {}",
                        size(kpm.shape())
                    ),
                ));
            }
            let kpm = kpm
                .reshape([bsz, 1, 1, src_len])?
                .expand(&[-1, h as isize, -1, -1])?
                .reshape([bsz * h, 1, src_len])?;
            attn_mask = Some(match attn_mask {
                None => kpm,
                Some(m) => m.add(&kpm)?,
            });
        }
        let dropout_p = if self.training { self.dropout } else { 0.0 };
        let out_bias = self.out_proj.bias.as_ref().map(Param::data);
        let out_weight = self.out_proj.weight.data();
        let (output, weights) = if input.need_weights {
            let q_scaled = q.mul_scalar((1.0 / head_dim as f64).sqrt())?;
            let scores = q_scaled.matmul(&k.transpose(-2, -1)?)?;
            let scores = match &attn_mask {
                Some(m) => scores.add(m)?,
                None => scores,
            };
            let mut weights = scores.softmax(-1)?;
            if dropout_p > 0.0 {
                weights = crate::ops::dropout(&weights, dropout_p, true)?;
            }
            let out = weights.matmul(&v)?;
            let out = out.transpose(0, 1)?.reshape([tgt_len * bsz, e])?;
            let out = out.linear(&out_weight, out_bias.as_ref())?.reshape([tgt_len, bsz, e])?;
            let mut weights = weights.reshape([bsz, h, tgt_len, src_len])?;
            if input.average_attn_weights {
                weights = weights.mean_dims(&[1], false)?;
            }
            (out, Some(weights))
        } else {
            let mask = match attn_mask {
                Some(m) if m.shape()[0] == 1 && m.rank() == 3 => Some(m.unsqueeze(0)?),
                Some(m) => Some(m.reshape([bsz, h, m.shape()[1], src_len])?),
                None => None,
            };
            let q = q.reshape([bsz, h, tgt_len, head_dim])?;
            let k = k.reshape([bsz, h, src_len, head_dim])?;
            let v = v.reshape([bsz, h, src_len, head_dim])?;
            let out = scaled_dot_product_attention(&q, &k, &v, mask.as_ref(), dropout_p, is_causal, None)?;
            let out = out.permute(&[2, 0, 1, 3])?.reshape([bsz * tgt_len, e])?;
            let out = out.linear(&out_weight, out_bias.as_ref())?.reshape([tgt_len, bsz, e])?;
            (out, None)
        };
        if is_batched {
            Ok((output, weights))
        } else {
            Ok((output.squeeze(1)?, weights.map(|w| w.squeeze(0)).transpose()?))
        }
    }
}

impl Forward for MultiheadAttention {
    type Input = AttentionInput;
    type Output = (Tensor, Option<Tensor>);

    fn forward(&self, input: AttentionInput) -> Result<(Tensor, Option<Tensor>)> {
        self.forward_ref(&input)
    }

    fn forward_ref(&self, input: &AttentionInput) -> Result<(Tensor, Option<Tensor>)> {
        if !(self.batch_first && input.query.rank() == 3) {
            return self.attention(input);
        }
        // Sequence-first inside, keeping which of the three are one tensor (self-attention's one projection).
        let (q, k, v) = (&input.query, &input.key, &input.value);
        let query = q.transpose(0, 1)?;
        let key = if same_tensor(k, q) {
            query.clone()
        } else {
            k.transpose(0, 1)?
        };
        let value = if same_tensor(v, k) {
            key.clone()
        } else {
            v.transpose(0, 1)?
        };
        let inner = AttentionInput {
            query,
            key,
            value,
            ..input.clone()
        };
        let (out, weights) = self.attention(&inner)?;
        Ok((out.transpose(0, 1)?, weights))
    }
}
