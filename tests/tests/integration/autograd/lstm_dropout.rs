//! The LSTM's gradient with dropout between layers, against finite differences. In a process of its own
//! (`in_own_process`): each evaluation reseeds the global generator to draw the same masks, which no other test
//! may draw from meanwhile (tests of one binary run in parallel threads and share the generator).

use integration_tests::{assert_gradient, bit_equal, check_param_element, leaf_of, max_abs_diff};
use nn::layers::{LSTM, LstmOptions};
use nn::prelude::*;
use nn::{DType, Result, Tensor};

/// Deterministic `f64` values of `shape` in `[-2, 2]`, away from 0.
fn values(shape: &[usize], phase: f64) -> Tensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| ((i as f64 + phase) * 0.754_877_666_2).fract() * 4.0 - 2.0)
        .map(|t| if t.abs() < 0.1 { t + 0.25 } else { t })
        .collect();
    Tensor::from_vec(v, shape.to_vec()).unwrap()
}

#[test]
fn lstm_dropout_between_layers_gets_the_gradient_through_its_mask() {
    integration_tests::in_own_process(|| {
        // Three bidirectional layers with dropout 0.5 between them, in training, f64.
        let options = LstmOptions {
            num_layers: 3,
            bidirectional: true,
            dropout: 0.5,
            ..LstmOptions::default()
        };
        nn::manual_seed(8);
        let mut lstm = LSTM::with_options(3, 2, options).unwrap();
        lstm.to_dtype(DType::F64).unwrap();
        let inputs = [
            values(&[3, 2, 3], 0.0),
            values(&[6, 2, 2], 1.0),
            values(&[6, 2, 2], 2.0),
        ];
        let run = |lstm: &LSTM, t: &[Tensor]| -> Result<Tensor> {
            nn::manual_seed(99);
            let (out, (h, c)) = lstm.forward((t[0].clone(), Some((t[1].clone(), t[2].clone()))))?;
            Tensor::cat(&[&out.flatten(0, -1)?, &h.flatten(0, -1)?, &c.flatten(0, -1)?], 0)
        };
        let n = run(&lstm, &inputs).unwrap().numel();
        let weights = Tensor::from_vec((0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect(), vec![n]).unwrap();
        let loss = |lstm: &LSTM, t: &[Tensor]| run(lstm, t).unwrap().mul(&weights).unwrap().sum_all().unwrap();
        // The masks change the result (dropout is on), and the same seed draws the same masks.
        let dropped = run(&lstm, &inputs).unwrap();
        assert!(bit_equal(&dropped, &run(&lstm, &inputs).unwrap()));
        lstm.eval();
        assert!(max_abs_diff(&dropped, &run(&lstm, &inputs).unwrap()) > 1e-3);
        lstm.train(true);
        // Inputs and state: every element against its central difference.
        let leaves: Vec<Tensor> = inputs.iter().map(leaf_of).collect();
        loss(&lstm, &leaves).backward().unwrap();
        for (i, leaf) in leaves.iter().enumerate() {
            let analytic = leaf.grad().unwrap().to_vec_f64().unwrap();
            let base = inputs[i].to_vec_f64().unwrap();
            for j in 0..base.len() {
                let at = |d: f64| {
                    let _no_grad = nn::no_grad();
                    let mut moved = inputs.to_vec();
                    let mut v = base.clone();
                    v[j] += d;
                    moved[i] = Tensor::from_vec(v, inputs[i].shape().clone()).unwrap();
                    loss(&lstm, &moved).item().unwrap()
                };
                let numeric = (at(1e-6) - at(-1e-6)) / 2e-6;
                assert_gradient(&format!("input {i}[{j}]"), analytic[j], numeric);
            }
        }
        // Every third element of every parameter.
        lstm.zero_grad(true);
        loss(&lstm, &inputs).backward().unwrap();
        for (name, p) in lstm.named_parameters() {
            let analytic = p.grad().unwrap().to_vec_f64().unwrap();
            for j in (0..analytic.len()).step_by(3) {
                check_param_element(&name, &p, j, analytic[j], || loss(&lstm, &inputs).item().unwrap());
            }
        }
    });
}
