//! A training loop's live memory does not grow: the graph's saved tensors are freed by each backward; an
//! in-place activation under autograd keeps no copy where its result is what its gradient reads. The count of
//! live storages is the process's: each test runs in a process of its own (`in_own_process`).

use nn::functional::Activation;
use nn::prelude::*;

#[test]
fn a_training_loops_live_storages_do_not_grow_over_100_steps() {
    integration_tests::in_own_process(|| {
        nn::manual_seed(0);
        let mut model = Sequential::new()
            .append(Linear::new(8, 16, true))
            .append(ReLU::new(true))
            .append(Linear::new(16, 4, true))
            .append(Softmax::new(Some(1)));
        let x = Tensor::randn([32, 8], DType::F32);
        let target = Tensor::randn([32, 4], DType::F32);
        let mut live = Vec::new();
        let mut losses = Vec::new();
        for _ in 0..100 {
            model.zero_grad(true);
            let diff = model.forward(x.clone()).unwrap().sub(&target).unwrap();
            let loss = diff.mul(&diff).unwrap().mean_all().unwrap();
            loss.backward().unwrap();
            {
                let _no_grad = nn::no_grad();
                for (_, p) in model.named_parameters() {
                    let step = p.grad().unwrap().mul_scalar(0.5).unwrap();
                    p.data().sub_(&step).unwrap();
                }
            }
            losses.push(loss.to_vec_f64().unwrap()[0]);
            drop(loss);
            live.push(nn::tensor::live_storages());
        }
        assert!(
            losses[99] < losses[0],
            "the loop trains: {} → {}",
            losses[0],
            losses[99]
        );
        assert_eq!(
            live[10], live[99],
            "live storages after step 10 and after step 100: {live:?}"
        );
    });
}

#[test]
fn an_in_place_activation_under_autograd_copies_only_an_input_its_gradient_reads() {
    integration_tests::in_own_process(|| {
        let mut w = Tensor::randn([64, 64], DType::F32);
        w.set_requires_grad(true).unwrap();
        // ReLU(inplace=True) as a model runs it: the result is what its gradient reads, as PyTorch's `relu_` saves
        // (and `elu_`, `selu_`, `celu_`).
        for act in [
            Activation::Relu,
            Activation::LeakyRelu { negative_slope: 0.01 },
            Activation::Tanh,
            Activation::Sigmoid,
            Activation::Elu { alpha: 1.0 },
            Activation::Selu,
            Activation::Celu { alpha: 2.0 },
        ] {
            let h = w.mul_scalar(2.0).unwrap();
            let before = nn::tensor::live_storages();
            act.forward_(&h).unwrap();
            assert_eq!(
                nn::tensor::live_storages(),
                before,
                "{}: a storage was added",
                act.name()
            );
            h.sum_all().unwrap().backward().unwrap();
        }
        // SiLU's gradient reads its input: the graph keeps one copy of it, freed by the backward.
        let h = w.mul_scalar(2.0).unwrap();
        let before = nn::tensor::live_storages();
        Activation::Silu.forward_(&h).unwrap();
        assert_eq!(nn::tensor::live_storages(), before + 1, "silu keeps its input");
        h.sum_all().unwrap().backward().unwrap();
        assert_eq!(nn::tensor::live_storages(), before, "the backward frees it");
    });
}
