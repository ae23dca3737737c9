//! Conv2d, BatchNorm1d/2d, LayerNorm, LSTM and Embedding against PyTorch 2.5.1 (`fixtures/layers/against_pytorch.safetensors`,
//! made by `fixtures/generate/layers.py`): each layer built with the same arguments, loaded with PyTorch's
//! state dict (strict), run on the same input.

use integration_tests::{bit_equal, lines, max_rel_diff, tensors};
use nn::functional::{Conv2dOptions, Padding2d};
use nn::prelude::*;
use nn::{StateDict, Tensor};

/// Within `1e-5`, relative above 1 (f32 math in different orders).
const TOL: f64 = 1e-5;

fn fixture() -> StateDict {
    tensors("layers/against_pytorch.safetensors")
}

fn case_state(f: &StateDict, case: &str, part: &str) -> StateDict {
    integration_tests::under(f, &format!("{case}.{part}."))
}

fn load(m: &mut impl Module, f: &StateDict, case: &str) {
    let sd = case_state(f, case, "param");
    assert!(!sd.is_empty(), "no parameters for {case}");
    m.load_state_dict(&sd, true, false)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
}

fn close(case: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.shape(), want.shape(), "{case}");
    assert_eq!(got.dtype(), want.dtype(), "{case}");
    let err = max_rel_diff(got, want, 1.0);
    assert!(err <= TOL, "{case}: error {err:e}");
}

fn conv(case: &str, conv: Conv2d) {
    let f = fixture();
    let mut conv = conv;
    load(&mut conv, &f, case);
    let y = conv.forward(f[&format!("{case}.input")].clone()).unwrap();
    close(case, &y, &f[&format!("{case}.output")]);
}

fn opts(stride: [usize; 2], padding: Padding2d, dilation: [usize; 2], groups: usize) -> Conv2dOptions {
    Conv2dOptions {
        stride,
        padding,
        dilation,
        groups,
    }
}

#[test]
fn conv2d_matches_pytorch() {
    conv(
        "conv_basic",
        Conv2d::new(3, 4, [3, 3], Conv2dOptions::default(), true).unwrap(),
    );
    conv(
        "conv_stride_pad",
        Conv2d::new(4, 6, [3, 5], opts([2, 2], Padding2d::Explicit(1, 2), [1, 2], 1), false).unwrap(),
    );
    conv(
        "conv_groups_same",
        Conv2d::new(4, 6, [3, 3], opts([1, 1], Padding2d::Same, [2, 2], 2), true).unwrap(),
    );
    conv(
        "conv_even_same",
        Conv2d::new(2, 3, [4, 4], opts([1, 1], Padding2d::Same, [1, 1], 1), true).unwrap(),
    );
    conv(
        "conv_valid_1x1",
        Conv2d::new(5, 2, [1, 1], opts([1, 1], Padding2d::Valid, [1, 1], 1), true).unwrap(),
    );
    conv(
        "conv_unbatched",
        Conv2d::new(2, 2, [3, 3], opts([1, 1], Padding2d::Explicit(1, 1), [1, 1], 1), true).unwrap(),
    );
    let mut c = Conv2d::new(3, 2, [2, 2], opts([1, 2], Padding2d::Explicit(0, 0), [1, 1], 1), true).unwrap();
    c.double().unwrap();
    conv("conv_f64", c);
}

#[test]
fn conv2d_repr_and_errors() {
    let c = Conv2d::new(4, 6, [3, 5], opts([2, 2], Padding2d::Explicit(1, 2), [1, 2], 1), false).unwrap();
    assert_eq!(
        c.to_string(),
        "Conv2d(4, 6, kernel_size=(3, 5), stride=(2, 2), padding=(1, 2), dilation=(1, 2), bias=False)"
    );
    let g = Conv2d::new(4, 4, [3, 3], opts([1, 1], Padding2d::Same, [1, 1], 2), true).unwrap();
    assert_eq!(
        g.to_string(),
        "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=2)"
    );
    assert!(Conv2d::new(3, 4, [3, 3], opts([1, 1], Padding2d::Explicit(0, 0), [1, 1], 2), true).is_err());
    let err = c.forward(Tensor::zeros([1, 3, 9, 9], DType::F32)).unwrap_err();
    assert!(err.to_string().contains("channels"), "{err}");
    let err = c.forward(Tensor::zeros([1, 4, 1, 1], DType::F32)).unwrap_err();
    assert!(
        err.to_string()
            .contains("Kernel size can't be greater than actual input size"),
        "{err}"
    );
    // An empty image that padding would make room for: PyTorch 2.5.1 refuses it ("Only zero batch or zero
    // channel inputs are supported, but got input shape: [1, 1, 0, 3]"); an empty batch gives an empty output.
    let one = Conv2d::new(1, 2, [1, 1], opts([1, 1], Padding2d::Explicit(1, 1), [1, 1], 1), true).unwrap();
    for shape in [[1, 1, 0, 3], [1, 1, 3, 0]] {
        let err = one.forward(Tensor::zeros(shape, DType::F32)).unwrap_err();
        assert!(
            err.to_string().contains("Only zero batch or zero channel inputs"),
            "{err}"
        );
    }
    let y = one.forward(Tensor::zeros([0, 1, 3, 3], DType::F32)).unwrap();
    assert_eq!(y.shape(), &[0, 2, 5, 5]);
}

fn batch_norm<M: Module + Forward<Input = Tensor, Output = Tensor>>(case: &str, mut m: M) {
    let f = fixture();
    load(&mut m, &f, case);
    let x = f[&format!("{case}.input")].clone();
    m.train(true);
    let steps = if case == "bn1d_cumulative" { 2 } else { 1 };
    let mut y = None;
    for _ in 0..steps {
        y = Some(m.forward(x.clone()).unwrap());
    }
    close(&format!("{case} train"), &y.unwrap(), &f[&format!("{case}.output")]);
    let after = case_state(&f, case, "state_after");
    let now = m.state_dict();
    assert_eq!(now.len(), after.len(), "{case}");
    for (k, t) in &after {
        if t.is_floating_point() {
            close(&format!("{case} {k}"), &now[k], t);
        } else {
            assert!(bit_equal(&now[k], t), "{case} {k}: {:?} vs {:?}", now[k], t);
        }
    }
    m.eval();
    close(
        &format!("{case} eval"),
        &m.forward(x).unwrap(),
        &f[&format!("{case}.eval_output")],
    );
}

#[test]
fn batch_norm_matches_pytorch_in_train_and_eval() {
    batch_norm("bn2d", BatchNorm2d::new(3));
    batch_norm("bn1d_cumulative", BatchNorm1d::with_options(4, 1e-5, None, true, true));
    batch_norm("bn1d_2d", BatchNorm1d::with_options(6, 1e-3, Some(0.3), true, true));
}

#[test]
fn batch_norm_without_running_stats_uses_the_batch() {
    let f = fixture();
    let mut bn = BatchNorm1d::with_options(3, 1e-5, Some(0.1), false, false);
    assert!(bn.state_dict().is_empty());
    assert_eq!(
        bn.to_string(),
        "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)"
    );
    bn.eval();
    let y = bn.forward(f["bn1d_plain.input"].clone()).unwrap();
    close("bn1d_plain", &y, &f["bn1d_plain.eval_output"]);
}

#[test]
fn batch_norm_rejects_bad_input() {
    let bn = BatchNorm2d::new(3);
    let err = bn.forward(Tensor::zeros([2, 3, 4], DType::F32)).unwrap_err();
    assert!(err.to_string().contains("expected 4D input (got 3D input"), "{err}");
    let err = BatchNorm1d::new(3)
        .forward(Tensor::zeros([1, 3], DType::F32))
        .unwrap_err();
    assert!(err.to_string().contains("more than 1 value per channel"), "{err}");
    let bn = BatchNorm1d::new(3);
    let err = bn.forward(Tensor::zeros([4, 5], DType::F32)).unwrap_err();
    assert!(err.to_string().contains("has 3 channels, but the input has 5"), "{err}");
    assert_eq!(
        bn.num_batches_tracked.as_ref().unwrap().item().unwrap(),
        0.0,
        "a refused input changes nothing"
    );
}

#[test]
fn layer_norm_matches_pytorch() {
    let f = fixture();
    let mut ln = LayerNorm::new(vec![3, 4]);
    load(&mut ln, &f, "ln_2d");
    close(
        "ln_2d",
        &ln.forward(f["ln_2d.input"].clone()).unwrap(),
        &f["ln_2d.output"],
    );
    let plain = LayerNorm::with_options(vec![6], 1e-3, false, true);
    assert!(plain.state_dict().is_empty());
    close(
        "ln_plain",
        &plain.forward(f["ln_plain.input"].clone()).unwrap(),
        &f["ln_plain.output"],
    );
    assert!(ln.forward(Tensor::zeros([2, 4, 3], DType::F32)).is_err());
}

fn lstm(case: &str, mut m: LSTM, with_state: bool) {
    let f = fixture();
    load(&mut m, &f, case);
    let state = with_state.then(|| (f[&format!("{case}.h0")].clone(), f[&format!("{case}.c0")].clone()));
    let (y, (h, c)) = m.forward((f[&format!("{case}.input")].clone(), state)).unwrap();
    close(&format!("{case} output"), &y, &f[&format!("{case}.output")]);
    close(&format!("{case} h_n"), &h, &f[&format!("{case}.h_n")]);
    close(&format!("{case} c_n"), &c, &f[&format!("{case}.c_n")]);
}

#[test]
fn lstm_matches_pytorch_multi_layer_bidirectional_unbatched() {
    let two = LSTM::with_options(
        5,
        7,
        LstmOptions {
            num_layers: 2,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(two.to_string(), "LSTM(5, 7, num_layers=2)");
    lstm("lstm_2layer", two, true);
    let bi = LstmOptions {
        num_layers: 2,
        bias: false,
        batch_first: true,
        bidirectional: true,
        dropout: 0.0,
        proj_size: 0,
    };
    let bi = LSTM::with_options(3, 4, bi).unwrap();
    assert_eq!(
        bi.to_string(),
        "LSTM(3, 4, num_layers=2, bias=False, batch_first=True, bidirectional=True)"
    );
    assert_eq!(
        bi.state_dict().keys().collect::<Vec<_>>(),
        [
            "weight_ih_l0",
            "weight_hh_l0",
            "weight_ih_l0_reverse",
            "weight_hh_l0_reverse",
            "weight_ih_l1",
            "weight_hh_l1",
            "weight_ih_l1_reverse",
            "weight_hh_l1_reverse"
        ]
    );
    lstm("lstm_bi_bf", bi, false);
    lstm("lstm_unbatched", LSTM::new(3, 4), true);
}

#[test]
fn lstm_rejects_bad_input_and_state() {
    let m = LSTM::new(3, 4);
    assert!(m.forward((Tensor::zeros([2, 1, 5], DType::F32), None)).is_err());
    let bad = (
        Tensor::zeros([2, 1, 4], DType::F32),
        Tensor::zeros([1, 1, 4], DType::F32),
    );
    let err = m
        .forward((Tensor::zeros([2, 1, 3], DType::F32), Some(bad)))
        .unwrap_err();
    assert!(err.to_string().contains("h0"), "{err}");
    // An empty sequence, batch-first or not: PyTorch 2.5.1's error.
    for (m, x) in [
        (LSTM::new(3, 4), Tensor::zeros([0, 2, 3], DType::F32)),
        (LSTM::new(3, 4), Tensor::zeros([0, 3], DType::F32)),
        (
            LSTM::with_options(
                3,
                4,
                LstmOptions {
                    batch_first: true,
                    ..LstmOptions::default()
                },
            )
            .unwrap(),
            Tensor::zeros([2, 0, 3], DType::F32),
        ),
    ] {
        let err = m.forward((x, None)).unwrap_err();
        assert!(
            err.to_string().contains("Expected sequence length to be larger than 0"),
            "{err}"
        );
    }
}

/// PyTorch 2.5.1's `nn.LSTM(3, 5, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True,
/// proj_size=2)`: its repr, its state dict's keys in order with their shapes (printed by PyTorch), its
/// refusal of a `proj_size` not below `hidden_size` (`ValueError: proj_size has to be smaller than
/// hidden_size`), and the state's shapes: `h` has `proj_size` features, `c` `hidden_size`. The numbers are
/// `layers/lstm.rs`'s projected cases.
#[test]
fn a_projected_lstm_has_pytorchs_keys_shapes_and_repr() {
    let options = LstmOptions {
        num_layers: 2,
        batch_first: true,
        dropout: 0.5,
        bidirectional: true,
        proj_size: 2,
        ..LstmOptions::default()
    };
    let m = LSTM::with_options(3, 5, options).unwrap();
    assert_eq!(
        m.to_string(),
        "LSTM(3, 5, proj_size=2, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)"
    );
    let keys: Vec<(String, Vec<usize>)> = m
        .state_dict()
        .iter()
        .map(|(k, t)| (k.clone(), t.shape().dims().to_vec()))
        .collect();
    let mut expected = Vec::new();
    for (layer, features) in [(0, 3), (1, 4)] {
        for suffix in ["", "_reverse"] {
            expected.extend([
                (format!("weight_ih_l{layer}{suffix}"), vec![20, features]),
                (format!("weight_hh_l{layer}{suffix}"), vec![20, 2]),
                (format!("bias_ih_l{layer}{suffix}"), vec![20]),
                (format!("bias_hh_l{layer}{suffix}"), vec![20]),
                (format!("weight_hr_l{layer}{suffix}"), vec![2, 5]),
            ]);
        }
    }
    assert_eq!(keys, expected);
    for proj_size in [5, 6] {
        let err = LSTM::with_options(
            3,
            5,
            LstmOptions {
                proj_size,
                ..LstmOptions::default()
            },
        )
        .err()
        .expect("PyTorch refuses it");
        assert!(
            err.to_string().contains("proj_size has to be smaller than hidden_size"),
            "{err}"
        );
    }
    let m = LSTM::with_options(
        3,
        5,
        LstmOptions {
            proj_size: 2,
            ..LstmOptions::default()
        },
    )
    .unwrap();
    let (y, (h, c)) = m.forward((Tensor::zeros([4, 2, 3], DType::F32), None)).unwrap();
    assert_eq!(
        (y.shape().dims(), h.shape().dims(), c.shape().dims()),
        (&[4, 2, 2][..], &[1, 2, 2][..], &[1, 2, 5][..])
    );
    // PyTorch: "Expected hidden[0] size (1, 2, 2), got [1, 2, 5]"; here the error names h0 and both shapes.
    let full = (
        Tensor::zeros([1, 2, 5], DType::F32),
        Tensor::zeros([1, 2, 5], DType::F32),
    );
    let err = m
        .forward((Tensor::zeros([4, 2, 3], DType::F32), Some(full)))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("h0") && err.contains("[1, 2, 2]") && err.contains("[1, 2, 5]"),
        "{err}"
    );
}

#[test]
fn embedding_matches_pytorch() {
    let f = fixture();
    let mut emb = Embedding::new(10, 4, Some(2)).unwrap();
    load(&mut emb, &f, "embedding");
    let y = emb.forward(f["embedding.input"].clone()).unwrap();
    assert!(bit_equal(&y, &f["embedding.output"]));
    let err = emb.forward(Tensor::from_vec(vec![3i64, 10], [2]).unwrap()).unwrap_err();
    assert!(err.to_string().contains("index 10 at position 1"), "{err}");
    assert!(emb.forward(Tensor::zeros([2], DType::F32)).is_err());
}

#[test]
fn every_activation_layer_prints_as_pytorch() {
    // The layers of `fixtures/generate/activation_reprs.py`, in its order.
    let layers: Vec<Box<dyn Module>> = vec![
        Box::new(ReLU::new(false)),
        Box::new(ReLU::new(true)),
        Box::new(ReLU6::new(false)),
        Box::new(ReLU6::new(true)),
        Box::new(LeakyReLU::default()),
        Box::new(LeakyReLU::new(0.2, true)),
        Box::new(Threshold::new(0.1, 20.0, false)),
        Box::new(Threshold::new(0.1, 20.0, true)),
        Box::new(Hardtanh::default()),
        Box::new(Hardtanh::new(-2.0, 2.0, true).unwrap()),
        Box::new(ELU::default()),
        Box::new(ELU::new(0.5, true)),
        Box::new(SELU::new(false)),
        Box::new(SELU::new(true)),
        Box::new(CELU::default()),
        Box::new(CELU::new(2.0, true)),
        Box::new(SiLU::new(false)),
        Box::new(SiLU::new(true)),
        Box::new(Mish::new(false)),
        Box::new(Mish::new(true)),
        Box::new(Softplus::default()),
        Box::new(Softplus::new(2.0, 10.0)),
        Box::new(Softsign::new()),
        Box::new(Sigmoid::new()),
        Box::new(Tanh::new()),
        Box::new(Hardsigmoid::new(false)),
        Box::new(Hardsigmoid::new(true)),
        Box::new(Hardswish::new(false)),
        Box::new(Hardswish::new(true)),
        Box::new(Tanhshrink::new()),
        Box::new(Hardshrink::default()),
        Box::new(Hardshrink::new(0.3)),
        Box::new(Softshrink::default()),
        Box::new(Softshrink::new(0.3)),
        Box::new(LogSigmoid::new()),
        Box::new(GELU::default()),
        Box::new(GELU::new("tanh").unwrap()),
        Box::new(RReLU::default()),
        Box::new(RReLU::new(0.1, 0.3, true)),
        Box::new(GLU::default()),
        Box::new(GLU::new(1)),
        Box::new(Softmin::new(None)),
        Box::new(Softmin::new(1)),
        Box::new(Softmax2d::new()),
    ];
    let printed: Vec<String> = layers.iter().map(|l| l.repr()).collect();
    assert_eq!(printed, lines("activation/reprs.txt"));
    let err = Hardtanh::new(1.0, -1.0, false).unwrap_err();
    assert!(err.to_string().contains("min_val 1 exceeds max_val -1"), "{err}");
    // PyTorch's `assert self.max_val > self.min_val`: equal bounds and NaN are refused too.
    assert!(Hardtanh::new(1.0, 1.0, false).is_err());
    assert!(Hardtanh::new(f64::NAN, 1.0, false).is_err());
    assert!(Hardtanh::new(-1.0, f64::NAN, false).is_err());
}
