//! The 2-d pooling layers on the CPU at the sizes of a ResNet-18 at batch 8: its stem's `MaxPool2d(3, 2, 1)`
//! and an `AvgPool2d(2)` over (8, 64, 56, 56), its head's `AdaptiveAvgPool2d(1)` over (8, 512, 7, 7); the
//! forward under `no_grad`, and the max pool's forward + backward. PyTorch's figures for the same rows:
//! `python3 reference/benches/pytorch.py pooling`.
//!
//! ```text
//! cargo bench -p nn --bench pooling
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use nn::functional::MaxPool2dOptions;
use nn::prelude::*;

fn bench(c: &mut Criterion) {
    let stem = Tensor::randn([8, 64, 56, 56], DType::F32);
    let head = Tensor::randn([8, 512, 7, 7], DType::F32);
    let options = MaxPool2dOptions {
        stride: Some(2.into()),
        padding: Some(1.into()),
        ..Default::default()
    };
    let max = MaxPool2d::with_options(3, options);
    let avg = AvgPool2d::new(2);
    let adaptive = AdaptiveAvgPool2d::new(1);
    let mut group = c.benchmark_group("pooling");
    group.bench_function("MaxPool2d(3, 2, 1) (8, 64, 56, 56) forward", |b| {
        b.iter(|| {
            let _g = nn::no_grad();
            max.forward_ref(&stem).unwrap()
        })
    });
    group.bench_function("AvgPool2d(2) (8, 64, 56, 56) forward", |b| {
        b.iter(|| {
            let _g = nn::no_grad();
            avg.forward_ref(&stem).unwrap()
        })
    });
    group.bench_function("AdaptiveAvgPool2d(1) (8, 512, 7, 7) forward", |b| {
        b.iter(|| {
            let _g = nn::no_grad();
            adaptive.forward_ref(&head).unwrap()
        })
    });
    group.bench_function("MaxPool2d(3, 2, 1) (8, 64, 56, 56) forward + backward", |b| {
        b.iter(|| {
            let x = stem.detach().requires_grad_(true).unwrap();
            max.forward_ref(&x).unwrap().sum_all().unwrap().backward().unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
