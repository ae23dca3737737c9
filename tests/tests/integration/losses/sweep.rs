//! The losses against PyTorch 2.5.1 over 1,152 random cases (`tests/fixtures/loss_sweep.{json,safetensors}`, from
//! `tests/fixtures/generate/loss_sweep.py`, which lists what the cases cover: shapes of every rank with empty
//! ones, magnitudes from 1e-3 to 100, every option and reduction, ignored and zero-weighted classes, class
//! probabilities, broadcast element weights, and about one case in ten that PyTorch refuses), on the CPU and on a
//! device (wgpu, or `NN_TEST_DEVICE`; without one the device test skips, and fails under `CI=true`), except on a
//! device the cases with subnormal float32 values (a device's `log` may be inexact there, see `has_subnormal`).
//!
//! Each case checks the loss and the gradient of every tensor PyTorch differentiates it by (the input, and the
//! target, class weights or `pos_weight` where PyTorch has a derivative for them), within
//! `torch.testing.assert_close`'s defaults of PyTorch's result in the case's dtype, or for float32 of PyTorch's
//! float64 result from the same tensors (`reference::parity::tensor_check_or_exact`). A refused case must be an
//! error whose message contains PyTorch's.

use integration_tests::losses::loss;
use integration_tests::{lacks_dtype, leaf_of, on_cpu_and_gpu};
use nn::{Device, StateDict, Tensor};
use reference::parity::{Exact, tensor_check_or_exact};
use serde_json::Value;

const CASES: usize = 1152;

/// `actual` against PyTorch's `expected`, or (float32) its float64 result `exact`.
fn check(what: &str, actual: &Tensor, expected: &Tensor, exact: Option<&Tensor>) {
    let exact = exact.map(|value| Exact { value, spread: None });
    let actual = actual.cpu().unwrap();
    let (check, _) = tensor_check_or_exact(what, &actual, expected, exact);
    assert!(check.passed, "{what}: {} {:?}", check.detail, check.errors);
}

/// Whether `spec` is a refusal PyTorch makes on the CPU only: binary_cross_entropy checks its input's range
/// there alone, and so does nn (README).
fn cpu_only(spec: &Value) -> bool {
    spec["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("all elements of input should be between 0 and 1"))
}

/// Whether case `i` holds a subnormal float32 value: a device's `log` may be inexact there (WGSL sets no accuracy
/// for subnormals; lavapipe's log(1e-40) is -88.02, not -92.10), so a subnormal probability into
/// `binary_cross_entropy` is not PyTorch's loss on such a device. The CPU checks these cases.
fn has_subnormal(f: &StateDict, i: usize) -> bool {
    ["input", "input2", "input3", "target", "weight", "pos_weight", "var"]
        .iter()
        .any(|name| {
            f.get(&format!("{i}.{name}")).is_some_and(|t| {
                t.dtype() == nn::DType::F32 && t.to_vec::<f32>().unwrap().iter().any(|v| v.is_subnormal())
            })
        })
}

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(f: &StateDict, spec: &Value, i: usize, device: Device) -> bool {
    let what = format!("case {i} ({spec}) on {device}");
    let input = &f[&format!("{i}.input")];
    if lacks_dtype(device, input.dtype()) || (!device.is_cpu() && has_subnormal(f, i)) {
        return false;
    }
    let grads: Vec<&str> = spec["grads"]
        .as_array()
        .map(|g| g.iter().map(|n| n.as_str().unwrap()).collect())
        .unwrap_or_default();
    let tensor = |name: &str| {
        f.get(&format!("{i}.{name}")).map(|t| {
            let t = t.to_device(device).unwrap();
            if grads.contains(&name) { leaf_of(&t) } else { t }
        })
    };
    // Each tensor made once, so that the leaves the loss sees are the ones whose gradients are read.
    let made: Vec<(&str, Option<Tensor>)> = ["input", "input2", "input3", "target", "weight", "pos_weight", "var"]
        .into_iter()
        .map(|name| (name, tensor(name)))
        .collect();
    let get = |name: &str| made.iter().find(|(n, _)| *n == name).and_then(|(_, t)| t.clone());
    let x = get("input").unwrap();
    let result = loss(spec, &x, &get);
    if let Err(e @ nn::Error::UnsupportedOnDevice { .. }) = &result
        && !device.is_cpu()
    {
        // float64 `exp` / `log` on wgpu (README): a typed refusal, not a result to check.
        eprintln!("{what}: {e}");
        return false;
    }
    if let Some(pytorch) = spec["error"].as_str() {
        if cpu_only(spec) && !device.is_cpu() {
            return false;
        }
        let err = result
            .err()
            .unwrap_or_else(|| panic!("{what}: PyTorch refuses it ({pytorch}), nn did not"));
        let expected = pytorch.trim_end().trim_end_matches('.').to_lowercase();
        assert!(
            err.to_string().to_lowercase().contains(&expected),
            "{what}: the error \"{err}\" lacks PyTorch's \"{pytorch}\""
        );
        return true;
    }
    let out = result.unwrap_or_else(|e| panic!("{what}: {e}"));
    let exact = |key: &str| f.get(&format!("{i}.exact.{key}"));
    check(
        &format!("{what}: loss"),
        &out,
        &f[&format!("{i}.output")],
        exact("output"),
    );
    let proj = tensor("proj").unwrap();
    let backward = out.mul(&proj).unwrap().sum_all().unwrap().backward();
    if let Err(e @ nn::Error::UnsupportedOnDevice { .. }) = &backward
        && !device.is_cpu()
    {
        // A gradient whose math the device gets wrong in this dtype (the probe's verdict): a typed refusal.
        eprintln!("{what}: {e}");
        return false;
    }
    backward.unwrap_or_else(|e| panic!("{what}: backward: {e}"));
    for name in &grads {
        let got = get(name)
            .unwrap()
            .grad()
            .unwrap_or_else(|| panic!("{what}: {name} has no gradient"));
        let key = format!("grad.{name}");
        check(&format!("{what}: {key}"), &got, &f[&format!("{i}.{key}")], exact(&key));
    }
    true
}

/// Every case of the sweep fixture `name` of `cases` cases on `device`.
fn check_fixture(name: &str, cases: usize, device: Device) {
    // On a device at least every float32 case but the CPU's own refusals, those with subnormal values and the
    // p-norms of p other than 1 and 2 (`pow`'s gradient, which lavapipe's float32 math gets wrong).
    let general_norm = |spec: &Value| spec["p"].as_f64().is_some_and(|p| p != 1.0 && p != 2.0);
    let must_run = |f: &StateDict, spec: &Value, i: usize| {
        spec["dtype"] == "f32" && !cpu_only(spec) && !has_subnormal(f, i) && !general_norm(spec)
    };
    integration_tests::sweep(name, cases, device, must_run, run_case);
}

fn check_all(device: Device) {
    check_fixture("losses/sweep", CASES, device);
}

/// The margin, ranking, embedding and likelihood losses and the distances (`losses/margin_sweep.*`, from
/// `loss_margin_sweep.py`, which lists what its 208 cases cover), checked as the other losses.
fn check_margin(device: Device) {
    check_fixture("losses/margin_sweep", 208, device);
}

on_cpu_and_gpu!(
    every_loss_matches_pytorch_over_random_cases,
    every_loss_on_a_device_matches_pytorch_over_random_cases,
    check_all
);

on_cpu_and_gpu!(
    every_margin_and_likelihood_loss_matches_pytorch_over_random_cases,
    every_margin_and_likelihood_loss_on_a_device_matches_pytorch_over_random_cases,
    check_margin
);
