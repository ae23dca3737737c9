//! Views of a 16M-element `f32` tensor (4096 x 4096): `t`, `transpose`, `narrow`, `select`, `permute` and
//! `expand` share the storage, so each takes the same time whatever the size (no element moves), next to the
//! copy `contiguous()` makes of a transpose.
//!
//! ```text
//! cargo bench -p nn --bench views
//! python3 reference/benches/pytorch.py views
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use nn::{DType, Tensor};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("views");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let x = Tensor::zeros([4096, 4096], DType::F32);
    let column = Tensor::zeros([4096, 1], DType::F32);
    group.bench_function("t 16M", |b| b.iter(|| black_box(&x).t().unwrap()));
    group.bench_function("transpose 16M", |b| b.iter(|| black_box(&x).transpose(0, 1).unwrap()));
    group.bench_function("narrow 16M", |b| {
        b.iter(|| black_box(&x).narrow(1, 1000, 2048).unwrap())
    });
    group.bench_function("select 16M", |b| b.iter(|| black_box(&x).select(0, 7).unwrap()));
    group.bench_function("permute 16M", |b| b.iter(|| black_box(&x).permute(&[1, 0]).unwrap()));
    group.bench_function("expand to 16M", |b| {
        b.iter(|| black_box(&column).expand(&[4096, 4096]).unwrap())
    });
    group.sample_size(10);
    let t = x.t().unwrap();
    group.bench_function("contiguous of the transpose (a copy)", |b| {
        b.iter(|| black_box(&t).contiguous().unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
