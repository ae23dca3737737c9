//! Reference models ported from PyTorch with the derive.

pub mod efficientzero;
