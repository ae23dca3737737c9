//! Every activation on 16M f32 elements (64 MB), in GB/s with the read and the write counted: out of place
//! (allocating its output, as a user calls it), into a preallocated output, and in place — next to a memcpy of
//! the same size in the same run.
//!
//! Then the same on each device `NN_BENCH_DEVICES` names (comma-separated; `wgpu:0` when unset, `cuda:0` in a
//! build with the `cuda` feature), as `wgpu:0 f32 16M`, skipped with a message where the machine lacks it: each
//! iteration launches the kernel on device-resident data and waits for the device. A second group (`wgpu:0 f32
//! 16M, queued`) launches a batch of calls and waits once at its end: throughput with the queue kept full, the
//! way a model's successive layers run (and the way a fused framework's figures are taken).
//!
//! `cargo bench -p nn --bench activations` (`-- relu` for one, `-- wgpu` for the device). Rows a minute apart
//! do not compare on a machine whose memory bandwidth moves: `activation_ratios.rs` times each activation in turns
//! with a copy.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use nn::functional::{Activation, prelu, prelu_into};
use nn::prelude::*;
use std::hint::black_box;

#[path = "common/activation_list.rs"]
mod activation_list;
use activation_list::activations;

const N: usize = 16 << 20;

fn bench(c: &mut Criterion) {
    nn::manual_seed(0);
    let x = Tensor::randn([N], DType::F32).mul_scalar(3.0).unwrap();
    let mut g = c.benchmark_group("cpu f32 16M");
    g.throughput(Throughput::Bytes((2 * N * 4) as u64));
    g.sample_size(20);
    let src = x.to_vec::<f32>().unwrap();
    let mut dst = vec![0.0f32; N];
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        })
    });
    g.bench_function("memcpy, 2 threads", |b| {
        use rayon::prelude::*;
        b.iter(|| {
            dst.par_chunks_mut(N / 2)
                .zip(src.par_chunks(N / 2))
                .for_each(|(d, s)| d.copy_from_slice(s));
            black_box(&dst);
        })
    });
    let out = Tensor::zeros([N], DType::F32);
    for act in activations() {
        let name = act.name();
        g.bench_function(format!("{name} out-of-place"), |b| {
            b.iter(|| black_box(act.forward(&x).unwrap()))
        });
        g.bench_function(format!("{name} into preallocated"), |b| {
            b.iter(|| act.forward_into(&x, &out).unwrap())
        });
        g.bench_function(format!("{name} in-place"), |b| {
            b.iter_batched(
                || x.deep_copy().unwrap(),
                |t| {
                    act.forward_(&t).unwrap();
                    t
                },
                BatchSize::LargeInput,
            )
        });
    }
    let w = Tensor::full([1], 0.25, DType::F32);
    g.bench_function("prelu out-of-place", |b| b.iter(|| black_box(prelu(&x, &w).unwrap())));
    g.bench_function("prelu into preallocated", |b| {
        b.iter(|| prelu_into(&x, &w, &out).unwrap())
    });
    g.bench_function("prelu in-place", |b| {
        b.iter_batched(
            || x.deep_copy().unwrap(),
            |t| {
                prelu_into(&t, &w, &t).unwrap();
                t
            },
            BatchSize::LargeInput,
        )
    });
    let rows = x.reshape([N / 1024, 1024]).unwrap();
    g.bench_function("softmax out-of-place", |b| {
        b.iter(|| black_box(rows.softmax(-1).unwrap()))
    });
    g.bench_function("log_softmax out-of-place", |b| {
        b.iter(|| black_box(rows.log_softmax(-1).unwrap()))
    });
    g.finish();
}

/// The device groups, for each device of `NN_BENCH_DEVICES`.
fn bench_devices(c: &mut Criterion) {
    let devices = std::env::var("NN_BENCH_DEVICES").unwrap_or_else(|_| "wgpu:0".into());
    for name in devices.split(',') {
        match Device::parse(name.trim()) {
            Some(device) if !device.is_cpu() => bench_device(c, device),
            _ => eprintln!("NN_BENCH_DEVICES: {name:?} is not a device such as wgpu:0 or cuda:0"),
        }
    }
}

fn bench_device(c: &mut Criterion, device: Device) {
    nn::manual_seed(0);
    let host = Tensor::randn([N], DType::F32).mul_scalar(3.0).unwrap();
    let x = match host.to_device(device) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{device} benchmarks skipped: {e}");
            return;
        }
    };
    let sync = || device.synchronize().unwrap();
    let mut g = c.benchmark_group(format!("{device} f32 16M"));
    g.throughput(Throughput::Bytes((2 * N * 4) as u64));
    g.sample_size(10);
    g.bench_function("copy (device memcpy)", |b| {
        b.iter(|| {
            black_box(x.deep_copy().unwrap());
            sync();
        })
    });
    let out = Tensor::zeros([N], DType::F32).to_device(device).unwrap();
    for act in activations() {
        let name = act.name();
        act.forward(&x).unwrap(); // the parity probe runs once, outside the measurement
        g.bench_function(format!("{name} out-of-place"), |b| {
            b.iter(|| {
                black_box(act.forward(&x).unwrap());
                sync();
            })
        });
        g.bench_function(format!("{name} into preallocated"), |b| {
            b.iter(|| {
                act.forward_into(&x, &out).unwrap();
                sync();
            })
        });
        // Fresh input every iteration (copied outside the measurement): repeated in-place application drives
        // GELU, SiLU, Mish to denormals, which the CPU behind lavapipe handles slowly.
        g.bench_function(format!("{name} in-place"), |b| {
            b.iter_batched(
                || {
                    let t = x.deep_copy().unwrap();
                    sync();
                    t
                },
                |t| {
                    act.forward_(&t).unwrap();
                    sync();
                    t
                },
                BatchSize::PerIteration,
            )
        });
    }
    let w = Tensor::full([1], 0.25, DType::F32).to_device(device).unwrap();
    g.bench_function("prelu out-of-place", |b| {
        b.iter(|| {
            black_box(prelu(&x, &w).unwrap());
            sync();
        })
    });
    g.bench_function("prelu into preallocated", |b| {
        b.iter(|| {
            prelu_into(&x, &w, &out).unwrap();
            sync();
        })
    });
    g.bench_function("prelu in-place", |b| {
        b.iter_batched(
            || {
                let t = x.deep_copy().unwrap();
                sync();
                t
            },
            |t| {
                prelu_into(&t, &w, &t).unwrap();
                sync();
                t
            },
            BatchSize::PerIteration,
        )
    });
    let rows = host.reshape([N / 1024, 1024]).unwrap().to_device(device).unwrap();
    for (name, log) in [("softmax", false), ("log_softmax", true)] {
        g.bench_function(format!("{name} out-of-place"), |b| {
            b.iter(|| {
                black_box(if log { rows.log_softmax(-1) } else { rows.softmax(-1) }.unwrap());
                sync();
            })
        });
    }
    g.finish();
    queued(c, device, &x);
}

/// The device copy and the activations with a peer figure, out of place, `iters` calls launched back to back
/// and one wait at the end.
fn queued(c: &mut Criterion, device: Device, x: &Tensor) {
    let sync = || device.synchronize().unwrap();
    let mut g = c.benchmark_group(format!("{device} f32 16M, queued"));
    g.throughput(Throughput::Bytes((2 * N * 4) as u64));
    g.sample_size(10);
    let mut run = |name: &str, f: &dyn Fn() -> Tensor| {
        black_box(f());
        sync();
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let start = std::time::Instant::now();
                for _ in 0..iters {
                    black_box(f());
                }
                sync();
                start.elapsed()
            })
        });
    };
    run("copy (device memcpy)", &|| x.deep_copy().unwrap());
    for act in [
        Activation::Relu,
        Activation::Gelu,
        Activation::Sigmoid,
        Activation::Tanh,
    ] {
        run(&format!("{} out-of-place", act.name()), &|| act.forward(x).unwrap());
    }
    g.finish();
}

criterion_group!(benches, bench, bench_devices);
criterion_main!(benches);
