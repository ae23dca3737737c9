//! Layers against PyTorch 2.5.1: built with the same arguments, loaded with its state dict, run on the same inputs.

mod against_pytorch;
mod attention;
mod bilinear;
mod cases;
mod init;
mod lstm;
mod rnn;

use integration_tests::{assert_close, assert_close_to_exact};
use nn::{DType, StateDict, Tensor};
use serde_json::Value;

/// The dtype a case of the data-driven runners names: `"f64"`, else float32.
fn case_dtype(spec: &Value) -> DType {
    if spec["dtype"] == "f64" { DType::F64 } else { DType::F32 }
}

/// Checks that `err` is the case's refusal: PyTorch refused it too, at `at` (`new` or `forward`), and its
/// message is inside `err`'s. Returns true (the case ran).
fn refused_as_pytorch(what: &str, spec: &Value, err: nn::Error, at: &str) -> bool {
    let message = spec["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: refused at {at}: {err}"));
    assert_eq!(
        spec["error_at"], at,
        "{what}: refused at {at}: {err}; PyTorch refuses: {message}"
    );
    assert!(
        err.to_string().contains(message),
        "{what}: {err}; PyTorch's message: {message}"
    );
    true
}

/// Compares `got` with the case's tensor `key` within `assert_close`'s defaults; in float32, or within twice
/// PyTorch's own distance from its float64 result (`exact.{key}`).
fn compare_to_case(what: &str, tensors: &StateDict, name: &str, got: &Tensor, key: &str) {
    let get = |key: &str| {
        tensors
            .get(key)
            .unwrap_or_else(|| panic!("{what}: no tensor {key}"))
            .clone()
    };
    let want = get(key);
    if want.dtype() == DType::F32 {
        assert_close_to_exact(&format!("{what}: {name}"), got, &want, &get(&format!("exact.{key}")));
    } else {
        assert_close(&format!("{what}: {name}"), got, &want);
    }
}

/// Runs every case of the fixture `layers/{name}.{json,safetensors}` on `device`: `run(i, spec, tensors)`
/// checks case `i` with its tensors (the `{i}.` entries) and says whether it ran. The fixture holds `cases`
/// cases, `min_refused` or more of them refusals; on the CPU every case runs, on a device every float32 one.
fn run_fixture(
    name: &str,
    cases: usize,
    min_refused: usize,
    device: nn::Device,
    run: impl Fn(usize, &Value, StateDict) -> bool,
) {
    let f = integration_tests::tensors(&format!("layers/{name}.safetensors"));
    let text = std::fs::read_to_string(integration_tests::fixture(&format!("layers/{name}.json"))).unwrap();
    let specs: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(specs.len(), cases, "the fixture's cases");
    let (mut ran, mut float32) = (0, 0);
    for (i, spec) in specs.iter().enumerate() {
        float32 += usize::from(spec["dtype"] == "f32");
        ran += usize::from(run(i, spec, integration_tests::under(&f, &format!("{i}."))));
    }
    let refused = specs.iter().filter(|s| s["error"].is_string()).count();
    assert!(refused >= min_refused, "{refused} cases PyTorch refuses");
    if device.is_cpu() {
        assert_eq!(ran, cases, "cases run on the CPU");
    } else {
        assert!(ran >= float32, "{ran} cases ran on {device}; {float32} are float32");
    }
}
