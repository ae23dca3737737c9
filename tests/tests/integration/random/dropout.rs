//! Bernoulli draws and dropout against PyTorch 2.5.1's (`tests/fixtures/generate/random_dropout.py`): masks
//! bit for bit from the seed alone, and a model with dropout trained ten steps from a seed, loss for loss.

use integration_tests::{bit_equal, in_own_process, short};
use nn::functional::{ClassLossOptions, cross_entropy, dropout};
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
