//! SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and Adafactor against
//! PyTorch 2.5.1 over 130 random configurations
//! (`tests/fixtures/optim_sweep.{json,safetensors}`, from `tests/fixtures/generate/optim_sweep.py`, which lists
//! what they cover): every option of each class, one or two parameter groups, gradients with exact zeros and
//! steps where a parameter has no gradient, in float32 and float64; the parameters after each step (6 for the
//! first five classes, 20 for the others; Adafactor's with a third, 3-d, parameter) and the
//! state after the last (`state_dict()`'s tensors by PyTorch's names), within `torch.testing.assert_close`'s
//! defaults for the dtype; and the options PyTorch's constructor refuses are refused with its message. On the CPU
//! and on a device (wgpu, or `NN_TEST_DEVICE`; without one the device test skips, and fails under `CI=true`).
//!
//! The options are built as a port would build them from PyTorch's `param_groups`: each class's defaults with
//! the case's values set by name (`GroupOptions::with_hypers`).

use std::collections::BTreeMap;

use integration_tests::{assert_close, lacks_dtype, on_cpu_and_gpu, tensors};
use nn::optim::{
    ASGDAlgorithm, AdadeltaAlgorithm, AdafactorAlgorithm, AdagradAlgorithm, AdamAlgorithm, AdamOptions, AdamWAlgorithm,
    AdamaxAlgorithm, Algorithm, GroupOptions, Hyper, NAdamAlgorithm, Optim, Optimizer, RAdamAlgorithm,
    RMSpropAlgorithm, RpropAlgorithm, SgdAlgorithm,
};
use nn::{DType, Device, Param, StateDict};
use serde_json::{Map, Value};

/// A group's options as PyTorch's `param_groups` entry holds them: numbers, flags and `betas`' pair.
fn hypers(group: &Map<String, Value>) -> BTreeMap<String, Hyper> {
    group
        .iter()
        .map(|(key, value)| {
            let hyper = match value {
                Value::Bool(b) => Hyper::Bool(*b),
                // Adafactor's `eps = (None, 1e-3)`: `None` is held as NaN.
                Value::Array(pair) => Hyper::Pair(pair[0].as_f64().unwrap_or(f64::NAN), pair[1].as_f64().unwrap()),
                other => Hyper::Float(other.as_f64().unwrap_or_else(|| panic!("{key}: {other}"))),
            };
            (key.clone(), hyper)
        })
        .collect()
}

/// The optimizer over `params` with `groups` (the second group, when there is one, holds every parameter but
/// the first and overrides some of the first's options, as a dict passed to PyTorch's constructor does).
fn optimizer<A: Algorithm>(
    defaults: A::Options,
    params: &[Param],
    groups: &[Map<String, Value>],
) -> nn::Result<Box<dyn Optimizer>> {
    let first = defaults.with_hypers(&hypers(&groups[0]))?;
    let split = if groups.len() == 2 { 1 } else { params.len() };
    let mut opt = Optim::<A>::new(params[..split].to_vec(), first.clone())?;
    if let Some(second) = groups.get(1) {
        opt.add_param_group(params[split..].to_vec(), first.with_hypers(&hypers(second))?)?;
    }
    Ok(Box::new(opt))
}

fn build(name: &str, params: &[Param], groups: &[Map<String, Value>]) -> nn::Result<Box<dyn Optimizer>> {
    match name {
        "SGD" => optimizer::<SgdAlgorithm>(Default::default(), params, groups),
        "Adam" => optimizer::<AdamAlgorithm>(Default::default(), params, groups),
        "AdamW" => optimizer::<AdamWAlgorithm>(AdamOptions::adamw(), params, groups),
        "RMSprop" => optimizer::<RMSpropAlgorithm>(Default::default(), params, groups),
        "Adagrad" => optimizer::<AdagradAlgorithm>(Default::default(), params, groups),
        "Adadelta" => optimizer::<AdadeltaAlgorithm>(Default::default(), params, groups),
        "Adamax" => optimizer::<AdamaxAlgorithm>(Default::default(), params, groups),
        "NAdam" => optimizer::<NAdamAlgorithm>(Default::default(), params, groups),
        "RAdam" => optimizer::<RAdamAlgorithm>(Default::default(), params, groups),
        "Rprop" => optimizer::<RpropAlgorithm>(Default::default(), params, groups),
        "ASGD" => optimizer::<ASGDAlgorithm>(Default::default(), params, groups),
        "Adafactor" => optimizer::<AdafactorAlgorithm>(Default::default(), params, groups),
        other => panic!("no optimizer {other}"),
    }
}

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(i: usize, case: &Value, sd: &StateDict, device: Device) -> bool {
    let name = case["optimizer"].as_str().unwrap();
    let dtype = if case["dtype"] == "f32" { DType::F32 } else { DType::F64 };
    if lacks_dtype(device, dtype) {
        return false;
    }
    let groups: Vec<Map<String, Value>> = case["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_object().unwrap().clone())
        .collect();
    let what = format!("case {i} ({name}, {dtype}, {}) on {device}", case["groups"]);
    let get = |key: &str| sd.get(&format!("{i}.{key}")).cloned();
    let params: Vec<Param> = (0..)
        .map_while(|j| get(&format!("init.{j}")))
        .map(|t| Param::new(t.to_device(device).unwrap()))
        .collect();
    let built = build(name, &params, &groups);
    if let Some(message) = case["error"].as_str() {
        let err = built
            .err()
            .unwrap_or_else(|| panic!("{what}: accepted; PyTorch refuses it: {message}"));
        // nn's messages start in lower case, as Rust's do.
        let ours = err.to_string().to_lowercase();
        assert!(
            ours.contains(&message.to_lowercase()),
            "{what}: {err}; PyTorch's message: {message}"
        );
        return true;
    }
    let mut opt = built.unwrap_or_else(|e| panic!("{what}: {e}"));
    let steps = case["steps"].as_u64().unwrap() as usize;
    for s in 0..steps {
        for (j, p) in params.iter().enumerate() {
            let grad = get(&format!("step{s}.grad.{j}")).map(|g| g.to_device(device).unwrap());
            p.set_grad(grad).unwrap();
        }
        opt.step().unwrap_or_else(|e| panic!("{what}: step {s}: {e}"));
        for (j, p) in params.iter().enumerate() {
            let expected = get(&format!("step{s}.param.{j}")).unwrap();
            assert_close(&format!("{what}: parameter {j} after step {s}"), &p.data(), &expected);
        }
    }
    let state = opt.state_dict().unwrap();
    let prefix = format!("{i}.state.");
    let mut expected: Vec<&String> = sd.keys().filter(|k| k.starts_with(&prefix)).collect();
    expected.sort();
    let mut ours = Vec::new();
    for (j, entries) in &state.state {
        for (key, t) in entries.iter() {
            let full = format!("{prefix}{j}.{key}");
            let want = sd
                .get(&full)
                .unwrap_or_else(|| panic!("{what}: state {j}.{key}, which PyTorch's lacks"));
            assert_close(
                &format!("{what}: state {j}.{key}"),
                &t.cpu().unwrap().to_dtype(want.dtype()).unwrap(),
                want,
            );
            ours.push(full);
        }
    }
    ours.sort();
    assert_eq!(ours.iter().collect::<Vec<_>>(), expected, "{what}: the state's entries");
    true
}

fn check(device: Device) {
    let sd = tensors("optim/sweep.safetensors");
    let path = integration_tests::fixture("optim/sweep.json");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = json["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 130, "the fixture's cases");
    let ran = cases
        .iter()
        .enumerate()
        .filter(|(i, case)| run_case(*i, case, &sd, device))
        .count();
    let refused = cases.iter().filter(|c| c["error"].is_string()).count();
    assert!(refused >= 15, "{refused} cases PyTorch refuses");
    if device.is_cpu() {
        assert_eq!(ran, 130);
    }
}

on_cpu_and_gpu!(
    every_optimizer_option_matches_pytorch_over_random_configurations,
    every_optimizer_option_on_a_device_matches_pytorch_over_random_configurations,
    check
);
