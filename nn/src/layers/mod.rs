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

mod activation;
mod batch_norm;
mod conv;
mod dropout;
mod embedding;
mod flatten;
mod fused;
mod identity;
mod layer_norm;
mod linear;
mod loss;
pub(crate) mod lstm;
mod prelu;
mod recurrent;
mod rnn;
mod rnn_cell;
mod softmax;

pub use activation::*;
pub use batch_norm::{BatchNorm1d, BatchNorm2d};
pub use conv::Conv2d;
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use flatten::Flatten;
pub use fused::{BNReLU2d, ConvReLU2d, LinearReLU};
pub use identity::Identity;
pub use layer_norm::LayerNorm;
pub use linear::Linear;
pub use loss::{
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
};
pub use lstm::{LSTM, LstmOptions};
pub use prelu::PReLU;
pub use rnn::{GRU, GruOptions, Nonlinearity, RNN, RnnOptions};
pub use rnn_cell::{GRUCell, LSTMCell, RNNCell};
pub use softmax::{LogSoftmax, Softmax, Softmax2d, Softmin};
