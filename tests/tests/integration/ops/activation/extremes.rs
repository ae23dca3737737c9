//! Every element-wise activation at ±inf, ±1e30, ±100, ±20, 0 and NaN, forward and input gradient, against
//! PyTorch 2.5.1's vectorised CPU kernels (`fixtures/activation/extremes.safetensors`, made by
//! `fixtures/generate/activation_extremes.py`), on the CPU and on the device: NaN where PyTorch gives NaN,
//! the same infinity, and finite values within 1e-6 (relative, absolute below 1).

use integration_tests::{on_cpu_and_gpu, tensors};
use nn::functional::Activation;
use nn::prelude::*;

fn activations() -> Vec<(&'static str, Activation)> {
    vec![
        ("relu", Activation::Relu),
        ("relu6", Activation::Relu6),
        ("leaky_relu", Activation::LeakyRelu { negative_slope: 0.01 }),
        (
            "threshold",
            Activation::Threshold {
                threshold: 0.1,
                value: 20.0,
            },
        ),
        (
            "hardtanh",
            Activation::Hardtanh {
                min_val: -1.0,
                max_val: 1.0,
            },
        ),
        ("elu", Activation::Elu { alpha: 1.0 }),
        ("selu", Activation::Selu),
        ("celu", Activation::Celu { alpha: 1.0 }),
        ("gelu", Activation::Gelu),
        ("gelu_tanh", Activation::GeluTanh),
        ("silu", Activation::Silu),
        ("mish", Activation::Mish),
        (
            "softplus",
            Activation::Softplus {
                beta: 1.0,
                threshold: 20.0,
            },
        ),
        ("softsign", Activation::Softsign),
        ("sigmoid", Activation::Sigmoid),
        ("tanh", Activation::Tanh),
        ("hardsigmoid", Activation::Hardsigmoid),
        ("hardswish", Activation::Hardswish),
        ("tanhshrink", Activation::Tanhshrink),
        ("hardshrink", Activation::Hardshrink { lambd: 0.5 }),
        ("softshrink", Activation::Softshrink { lambd: 0.5 }),
        ("logsigmoid", Activation::LogSigmoid),
    ]
}

fn special_values_match_pytorch(device: Device) {
    let file = tensors("activation/extremes.safetensors");
    let xs = file["x"].to_vec::<f32>().unwrap();
    let same = |got: f32, want: f32| {
        (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= 1e-6 * want.abs().max(1.0)
    };
    let mut wrong = Vec::new();
    for (name, activation) in activations() {
        let mut x = file["x"].to_device(device).unwrap();
        x.set_requires_grad(true).unwrap();
        let y = activation.forward(&x).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        let got_y = y.detach().cpu().unwrap().to_vec::<f32>().unwrap();
        let got_g = x.grad().unwrap().cpu().unwrap().to_vec::<f32>().unwrap();
        for (field, got) in [("y", got_y), ("g", got_g)] {
            let want = file[&format!("{name}.{field}")].to_vec::<f32>().unwrap();
            for i in 0..xs.len() {
                // GELU of +inf: PyTorch's vectorised CPU kernel gives NaN, its scalar loop (and `erf(∞) = 1`)
                // inf; the CPU here follows the former, the device's `x·(1 + erf(x/√2))/2` the latter.
                let gelu_inf = name == "gelu" && field == "y" && xs[i] == f32::INFINITY && !device.is_cpu();
                let allowed = same(got[i], want[i]) || (gelu_inf && got[i] == f32::INFINITY);
                if !allowed {
                    wrong.push(format!(
                        "{name}.{field} at {}: {} vs PyTorch {}",
                        xs[i], got[i], want[i]
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "on {device}:\n{}", wrong.join("\n"));
}

on_cpu_and_gpu!(
    special_values_match_pytorch_on_the_cpu,
    special_values_match_pytorch_on_the_device,
    special_values_match_pytorch
);
