//! Layer and group norms on the CPU at the shapes models meet: a transformer's `LayerNorm(1024)` over 4,096
//! tokens and a U-Net's `GroupNorm(32, 128)` over a batch of 8 maps of 32 × 32, forward (`no_grad`) and
//! forward and backward (of `(y · dy).sum()`, the input's, weight's and bias' gradients), with a copy of the
//! input as the limit. PyTorch's figures for the same rows: `python3 reference/benches/pytorch.py norms`.
//!
//! ```text
//! cargo bench -p nn --bench norms
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use nn::prelude::*;

/// Times `layer`'s forward on `x` under `no_grad`, then forward + backward along `dy`.
fn rows(c: &mut Criterion, name: &str, layer: &dyn TensorModule, x: &Tensor) {
    let mut group = c.benchmark_group("norms");
    let dy = Tensor::randn(x.shape().clone(), DType::F32);
    group.bench_function(format!("{name}, forward"), |b| {
        let _g = nn::no_grad();
        b.iter(|| layer.call_tensor(x.clone()).unwrap())
    });
    let leaf = x.detach().requires_grad_(true).unwrap();
    group.bench_function(format!("{name}, forward + backward"), |b| {
        b.iter(|| {
            let y = layer.call_tensor(leaf.clone()).unwrap();
            y.backward_with(&dy).unwrap();
        })
    });
    let copy = Tensor::zeros(x.shape().clone(), DType::F32);
    group.bench_function(format!("{name}, memcpy of the input"), |b| {
        b.iter(|| copy.copy_(x).unwrap())
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let layer_norm = LayerNorm::new(vec![1024]);
    rows(
        c,
        "LayerNorm(1024) over (4096, 1024)",
        &layer_norm,
        &Tensor::randn([4096, 1024], DType::F32),
    );
    let group_norm = GroupNorm::new(32, 128).unwrap();
    rows(
        c,
        "GroupNorm(32, 128) over (8, 128, 32, 32)",
        &group_norm,
        &Tensor::randn([8, 128, 32, 32], DType::F32),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
