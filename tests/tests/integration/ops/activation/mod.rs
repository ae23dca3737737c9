//! The activations against PyTorch 2.5.1: every dtype, extremes, dense sweeps, in place.

mod cpu;
mod extremes;
mod functions;
mod parity;
mod rrelu_glu_softmin;
mod sweep;
