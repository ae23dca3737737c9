//! Layers with PyTorch's constructor arguments, keys, default initialisation and `repr`.

mod activation;
mod batch_norm;
mod conv;
mod dropout;
mod embedding;
mod flatten;
mod identity;
mod layer_norm;
mod linear;
pub(crate) mod lstm;
mod prelu;
mod softmax;

pub use activation::*;
pub use batch_norm::{BatchNorm1d, BatchNorm2d};
pub use conv::Conv2d;
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use flatten::Flatten;
pub use identity::Identity;
pub use layer_norm::LayerNorm;
pub use linear::Linear;
pub use lstm::{LSTM, LstmOptions};
pub use prelu::PReLU;
pub use softmax::{LogSoftmax, Softmax};
