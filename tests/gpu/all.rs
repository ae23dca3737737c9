//! Every test file that runs on a device, in one binary: what `.ci/gpu-bundle` builds with the `cuda` feature
//! for a GPU machine that cannot build it (one copy of the statically linked LLVM instead of ten). The device is
//! `NN_TEST_DEVICE` (`wgpu:0` when unset, or `cuda:0`); `.ci/gpu-check` runs it once per backend.

#[path = "../tests/activations_new.rs"]
mod activations_new;
#[path = "../tests/activations_parity.rs"]
mod activations_parity;
#[path = "../tests/activations_special.rs"]
mod activations_special;
#[path = "../tests/activations_sweep.rs"]
mod activations_sweep;
#[path = "../tests/autograd.rs"]
mod autograd;
#[path = "../tests/autograd_dynamics.rs"]
mod autograd_dynamics;
#[path = "../tests/conv_sweep.rs"]
mod conv_sweep;
#[path = "../tests/device.rs"]
mod device;
#[path = "../tests/device_dropout.rs"]
mod device_dropout;
#[path = "../tests/device_index.rs"]
mod device_index;
#[path = "../tests/device_layers.rs"]
mod device_layers;
#[path = "../tests/embedding_sweep.rs"]
mod embedding_sweep;
#[path = "../tests/fusion.rs"]
mod fusion;
#[path = "../tests/grad_utils.rs"]
mod grad_utils;
#[path = "../tests/group_norm_sweep.rs"]
mod group_norm_sweep;
#[path = "../tests/loss_sweep.rs"]
mod loss_sweep;
#[path = "../tests/losses.rs"]
mod losses;
#[path = "../tests/lstm_grad.rs"]
mod lstm_grad;
#[path = "../tests/lstm_sweep.rs"]
mod lstm_sweep;
#[path = "../tests/norm_sweep.rs"]
mod norm_sweep;
#[path = "../tests/optim.rs"]
mod optim;
#[path = "../tests/optim_sweep.rs"]
mod optim_sweep;
#[path = "../tests/pool_sweep.rs"]
mod pool_sweep;
#[path = "../tests/rnn_sweep.rs"]
mod rnn_sweep;
#[path = "../tests/softmax_backward.rs"]
mod softmax_backward;
#[path = "../tests/split.rs"]
mod split;
