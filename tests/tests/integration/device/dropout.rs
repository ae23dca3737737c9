//! Dropout in training on a device draws the CPU's masks: the LSTM's dropout between layers (its fused recurrence
//! and backward) and the `Dropout` layer, for one seed, forward and gradient. In a process of its own (`in_own_process`): it reseeds the global
//! generator and draws right after, which other tests of one binary (building layers, drawing inputs) would race
//! across threads.

use integration_tests::{bit_equal, gpu_or_skip, max_rel_diff, sine_values as values, twin};
use nn::prelude::*;

#[test]
fn lstm_and_dropout_in_training_on_the_device_draw_the_cpus_masks() {
    integration_tests::in_own_process(|| {
        let Some(dev) = gpu_or_skip("lstm_dropout") else {
            return;
        };
        let options = LstmOptions {
            num_layers: 2,
            dropout: 0.5,
            ..LstmOptions::default()
        };
        let cpu = LSTM::with_options(3, 2, options).unwrap();
        let gpu = twin(&cpu, || LSTM::with_options(3, 2, options).unwrap(), dev);
        let x = values(&[4, 2, 3], 0.0, DType::F32);
        let weights = values(&[4, 2, 2], 2.0, DType::F32);
        // Per device: the output, then the gradients of the input and of every parameter.
        let mut outputs: Vec<Vec<Tensor>> = Vec::new();
        for (lstm, on) in [(&cpu, Device::Cpu), (&gpu, dev)] {
            nn::manual_seed(7);
            let mut xd = x.to_device(on).unwrap();
            xd.set_requires_grad(true).unwrap();
            let (y, (h, _)) = lstm.forward((xd.clone(), None)).unwrap();
            assert_eq!(y.device(), on);
            // The fused recurrence with its backward as one node, dropout included, on both.
            assert_eq!(h.grad_fn_name(), Some("lstm"), "on {on}");
            let loss = y.mul(&weights.to_device(on).unwrap()).unwrap().sum_all().unwrap();
            loss.backward().unwrap();
            let mut got = vec![y.detach().cpu().unwrap(), xd.grad().unwrap().cpu().unwrap()];
            got.extend(lstm.parameters().iter().map(|p| p.grad().unwrap().cpu().unwrap()));
            outputs.push(got);
        }
        for (i, (d, c)) in outputs[1].iter().zip(&outputs[0]).enumerate() {
            let err = max_rel_diff(d, c, 1.0);
            assert!(
                err <= 1e-5,
                "LSTM with dropout: result {i} (the output, the input's gradient, then the parameters') differs \
                 between the device and the CPU by {err:e} for one seed"
            );
        }
        // Dropout acted: without it (eval) the output differs.
        let mut plain = twin(&cpu, || LSTM::with_options(3, 2, options).unwrap(), Device::Cpu);
        plain.eval();
        let (y_eval, _) = plain.forward((x.clone(), None)).unwrap();
        assert!(
            max_rel_diff(&y_eval, &outputs[0][0], 1.0) > 1e-3,
            "dropout changed nothing"
        );
        // The layer: the same mask for one seed, and its gradient (the mask again) on the device.
        let drop = Dropout::new(0.25, false).unwrap();
        let x = values(&[3, 5], 1.0, DType::F32);
        let mut results = Vec::new();
        for on in [Device::Cpu, dev] {
            nn::manual_seed(3);
            let mut xd = x.to_device(on).unwrap();
            xd.set_requires_grad(true).unwrap();
            let y = drop.forward(xd.clone()).unwrap();
            y.sum_all().unwrap().backward().unwrap();
            let grad = xd.grad().unwrap();
            assert_eq!(grad.device(), on);
            results.push((y.detach().cpu().unwrap(), grad.cpu().unwrap()));
        }
        assert!(bit_equal(&results[0].0, &results[1].0), "dropout output");
        assert!(bit_equal(&results[0].1, &results[1].1), "dropout gradient");
    });
}

/// The feature-map and alpha dropouts on a device: the CPU's noise for one seed, the output and the gradient
/// within f32's rounding of the CPU's (alpha dropout's affine step runs as the device's kernels).
#[test]
fn feature_and_alpha_dropout_on_the_device_draw_the_cpus_noise() {
    integration_tests::in_own_process(|| {
        let Some(dev) = gpu_or_skip("feature_dropout") else {
            return;
        };
        let x = values(&[2, 3, 4, 5], 0.5, DType::F32);
        type Function = fn(&Tensor, f64, bool) -> nn::Result<Tensor>;
        let functions: [(&str, Function); 3] = [
            ("dropout2d", nn::functional::dropout2d),
            ("alpha_dropout", nn::functional::alpha_dropout),
            ("feature_alpha_dropout", nn::functional::feature_alpha_dropout),
        ];
        for (name, function) in functions {
            let mut results = Vec::new();
            for on in [Device::Cpu, dev] {
                nn::manual_seed(11);
                let mut xd = x.to_device(on).unwrap();
                xd.set_requires_grad(true).unwrap();
                let y = function(&xd, 0.4, true).unwrap();
                assert_eq!(y.device(), on, "{name}");
                y.sum_all().unwrap().backward().unwrap();
                results.push((y.detach().cpu().unwrap(), xd.grad().unwrap().cpu().unwrap()));
            }
            for (what, (c, d)) in [
                ("output", (&results[0].0, &results[1].0)),
                ("gradient", (&results[0].1, &results[1].1)),
            ] {
                let err = max_rel_diff(d, c, 1.0);
                assert!(err <= 1e-6, "{name} {what}: the device is {err:e} from the CPU");
            }
        }
    });
}
