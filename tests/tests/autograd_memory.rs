//! A training loop's live memory does not grow: the graph's saved tensors are freed by each backward. Alone in
//! its test binary, so no other test's tensors move the count.

use nn::prelude::*;

#[test]
fn a_training_loops_live_storages_do_not_grow_over_100_steps() {
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
}
