//! Loading 1 GiB of weights into a matching model (16 × `Linear(4096, 4096, bias=False)`, float32), from a
//! safetensors file and from a PyTorch `.pt` (each read, and memory-mapped), next to a memcpy of the same size (on one
//! thread and on two) in the same run. `nn/benches/loading_pytorch.py` measures PyTorch's side. The files sit in
//! the page cache after the first iteration, so this measures the loaders, not the disk.
//!
//! ```text
//! /work/torch-venv/bin/python nn/benches/loading_checkpoint.py /tmp/nn-bench-1g.pt   # the .pt (PyTorch)
//! NN_BENCH_PT=/tmp/nn-bench-1g.pt cargo bench -p nn --bench loading
//! /work/torch-venv/bin/python nn/benches/loading_pytorch.py /tmp/nn-bench-1g.pt            # PyTorch, right after
//! ```
//! Without `NN_BENCH_PT` (or with a missing file) the `.pt` rows are left out; the safetensors file is written by
//! the bench itself.

use criterion::{Criterion, criterion_group, criterion_main};
use nn::prelude::*;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

const LAYERS: usize = 16;
const WIDTH: usize = 4096;

fn model() -> Sequential {
    (0..LAYERS).fold(Sequential::new(), |s, _| s.append(Linear::new(WIDTH, WIDTH, false)))
}

fn bench(c: &mut Criterion) {
    let bytes = LAYERS * WIDTH * WIDTH * 4;
    let mut group = c.benchmark_group("load 1 GiB");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20));
    group.throughput(criterion::Throughput::Bytes(bytes as u64));

    let source = vec![1u8; bytes];
    let mut target = vec![0u8; bytes];
    group.bench_function("memcpy (the limit)", |b| {
        b.iter(|| {
            target.copy_from_slice(black_box(&source));
            black_box(&target);
        })
    });
    group.bench_function("memcpy, 2 threads", |b| {
        b.iter(|| {
            let half = bytes / 2;
            let (low, high) = target.split_at_mut(half);
            std::thread::scope(|s| {
                s.spawn(|| low.copy_from_slice(black_box(&source[..half])));
                high.copy_from_slice(black_box(&source[half..]));
            });
            black_box(&target);
        })
    });
    drop((source, target));

    let mut m = model();
    let safetensors = std::env::temp_dir().join("nn-bench-1g.safetensors");
    m.save_safetensors(&safetensors).unwrap();
    group.bench_function("load_safetensors (strict)", |b| {
        b.iter(|| m.load_safetensors(&safetensors, true).unwrap())
    });
    group.bench_function("load_safetensors_mmap (strict)", |b| {
        // SAFETY: nothing else writes the file, which the bench made itself, during the loads.
        b.iter(|| unsafe { m.load_safetensors_mmap(&safetensors, true) }.unwrap())
    });
    std::fs::remove_file(&safetensors).ok();

    match std::env::var_os("NN_BENCH_PT").map(PathBuf::from) {
        Some(pt) if pt.exists() => {
            group.bench_function("load_pt (strict)", |b| b.iter(|| m.load_pt(&pt, true).unwrap()));
            let options = nn::io::PtOptions::new();
            group.bench_function("load_pt_mmap (strict)", |b| {
                // SAFETY: nothing writes the checkpoint during the loads.
                b.iter(|| unsafe { m.load_pt_mmap(&pt, true, &options) }.unwrap())
            });
        }
        _ => eprintln!("load_pt left out: set NN_BENCH_PT to a file written by nn/benches/loading_checkpoint.py"),
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
