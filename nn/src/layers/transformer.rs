//! The Transformer: PyTorch's `nn.TransformerEncoderLayer`, `nn.TransformerDecoderLayer`,
//! `nn.TransformerEncoder`, `nn.TransformerDecoder` and `nn.Transformer`, with their keys, `repr` and masks.

use super::attention::{
    AttentionInput, MultiheadAttention, MultiheadAttentionOptions, canonical_mask, deep_copy_param,
};
use super::{Dropout, LayerNorm, Linear};
use crate::functional::Activation;
use crate::hooks::{Call, TensorArgs};
use crate::{DType, Error, Forward, Module, ModuleExt, Result, Shared, Tensor, TensorModule, init};

/// The activation of a Transformer layer's feed-forward block: a function (PyTorch's `activation="relu"` or
/// `"gelu"`, or any [`Activation`]; not a child, not printed) or a module (a child named `activation`,
/// printed; the copies [`TransformerEncoder`] and [`TransformerDecoder`] make share it).
#[derive(Clone)]
pub enum FeedForwardActivation {
    /// A function.
    Function(Activation),
    /// A module.
    Module(Shared<Box<dyn TensorModule>>),
}

impl FeedForwardActivation {
    /// PyTorch's activation by name: `"relu"` or `"gelu"`.
    pub fn by_name(name: &str) -> Result<FeedForwardActivation> {
        match name {
            "relu" => Ok(FeedForwardActivation::Function(Activation::Relu)),
            "gelu" => Ok(FeedForwardActivation::Function(Activation::Gelu)),
            other => Err(Error::invalid(
                "TransformerEncoderLayer",
                format!("activation should be relu/gelu, not {other}"),
            )),
        }
    }

    /// A module as the activation.
    pub fn module(module: impl TensorModule + 'static) -> FeedForwardActivation {
        FeedForwardActivation::Module(Shared::new(Box::new(module)))
    }
}

/// Every constructor argument of a Transformer layer after `d_model` and `nhead`, PyTorch's defaults by
/// [`Default`].
#[derive(Clone)]
pub struct TransformerLayerOptions {
    /// `dim_feedforward=2048`.
    pub dim_feedforward: usize,
    /// `dropout=0.1`.
    pub dropout: f64,
    /// `activation=relu`.
    pub activation: FeedForwardActivation,
    /// `layer_norm_eps=1e-5`.
    pub layer_norm_eps: f64,
    /// `batch_first=False`.
    pub batch_first: bool,
    /// `norm_first=False`.
    pub norm_first: bool,
    /// `bias=True`.
    pub bias: bool,
}

impl Default for TransformerLayerOptions {
    fn default() -> Self {
        TransformerLayerOptions {
            dim_feedforward: 2048,
            dropout: 0.1,
            activation: FeedForwardActivation::Function(Activation::Relu),
            layer_norm_eps: 1e-5,
            batch_first: false,
            norm_first: false,
            bias: true,
        }
    }
}

/// The input of [`TransformerEncoderLayer`] and [`TransformerEncoder`]: PyTorch's `forward(src, src_mask=None,
/// src_key_padding_mask=None, is_causal=False)` (the encoder's `mask` is `src_mask`). Masks as
/// [`AttentionInput`]'s (`true`: not attended).
#[derive(Clone, Debug)]
pub struct EncoderInput {
    /// `(S, N, E)` (`(N, S, E)` with `batch_first`), or `(S, E)`.
    pub src: Tensor,
    /// `(S, S)` or `(N·nhead, S, S)`.
    pub src_mask: Option<Tensor>,
    /// `(N, S)`.
    pub src_key_padding_mask: Option<Tensor>,
    /// Whether `src_mask` is the causal mask (a hint; the mask is required).
    pub is_causal: bool,
}

impl EncoderInput {
    /// `src` without masks.
    pub fn new(src: Tensor) -> EncoderInput {
        EncoderInput {
            src,
            src_mask: None,
            src_key_padding_mask: None,
            is_causal: false,
        }
    }

    /// With `src_mask`.
    pub fn src_mask(mut self, mask: Tensor) -> EncoderInput {
        self.src_mask = Some(mask);
        self
    }

    /// With `src_key_padding_mask`.
    pub fn src_key_padding_mask(mut self, mask: Tensor) -> EncoderInput {
        self.src_key_padding_mask = Some(mask);
        self
    }

    /// With `is_causal`.
    pub fn is_causal(mut self, causal: bool) -> EncoderInput {
        self.is_causal = causal;
        self
    }
}

impl From<Tensor> for EncoderInput {
    fn from(src: Tensor) -> EncoderInput {
        EncoderInput::new(src)
    }
}

impl TensorArgs for EncoderInput {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        let mut all = vec![&mut self.src];
        all.extend(self.src_mask.as_mut());
        all.extend(self.src_key_padding_mask.as_mut());
        all
    }
}

/// The input of [`TransformerDecoderLayer`] and [`TransformerDecoder`]: PyTorch's `forward(tgt, memory,
/// tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
/// tgt_is_causal=False, memory_is_causal=False)`.
#[derive(Clone, Debug)]
pub struct DecoderInput {
    /// `(T, N, E)` (`(N, T, E)` with `batch_first`), or `(T, E)`.
    pub tgt: Tensor,
    /// The encoder's output, `(S, N, E)`.
    pub memory: Tensor,
    /// `(T, T)` or `(N·nhead, T, T)`.
    pub tgt_mask: Option<Tensor>,
    /// `(T, S)` or `(N·nhead, T, S)`.
    pub memory_mask: Option<Tensor>,
    /// `(N, T)`.
    pub tgt_key_padding_mask: Option<Tensor>,
    /// `(N, S)`.
    pub memory_key_padding_mask: Option<Tensor>,
    /// Whether `tgt_mask` is the causal mask.
    pub tgt_is_causal: bool,
    /// Whether `memory_mask` is the causal mask.
    pub memory_is_causal: bool,
}

impl DecoderInput {
    /// `tgt` and `memory` without masks.
    pub fn new(tgt: Tensor, memory: Tensor) -> DecoderInput {
        DecoderInput {
            tgt,
            memory,
            tgt_mask: None,
            memory_mask: None,
            tgt_key_padding_mask: None,
            memory_key_padding_mask: None,
            tgt_is_causal: false,
            memory_is_causal: false,
        }
    }

    /// With `tgt_mask`.
    pub fn tgt_mask(mut self, mask: Tensor) -> DecoderInput {
        self.tgt_mask = Some(mask);
        self
    }

    /// With `memory_mask`.
    pub fn memory_mask(mut self, mask: Tensor) -> DecoderInput {
        self.memory_mask = Some(mask);
        self
    }

    /// With `tgt_key_padding_mask`.
    pub fn tgt_key_padding_mask(mut self, mask: Tensor) -> DecoderInput {
        self.tgt_key_padding_mask = Some(mask);
        self
    }

    /// With `memory_key_padding_mask`.
    pub fn memory_key_padding_mask(mut self, mask: Tensor) -> DecoderInput {
        self.memory_key_padding_mask = Some(mask);
        self
    }

    /// With `tgt_is_causal`.
    pub fn tgt_is_causal(mut self, causal: bool) -> DecoderInput {
        self.tgt_is_causal = causal;
        self
    }

    /// With `memory_is_causal`.
    pub fn memory_is_causal(mut self, causal: bool) -> DecoderInput {
        self.memory_is_causal = causal;
        self
    }
}

impl From<(Tensor, Tensor)> for DecoderInput {
    fn from((tgt, memory): (Tensor, Tensor)) -> DecoderInput {
        DecoderInput::new(tgt, memory)
    }
}

impl TensorArgs for DecoderInput {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        let mut all = vec![&mut self.tgt, &mut self.memory];
        all.extend(self.tgt_mask.as_mut());
        all.extend(self.memory_mask.as_mut());
        all.extend(self.tgt_key_padding_mask.as_mut());
        all.extend(self.memory_key_padding_mask.as_mut());
        all
    }
}

/// The parts both layers build alike: an attention, the two linears, a layer norm, a dropout.
fn attention(d_model: usize, nhead: usize, o: &TransformerLayerOptions) -> Result<MultiheadAttention> {
    let options = MultiheadAttentionOptions {
        dropout: o.dropout,
        bias: o.bias,
        batch_first: o.batch_first,
        ..MultiheadAttentionOptions::default()
    };
    MultiheadAttention::with_options(d_model, nhead, options)
}

fn norm(d_model: usize, o: &TransformerLayerOptions) -> LayerNorm {
    LayerNorm::with_options(vec![d_model], o.layer_norm_eps, true, o.bias)
}

fn activation_parts(a: &FeedForwardActivation) -> (Option<Shared<Box<dyn TensorModule>>>, Activation) {
    match a {
        FeedForwardActivation::Function(f) => (None, *f),
        FeedForwardActivation::Module(m) => (Some(m.clone()), Activation::Relu),
    }
}

/// `linear2(dropout(activation(linear1(x))))`.
fn feed_forward(
    x: &Tensor,
    linear1: &Linear,
    dropout: &Dropout,
    linear2: &Linear,
    module: &Option<Shared<Box<dyn TensorModule>>>,
    function: Activation,
) -> Result<Tensor> {
    let h = linear1.call(x.clone())?;
    let h = match module {
        Some(m) => m.call(h)?,
        None => function.forward(&h)?,
    };
    linear2.call(dropout.call(h)?)
}

/// An independent copy of a linear layer (PyTorch's `copy.deepcopy`).
fn copy_linear(l: &Linear) -> Result<Linear> {
    Ok(l.with_params(
        deep_copy_param(&l.weight)?,
        l.bias.as_ref().map(deep_copy_param).transpose()?,
    ))
}

/// An independent copy of a layer norm.
fn copy_norm(n: &LayerNorm) -> Result<LayerNorm> {
    let mut copy = LayerNorm::with_options(
        n.normalized_shape.clone(),
        n.eps,
        n.elementwise_affine,
        n.bias.is_some(),
    );
    copy.weight = n.weight.as_ref().map(deep_copy_param).transpose()?;
    copy.bias = n.bias.as_ref().map(deep_copy_param).transpose()?;
    copy.train(n.is_training());
    Ok(copy)
}

/// The self-attention call of both layers: `need_weights=False`, its output only.
fn self_attention(
    attn: &MultiheadAttention,
    x: &Tensor,
    memory: Option<&Tensor>,
    mask: Option<&Tensor>,
    key_padding_mask: Option<&Tensor>,
    is_causal: bool,
) -> Result<Tensor> {
    let kv = memory.unwrap_or(x);
    let input = AttentionInput {
        attn_mask: mask.cloned(),
        key_padding_mask: key_padding_mask.cloned(),
        is_causal,
        ..AttentionInput::new(x.clone(), kv.clone(), kv.clone()).need_weights(false)
    };
    Ok(attn.call(input)?.0)
}

/// PyTorch's `nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
/// activation=relu, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)`: self-attention then
/// a feed-forward block, each with dropout and a residual connection, normalised after (or, `norm_first`,
/// before) each.
///
/// ```
/// use nn::prelude::*;
/// let layer = TransformerEncoderLayer::new(8, 2).unwrap();
/// let y = layer.forward(Tensor::zeros([5, 3, 8], DType::F32).into()).unwrap();
/// assert_eq!(y.shape(), &[5, 3, 8]);
/// assert_eq!(layer.state_dict().keys().next().unwrap(), "self_attn.in_proj_weight");
/// ```
#[derive(Module)]
pub struct TransformerEncoderLayer {
    /// The self-attention.
    pub self_attn: MultiheadAttention,
    /// `d_model → dim_feedforward`.
    pub linear1: Linear,
    /// Dropout inside the feed-forward block.
    pub dropout: Dropout,
    /// `dim_feedforward → d_model`.
    pub linear2: Linear,
    /// After (or before) the self-attention block.
    pub norm1: LayerNorm,
    /// After (or before) the feed-forward block.
    pub norm2: LayerNorm,
    /// On the self-attention's output.
    pub dropout1: Dropout,
    /// On the feed-forward block's output.
    pub dropout2: Dropout,
    /// The activation, where it is a module.
    pub activation: Option<Shared<Box<dyn TensorModule>>>,
    /// The activation, where it is a function.
    #[module(skip)]
    pub activation_fn: Activation,
    /// Whether the norms come before the blocks.
    #[module(skip)]
    pub norm_first: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl TransformerEncoderLayer {
    /// PyTorch's defaults.
    pub fn new(d_model: usize, nhead: usize) -> Result<TransformerEncoderLayer> {
        TransformerEncoderLayer::with_options(d_model, nhead, TransformerLayerOptions::default())
    }

    /// Every constructor argument.
    pub fn with_options(d_model: usize, nhead: usize, o: TransformerLayerOptions) -> Result<TransformerEncoderLayer> {
        let (activation, activation_fn) = activation_parts(&o.activation);
        Ok(TransformerEncoderLayer {
            self_attn: attention(d_model, nhead, &o)?,
            linear1: Linear::new(d_model, o.dim_feedforward, o.bias),
            dropout: Dropout::new(o.dropout, false)?,
            linear2: Linear::new(o.dim_feedforward, d_model, o.bias),
            norm1: norm(d_model, &o),
            norm2: norm(d_model, &o),
            dropout1: Dropout::new(o.dropout, false)?,
            dropout2: Dropout::new(o.dropout, false)?,
            activation,
            activation_fn,
            norm_first: o.norm_first,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }

    /// An independent copy (PyTorch's `copy.deepcopy`); a module activation is shared.
    fn deep_copy(&self) -> Result<TransformerEncoderLayer> {
        Ok(TransformerEncoderLayer {
            self_attn: self.self_attn.deep_copy()?,
            linear1: copy_linear(&self.linear1)?,
            dropout: self.dropout.clone(),
            linear2: copy_linear(&self.linear2)?,
            norm1: copy_norm(&self.norm1)?,
            norm2: copy_norm(&self.norm2)?,
            dropout1: self.dropout1.clone(),
            dropout2: self.dropout2.clone(),
            activation: self.activation.clone(),
            activation_fn: self.activation_fn,
            norm_first: self.norm_first,
            training: self.training,
            hooks: self.hooks.clone(),
        })
    }

    fn feed_forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = feed_forward(
            x,
            &self.linear1,
            &self.dropout,
            &self.linear2,
            &self.activation,
            self.activation_fn,
        )?;
        self.dropout2.call(y)
    }
}

impl Forward for TransformerEncoderLayer {
    type Input = EncoderInput;
    type Output = Tensor;

    fn forward(&self, input: EncoderInput) -> Result<Tensor> {
        let dtype = input.src.dtype();
        let kpm = canonical_mask(input.src_key_padding_mask.as_ref(), "src_key_padding_mask", dtype)?;
        let mask = canonical_mask(input.src_mask.as_ref(), "src_mask", dtype)?;
        let attend = |x: &Tensor| -> Result<Tensor> {
            let y = self_attention(&self.self_attn, x, None, mask.as_ref(), kpm.as_ref(), input.is_causal)?;
            self.dropout1.call(y)
        };
        let x = input.src.clone();
        if self.norm_first {
            let x = x.add(&attend(&self.norm1.call(x.clone())?)?)?;
            x.add(&self.feed_forward(&self.norm2.call(x.clone())?)?)
        } else {
            let x = self.norm1.call(x.add(&attend(&x)?)?)?;
            self.norm2.call(x.add(&self.feed_forward(&x)?)?)
        }
    }
}

/// PyTorch's `nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=relu,
/// layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)`: self-attention, attention over the
/// encoder's output (`memory`), then a feed-forward block.
///
/// ```
/// use nn::prelude::*;
/// use nn::layers::DecoderInput;
/// let layer = TransformerDecoderLayer::new(8, 2).unwrap();
/// let (tgt, memory) = (Tensor::zeros([4, 3, 8], DType::F32), Tensor::zeros([5, 3, 8], DType::F32));
/// assert_eq!(layer.forward(DecoderInput::new(tgt, memory)).unwrap().shape(), &[4, 3, 8]);
/// ```
#[derive(Module)]
pub struct TransformerDecoderLayer {
    /// The self-attention.
    pub self_attn: MultiheadAttention,
    /// The attention over `memory`.
    pub multihead_attn: MultiheadAttention,
    /// `d_model → dim_feedforward`.
    pub linear1: Linear,
    /// Dropout inside the feed-forward block.
    pub dropout: Dropout,
    /// `dim_feedforward → d_model`.
    pub linear2: Linear,
    /// Around the self-attention block.
    pub norm1: LayerNorm,
    /// Around the attention over `memory`.
    pub norm2: LayerNorm,
    /// Around the feed-forward block.
    pub norm3: LayerNorm,
    /// On the self-attention's output.
    pub dropout1: Dropout,
    /// On the attention over `memory`'s output.
    pub dropout2: Dropout,
    /// On the feed-forward block's output.
    pub dropout3: Dropout,
    /// The activation, where it is a module.
    pub activation: Option<Shared<Box<dyn TensorModule>>>,
    /// The activation, where it is a function.
    #[module(skip)]
    pub activation_fn: Activation,
    /// Whether the norms come before the blocks.
    #[module(skip)]
    pub norm_first: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl TransformerDecoderLayer {
    /// PyTorch's defaults.
    pub fn new(d_model: usize, nhead: usize) -> Result<TransformerDecoderLayer> {
        TransformerDecoderLayer::with_options(d_model, nhead, TransformerLayerOptions::default())
    }

    /// Every constructor argument.
    pub fn with_options(d_model: usize, nhead: usize, o: TransformerLayerOptions) -> Result<TransformerDecoderLayer> {
        let (activation, activation_fn) = activation_parts(&o.activation);
        Ok(TransformerDecoderLayer {
            self_attn: attention(d_model, nhead, &o)?,
            multihead_attn: attention(d_model, nhead, &o)?,
            linear1: Linear::new(d_model, o.dim_feedforward, o.bias),
            dropout: Dropout::new(o.dropout, false)?,
            linear2: Linear::new(o.dim_feedforward, d_model, o.bias),
            norm1: norm(d_model, &o),
            norm2: norm(d_model, &o),
            norm3: norm(d_model, &o),
            dropout1: Dropout::new(o.dropout, false)?,
            dropout2: Dropout::new(o.dropout, false)?,
            dropout3: Dropout::new(o.dropout, false)?,
            activation,
            activation_fn,
            norm_first: o.norm_first,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }

    /// An independent copy (PyTorch's `copy.deepcopy`); a module activation is shared.
    fn deep_copy(&self) -> Result<TransformerDecoderLayer> {
        Ok(TransformerDecoderLayer {
            self_attn: self.self_attn.deep_copy()?,
            multihead_attn: self.multihead_attn.deep_copy()?,
            linear1: copy_linear(&self.linear1)?,
            dropout: self.dropout.clone(),
            linear2: copy_linear(&self.linear2)?,
            norm1: copy_norm(&self.norm1)?,
            norm2: copy_norm(&self.norm2)?,
            norm3: copy_norm(&self.norm3)?,
            dropout1: self.dropout1.clone(),
            dropout2: self.dropout2.clone(),
            dropout3: self.dropout3.clone(),
            activation: self.activation.clone(),
            activation_fn: self.activation_fn,
            norm_first: self.norm_first,
            training: self.training,
            hooks: self.hooks.clone(),
        })
    }

    fn feed_forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = feed_forward(
            x,
            &self.linear1,
            &self.dropout,
            &self.linear2,
            &self.activation,
            self.activation_fn,
        )?;
        self.dropout3.call(y)
    }
}

impl Forward for TransformerDecoderLayer {
    type Input = DecoderInput;
    type Output = Tensor;

    fn forward(&self, i: DecoderInput) -> Result<Tensor> {
        let self_block = |x: &Tensor| -> Result<Tensor> {
            let y = self_attention(
                &self.self_attn,
                x,
                None,
                i.tgt_mask.as_ref(),
                i.tgt_key_padding_mask.as_ref(),
                i.tgt_is_causal,
            )?;
            self.dropout1.call(y)
        };
        let memory_block = |x: &Tensor| -> Result<Tensor> {
            let y = self_attention(
                &self.multihead_attn,
                x,
                Some(&i.memory),
                i.memory_mask.as_ref(),
                i.memory_key_padding_mask.as_ref(),
                i.memory_is_causal,
            )?;
            self.dropout2.call(y)
        };
        let x = i.tgt.clone();
        if self.norm_first {
            let x = x.add(&self_block(&self.norm1.call(x.clone())?)?)?;
            let x = x.add(&memory_block(&self.norm2.call(x.clone())?)?)?;
            x.add(&self.feed_forward(&self.norm3.call(x.clone())?)?)
        } else {
            let x = self.norm1.call(x.add(&self_block(&x)?)?)?;
            let x = self.norm2.call(x.add(&memory_block(&x)?)?)?;
            self.norm3.call(x.add(&self.feed_forward(&x)?)?)
        }
    }
}

/// PyTorch's `nn.TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
/// mask_check=True)`: `num_layers` copies of `encoder_layer` (equal values, independent parameters) and an
/// optional final norm. The copies run on padded tensors (PyTorch's nested-tensor inference path, which
/// zeroes padded positions in evaluation, is not taken: those positions hold computed values).
///
/// ```
/// use nn::prelude::*;
/// let layer = TransformerEncoderLayer::new(8, 2).unwrap();
/// let encoder = TransformerEncoder::new(layer, 2, None).unwrap();
/// assert!(encoder.to_string().contains("(0-1): 2 x TransformerEncoderLayer("));
/// assert_eq!(encoder.forward(Tensor::zeros([5, 3, 8], DType::F32).into()).unwrap().shape(), &[5, 3, 8]);
/// ```
#[derive(Module)]
pub struct TransformerEncoder {
    /// The layers, keyed `0`, `1`, ….
    pub layers: Vec<TransformerEncoderLayer>,
    /// The final norm.
    pub norm: Option<LayerNorm>,
    training: bool,
    hooks: crate::Hooks,
}

impl TransformerEncoder {
    /// `num_layers` copies of `encoder_layer`, then `norm`.
    pub fn new(encoder_layer: TransformerEncoderLayer, num_layers: usize, norm: Option<LayerNorm>) -> Result<Self> {
        let mut layers = (1..num_layers)
            .map(|_| encoder_layer.deep_copy())
            .collect::<Result<Vec<_>>>()?;
        if num_layers > 0 {
            layers.insert(0, encoder_layer);
        }
        Ok(TransformerEncoder {
            layers,
            norm,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl Forward for TransformerEncoder {
    type Input = EncoderInput;
    type Output = Tensor;

    fn forward(&self, input: EncoderInput) -> Result<Tensor> {
        let dtype = input.src.dtype();
        let src_key_padding_mask = canonical_mask(input.src_key_padding_mask.as_ref(), "src_key_padding_mask", dtype)?;
        let src_mask = canonical_mask(input.src_mask.as_ref(), "mask", dtype)?;
        let mut output = input.src.clone();
        for layer in &self.layers {
            output = layer.call(EncoderInput {
                src: output,
                src_mask: src_mask.clone(),
                src_key_padding_mask: src_key_padding_mask.clone(),
                is_causal: input.is_causal,
            })?;
        }
        match &self.norm {
            Some(norm) => norm.call(output),
            None => Ok(output),
        }
    }
}

/// PyTorch's `nn.TransformerDecoder(decoder_layer, num_layers, norm=None)`: `num_layers` copies of
/// `decoder_layer` and an optional final norm.
#[derive(Module)]
pub struct TransformerDecoder {
    /// The layers, keyed `0`, `1`, ….
    pub layers: Vec<TransformerDecoderLayer>,
    /// The final norm.
    pub norm: Option<LayerNorm>,
    training: bool,
    hooks: crate::Hooks,
}

impl TransformerDecoder {
    /// `num_layers` copies of `decoder_layer`, then `norm`.
    pub fn new(decoder_layer: TransformerDecoderLayer, num_layers: usize, norm: Option<LayerNorm>) -> Result<Self> {
        let mut layers = (1..num_layers)
            .map(|_| decoder_layer.deep_copy())
            .collect::<Result<Vec<_>>>()?;
        if num_layers > 0 {
            layers.insert(0, decoder_layer);
        }
        Ok(TransformerDecoder {
            layers,
            norm,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl Forward for TransformerDecoder {
    type Input = DecoderInput;
    type Output = Tensor;

    fn forward(&self, input: DecoderInput) -> Result<Tensor> {
        let mut output = input.tgt.clone();
        for layer in &self.layers {
            output = layer.call(DecoderInput {
                tgt: output,
                ..input.clone()
            })?;
        }
        match &self.norm {
            Some(norm) => norm.call(output),
            None => Ok(output),
        }
    }
}

/// The input of [`Transformer`]: PyTorch's `forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
/// src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None,
/// tgt_is_causal=None, memory_is_causal=False)`.
#[derive(Clone, Debug)]
pub struct TransformerInput {
    /// The encoder's input.
    pub src: EncoderInput,
    /// The decoder's input, its `memory` unused (the encoder's output takes its place).
    pub tgt: DecoderInput,
}

impl TransformerInput {
    /// `src` and `tgt` without masks.
    pub fn new(src: Tensor, tgt: Tensor) -> TransformerInput {
        let memory = src.clone();
        TransformerInput {
            src: EncoderInput::new(src),
            tgt: DecoderInput::new(tgt, memory),
        }
    }
}

impl From<(Tensor, Tensor)> for TransformerInput {
    fn from((src, tgt): (Tensor, Tensor)) -> TransformerInput {
        TransformerInput::new(src, tgt)
    }
}

impl TensorArgs for TransformerInput {
    fn tensors_mut(&mut self) -> Vec<&mut Tensor> {
        let mut all = self.src.tensors_mut();
        all.extend(self.tgt.tensors_mut());
        all
    }
}

/// Every constructor argument of [`Transformer`] after `d_model` and `nhead`, PyTorch's defaults by
/// [`Default`].
#[derive(Clone)]
pub struct TransformerOptions {
    /// `num_encoder_layers=6`.
    pub num_encoder_layers: usize,
    /// `num_decoder_layers=6`.
    pub num_decoder_layers: usize,
    /// The layers' arguments (`dim_feedforward=2048, dropout=0.1, activation=relu, layer_norm_eps=1e-5,
    /// batch_first=False, norm_first=False, bias=True`).
    pub layer: TransformerLayerOptions,
}

impl Default for TransformerOptions {
    fn default() -> Self {
        TransformerOptions {
            num_encoder_layers: 6,
            num_decoder_layers: 6,
            layer: TransformerLayerOptions::default(),
        }
    }
}

/// PyTorch's `nn.Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
/// dim_feedforward=2048, dropout=0.1, activation=relu, custom_encoder=None, custom_decoder=None,
/// layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)`: an encoder and a decoder, each with a
/// final norm, every parameter of two or more dimensions Xavier-uniform initialised.
///
/// ```
/// use nn::prelude::*;
/// use nn::layers::TransformerOptions;
/// let options = TransformerOptions { num_encoder_layers: 1, num_decoder_layers: 1, ..Default::default() };
/// let t = Transformer::with_options(8, 2, options).unwrap();
/// let (src, tgt) = (Tensor::zeros([5, 3, 8], DType::F32), Tensor::zeros([4, 3, 8], DType::F32));
/// assert_eq!(t.forward((src, tgt).into()).unwrap().shape(), &[4, 3, 8]);
/// ```
#[derive(Module)]
pub struct Transformer {
    /// The encoder.
    pub encoder: TransformerEncoder,
    /// The decoder.
    pub decoder: TransformerDecoder,
    /// Size of the inputs' features.
    #[module(skip)]
    pub d_model: usize,
    /// Number of heads.
    #[module(skip)]
    pub nhead: usize,
    /// Whether inputs are `(N, S, E)`.
    #[module(skip)]
    pub batch_first: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl Transformer {
    /// PyTorch's defaults for the given sizes.
    pub fn new(d_model: usize, nhead: usize) -> Result<Transformer> {
        Transformer::with_options(d_model, nhead, TransformerOptions::default())
    }

    /// Every constructor argument.
    pub fn with_options(d_model: usize, nhead: usize, o: TransformerOptions) -> Result<Transformer> {
        let layer = &o.layer;
        let encoder = TransformerEncoder::new(
            TransformerEncoderLayer::with_options(d_model, nhead, layer.clone())?,
            o.num_encoder_layers,
            Some(norm(d_model, layer)),
        )?;
        let decoder = TransformerDecoder::new(
            TransformerDecoderLayer::with_options(d_model, nhead, layer.clone())?,
            o.num_decoder_layers,
            Some(norm(d_model, layer)),
        )?;
        let transformer = Transformer {
            encoder,
            decoder,
            d_model,
            nhead,
            batch_first: layer.batch_first,
            training: true,
            hooks: crate::Hooks::new(),
        };
        for p in transformer.parameters() {
            if p.shape().len() > 1 {
                init::xavier_uniform_(&p.data(), 1.0)?;
            }
        }
        Ok(transformer)
    }

    /// PyTorch's `generate_square_subsequent_mask(sz)`: `(sz, sz)` floats, `-inf` above the diagonal and 0
    /// elsewhere.
    ///
    /// ```
    /// let m = nn::layers::Transformer::generate_square_subsequent_mask(2, nn::DType::F32).unwrap();
    /// assert_eq!(m.to_vec::<f32>().unwrap(), vec![0.0, f32::NEG_INFINITY, 0.0, 0.0]);
    /// ```
    pub fn generate_square_subsequent_mask(sz: usize, dtype: DType) -> Result<Tensor> {
        let values = (0..sz * sz)
            .map(|k| if k % sz > k / sz { f64::NEG_INFINITY } else { 0.0 })
            .collect();
        Tensor::from_vec(values, [sz, sz])?.to_dtype(dtype)
    }
}

impl Forward for Transformer {
    type Input = TransformerInput;
    type Output = Tensor;

    fn forward(&self, input: TransformerInput) -> Result<Tensor> {
        let (src, tgt) = (&input.src.src, &input.tgt.tgt);
        let batch = |t: &Tensor| t.shape()[if self.batch_first { 0 } else { 1 }];
        if src.rank() == 3 && (tgt.rank() != 3 || batch(src) != batch(tgt)) {
            return Err(Error::invalid(
                "Transformer",
                "the batch number of src and tgt must be equal",
            ));
        }
        let features = |t: &Tensor| t.shape().last().copied();
        if features(src) != Some(self.d_model) || features(tgt) != Some(self.d_model) {
            return Err(Error::invalid(
                "Transformer",
                "the feature number of src and tgt must be equal to d_model",
            ));
        }
        let memory = self.encoder.call(input.src.clone())?;
        self.decoder.call(DecoderInput {
            memory,
            ..input.tgt.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_have_equal_values_and_their_own_storage() {
        let encoder = TransformerEncoder::new(TransformerEncoderLayer::new(4, 2).unwrap(), 2, None).unwrap();
        let a = encoder.layers[0].linear1.weight.data();
        let b = encoder.layers[1].linear1.weight.data();
        assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
        assert!(!a.shares_storage(&b));
    }
}
