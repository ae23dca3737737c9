//! The module system: traversal, paths, modes, state dicts and loading, as PyTorch's `nn.Module`.

mod access;
mod load_state_dict;
mod odd_inputs;
mod pytorch_tests;
