//! Layers against PyTorch 2.5.1: built with the same arguments, loaded with its state dict, run on the same inputs.

mod against_pytorch;
mod attention;
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
