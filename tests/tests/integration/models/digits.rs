//! The `train` example's model and loop (`reference::digits`) learn scikit-learn's 8×8 digits: 4 epochs of
//! Adam (lr 0.01, batch 32) under a cosine schedule reach at least 95 % test accuracy on the CPU (the example's
//! 12 epochs reach 97.5 %; CI runs the example itself with `--min-accuracy 0.97`).

use nn::optim::lr_scheduler::{CosineAnnealingLR, LrScheduler};
use nn::optim::{Adam, AdamOptions};
use nn::prelude::*;
use reference::digits::{DigitsNet, evaluate, load, train_epoch};

#[test]
fn four_epochs_reach_95_percent_on_the_test_split() {
    integration_tests::in_own_process(|| {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/digits.safetensors");
        let (train, test) = load(&data).unwrap();
        assert_eq!((train.len(), test.len()), (1437, 360));
        assert_eq!(train.images.shape().dims(), [1437, 1, 8, 8]);
        nn::manual_seed(0);
        let mut net = DigitsNet::new().unwrap();
        let mut opt = Adam::new(
            net.parameters(),
            AdamOptions {
                lr: 0.01,
                ..Default::default()
            },
        )
        .unwrap();
        let mut sched = CosineAnnealingLR::new(&mut opt, 4, 0.0).unwrap();
        let (_, before) = evaluate(&mut net, &test, Device::Cpu).unwrap();
        let mut losses = vec![];
        for epoch in 0..4 {
            nn::manual_seed(1 + epoch);
            let (mut sum, mut seen) = (0.0, 0);
            train_epoch(&mut net, &mut opt, &train, 32, Device::Cpu, |b| {
                sum += b.loss * b.size as f64;
                seen += b.size;
            })
            .unwrap();
            assert_eq!(seen, 1437, "every image once per epoch");
            losses.push(sum / seen as f64);
            sched.step(&mut opt).unwrap();
        }
        let (test_loss, accuracy) = evaluate(&mut net, &test, Device::Cpu).unwrap();
        println!("accuracy {before:.3} before, {accuracy:.3} after; train losses {losses:?}; test loss {test_loss:.4}");
        assert!(before < 0.3, "an untrained network guesses ({before})");
        assert!(
            losses.windows(2).all(|w| w[1] < w[0]),
            "the training loss falls every epoch: {losses:?}"
        );
        assert!(accuracy >= 0.95, "test accuracy {accuracy}");
    });
}
