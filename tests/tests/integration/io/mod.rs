//! Checkpoints: safetensors and PyTorch's `.pt`, read and memory-mapped; damaged files.

mod checkpoints;
mod fuzz;
mod pt_mmap;
mod safetensors_mmap;
