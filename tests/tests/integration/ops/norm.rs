//! `BatchNorm1d`, `BatchNorm2d` and `LayerNorm` against PyTorch 2.5.1 over 48 random shapes and options:
//! training outputs after earlier training calls, the gradients of the input, weight and bias, the running
//! statistics and `num_batches_tracked` after, and the output in eval mode (`tests/fixtures/ops/norm.safetensors`,
//! from `tests/fixtures/generate/norm_sweep.py`, which lists what the cases cover), on the CPU and on a device
//! (wgpu, or `NN_TEST_DEVICE`; without one the device test skips, and fails under `CI=true`).
//!
//! Tolerance: float64 cases with `torch.testing.assert_close`'s float64 defaults against PyTorch's result;
//! float32 cases against the exact result with [`assert_close_to_exact`] (a batch norm's statistics and
//! its weight's gradient sum over the whole batch).

use integration_tests::{CasesRun, assert_close, assert_close_to_exact, lacks_dtype, on_cpu_and_gpu, tensors};
use nn::prelude::*;
use nn::{Device, StateDict};

/// One case's module and what it was built from.
struct Case {
    name: String,
    module: Box<dyn TensorModule>,
    dtype: DType,
    /// Whether the module is a batch norm (it has an eval output in the fixture).
    batch_norm: bool,
}

fn case(sd: &StateDict, i: usize) -> Case {
    let c: Vec<f64> = sd[&format!("{i}.config")].to_vec::<f64>().unwrap();
    let x_shape = sd[&format!("{i}.x")].shape().clone();
    let (kind, eps, affine, second) = (c[0] as usize, c[2], c[4] == 1.0, c[5] == 1.0);
    let momentum = (!c[3].is_nan()).then_some(c[3]);
    let dtype = if c[1] == 1.0 { DType::F64 } else { DType::F32 };
    let module: Box<dyn TensorModule> = match kind {
        0 => Box::new(BatchNorm1d::with_options(x_shape[1], eps, momentum, affine, second)),
        1 => Box::new(BatchNorm2d::with_options(x_shape[1], eps, momentum, affine, second)),
        _ => {
            let dims = c[7] as usize;
            let normalized = x_shape[x_shape.len() - dims..].to_vec();
            Box::new(LayerNorm::with_options(normalized, eps, affine, second))
        }
    };
    let name = format!("case {i} ({module} on {x_shape:?}, {dtype:?}, steps {})", c[6]);
    Case {
        name,
        module,
        dtype,
        batch_norm: kind < 2,
    }
}

/// The entries of `sd` under `prefix`, without it.
fn under(sd: &StateDict, prefix: &str) -> StateDict {
    let mut out = StateDict::new();
    for (k, v) in sd.iter() {
        if let Some(key) = k.strip_prefix(prefix) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    out
}

/// Asserts `got` against the fixture's `key` by the case's rule (see the file's comment).
fn check_value(what: &str, got: &Tensor, sd: &StateDict, key: &str, dtype: DType) {
    let pytorch = &sd[key];
    if !pytorch.dtype().is_floating_point() {
        assert_eq!(
            got.cpu().unwrap().to_vec_f64().unwrap(),
            pytorch.to_vec_f64().unwrap(),
            "{what}"
        );
        return;
    }
    match dtype {
        DType::F64 => assert_close(what, got, pytorch),
        _ => assert_close_to_exact(what, got, pytorch, &sd[&format!("{key}_exact")]),
    }
}

/// Runs every case on `device` and checks it; returns how many ran in each dtype.
fn sweep(device: Device) -> CasesRun {
    let sd = tensors("ops/norm.safetensors");
    let cases = (0..).take_while(|i| sd.contains_key(&format!("{i}.config"))).count();
    assert_eq!(cases, 48, "the fixture's cases");
    let mut run = CasesRun::default();
    for i in 0..cases {
        let Case {
            name,
            mut module,
            dtype,
            batch_norm,
        } = case(&sd, i);
        if lacks_dtype(device, dtype) {
            continue;
        }
        let what = |part: &str| format!("{name} on {device}: {part}");
        let get = |k: &str| sd.get(&format!("{i}.{k}")).map(|t| t.to_device(device).unwrap());
        module.to_dtype(dtype).unwrap();
        module
            .load_state_dict(&under(&sd, &format!("{i}.state.")), true, false)
            .unwrap();
        module.to_device(device).unwrap();
        module.train(true);
        for s in 0.. {
            let Some(x) = get(&format!("x{s}")) else { break };
            module.forward(x).unwrap();
        }
        let x = get("x").unwrap().requires_grad_(true).unwrap();
        let y = module.forward(x.clone()).unwrap();
        y.backward_with(&get("dy").unwrap()).unwrap();
        assert_eq!((y.dtype(), y.device()), (dtype, device), "{}", what("y"));
        check_value(&what("y"), &y, &sd, &format!("{i}.y"), dtype);
        check_value(&what("dx"), &x.grad().unwrap(), &sd, &format!("{i}.dx"), dtype);
        let params = module.named_parameters();
        assert_eq!(
            params.len(),
            ["dweight", "dbias"]
                .iter()
                .filter(|k| sd.contains_key(&format!("{i}.{k}")))
                .count(),
            "{}",
            what("parameters")
        );
        for (key, param) in params {
            let grad = param
                .grad()
                .unwrap_or_else(|| panic!("{}", what(&format!("{key} has no gradient"))));
            check_value(&what(&format!("d{key}")), &grad, &sd, &format!("{i}.d{key}"), dtype);
        }
        let after = module.state_dict();
        // The fixture's file orders its keys its own way (by dtype, then name).
        let mut keys: Vec<String> = after.keys().cloned().collect();
        keys.sort();
        let mut want: Vec<String> = under(&sd, &format!("{i}.after."))
            .keys()
            .filter(|k| !k.ends_with("_exact"))
            .cloned()
            .collect();
        want.sort();
        assert_eq!(keys, want, "{}", what("state keys"));
        for (key, value) in after.iter() {
            check_value(
                &what(&format!("{key} after")),
                value,
                &sd,
                &format!("{i}.after.{key}"),
                dtype,
            );
        }
        if batch_norm {
            module.eval();
            let y_eval = module.forward(x.detach()).unwrap();
            check_value(&what("y in eval"), &y_eval, &sd, &format!("{i}.y_eval"), dtype);
        }
        run.ran(dtype);
    }
    run
}

/// Every case the device computes in its dtype: every float32 case, and every float64 one on the CPU.
fn check(device: Device) {
    sweep(device).assert_every_case(device, 36, 12);
}

on_cpu_and_gpu!(
    norms_match_pytorch_over_random_shapes_and_options,
    norms_on_a_device_match_pytorch_over_random_shapes_and_options,
    check
);
