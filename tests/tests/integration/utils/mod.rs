//! `nn::utils`: gradient clipping, parameter vectors, fusion of batch norms.

mod fuse_modules;
mod fusion;
mod grad;
