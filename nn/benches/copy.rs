//! `Tensor::copy_` between host tensors of one dtype, on 1 and 2 threads, at sizes around the split threshold
//! (`COPY_SPLIT_BYTES` in `nn/src/tensor/storage.rs`): where a second thread starts to pay.
//!
//! ```text
//! cargo bench -p nn --bench copy
//! ```

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nn::{DType, Tensor};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("copy_");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for kib in [256usize, 512, 1024, 4096, 16384, 65536] {
        let n = kib * 256;
        let src = Tensor::full([n], 1.5, DType::F32);
        let dst = Tensor::zeros([n], DType::F32);
        group.throughput(Throughput::Bytes((n * 4) as u64));
        for threads in [1, 2] {
            nn::set_num_threads(threads);
            group.bench_with_input(
                BenchmarkId::new(format!("{threads} thread(s)"), format!("{kib} KiB")),
                &n,
                |b, _| b.iter(|| dst.copy_(&src).unwrap()),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
