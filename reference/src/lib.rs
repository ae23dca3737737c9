//! What checks `nn` against PyTorch, kept out of the library users depend on: the reference model ported with
//! the derive ([`efficientzero`]) and the parity checks that compare listings and tensors with PyTorch's
//! exports ([`parity`]).
//!
//! `cargo run --release --example efficientzero -- tests/fixtures/dynamics_small` and
//! `cargo run --release --example activations -- tests/fixtures/activation/parity.safetensors` run them.

pub mod cli;
pub mod digits;
pub mod efficientzero;
pub mod parity;
