//! Optimizers and learning-rate schedulers against PyTorch 2.5.1.

mod schedulers;
mod sweep;
mod trajectories;
