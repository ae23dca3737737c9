//! Bernoulli draws and dropout against PyTorch 2.5.1's (`tests/fixtures/generate/random_dropout.py`,
//! `random_feature_dropout.py`): masks bit for bit from the seed alone, for element, feature-map and alpha
//! dropout, their gradients and the stream they leave; the layers' repr and in-place forms; and a model with
//! dropout trained ten steps from a seed, loss for loss.

use integration_tests::{bit_equal, in_own_process, short};
use nn::functional::{
    ClassLossOptions, alpha_dropout, cross_entropy, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout,
};
use nn::layers::*;
use nn::optim::{Optimizer, SGD, SgdOptions};
use nn::prelude::*;

const SEEDS: [u64; 3] = [0, 3, 77];

fn fixture() -> StateDict {
    integration_tests::tensors("random/dropout.safetensors")
}

#[test]
fn bernoulli_and_dropout_draw_pytorchs_masks() {
    in_own_process(|| {
        let f = fixture();
        for seed in SEEDS {
            for n in [1, 7, 16, 799, 800, 801, 3000] {
                for p in [0.0, 0.15, 0.5, 0.9, 1.0] {
                    nn::manual_seed(seed);
                    let x = Tensor::zeros([n], DType::F32);
                    x.bernoulli_(p).unwrap();
                    let key = format!("bernoulli.{seed}.{n}.{p:?}");
                    assert!(bit_equal(&x, &f[&key]), "{key}");
                }
            }
            let probabilities = &f["probabilities"];
            for dtype in [DType::F64, DType::F32, DType::BF16] {
                let d = short(dtype);
                nn::manual_seed(seed);
                let got = probabilities.to_dtype(dtype).unwrap().bernoulli().unwrap();
                assert!(
                    bit_equal(&got, &f[&format!("bernoulli_tensor.{seed}.{d}")]),
                    "bernoulli_tensor.{seed}.{d}"
                );
                for p in [0.15, 0.5, 1.0] {
                    nn::manual_seed(seed);
                    let x = Tensor::arange(1.0, 50.0, 1.0, dtype).unwrap();
                    let key = format!("dropout.{seed}.{p:?}.{d}");
                    assert!(bit_equal(&dropout(&x, p, true).unwrap(), &f[&key]), "{key}");
                }
            }
        }
    });
}

type DropoutFn = fn(&Tensor, f64, bool) -> nn::Result<Tensor>;

/// A layer's forward, borrowed.
type LayerFn<'a> = dyn Fn(&Tensor) -> nn::Result<Tensor> + 'a;

/// The cases of `random_feature_dropout.py`: each function with its two shapes.
const FEATURE_CASES: [(&str, DropoutFn, [&str; 2]); 5] = [
    ("dropout1d", dropout1d, ["4x3x5", "3x5"]),
    ("dropout2d", dropout2d, ["2x3x4x5", "3x4x5"]),
    ("dropout3d", dropout3d, ["2x3x2x3x4", "3x2x3x4"]),
    ("alpha_dropout", alpha_dropout, ["7x9", "2x3x4"]),
    ("feature_alpha_dropout", feature_alpha_dropout, ["2x3x4x5", "5x7"]),
];

#[test]
fn feature_and_alpha_dropout_draw_pytorchs_noise() {
    in_own_process(|| {
        let f = integration_tests::tensors("random/feature_dropout.safetensors");
        let mut checked = 0;
        for (name, function, shapes) in FEATURE_CASES {
            for shape in shapes {
                for dtype in [DType::F64, DType::F32, DType::BF16] {
                    let d = short(dtype);
                    for seed in [0, 5] {
                        for p in [0.2, 0.5, 1.0] {
                            let case = format!("{name}.{shape}.{seed}.{p:?}.{d}");
                            let x = f[&format!("x.{name}.{shape}.{d}")]
                                .deep_copy()
                                .unwrap()
                                .requires_grad_(true)
                                .unwrap();
                            nn::manual_seed(seed);
                            let y = function(&x, p, true).unwrap();
                            let after = Tensor::rand([3], DType::F64);
                            assert!(bit_equal(&y, &f[&format!("y.{case}")]), "{case}: output");
                            assert!(
                                bit_equal(&after, &f[&format!("after.{case}")]),
                                "{case}: the stream after"
                            );
                            y.sum_all().unwrap().backward().unwrap();
                            assert!(
                                bit_equal(&x.grad().unwrap(), &f[&format!("grad.{case}")]),
                                "{case}: gradient"
                            );
                            assert!(bit_equal(&function(&x, p, false).unwrap(), &x), "{case}: in evaluation");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 180);
    });
}

#[test]
fn the_dropout_layers_print_refuse_and_work_in_place_as_pytorchs() {
    in_own_process(|| {
        assert_eq!(
            Dropout2d::new(0.3, true).unwrap().to_string(),
            "Dropout2d(p=0.3, inplace=True)"
        );
        assert_eq!(
            Dropout3d::new(0.5, false).unwrap().to_string(),
            "Dropout3d(p=0.5, inplace=False)"
        );
        assert_eq!(
            AlphaDropout::new(0.1, false).unwrap().to_string(),
            "AlphaDropout(p=0.1, inplace=False)"
        );
        assert_eq!(
            FeatureAlphaDropout::new(0.0, false).unwrap().to_string(),
            "FeatureAlphaDropout(p=0.0, inplace=False)"
        );
        // PyTorch's messages.
        let err = Dropout1d::new(1.5, false).unwrap_err().to_string();
        assert!(
            err.contains("dropout probability has to be between 0 and 1, but got 1.5"),
            "{err}"
        );
        let err = dropout1d(&Tensor::ones([2, 3, 4, 5], DType::F32), 0.5, true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("dropout1d: Expected 2D or 3D input, but received a 4D input."),
            "{err}"
        );
        let err = dropout2d(&Tensor::ones([5], DType::F32), 0.5, true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Feature dropout requires at least 2 dimensions in the input"),
            "{err}"
        );
        // In place: the input holds the functional form's result, drawn from the same seed.
        let f = integration_tests::tensors("random/feature_dropout.safetensors");
        let (d2, d1, fa) = (
            Dropout2d::new(0.5, true).unwrap(),
            Dropout1d::new(0.5, true).unwrap(),
            FeatureAlphaDropout::new(0.5, true).unwrap(),
        );
        let cases: [(&LayerFn, DropoutFn, &str); 3] = [
            (&|x| d2.forward_ref(x), dropout2d, "dropout2d.2x3x4x5"),
            (&|x| d1.forward_ref(x), dropout1d, "dropout1d.3x5"),
            (
                &|x| fa.forward_ref(x),
                feature_alpha_dropout,
                "feature_alpha_dropout.5x7",
            ),
        ];
        for (layer, function, key) in cases {
            let x = f[&format!("x.{key}.f32")].deep_copy().unwrap();
            nn::manual_seed(5);
            let y = layer(&x).unwrap();
            nn::manual_seed(5);
            let want = function(&f[&format!("x.{key}.f32")], 0.5, true).unwrap();
            assert!(bit_equal(&x, &want) && bit_equal(&y, &want), "{key} in place");
        }
    });
}

#[test]
fn a_model_with_dropout_trains_as_pytorchs_from_the_seed_alone() {
    in_own_process(|| {
        let f = fixture();
        for seed in SEEDS {
            nn::manual_seed(seed);
            let model = Sequential::new()
                .append(Linear::new(6, 16, true))
                .append(ReLU::default())
                .append(Dropout::new(0.3, false).unwrap())
                .append(Linear::new(16, 3, true));
            let x = Tensor::randn([8, 6], DType::F32);
            let y = Tensor::randint(0, 3, [8], DType::I64).unwrap();
            let mut opt = SGD::new(
                model.parameters(),
                SgdOptions {
                    lr: 0.1,
                    ..Default::default()
                },
            )
            .unwrap();
            let mut losses = Vec::new();
            for _ in 0..10 {
                opt.zero_grad(true).unwrap();
                let loss = cross_entropy(&model.forward(x.clone()).unwrap(), &y, &ClassLossOptions::default()).unwrap();
                loss.backward().unwrap();
                opt.step().unwrap();
                losses.push(loss.to_vec::<f32>().unwrap()[0]);
            }
            let want = f[&format!("train.{seed}.losses")].to_vec::<f32>().unwrap();
            for (step, (got, want)) in losses.iter().zip(&want).enumerate() {
                // f32 sums may run in another order: assert_close's f32 tolerance.
                assert!(
                    (got - want).abs() <= 1e-5 + 1.3e-6 * want.abs(),
                    "seed {seed}, step {step}: {got} vs {want}"
                );
            }
        }
    });
}

/// RReLU in training draws a slope per element `<= 0` as PyTorch's CPU kernel does
/// (`tests/fixtures/generate/random_rrelu.py`): the outputs bit for bit, and the stream left where PyTorch's is.
#[test]
fn rrelu_draws_pytorchs_slopes() {
    in_own_process(|| {
        let f = integration_tests::tensors("random/rrelu.safetensors");
        for dtype in [DType::F64, DType::F32, DType::BF16] {
            let d = short(dtype);
            let x = &f[&format!("x.{d}")];
            for seed in [0, 9] {
                nn::manual_seed(seed);
                let y = nn::functional::rrelu(x, 0.1, 0.3, true, false).unwrap();
                assert!(bit_equal(&y, &f[&format!("rrelu.{seed}.{d}")]), "rrelu.{seed}.{d}");
                let after = Tensor::rand([3], DType::F64);
                assert!(bit_equal(&after, &f[&format!("after.{seed}.{d}")]), "after.{seed}.{d}");
            }
        }
        for seed in [0, 9] {
            nn::manual_seed(seed);
            let y = RReLU::default().forward(f["x.f32"].clone()).unwrap();
            assert!(bit_equal(&y, &f[&format!("module.{seed}")]), "module.{seed}");
        }
    });
}
