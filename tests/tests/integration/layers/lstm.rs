//! `LSTM` against PyTorch 2.5.1 over 32 random configurations, and 16 more with projections (`proj_size`): the
//! outputs, the loss and every gradient (`tests/fixtures/layers/lstm.safetensors` and
//! `layers/lstm_proj.safetensors`, from `tests/fixtures/generate/lstm_sweep.py`, which lists what the
//! configurations cover: sizes on both sides of the device kernels' blocks, one to three layers, both directions,
//! batch-first, no biases, 1 to 30 steps, unbatched inputs, an empty batch, with and without a state), on the CPU
//! and on a device (wgpu, or `NN_TEST_DEVICE`; without one the device test skips, and fails under `CI=true`).
//!
//! Tolerance: `torch.testing.assert_close`'s defaults for the dtype against PyTorch's result; the parameters'
//! float32 gradients against the exact ones (PyTorch's, computed in float64 from the same tensors), each element
//! within float32's defaults or within twice PyTorch's own float32 error on that tensor: a weight's gradient sums
//! over every step and sample.

use integration_tests::recurrent::{check_outputs_and_gradients, check_sweep_file};
use integration_tests::{lacks_dtype, leaf_of, on_cpu_and_gpu};
use nn::layers::{LSTM, LstmOptions};
use nn::prelude::*;
use nn::{DType, Device, StateDict};

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(f: &StateDict, i: usize, device: Device) -> bool {
    let c: Vec<i64> = f[&format!("{i}.config")].to_vec::<i64>().unwrap();
    let dtype = if c[9] == 1 { DType::F64 } else { DType::F32 };
    if lacks_dtype(device, dtype) {
        return false;
    }
    let options = LstmOptions {
        num_layers: c[2] as usize,
        bidirectional: c[3] == 1,
        batch_first: c[4] == 1,
        bias: c[5] == 1,
        proj_size: c.get(10).map_or(0, |&p| p as usize),
        ..LstmOptions::default()
    };
    let what = format!(
        "case {i} (input {}, hidden {}, {options:?}, {} steps, batch {}, state {}, {dtype}) on {device}",
        c[0], c[1], c[6], c[7], c[8]
    );
    let get = |key: &str| {
        f.get(&format!("{i}.{key}"))
            .unwrap_or_else(|| panic!("{what}: no {key}"))
    };
    let mut m = LSTM::with_options(c[0] as usize, c[1] as usize, options).unwrap();
    m.to_dtype(dtype).unwrap();
    let params = integration_tests::under(f, &format!("{i}.param."));
    m.load_state_dict(&params, true, false)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    m.to_device(device).unwrap();
    let leaf = |key: &str| leaf_of(&get(key).to_device(device).unwrap());
    let x = leaf("input");
    let state = (c[8] == 1).then(|| (leaf("h0"), leaf("c0")));
    let (y, (h, cell)) = match m.forward((x.clone(), state.clone())) {
        Ok(outputs) => outputs,
        // The LSTM refuses float64 on wgpu before launch (README): a typed refusal, not a result to check.
        Err(e @ nn::Error::UnsupportedOnDevice { .. }) if !device.is_cpu() => {
            eprintln!("{what}: {e}");
            return false;
        }
        Err(e) => panic!("{what}: forward: {e}"),
    };
    let get = |key: &str| get(key).to_device(device).unwrap();
    let mut leaves = vec![("input", &x)];
    if let Some((h0, c0)) = &state {
        leaves.extend([("h0", h0), ("c0", c0)]);
    }
    let outputs = [("output", &y), ("h_n", &h), ("c_n", &cell)];
    check_outputs_and_gradients(&what, &get, &m.named_parameters(), &outputs, &leaves);
    true
}

/// Runs every case of the fixture `file`, which holds `expected` cases, on `device`.
fn check_file(file: &str, expected: usize, device: Device) {
    check_sweep_file(file, expected, 9, device, run_case);
}

fn check(device: Device) {
    check_file("layers/lstm.safetensors", 32, device);
}

fn check_projected(device: Device) {
    check_file("layers/lstm_proj.safetensors", 16, device);
}

on_cpu_and_gpu!(
    lstm_outputs_and_gradients_match_pytorch_over_random_configurations,
    lstm_outputs_and_gradients_on_a_device_match_pytorch_over_random_configurations,
    check
);

on_cpu_and_gpu!(
    projected_lstm_outputs_and_gradients_match_pytorch_over_random_configurations,
    projected_lstm_outputs_and_gradients_on_a_device_match_pytorch_over_random_configurations,
    check_projected
);
