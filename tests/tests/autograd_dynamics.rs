//! The DynamicsNetwork trains: a backward pass through the whole reference model (conv2d, batch or layer norm,
//! residual blocks with in-place activations and `x += state_encoding`, the LSTM, the MLP head) gives every
//! parameter a gradient, and those gradients match central finite differences in f64, for the four configs in
//! `fixtures/` in train and eval mode. (PyTorch's own gradients need LightZero to export; not here yet.)

use integration_tests::{check_param_element, fixture, tensors};
use nn::prelude::*;
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};

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
    for config in [
        "dynamics_small",
        "dynamics_gelu_ln",
        "dynamics_ln_downsample",
        "dynamics_prelu_deep",
    ] {
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
