//! The LSTM's gradients against PyTorch 2.5.1's (`fixtures/autograd/lstm.safetensors`, made by
//! `fixtures/generate/lstm_grad.py`): several steps, two and three layers, both directions, batch-first,
//! unbatched, without biases, and the DynamicsNetwork's one-step shape; in f64 and f32 on the CPU, and in f32 on
//! wgpu. On both these run the fused backward (one node for the whole recurrence).

use integration_tests::{assert_close, gpu_or_skip, leaf_of, tensors};
use nn::layers::{LSTM, LstmOptions};
use nn::prelude::*;
use nn::{DType, Device, Tensor};

/// [`check_on`] on the CPU in f64 and f32.
fn check(name: &str, make: impl Fn() -> LSTM, with_state: bool) {
    check_on(
        name,
        make,
        with_state,
        Device::Cpu,
        &[("f64", DType::F64), ("f32", DType::F32)],
    );
}

/// Loads the case's parameters, runs the forward and backward of PyTorch's loss on `device`, and compares the
/// loss and every gradient with assert_close's defaults for the dtype.
fn check_on(name: &str, make: impl Fn() -> LSTM, with_state: bool, device: Device, dtypes: &[(&str, DType)]) {
    let f = tensors("autograd/lstm.safetensors");
    for &(tag, dtype) in dtypes {
        let p = format!("{name}.{tag}");
        let mut m = make();
        m.to_dtype(dtype).unwrap();
        let params = integration_tests::under(&f, &format!("{p}.param."));
        m.load_state_dict(&params, true, false).unwrap();
        m.to_device(device).unwrap();
        let leaf = |key: &str| leaf_of(&f[&format!("{p}.{key}")].to_device(device).unwrap());
        let x = leaf("input");
        let state = with_state.then(|| (leaf("h0"), leaf("c0")));
        let (y, (h, c)) = m.forward((x.clone(), state.clone())).unwrap();
        if device != Device::Cpu && name == "two_layer" {
            // One node for the whole recurrence on the device too, not the recorded steps' `cat`.
            assert_eq!(h.grad_fn_name(), Some("lstm"), "{p}: h_n's grad_fn");
        }
        let on = |k: &str| f[&format!("{p}.proj.{k}")].to_device(device).unwrap();
        let term = |t: &Tensor, k: &str| t.mul(&on(k)).unwrap().sum_all().unwrap();
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
    assert!(
        err.contains("lstm") && err.contains("modified by an inplace operation"),
        "{err}"
    );
}

/// Every case above on wgpu in f32: the fused forward keeps its trace there, and the backward runs there (two
/// launches per step and cell, then matrix products), with PyTorch's gradients.
#[test]
fn on_wgpu_every_case_gives_pytorchs_gradients() {
    let Some(dev) = gpu_or_skip("lstm gradients on wgpu") else {
        return;
    };
    let f32 = [("f32", DType::F32)];
    check_on(
        "two_layer",
        || LSTM::with_options(5, 7, options(2, false, false, true)).unwrap(),
        true,
        dev,
        &f32,
    );
    let make = || LSTM::with_options(3, 4, options(2, true, true, false)).unwrap();
    check_on("bi_no_bias_batch_first", make, false, dev, &f32);
    check_on("unbatched", || LSTM::new(3, 4), true, dev, &f32);
    let make = || LSTM::with_options(4, 6, options(3, true, false, true)).unwrap();
    check_on("three_layer_bi", make, true, dev, &f32);
    check_on("one_step", || LSTM::new(36, 32), true, dev, &f32);
}
