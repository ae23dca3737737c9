//! Sums and means on the CPU at the shapes training meets: a linear layer's bias gradient (the sum over a
//! batch), a convolution's (over batch and plane), a classifier head's global average, a row-wise mean, the
//! sum of every element (a loss); and the softmax backward, a sum per row (or column) then a map, along the
//! last dimension of a classifier's logits and along the channels of feature maps. PyTorch's figures for the
//! same rows:
//! `python3 reference/benches/pytorch.py reductions`.
//!
//! ```text
//! cargo bench -p nn --bench reductions
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use nn::prelude::*;

fn bench(c: &mut Criterion) {
    let batch = Tensor::randn([256, 512], DType::F32);
    let maps = Tensor::randn([8, 64, 56, 56], DType::F32);
    let head = Tensor::randn([8, 512, 7, 7], DType::F32);
    let rows = Tensor::randn([4096, 1024], DType::F32);
    let _g = nn::no_grad();
    let mut group = c.benchmark_group("reductions");
    group.bench_function("sum (256, 512) over 0", |b| {
        b.iter(|| batch.sum_dims(&[0], false).unwrap())
    });
    group.bench_function("sum (8, 64, 56, 56) over 0, 2, 3", |b| {
        b.iter(|| maps.sum_dims(&[0, 2, 3], false).unwrap())
    });
    group.bench_function("mean (8, 512, 7, 7) over 2, 3", |b| {
        b.iter(|| head.mean_dims(&[2, 3], true).unwrap())
    });
    group.bench_function("mean (4096, 1024) over 1", |b| {
        b.iter(|| rows.mean_dims(&[1], true).unwrap())
    });
    group.bench_function("sum (8, 64, 56, 56) of all", |b| b.iter(|| maps.sum_all().unwrap()));
    // The limit: a copy of the same tensors (a sum reads its input once; a copy reads it and writes as much).
    let (maps_copy, rows_copy) = (
        Tensor::zeros([8, 64, 56, 56], DType::F32),
        Tensor::zeros([4096, 1024], DType::F32),
    );
    group.bench_function("memcpy (8, 64, 56, 56)", |b| b.iter(|| maps_copy.copy_(&maps).unwrap()));
    group.bench_function("memcpy (4096, 1024)", |b| b.iter(|| rows_copy.copy_(&rows).unwrap()));
    let logits = Tensor::randn([512, 1000], DType::F32);
    let (probs, log_probs) = (logits.softmax(1).unwrap(), logits.log_softmax(1).unwrap());
    let grad = Tensor::randn([512, 1000], DType::F32);
    group.bench_function("softmax backward (512, 1000) along 1", |b| {
        b.iter(|| nn::functional::softmax_backward(&probs, &grad, 1).unwrap())
    });
    group.bench_function("log_softmax backward (512, 1000) along 1", |b| {
        b.iter(|| nn::functional::log_softmax_backward(&log_probs, &grad, 1).unwrap())
    });
    let planes = Tensor::randn([32, 64, 32, 32], DType::F32).softmax(1).unwrap();
    let plane_grad = Tensor::randn([32, 64, 32, 32], DType::F32);
    group.bench_function("softmax backward (32, 64, 32, 32) along 1", |b| {
        b.iter(|| nn::functional::softmax_backward(&planes, &plane_grad, 1).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
