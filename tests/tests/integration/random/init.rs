//! Initialisation from a seed against PyTorch 2.5.1's (`tests/fixtures/generate/random_init.py`), bit for
//! bit: layers built one after the other after `manual_seed` (each drawing where the one before stopped), and
//! every `nn::init` function that draws, on several shapes; LightZero's DynamicsNetwork.

use integration_tests::{bit_equal, in_own_process, under};
use nn::functional::Conv2dOptions;
use nn::init::{self, FanMode};
use nn::layers::*;
use nn::prelude::*;

const SEEDS: [u64; 3] = [0, 5, 2024];

fn fixture() -> StateDict {
    integration_tests::tensors("random/init.safetensors")
}

/// The layers of `random_init.py`'s LAYERS, built in its order; each one's state dict.
fn layers() -> Vec<StateDict> {
    let conv = |i, o, k: [usize; 2], groups, bias| {
        let options = Conv2dOptions {
            groups,
            ..Conv2dOptions::default()
        };
        Conv2d::new(i, o, k, options, bias).unwrap().state_dict()
    };
    vec![
        Linear::new(5, 3, true).state_dict(),
        Linear::new(40, 17, false).state_dict(),
        Linear::new(1, 1, true).state_dict(),
        conv(3, 8, [3, 3], 1, true),
        BatchNorm2d::new(4).state_dict(),
        conv(4, 6, [3, 2], 2, true),
        conv(2, 4, [1, 1], 1, false),
        Embedding::new(10, 4, None).unwrap().state_dict(),
        Embedding::new(50, 7, Some(2)).unwrap().state_dict(),
        LayerNorm::new(vec![6]).state_dict(),
        LSTM::with_options(
            4,
            6,
            LstmOptions {
                num_layers: 2,
                ..LstmOptions::default()
            },
        )
        .unwrap()
        .state_dict(),
        GRU::with_options(
            3,
            5,
            GruOptions {
                bidirectional: true,
                ..GruOptions::default()
            },
        )
        .unwrap()
        .state_dict(),
        RNN::with_options(
            3,
            4,
            RnnOptions {
                nonlinearity: Nonlinearity::Relu,
                ..RnnOptions::default()
            },
        )
        .unwrap()
        .state_dict(),
        LSTMCell::new(3, 5).state_dict(),
        GRUCell::new(4, 2).state_dict(),
        RNNCell::new(2, 3).state_dict(),
        LSTM::with_options(
            3,
            4,
            LstmOptions {
                proj_size: 2,
                ..LstmOptions::default()
            },
        )
        .unwrap()
        .state_dict(),
    ]
}

#[test]
fn layers_built_after_a_seed_hold_pytorchs_tensors() {
    in_own_process(|| {
        let f = fixture();
        for seed in SEEDS {
            nn::manual_seed(seed);
            for (i, got) in layers().iter().enumerate() {
                let want = under(&f, &format!("layers.{seed}.{i}."));
                // safetensors keeps its keys sorted: compare the sets.
                let (mut got_keys, mut want_keys): (Vec<_>, Vec<_>) = (got.keys().collect(), want.keys().collect());
                got_keys.sort();
                want_keys.sort();
                assert_eq!(got_keys, want_keys, "seed {seed}, layer {i}");
                for (key, tensor) in &want {
                    assert!(
                        bit_equal(&got[key], tensor),
                        "seed {seed}, layer {i}: {key} differs from PyTorch's"
                    );
                }
            }
        }
    });
}

#[test]
fn the_init_functions_draw_pytorchs_tensors() {
    in_own_process(|| {
        type Init = fn(&Tensor) -> nn::Result<()>;
        let inits: [(&str, Init); 8] = [
            ("uniform", |t| init::uniform_(t, -0.5, 2.0)),
            ("normal", |t| init::normal_(t, 0.3, 2.5)),
            ("xavier_uniform", |t| init::xavier_uniform_(t, 1.3)),
            ("xavier_normal", |t| init::xavier_normal_(t, 0.7)),
            ("kaiming_uniform", |t| init::kaiming_uniform_(t, 0.1)),
            ("kaiming_uniform_relu_out", |t| {
                init::kaiming_uniform_with(t, 0.0, FanMode::FanOut, "relu")
            }),
            ("kaiming_normal", |t| {
                init::kaiming_normal_(t, 0.0, FanMode::FanIn, "leaky_relu")
            }),
            ("kaiming_normal_tanh_out", |t| {
                init::kaiming_normal_(t, 0.0, FanMode::FanOut, "tanh")
            }),
        ];
        let shapes: [&[usize]; 5] = [&[5, 3], &[4, 3, 2, 2], &[40, 17], &[1, 1000], &[2, 7]];
        let f = fixture();
        for seed in SEEDS {
            for (name, fill) in inits {
                for shape in shapes {
                    nn::manual_seed(seed);
                    let t = Tensor::zeros(shape.to_vec(), DType::F32);
                    fill(&t).unwrap();
                    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                    let key = format!("init.{seed}.{name}.{}", dims.join("x"));
                    assert!(bit_equal(&t, &f[&key]), "{key} differs from PyTorch's");
                }
            }
        }
    });
}

/// `orthogonal_` draws PyTorch's normal matrix; its QR decomposition is nn's own, so the result is PyTorch's
/// within `assert_close`'s `f32` tolerance.
#[test]
fn orthogonal_is_pytorchs_to_f32_rounding() {
    in_own_process(|| {
        let f = fixture();
        let shapes: [&[usize]; 5] = [&[5, 3], &[4, 3, 2, 2], &[40, 17], &[1, 1000], &[2, 7]];
        for seed in SEEDS {
            for shape in shapes {
                nn::manual_seed(seed);
                let t = Tensor::zeros(shape.to_vec(), DType::F32);
                init::orthogonal_(&t, 1.5).unwrap();
                let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                let key = format!("init.{seed}.orthogonal.{}", dims.join("x"));
                let (got, want) = (t.to_vec::<f32>().unwrap(), f[&key].to_vec::<f32>().unwrap());
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() <= 1e-5 + 1.3e-6 * w.abs(), "{key}: {g} vs {w}");
                }
            }
        }
    });
}

/// LightZero's `DynamicsNetwork` of each export's config, built after `manual_seed(0)`: every tensor of its
/// state dict LightZero's bit for bit (`tests/fixtures/generate/random_dynamics.py`).
#[test]
fn dynamics_networks_built_after_a_seed_are_lightzeros() {
    use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};
    in_own_process(|| {
        let f = integration_tests::tensors("random/dynamics.safetensors");
        for export in integration_tests::DYNAMICS_EXPORTS {
            let config = DynamicsConfig::from_file(&integration_tests::fixture(export).join("config.json")).unwrap();
            nn::manual_seed(0);
            let got = DynamicsNetwork::new(config).unwrap().state_dict();
            let want = under(&f, &format!("{export}."));
            assert_eq!(got.len(), want.len(), "{export}: entries");
            for (key, tensor) in &want {
                assert!(bit_equal(&got[key], tensor), "{export}: {key} differs from LightZero's");
            }
        }
    });
}
