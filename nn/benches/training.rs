//! A training step on the CPU at the size of a first model ported from PyTorch: an MLP
//! `Linear(784, 512) → ReLU → Linear(512, 512) → ReLU → Linear(512, 10)` (669,706 `f32` parameters) on a batch
//! of 128, cross-entropy against integer labels. Rows: the forward and backward alone, one optimizer step alone
//! (Adam, AdamW and SGD with momentum, after one backward filled the gradients), a whole step with Adam
//! (`zero_grad`, forward, loss, backward, `step`), and a copy of every parameter as the limit of a step's passes.
//! PyTorch's figures for the same rows: `python3 reference/benches/pytorch.py training`.
//!
//! ```text
//! cargo bench -p nn --bench training
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use nn::functional::{ClassLossOptions, cross_entropy};
use nn::optim::{Adam, AdamOptions, AdamW, Optimizer, SGD, SgdOptions};
use nn::prelude::*;

const BATCH: usize = 128;

fn mlp() -> Sequential {
    Sequential::new()
        .append(Linear::new(784, 512, true))
        .append(ReLU::new(false))
        .append(Linear::new(512, 512, true))
        .append(ReLU::new(false))
        .append(Linear::new(512, 10, true))
}

/// The batch's cross-entropy, recorded.
fn loss(model: &Sequential, x: &Tensor, labels: &Tensor) -> Tensor {
    let logits = model.forward(x.clone()).unwrap();
    cross_entropy(&logits, labels, &ClassLossOptions::default()).unwrap()
}

/// Times one optimizer's `step` alone, the gradients filled once by a backward.
fn step_row(c: &mut Criterion, name: &str, model: &Sequential, opt: &mut dyn Optimizer, x: &Tensor, labels: &Tensor) {
    opt.zero_grad(true).unwrap();
    loss(model, x, labels).backward().unwrap();
    c.bench_function(&format!("training/MLP 784-512-512-10, {name} step alone"), |b| {
        b.iter(|| opt.step().unwrap())
    });
}

fn bench(c: &mut Criterion) {
    let x = Tensor::randn([BATCH, 784], DType::F32);
    let labels = Tensor::from_vec((0..BATCH as i64).map(|i| i % 10).collect(), [BATCH]).unwrap();
    let model = mlp();
    c.bench_function("training/MLP 784-512-512-10, batch 128, forward + backward", |b| {
        b.iter(|| {
            for p in model.parameters() {
                p.set_grad(None).unwrap();
            }
            loss(&model, &x, &labels).backward().unwrap()
        })
    });
    let mut adam = Adam::new(model.parameters(), AdamOptions::default()).unwrap();
    step_row(c, "Adam", &model, &mut adam, &x, &labels);
    let mut adamw = AdamW::new(model.parameters(), AdamOptions::adamw()).unwrap();
    step_row(c, "AdamW", &model, &mut adamw, &x, &labels);
    let sgd_options = SgdOptions {
        lr: 0.01,
        momentum: 0.9,
        ..Default::default()
    };
    let mut sgd = SGD::new(model.parameters(), sgd_options).unwrap();
    step_row(c, "SGD(momentum 0.9)", &model, &mut sgd, &x, &labels);
    c.bench_function("training/MLP 784-512-512-10, batch 128, Adam training step", |b| {
        b.iter(|| {
            adam.zero_grad(true).unwrap();
            loss(&model, &x, &labels).backward().unwrap();
            adam.step().unwrap()
        })
    });
    let params: Vec<Tensor> = model.parameters().iter().map(|p| p.data().detach()).collect();
    let copies: Vec<Tensor> = params
        .iter()
        .map(|p| Tensor::zeros(p.shape().clone(), DType::F32))
        .collect();
    c.bench_function("training/MLP 784-512-512-10, memcpy of the parameters", |b| {
        b.iter(|| {
            for (copy, p) in copies.iter().zip(&params) {
                copy.copy_(p).unwrap();
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
