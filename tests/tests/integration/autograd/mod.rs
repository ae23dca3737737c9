//! Autograd: gradients against finite differences in f64 and against PyTorch's, the pass's semantics, memory.

mod create_graph;
mod dynamics_network;
mod gradcheck;
mod lstm;
mod lstm_dropout;
mod memory;
mod pytorch_tests;
