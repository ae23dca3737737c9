//! Tensors, operations and layers on a device (wgpu, or `NN_TEST_DEVICE`) against the CPU; skipped without an adapter, failing under `CI=true`.

mod dropout;
mod index;
mod layers;
mod tensors;
