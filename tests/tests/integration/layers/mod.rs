//! Layers against PyTorch 2.5.1: built with the same arguments, loaded with its state dict, run on the same inputs.

mod against_pytorch;
mod attention;
mod cases;
mod init;
mod lstm;
mod rnn;
