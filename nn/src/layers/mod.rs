//! Layers with PyTorch's constructor arguments, keys, default initialisation and `repr`.

mod activation;
mod dropout;
mod flatten;
mod identity;
mod linear;
mod prelu;
mod softmax;

pub use activation::*;
pub use dropout::Dropout;
pub use flatten::Flatten;
pub use identity::Identity;
pub use linear::Linear;
pub use prelu::PReLU;
pub use softmax::{LogSoftmax, Softmax};
