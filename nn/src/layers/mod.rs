//! Layers with PyTorch's constructor arguments, keys, default initialisation and `repr`.

/// `Forward` for a layer that only reads its input tensor: `forward` and `forward_ref` both run `$body` on the
/// borrowed input (so a call with forward hooks makes no copy of it).
macro_rules! reads_input {
    ($layer:ty, |$this:ident, $x:ident| $body:expr) => {
        impl $crate::Forward for $layer {
            type Input = $crate::Tensor;
            type Output = $crate::Tensor;
            fn forward(&self, x: $crate::Tensor) -> $crate::Result<$crate::Tensor> {
                self.forward_ref(&x)
            }
            fn forward_ref(&self, $x: &$crate::Tensor) -> $crate::Result<$crate::Tensor> {
                let $this = self;
                $body
            }
        }
    };
}

/// A recurrent layer or cell (`LSTM`, `RNN`, `GRU`, the cells): the struct, its parameters in a `#[members]` map
/// in the order its `spec()` draws them, the sizes and the `$field`s; `param`; `build`, the constructor from the
/// sizes and the fields; and the `repr` from the spec (`RecurrentSpec` or `CellSpec`, which the type's own
/// `spec` method returns).
macro_rules! recurrent_module {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Module)]
        #[module(extra_repr)]
        pub struct $name {
            #[members]
            params: indexmap::IndexMap<String, crate::Param>,
            /// Features of the input.
            pub input_size: usize,
            /// Features of the hidden state.
            pub hidden_size: usize,
            $($(#[$fdoc])* #[module(skip)] pub $field: $ty,)*
            training: bool,
            hooks: crate::Hooks,
        }

        impl $name {
            /// The parameter named `name` (`weight_ih_l0`, … of a layer; `weight_ih`, … of a cell).
            pub fn param(&self, name: &str) -> Option<&crate::Param> {
                self.params.get(name)
            }

            fn build(input_size: usize, hidden_size: usize $(, $field: $ty)*) -> crate::Result<$name> {
                let mut module = $name {
                    params: indexmap::IndexMap::new(),
                    input_size,
                    hidden_size,
                    $($field,)*
                    training: true,
                    hooks: crate::Hooks::new(),
                };
                module.params = module.spec().params()?;
                Ok(module)
            }
        }

        impl crate::module::ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                self.spec().extra_repr()
            }
        }
    };
}

mod activation;
mod attention;
mod batch_norm;
mod bilinear;
#[macro_use]
mod conv;
mod conv_transpose;
mod dropout;
mod embedding;
mod flatten;
mod fused;
mod group_norm;
mod identity;
mod instance_norm;
mod layer_norm;
mod linear;
mod loss;
pub(crate) mod lstm;
mod margin_loss;
mod padding;
mod pooling;
mod prelu;
mod recurrent;
mod rnn;
mod rnn_cell;
mod softmax;
mod transformer;

pub use activation::*;
pub use attention::{AttentionInput, MultiheadAttention, MultiheadAttentionOptions, NonDynamicallyQuantizableLinear};
pub use batch_norm::{BatchNorm1d, BatchNorm2d, BatchNorm3d};
pub use bilinear::Bilinear;
pub use conv::{Conv1d, Conv2d};
pub use conv_transpose::{ConvTranspose1d, ConvTranspose2d};
pub use dropout::{AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout};
pub use embedding::Embedding;
pub use flatten::{Flatten, Unflatten};
pub use fused::{BNReLU2d, ConvReLU2d, LinearReLU};
pub use group_norm::GroupNorm;
pub use identity::Identity;
pub use instance_norm::{InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm};
pub use layer_norm::{LayerNorm, RMSNorm};
pub use linear::Linear;
pub use loss::{
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
};
pub use lstm::{LSTM, LstmOptions};
pub use margin_loss::{
    CosineEmbeddingLoss, CosineSimilarity, DistanceFn, GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss,
    MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, PairwiseDistance, PoissonNLLLoss, SoftMarginLoss,
    TripletMarginLoss, TripletMarginWithDistanceLoss,
};
pub use padding::{
    ChannelShuffle, CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
    PixelShuffle, PixelUnshuffle, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
    ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
};
pub use pooling::{AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d};
pub use prelu::PReLU;
pub use rnn::{GRU, GruOptions, Nonlinearity, RNN, RnnOptions};
pub use rnn_cell::{GRUCell, LSTMCell, RNNCell};
pub use softmax::{LogSoftmax, Softmax, Softmax2d, Softmin};
pub use transformer::{
    DecoderInput, EncoderInput, FeedForwardActivation, Transformer, TransformerDecoder, TransformerDecoderLayer,
    TransformerEncoder, TransformerEncoderLayer, TransformerInput, TransformerLayerOptions, TransformerOptions,
};
