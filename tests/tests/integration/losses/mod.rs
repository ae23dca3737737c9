//! The losses against PyTorch 2.5.1: values and input gradients.

mod cases;
mod modules;
mod sweep;
