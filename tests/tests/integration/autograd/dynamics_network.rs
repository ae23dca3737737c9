//! The DynamicsNetwork trains: a backward pass through the whole reference model (conv2d, batch or layer norm,
//! residual blocks with in-place activations and `x += state_encoding`, the LSTM, the MLP head) gives every
//! parameter a gradient, and those gradients match central finite differences in f64, for the four configs in
//! `fixtures/` in train and eval mode; and they equal PyTorch's (LightZero's network, `grad.safetensors` made
//! by `fixtures/generate/dynamics_grad.py`) in f32 and f64 within `assert_close`'s tolerances.

use integration_tests::{assert_close, check_param_element, fixture, tensors};
use nn::prelude::*;
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork, projected_sum};

/// A scalar of every output of the network, weighted so that no gradient is symmetric.
fn loss(net: &DynamicsNetwork, x: &Tensor, h: &Tensor, c: &Tensor) -> Tensor {
    let (latent, (h1, c1), value) = net.forward((x.clone(), (h.clone(), c.clone()))).unwrap();
    let weighted = |t: &Tensor| {
        let n = t.numel();
        let w = Tensor::from_vec(
            (0..n).map(|i| ((i * 7 % 13) as f64 - 6.0) / 5.0).collect(),
            t.shape().clone(),
        );
        t.mul(&w.unwrap()).unwrap().sum_all().unwrap()
    };
    [weighted(&latent), weighted(&h1), weighted(&c1), weighted(&value)]
        .into_iter()
        .reduce(|a, b| a.add(&b).unwrap())
        .unwrap()
}

#[test]
fn every_parameter_gets_the_finite_difference_gradient_in_every_config_and_mode() {
    for config in CONFIGS {
        let dir = fixture(config);
        let mut net = DynamicsNetwork::new(DynamicsConfig::from_file(&dir.join("config.json")).unwrap()).unwrap();
        net.load_safetensors(dir.join("weights.safetensors"), true).unwrap();
        net.to_dtype(DType::F64).unwrap();
        let io = tensors(&format!("{config}/io.safetensors"));
        let f64_of = |k: &str| io[k].to_dtype(DType::F64).unwrap();
        let (x, h, c) = (
            f64_of("input.state_action_encoding"),
            f64_of("input.h0"),
            f64_of("input.c0"),
        );
        for training in [true, false] {
            net.train(training);
            net.zero_grad(true);
            loss(&net, &x, &h, &c).backward().unwrap();
            for (i, (name, p)) in net.named_parameters().into_iter().enumerate() {
                let analytic = p
                    .grad()
                    .unwrap_or_else(|| panic!("{config}: {name} has no gradient"))
                    .to_vec_f64()
                    .unwrap();
                // One element of each parameter, a different one each time.
                let j = (i * 5) % analytic.len();
                let what = format!("{config} (training {training}): {name}");
                check_param_element(&what, &p, j, analytic[j], || loss(&net, &x, &h, &c).item().unwrap());
            }
        }
    }
}

const CONFIGS: [&str; 4] = [
    "dynamics_small",
    "dynamics_gelu_ln",
    "dynamics_ln_downsample",
    "dynamics_prelu_deep",
];

/// One backward pass of `sum over outputs of (output * proj).sum()` on `device` in `dtype`, checked against
/// PyTorch's loss, parameter gradients and input gradients from the config's `grad.safetensors`.
fn matches_pytorch(config: &str, device: Device, dtype: DType) {
    let dir = fixture(config);
    let reference = tensors(&format!("{config}/grad.safetensors"));
    let tag = integration_tests::short(dtype);
    let on = |k: &str| reference[k].to_dtype(dtype).unwrap().to_device(device).unwrap();
    for mode in ["train", "eval"] {
        let mut net = DynamicsNetwork::new(DynamicsConfig::from_file(&dir.join("config.json")).unwrap()).unwrap();
        net.load_safetensors(dir.join("weights.safetensors"), true).unwrap();
        net.to_dtype(dtype).unwrap();
        net.to_device(device).unwrap();
        net.train(mode == "train");
        let inputs =
            ["state_action_encoding", "h0", "c0"].map(|k| on(&format!("input.{k}")).requires_grad_(true).unwrap());
        let [x, h, c] = &inputs;
        let outputs = net.forward((x.clone(), (h.clone(), c.clone()))).unwrap();
        let loss = projected_sum(outputs, |name| Ok(on(&format!("proj.{name}")))).unwrap();
        loss.backward().unwrap();
        let prefix = format!("{mode}.{tag}");
        let what = |name: &str| format!("{config} on {device:?}, {prefix}: {name}");
        assert_close(
            &what("loss"),
            &loss.reshape([1]).unwrap(),
            &reference[&format!("{prefix}.loss")],
        );
        let params = net.named_parameters();
        let expected: Vec<_> = reference
            .keys()
            .filter_map(|k| k.strip_prefix(&format!("{prefix}.grad.")))
            .filter(|k| !k.starts_with("input."))
            .collect();
        assert_eq!(params.len(), expected.len(), "{}", what("parameter count"));
        for (name, p) in params {
            let grad = p.grad().unwrap_or_else(|| panic!("{}: no gradient", what(&name)));
            assert!(grad.device() == device, "{}: gradient left the device", what(&name));
            assert_close(&what(&name), &grad, &reference[&format!("{prefix}.grad.{name}")]);
        }
        for (k, t) in ["state_action_encoding", "h0", "c0"].into_iter().zip(&inputs) {
            let grad = t.grad().unwrap_or_else(|| panic!("{}: no gradient", what(k)));
            assert_close(&what(k), &grad, &reference[&format!("{prefix}.grad.input.{k}")]);
        }
    }
}

#[test]
fn gradients_equal_pytorchs_on_the_cpu_in_f32_and_f64() {
    for config in CONFIGS {
        for dtype in [DType::F32, DType::F64] {
            matches_pytorch(config, Device::Cpu, dtype);
        }
    }
}

#[test]
fn gradients_equal_pytorchs_on_wgpu_in_f32() {
    let Some(device) = integration_tests::gpu_or_skip("gradients_equal_pytorchs_on_wgpu_in_f32") else {
        return;
    };
    for config in CONFIGS {
        matches_pytorch(config, device, DType::F32);
    }
}
