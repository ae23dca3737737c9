//! `RNN` (tanh and relu), `GRU`, `RNNCell`, `GRUCell` and `LSTMCell` against PyTorch 2.5.1 over 56 random
//! configurations: the outputs, the loss and every gradient (`tests/fixtures/layers/rnn.safetensors`, from
//! `tests/fixtures/generate/rnn_sweep.py`, which lists what the configurations cover: input sizes 1 to 40, hidden
//! sizes 1 to 65, one to three layers, both directions, batch-first, no biases, 1 to 30 steps, unbatched inputs,
//! an empty batch, with and without a state), on the CPU and on a device (wgpu, or `NN_TEST_DEVICE`; without one
//! the device test skips, and fails under `CI=true`). Then the keys, shapes and reprs PyTorch prints, and its
//! refusals, with its messages.
//!
//! Tolerance: `torch.testing.assert_close`'s defaults for the dtype against PyTorch's result; the parameters'
//! float32 gradients against the exact ones (see `layers/lstm.rs`).

use integration_tests::recurrent::{check_outputs_and_gradients, check_sweep_file};
use integration_tests::{lacks_dtype, leaf_of, on_cpu_and_gpu};
use nn::layers::{GruOptions, Nonlinearity, RnnOptions};
use nn::prelude::*;
use nn::{DType, Device, Error, Param, StateDict, Tensor};

/// The outputs of case `i`'s module, by name, and the leaves whose gradients are checked.
type Run = (Vec<(&'static str, Tensor)>, Vec<(&'static str, Tensor)>);

/// Builds case `i`'s module from its config `c`, loads its parameters, and runs it on `device`: its parameters,
/// and what it returned.
fn run_module(
    f: &StateDict,
    i: usize,
    c: &[i64],
    dtype: DType,
    device: Device,
) -> (Vec<(String, Param)>, nn::Result<Run>) {
    let (n_in, hid, bias) = (c[1] as usize, c[2] as usize, c[6] == 1);
    let relu = |relu: bool| if relu { Nonlinearity::Relu } else { Nonlinearity::Tanh };
    let params = integration_tests::under(f, &format!("{i}.param."));
    fn prepared<M: Module>(mut m: M, params: &StateDict, dtype: DType, device: Device) -> M {
        m.to_dtype(dtype).unwrap();
        m.load_state_dict(params, true, false).unwrap();
        m.to_device(device).unwrap();
        m
    }
    let leaf = |key: &str| leaf_of(&f[&format!("{i}.{key}")].to_device(device).unwrap());
    let x = leaf("input");
    let with_state = c[9] == 1;
    let h0 = with_state.then(|| leaf("h0"));
    let mut leaves = vec![("input", x.clone())];
    leaves.extend(h0.iter().map(|h| ("h0", h.clone())));
    let sequence = |(y, h): (Tensor, Tensor)| (vec![("output", y), ("h_n", h)], leaves.clone());
    let step = |h: Tensor| (vec![("h", h)], leaves.clone());
    let (num_layers, bidirectional, batch_first) = (c[3] as usize, c[4] == 1, c[5] == 1);
    match c[0] {
        0 | 1 => {
            let nonlinearity = relu(c[0] == 1);
            let o = RnnOptions {
                num_layers,
                nonlinearity,
                bias,
                batch_first,
                bidirectional,
                ..Default::default()
            };
            let m = prepared(RNN::with_options(n_in, hid, o).unwrap(), &params, dtype, device);
            (m.named_parameters(), m.forward((x, h0)).map(sequence))
        }
        2 => {
            let o = GruOptions {
                num_layers,
                bias,
                batch_first,
                bidirectional,
                ..Default::default()
            };
            let m = prepared(GRU::with_options(n_in, hid, o).unwrap(), &params, dtype, device);
            (m.named_parameters(), m.forward((x, h0)).map(sequence))
        }
        3 | 4 => {
            let m = RNNCell::with_options(n_in, hid, bias, relu(c[0] == 4)).unwrap();
            let m = prepared(m, &params, dtype, device);
            (m.named_parameters(), m.forward((x, h0)).map(step))
        }
        5 => {
            let m = prepared(GRUCell::with_options(n_in, hid, bias).unwrap(), &params, dtype, device);
            (m.named_parameters(), m.forward((x, h0)).map(step))
        }
        _ => {
            let m = prepared(LSTMCell::with_options(n_in, hid, bias).unwrap(), &params, dtype, device);
            let c0 = with_state.then(|| leaf("c0"));
            let mut leaves = leaves.clone();
            leaves.extend(c0.iter().map(|c| ("c0", c.clone())));
            let run = m.forward((x, h0.zip(c0)));
            (
                m.named_parameters(),
                run.map(|(h, c)| (vec![("h", h), ("c", c)], leaves)),
            )
        }
    }
}

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(f: &StateDict, i: usize, device: Device) -> bool {
    let c: Vec<i64> = f[&format!("{i}.config")].to_vec::<i64>().unwrap();
    let dtype = if c[10] == 1 { DType::F64 } else { DType::F32 };
    if lacks_dtype(device, dtype) {
        return false;
    }
    let what = format!("case {i} (config {c:?}, {dtype}) on {device}");
    let (params, run) = run_module(f, i, &c, dtype, device);
    let (outputs, leaves) = match run {
        Ok(run) => run,
        // tanh and sigmoid in float64 are refused on wgpu before launch (README): a typed refusal.
        Err(e @ Error::UnsupportedOnDevice { .. }) if !device.is_cpu() => {
            eprintln!("{what}: {e}");
            return false;
        }
        Err(e) => panic!("{what}: forward: {e}"),
    };
    let get = |key: &str| {
        f.get(&format!("{i}.{key}"))
            .unwrap_or_else(|| panic!("{what}: no {key}"))
            .to_device(device)
            .unwrap()
    };
    let outputs: Vec<(&str, &Tensor)> = outputs.iter().map(|(k, t)| (*k, t)).collect();
    let leaves: Vec<(&str, &Tensor)> = leaves.iter().map(|(k, t)| (*k, t)).collect();
    check_outputs_and_gradients(&what, &get, &params, &outputs, &leaves);
    true
}

fn check(device: Device) {
    check_sweep_file("layers/rnn.safetensors", 56, 10, device, run_case);
}

on_cpu_and_gpu!(
    rnn_gru_and_cell_outputs_and_gradients_match_pytorch_over_random_configurations,
    rnn_gru_and_cell_outputs_and_gradients_on_a_device_match_pytorch_over_random_configurations,
    check
);

/// Keys, shapes and reprs as PyTorch 2.5.1 prints them (`print(m)`, `m.state_dict()`).
#[test]
fn recurrent_layers_have_pytorchs_keys_shapes_and_reprs() {
    let gru = GRU::with_options(
        3,
        4,
        GruOptions {
            num_layers: 2,
            bias: false,
            bidirectional: true,
            dropout: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    // GRU(3, 4, num_layers=2, bias=False, dropout=0.5, bidirectional=True)
    assert_eq!(
        gru.to_string(),
        "GRU(3, 4, num_layers=2, bias=False, dropout=0.5, bidirectional=True)"
    );
    let shapes: Vec<(String, Vec<usize>)> = gru
        .state_dict()
        .iter()
        .map(|(k, t)| (k.clone(), t.shape().to_vec()))
        .collect();
    let want = [
        ("weight_ih_l0", vec![12, 3]),
        ("weight_hh_l0", vec![12, 4]),
        ("weight_ih_l0_reverse", vec![12, 3]),
        ("weight_hh_l0_reverse", vec![12, 4]),
        ("weight_ih_l1", vec![12, 8]),
        ("weight_hh_l1", vec![12, 4]),
        ("weight_ih_l1_reverse", vec![12, 8]),
        ("weight_hh_l1_reverse", vec![12, 4]),
    ];
    assert_eq!(shapes, want.map(|(k, s)| (k.to_string(), s)));
    // RNN(10, 20, num_layers=2): PyTorch does not print the nonlinearity of an RNN, and does of an RNNCell.
    let o = RnnOptions {
        num_layers: 2,
        nonlinearity: Nonlinearity::Relu,
        ..Default::default()
    };
    assert_eq!(
        RNN::with_options(10, 20, o).unwrap().to_string(),
        "RNN(10, 20, num_layers=2)"
    );
    let rnn = RNN::new(2, 3);
    let keys: Vec<String> = rnn.state_dict().keys().cloned().collect();
    assert_eq!(keys, ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]);
    assert_eq!(rnn.param("weight_hh_l0").unwrap().shape().to_vec(), [3, 3]);
    let cell = RNNCell::with_options(3, 5, false, Nonlinearity::Relu).unwrap();
    assert_eq!(cell.to_string(), "RNNCell(3, 5, bias=False, nonlinearity=relu)");
    assert_eq!(RNNCell::new(3, 5).to_string(), "RNNCell(3, 5)");
    assert_eq!(GRUCell::new(3, 5).to_string(), "GRUCell(3, 5)");
    let lstm_cell = LSTMCell::new(3, 5);
    assert_eq!(lstm_cell.to_string(), "LSTMCell(3, 5)");
    let shapes: Vec<(String, Vec<usize>)> = lstm_cell
        .state_dict()
        .iter()
        .map(|(k, t)| (k.clone(), t.shape().to_vec()))
        .collect();
    let want = [
        ("weight_ih", vec![20, 3]),
        ("weight_hh", vec![20, 5]),
        ("bias_ih", vec![20]),
        ("bias_hh", vec![20]),
    ];
    assert_eq!(shapes, want.map(|(k, s)| (k.to_string(), s)));
    // Every parameter uniform in ±1/sqrt(hidden_size), as PyTorch's reset_parameters draws them.
    let bound = 1.0 / 5f64.sqrt();
    for (key, t) in GRUCell::new(30, 5).state_dict() {
        let v = t.to_vec_f64().unwrap();
        assert!(v.iter().all(|x| x.abs() <= bound), "{key} within ±{bound}");
        assert!(v.iter().any(|x| x.abs() > bound / 2.0), "{key} spread over its range");
    }
}

/// Sizes of 0 that PyTorch 2.5.1 accepts in a cell (`nn.RNNCell(3, 0)`, `nn.GRUCell(0, 4)`): empty parameters and an
/// empty output, or an output from the biases alone, equal in every row.
#[test]
fn cells_of_no_hidden_or_input_features_run_as_in_pytorch() {
    let cell = RNNCell::new(3, 0);
    let shapes: Vec<Vec<usize>> = cell.state_dict().values().map(|t| t.shape().to_vec()).collect();
    assert_eq!(shapes, [vec![0, 3], vec![0, 0], vec![0], vec![0]]);
    let h = cell.forward((Tensor::ones([2, 3], DType::F32), None)).unwrap();
    assert_eq!(h.shape().to_vec(), [2, 0]);
    let (h, c) = LSTMCell::new(3, 0)
        .forward((Tensor::ones([2, 3], DType::F32), None))
        .unwrap();
    assert_eq!((h.shape().to_vec(), c.shape().to_vec()), (vec![2, 0], vec![2, 0]));
    let h = GRUCell::new(0, 4)
        .forward((Tensor::zeros([2, 0], DType::F32), None))
        .unwrap();
    let v = h.to_vec::<f32>().unwrap();
    assert_eq!(h.shape().to_vec(), [2, 4]);
    assert_eq!(v[..4], v[4..]);
    assert!(v.iter().all(|x| x.is_finite() && *x != 0.0), "{v:?}");
}

/// Asserts `result` is an `InvalidArgument` whose message contains PyTorch's `message`.
fn assert_refused<T>(what: &str, result: nn::Result<T>, message: &str) {
    match result {
        Err(e @ Error::InvalidArgument { .. }) => {
            assert!(e.to_string().contains(message), "{what}: {e} should say {message:?}")
        }
        Err(e) => panic!("{what}: {e}, expected a refusal saying {message:?}"),
        Ok(_) => panic!("{what}: accepted, expected a refusal saying {message:?}"),
    }
}

/// PyTorch 2.5.1's refusals of bad arguments and inputs, with its messages (printed by `str(e)`), and nothing
/// changed by a refused call.
#[test]
fn recurrent_layers_refuse_what_pytorch_refuses_with_its_messages() {
    let z = |shape: &[usize]| Tensor::zeros(shape.to_vec(), DType::F32);
    assert_refused(
        "hidden 0",
        RNN::with_options(3, 0, RnnOptions::default()),
        "hidden_size must be greater than zero",
    );
    let layers0 = GruOptions {
        num_layers: 0,
        ..Default::default()
    };
    assert_refused(
        "no layers",
        GRU::with_options(3, 4, layers0),
        "num_layers must be greater than zero",
    );
    let dropout = GruOptions {
        dropout: 1.5,
        ..Default::default()
    };
    assert_refused(
        "dropout 1.5",
        GRU::with_options(3, 4, dropout),
        "dropout should be a number in range [0, 1] representing the probability of an element being zeroed",
    );
    let r = RNN::new(3, 4);
    assert_refused(
        "4-d input",
        r.forward((z(&[2, 3, 4, 5]), None)),
        "RNN: Expected input to be 2D or 3D, got 4D tensor instead",
    );
    assert_refused(
        "input features",
        r.forward((z(&[2, 3, 5]), None)),
        "input.size(-1) must be equal to input_size. Expected 3, got 5",
    );
    assert_refused(
        "h0 shape",
        r.forward((z(&[2, 3, 3]), Some(z(&[1, 3, 5])))),
        "Expected hidden size",
    );
    assert_refused(
        "2-d h0, batched",
        r.forward((z(&[2, 3, 3]), Some(z(&[3, 5])))),
        "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
    );
    assert_refused(
        "3-d h0, unbatched",
        GRU::new(3, 4).forward((z(&[2, 3]), Some(z(&[1, 3, 5])))),
        "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
    );
    assert_refused(
        "no steps",
        r.forward((z(&[0, 3, 3]), None)),
        "Expected sequence length to be larger than 0 in RNN",
    );
    let l = LSTM::new(3, 4);
    assert_refused(
        "LSTM c0 shape",
        l.forward((z(&[2, 3, 3]), Some((z(&[1, 3, 4]), z(&[1, 3, 5]))))),
        "Expected hidden[1] size",
    );
    assert_refused(
        "LSTM 3-d state, unbatched",
        l.forward((z(&[2, 3]), Some((z(&[1, 3, 4]), z(&[1, 3, 5]))))),
        "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors",
    );
    let c = RNNCell::new(3, 5);
    assert_refused(
        "cell 3-d input",
        c.forward((z(&[2, 3, 3]), None)),
        "RNNCell: Expected input to be 1D or 2D, got 3D instead",
    );
    assert_refused(
        "cell input features",
        c.forward((z(&[2, 4]), None)),
        "input has inconsistent input_size: got 4 expected 3",
    );
    assert_refused(
        "cell batch",
        c.forward((z(&[2, 3]), Some(z(&[3, 5])))),
        "Input batch size 2 doesn't match hidden0 batch size 3",
    );
    assert_refused(
        "cell hidden features",
        GRUCell::new(3, 5).forward((z(&[2, 3]), Some(z(&[2, 4])))),
        "hidden0 has inconsistent hidden_size: got 4, expected 5",
    );
    assert_refused(
        "cell 3-d hidden",
        c.forward((z(&[2, 3]), Some(z(&[2, 2, 5])))),
        "RNNCell: Expected hidden to be 1D or 2D, got 3D instead",
    );
    let lc = LSTMCell::new(3, 5);
    assert_refused(
        "LSTM cell c features",
        lc.forward((z(&[2, 3]), Some((z(&[2, 5]), z(&[2, 4]))))),
        "hidden1 has inconsistent hidden_size: got 4, expected 5",
    );
    assert_refused(
        "LSTM cell 3-d h",
        lc.forward((z(&[2, 3]), Some((z(&[2, 2, 5]), z(&[2, 5]))))),
        "LSTMCell: Expected hx[0] to be 1D or 2D, got 3D instead",
    );
    // A state in another dtype is a typed mismatch, not a computation.
    let wide = Tensor::zeros([1, 3, 4], DType::F64);
    assert!(matches!(
        r.forward((z(&[2, 3, 3]), Some(wide))),
        Err(Error::DTypeMismatch { .. })
    ));
}

/// A GRU and a stack of GRUCells run by hand agree: the layer is the cell applied step by step (PyTorch's
/// definition), and an empty batch gives empty outputs of the right shapes.
#[test]
fn a_gru_layer_is_its_cell_run_over_the_sequence() {
    integration_tests::in_own_process(|| {
        nn::manual_seed(3);
        let gru = GRU::new(4, 6);
        let mut cell = GRUCell::new(4, 6);
        let renamed: StateDict = gru
            .state_dict()
            .into_iter()
            .map(|(k, t)| (k.trim_end_matches("_l0").to_string(), t))
            .collect();
        cell.load_state_dict(&renamed, true, false).unwrap();
        let x = integration_tests::sine_values(&[5, 2, 4], 0.3, DType::F32);
        let (out, h_n) = gru.forward((x.clone(), None)).unwrap();
        let mut h: Option<Tensor> = None;
        for t in 0..5 {
            let step = x.narrow(0, t, 1).unwrap().reshape([2, 4]).unwrap();
            let next = cell.forward((step, h.take())).unwrap();
            let want = out.narrow(0, t, 1).unwrap().reshape([2, 6]).unwrap();
            assert_eq!(next.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap(), "step {t}");
            h = Some(next);
        }
        assert_eq!(
            h.unwrap().to_vec::<f32>().unwrap(),
            h_n.reshape([2, 6]).unwrap().to_vec::<f32>().unwrap()
        );
        let (out, h_n) = gru.forward((Tensor::zeros([3, 0, 4], DType::F32), None)).unwrap();
        assert_eq!(
            (out.shape().to_vec(), h_n.shape().to_vec()),
            (vec![3, 0, 6], vec![1, 0, 6])
        );
    });
}
