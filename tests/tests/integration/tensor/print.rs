//! `Display` of tensors and parameters against PyTorch 2.5.1's `repr` (`tests/fixtures/generate/tensor_print.py`):
//! every case of the fixture, the same string to the character.

use std::collections::BTreeMap;

use nn::prelude::*;

/// The repr nn gives the fixture's case `name` of tensor `t`, built as the generator builds it.
fn printed(name: &str, t: &Tensor) -> String {
    let leaf = || t.deep_copy().unwrap().requires_grad_(true).unwrap();
    if name.ends_with(".requires_grad") || name.ends_with("_requires_grad") {
        return leaf().to_string();
    }
    if let Some((_, op)) = name.split_once(".grad:") {
        let x = leaf();
        let y = match op {
            "mul" => &x * 2,
            "add" => &x + &x,
            "neg" => -&x,
            "div" => &x / 3,
            other => panic!("{name}: no case for {other}"),
        };
        return y.to_string();
    }
    if name.ends_with(".param") {
        return Param::new(t.deep_copy().unwrap()).to_string();
    }
    t.to_string()
}

#[test]
fn tensors_and_parameters_print_as_pytorchs_repr() {
    let tensors = integration_tests::tensors("tensor/print.safetensors");
    let text = std::fs::read_to_string(integration_tests::fixture("tensor/print.json")).unwrap();
    let reprs: BTreeMap<String, String> = serde_json::from_str(&text).unwrap();
    assert_eq!(reprs.len(), 48, "the fixture's cases");
    let mut wrong = Vec::new();
    for (name, want) in &reprs {
        let got = printed(name, &tensors[name]);
        if &got != want {
            wrong.push(format!("{name}:\n{got}\nPyTorch:\n{want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ:\n\n{}",
        wrong.len(),
        reprs.len(),
        wrong.join("\n\n")
    );
}

/// On a device the elements print as on the CPU, with PyTorch's `device=` suffix.
#[test]
fn a_device_tensor_prints_its_device() {
    let Some(device) = integration_tests::gpu_or_skip("a_device_tensor_prints_its_device") else {
        return;
    };
    let x = Tensor::from_vec(vec![1.0f32, 2.5], [2])
        .unwrap()
        .to_device(device)
        .unwrap();
    assert_eq!(x.to_string(), format!("tensor([1.0000, 2.5000], device='{device}')"));
}
