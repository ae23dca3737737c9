//! What the recurrent sweeps (`layers/lstm.rs`, `layers/rnn.rs` of the integration tests) share: running a fixture's cases, and checking one
//! case's outputs, loss and gradients against PyTorch's.

use nn::{DType, Device, Param, StateDict, Tensor};

use crate::{assert_close, assert_close_to_exact, tensors};

/// Checks one case of a recurrent sweep on a module already run, whose parameters are `params`: each output `(name, tensor)` against
/// `{name}`, the loss `Σ (out·proj.{name}).sum()` against `loss`, then (after its backward) each leaf input's
/// gradient against `grad.{name}` and each parameter's against `grad.param.{key}`: float64 within
/// `assert_close`'s defaults, float32 against the exact gradient `exact.grad.param.{key}`
/// ([`assert_close_to_exact`]). `get(key)` reads the case's tensor `key`, on the device.
pub fn check_outputs_and_gradients(
    what: &str,
    get: &dyn Fn(&str) -> Tensor,
    params: &[(String, Param)],
    outputs: &[(&str, &Tensor)],
    leaves: &[(&str, &Tensor)],
) {
    let mut loss: Option<Tensor> = None;
    for (name, out) in outputs {
        assert_close(&format!("{what}: {name}"), out, &get(name));
        let term = out.mul(&get(&format!("proj.{name}"))).unwrap().sum_all().unwrap();
        loss = Some(match loss {
            None => term,
            Some(l) => l.add(&term).unwrap(),
        });
    }
    let loss = loss.expect("a case has outputs");
    assert_close(&format!("{what}: loss"), &loss.reshape([1]).unwrap(), &get("loss"));
    loss.backward().unwrap_or_else(|e| panic!("{what}: backward: {e}"));
    for (name, leaf) in leaves {
        let grad = leaf.grad().unwrap_or_else(|| panic!("{what}: {name} has no gradient"));
        assert_close(&format!("{what}: grad {name}"), &grad, &get(&format!("grad.{name}")));
    }
    assert!(!params.is_empty(), "{what}: the module has parameters");
    for (key, p) in params {
        let got = p.grad().unwrap_or_else(|| panic!("{what}: {key} has no gradient"));
        let name = format!("{what}: grad {key}");
        let pytorch = get(&format!("grad.param.{key}"));
        match got.dtype() {
            DType::F64 => assert_close(&name, &got, &pytorch),
            _ => assert_close_to_exact(&name, &got, &pytorch, &get(&format!("exact.grad.param.{key}"))),
        }
    }
}

/// Runs every case of the sweep fixture `file` (cases `{i}.config`, `expected` of them) on `device` with
/// `run(tensors, i, device)`, which returns whether the case ran; every case must run on the CPU, and on a
/// device at least each whose config's entry `dtype_at` is 0 (float32).
pub fn check_sweep_file(
    file: &str,
    expected: usize,
    dtype_at: usize,
    device: Device,
    run: impl Fn(&StateDict, usize, Device) -> bool,
) {
    let f = tensors(file);
    let cases = (0..).take_while(|i| f.contains_key(&format!("{i}.config"))).count();
    assert_eq!(cases, expected, "the cases of {file}");
    let float32 = (0..cases)
        .filter(|i| f[&format!("{i}.config")].to_vec::<i64>().unwrap()[dtype_at] == 0)
        .count();
    let ran = (0..cases).filter(|&i| run(&f, i, device)).count();
    assert!(
        ran >= if device.is_cpu() { expected } else { float32 },
        "{ran} cases of {file} ran on {device}"
    );
}
