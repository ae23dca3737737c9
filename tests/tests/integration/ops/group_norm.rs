//! `GroupNorm` and `F.group_norm` against PyTorch 2.5.1 over 40 random layers
//! (`tests/fixtures/group_norm_sweep.{json,safetensors}`, from `tests/fixtures/generate/group_norm_sweep.py`:
//! inputs of 2 to 5 dimensions, 1 to 32 channels in one group, one per channel or between, with and without
//! `affine`, in float32, float64, float16 and bfloat16): the repr, the state-dict keys, the output and the
//! gradients of the input, weight and bias, on the CPU and on a device (wgpu, or `NN_TEST_DEVICE`; without one
//! the device test skips, and fails under `CI=true`). Then PyTorch's refusals with its messages
//! (`ops/group_norm_errors.json`), and a finite-difference check of the gradients in float64.
//!
//! Tolerance: float64 cases with `torch.testing.assert_close`'s defaults against PyTorch's result; the others
//! against the exact result rounded to their dtype, with [`assert_close_to_exact`]: in float32 the statistics and
//! the weight's gradient sum over whole groups and batches, and PyTorch's float16 and bfloat16 backward uses the
//! mean and 1/std rounded to the dtype (its gradients lie up to 49 units in the last place from the exact ones in
//! bfloat16; nn keeps them in float32).

use integration_tests::{
    assert_close, assert_close_to_exact, assert_gradient, check_param_element, lacks_dtype, under,
};
use nn::functional::group_norm;
use nn::prelude::*;
use nn::{Device, StateDict};
use serde_json::Value;

const CASES: usize = 40;

/// Asserts `got` against the fixture's `key` by the case's dtype (see the file's comment).
fn check_value(what: &str, got: &Tensor, f: &StateDict, key: &str) {
    let pytorch = &f[key];
    assert_eq!(got.dtype(), pytorch.dtype(), "{what}: dtype");
    match f.get(&format!("{key}_exact")) {
        Some(exact) => assert_close_to_exact(what, got, pytorch, exact),
        None => assert_close(what, got, pytorch),
    }
}

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(f: &StateDict, spec: &Value, i: usize, device: Device) -> bool {
    let get = |key: &str| &f[&format!("{i}.{key}")];
    let x = get("x");
    if lacks_dtype(device, x.dtype()) {
        return false;
    }
    let what = format!(
        "case {i} ({}, input {}, {:?}) on {device}",
        spec["repr"],
        x.shape(),
        x.dtype()
    );
    let count = |key: &str| spec[key].as_u64().unwrap() as usize;
    let mut layer = GroupNorm::with_options(
        count("num_groups"),
        count("num_channels"),
        spec["eps"].as_f64().unwrap(),
        spec["affine"].as_bool().unwrap(),
    )
    .unwrap();
    assert_eq!(layer.to_string(), spec["repr"].as_str().unwrap(), "{what}");
    let keys: Vec<&str> = spec["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(layer.state_dict().keys().collect::<Vec<_>>(), keys, "{what}: keys");
    layer.to_dtype(x.dtype()).unwrap();
    layer
        .load_state_dict(&under(f, &format!("{i}.state.")), true, false)
        .unwrap();
    layer.to_device(device).unwrap();
    let x = x.to_device(device).unwrap().requires_grad_(true).unwrap();
    let y = layer.forward(x.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(y.device(), device, "{what}: the output's device");
    check_value(&format!("{what}: y"), &y, f, &format!("{i}.y"));
    integration_tests::backward_along(&what, &y, get("dy"));
    check_value(&format!("{what}: dx"), &x.grad().unwrap(), f, &format!("{i}.dx"));
    for (key, param) in layer.named_parameters() {
        let grad = param.grad().unwrap_or_else(|| panic!("{what}: {key} has no gradient"));
        check_value(&format!("{what}: d{key}"), &grad, f, &format!("{i}.d{key}"));
    }
    true
}

integration_tests::sweep_on_cpu_and_gpu!(
    group_norm_matches_pytorch_over_random_layers,
    group_norm_on_a_device_matches_pytorch_over_random_layers,
    "ops/group_norm",
    CASES,
    "x",
    run_case
);

/// What PyTorch 2.5.1 refuses, refused here with its message: inputs of one dimension, channels that the groups
/// do not divide, a weight of the wrong size, a single value per group (F.group_norm); and a layer whose
/// channels the groups do not divide (nn.GroupNorm).
#[test]
fn group_norm_refuses_what_pytorch_refuses() {
    let text = std::fs::read_to_string(integration_tests::fixture("ops/group_norm_errors.json")).unwrap();
    let errors: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(errors.len(), 6, "the refusals");
    for e in errors {
        let groups = e["num_groups"].as_u64().unwrap() as usize;
        let message = e["message"].as_str().unwrap();
        let err = match e["shape"].as_array() {
            Some(shape) => {
                let shape: Vec<usize> = shape.iter().map(|d| d.as_u64().unwrap() as usize).collect();
                let x = Tensor::zeros(shape, DType::F32);
                let weight = e["weight"].as_u64().map(|c| Tensor::ones([c as usize], DType::F32));
                group_norm(&x, groups, weight.as_ref(), None, 1e-5).unwrap_err()
            }
            None => GroupNorm::new(groups, e["weight"].as_u64().unwrap() as usize)
                .err()
                .unwrap(),
        };
        assert!(matches!(err, nn::Error::InvalidArgument { .. }), "{err}");
        assert!(
            err.to_string().contains(message),
            "{err}, expected PyTorch's {message:?}"
        );
    }
    // No group at all: PyTorch divides by zero.
    assert!(GroupNorm::new(0, 4).is_err());
    assert!(group_norm(&Tensor::zeros([2, 4], DType::F32), 0, None, None, 1e-5).is_err());
}

/// The gradients of the input, weight and bias in float64 against central differences, for three groups of
/// two channels over a (3, 6, 2, 2) input (a weighted sum of the output as the loss).
#[test]
fn group_norm_gradients_match_finite_differences() {
    let mut layer = GroupNorm::with_options(3, 6, 1e-3, true).unwrap();
    layer.to_dtype(DType::F64).unwrap();
    {
        let _no_grad = nn::no_grad();
        let w = integration_tests::sine_values(&[6], 0.3, DType::F64);
        layer.weight.as_ref().unwrap().data().copy_(&w).unwrap();
        let b = integration_tests::sine_values(&[6], 1.7, DType::F64);
        layer.bias.as_ref().unwrap().data().copy_(&b).unwrap();
    }
    let shape = [3usize, 6, 2, 2];
    let x = integration_tests::sine_values(&shape, 0.0, DType::F64)
        .affine(1.5, 0.25)
        .unwrap();
    let proj = integration_tests::sine_values(&shape, 2.9, DType::F64);
    let loss = |x: &Tensor| layer.forward(x.clone()).unwrap().mul(&proj).unwrap().sum_all().unwrap();
    let leaf = integration_tests::leaf_of(&x);
    loss(&leaf).backward().unwrap();
    let dx = leaf.grad().unwrap().to_vec::<f64>().unwrap();
    let base = x.to_vec::<f64>().unwrap();
    let at = |j: usize, d: f64| {
        let mut v = base.clone();
        v[j] += d;
        let _no_grad = nn::no_grad();
        loss(&Tensor::from_vec(v, shape).unwrap()).item().unwrap()
    };
    for (j, &analytic) in dx.iter().enumerate() {
        assert_gradient(&format!("dx[{j}]"), analytic, (at(j, 1e-6) - at(j, -1e-6)) / 2e-6);
    }
    let scalar = || loss(&x).item().unwrap();
    for name in ["weight", "bias"] {
        let param = layer.named_parameters().into_iter().find(|(k, _)| k == name).unwrap().1;
        let grad = param.grad().unwrap().to_vec::<f64>().unwrap();
        for (j, &analytic) in grad.iter().enumerate() {
            check_param_element(name, &param, j, analytic, scalar);
        }
    }
}
