//! The LSTM's gradients against PyTorch 2.5.1's (`fixtures/lstm_grad.safetensors`, made by
//! `fixtures/generate/lstm_grad.py`): several steps, two and three layers, both directions, batch-first,
//! unbatched, without biases, and the DynamicsNetwork's one-step shape; in f64 and f32. On the CPU these run
//! the fused backward (one node for the whole recurrence).

use integration_tests::{assert_close, leaf_of, tensors};
use nn::layers::{LSTM, LstmOptions};
use nn::prelude::*;
use nn::{DType, StateDict, Tensor};

/// Loads the case's parameters, runs the forward and backward of PyTorch's loss, and compares the loss and
/// every gradient with assert_close's defaults for the dtype.
fn check(name: &str, make: impl Fn() -> LSTM, with_state: bool) {
    let f = tensors("lstm_grad.safetensors");
    for (tag, dtype) in [("f64", DType::F64), ("f32", DType::F32)] {
        let p = format!("{name}.{tag}");
        let mut m = make();
        m.to_dtype(dtype).unwrap();
        let prefix = format!("{p}.param.");
        let params: StateDict = f
            .iter()
            .filter_map(|(k, t)| k.strip_prefix(&prefix).map(|k| (k.to_owned(), t.clone())))
            .collect();
        m.load_state_dict(&params, true, false).unwrap();
        let x = leaf_of(&f[&format!("{p}.input")]);
        let state = with_state.then(|| (leaf_of(&f[&format!("{p}.h0")]), leaf_of(&f[&format!("{p}.c0")])));
        let (y, (h, c)) = m.forward((x.clone(), state.clone())).unwrap();
        let term = |t: &Tensor, k: &str| t.mul(&f[&format!("{p}.proj.{k}")]).unwrap().sum_all().unwrap();
        let loss = term(&y, "output")
            .add(&term(&h, "h_n"))
            .unwrap()
            .add(&term(&c, "c_n"))
            .unwrap();
        assert_close(
            &format!("{p} loss"),
            &loss.reshape([1]).unwrap(),
            &f[&format!("{p}.loss")],
        );
        loss.backward().unwrap();
        let grad = |t: &Tensor, what: &str| t.grad().unwrap_or_else(|| panic!("{p}: {what} has no gradient"));
        assert_close(
            &format!("{p} grad input"),
            &grad(&x, "input"),
            &f[&format!("{p}.grad.input")],
        );
        if let Some((h0, c0)) = &state {
            assert_close(&format!("{p} grad h0"), &grad(h0, "h0"), &f[&format!("{p}.grad.h0")]);
            assert_close(&format!("{p} grad c0"), &grad(c0, "c0"), &f[&format!("{p}.grad.c0")]);
        }
        let mut seen = 0;
        for (key, param) in m.named_parameters() {
            let got = param.grad().unwrap_or_else(|| panic!("{p}: {key} has no gradient"));
            assert_close(&format!("{p} grad {key}"), &got, &f[&format!("{p}.grad.param.{key}")]);
            seen += 1;
        }
        assert_eq!(seen, params.len(), "{p}: every parameter checked");
    }
}

fn options(num_layers: usize, bidirectional: bool, batch_first: bool, bias: bool) -> LstmOptions {
    LstmOptions {
        num_layers,
        bidirectional,
        batch_first,
        bias,
        ..LstmOptions::default()
    }
}

#[test]
fn two_layers_over_four_steps_with_a_state() {
    check(
        "two_layer",
        || LSTM::with_options(5, 7, options(2, false, false, true)).unwrap(),
        true,
    );
}

#[test]
fn bidirectional_batch_first_without_biases() {
    let make = || LSTM::with_options(3, 4, options(2, true, true, false)).unwrap();
    check("bi_no_bias_batch_first", make, false);
}

#[test]
fn unbatched_over_six_steps() {
    check("unbatched", || LSTM::new(3, 4), true);
}

#[test]
fn three_bidirectional_layers_over_seven_steps() {
    let make = || LSTM::with_options(4, 6, options(3, true, false, true)).unwrap();
    check("three_layer_bi", make, true);
}

#[test]
fn one_step_as_in_the_dynamics_network() {
    check("one_step", || LSTM::new(36, 32), true);
}

#[test]
fn a_weight_changed_in_place_before_the_backward_is_an_error_naming_the_lstm() {
    let m = LSTM::new(3, 4);
    let (y, _) = m.forward((Tensor::ones([2, 1, 3], DType::F32), None)).unwrap();
    {
        let _no_grad = nn::no_grad();
        let w = m.param("weight_hh_l0").unwrap();
        w.data().copy_(&Tensor::zeros([16, 4], DType::F32)).unwrap();
    }
    let err = y.sum_all().unwrap().backward().unwrap_err().to_string();
    assert!(err.contains("lstm") && err.contains("changed in place"), "{err}");
}
