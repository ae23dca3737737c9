//! Matrix products on devices: the direct kernel (one unit per output) next to `cubek-matmul`'s tiled one, in f32
//! row-major, for the DynamicsNetwork's linear layers' sizes and square products up to 2048. Each iteration
//! launches one product on device-resident operands and waits for the device; throughput is in multiply-adds
//! counted twice (FLOP/s, criterion's "elem/s"). The devices are `NN_BENCH_DEVICES` (comma-separated, `wgpu:0`
//! when unset, `cuda:0` in a build with the `cuda` feature); a device the machine lacks is skipped with a message.
//! What `kernels::linear::Kernel::tiled_pays` decides was read off these rows.
//!
//! `cargo bench -p kernels --bench matmul` (`-- 'wgpu:0 f32 matmul/512'` for one size)

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernels::linear::{Kernel, matmul_on};
use kernels::{FloatType, GpuBuffer, GpuDevice};

mod common;
use common::{open, values};

/// `(rows, inner, cols)`: the model's two linear layers at batch 256 and one at batch 1, an LSTM-sized one at
/// batch 256 and 1, square ones.
const SHAPES: [(usize, usize, usize); 14] = [
    (1, 36, 16),
    (1, 512, 2048),
    (16, 16, 16),
    (16, 512, 2048),
    (64, 64, 64),
    (32, 36, 16),
    (4, 512, 512),
    (256, 36, 16),
    (256, 64, 128),
    (256, 512, 2048),
    (128, 128, 128),
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
];

/// `len` pseudo-random f32 in [-1, 1), uploaded.
fn operand(device: &GpuDevice, len: usize, seed: u32) -> GpuBuffer {
    GpuBuffer::from_bytes(device, bytemuck::cast_slice(&values(len, seed)))
}

fn bench(c: &mut Criterion) {
    let devices = std::env::var("NN_BENCH_DEVICES").unwrap_or_else(|_| "wgpu:0".into());
    for name in devices.split(',') {
        let Some(device) = open(name) else { continue };
        let mut g = c.benchmark_group(format!("{} f32 matmul", name.trim()));
        g.sample_size(10);
        for (n, k, m) in SHAPES {
            let (a, b) = (operand(&device, n * k, 1), operand(&device, k * m, 2));
            g.throughput(Throughput::Elements((2 * n * k * m) as u64));
            for (label, kernel) in [("direct", Kernel::Direct), ("tiled", Kernel::Tiled)] {
                let run = || {
                    let y = matmul_on(kernel, FloatType::F32, &a, &b, [1, n, k, m], true)?;
                    device.synchronize().map(|()| y)
                };
                if let Err(e) = run() {
                    eprintln!("{name} {n}x{k}x{m} {label}: {e}");
                    continue;
                }
                g.bench_function(format!("{n}x{k}x{m} {label}"), |bench| {
                    bench.iter(|| black_box(run().unwrap()))
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
