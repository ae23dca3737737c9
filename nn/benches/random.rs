//! Random tensors of 16M `f32` elements drawn from a generator (`torch.rand` and `torch.randn`), the same
//! numbers as PyTorch's; next to `python3 reference/benches/pytorch.py random`.
//!
//! ```text
//! cargo bench -p nn --bench random
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use nn::random::Generator;
use nn::{DType, Tensor};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("random");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(10);
    let n = 1 << 24;
    let mut g = Generator::new(0);
    group.bench_function("rand 16M f32", |b| {
        b.iter(|| Tensor::try_rand_with([n], DType::F32, &mut g).unwrap())
    });
    group.bench_function("randn 16M f32", |b| {
        b.iter(|| Tensor::randn_with([n], DType::F32, &mut g))
    });
    group.bench_function("randn 16M f64", |b| {
        b.iter(|| Tensor::randn_with([n], DType::F64, &mut g))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
