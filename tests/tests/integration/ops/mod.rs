//! Tensor operations by family against PyTorch 2.5.1, forward and gradients.

mod activation;
mod conv;
mod embedding;
mod group_norm;
mod norm;
mod operators;
mod pool;
mod sign;
mod softmax;
mod split;
