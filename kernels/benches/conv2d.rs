//! Convolutions on devices: nn's direct kernel (`kernels::conv2d`, one unit per output, `(N, C, H, W)`) next to
//! `cubek-convolution`'s direct kernel (`kernels::channels_last_conv`), which reads channels-last operands:
//! timed with the permutes nn's layout needs around it ("cubek, permuted") and on operands already
//! channels-last ("cubek, channels-last": the kernel alone). f32; the DynamicsNetwork's convolutions at batch 256
//! and larger ones, and on a GPU (not a software adapter, where each would take seconds) three of ResNet-50's at
//! batch 32. Before timing, each size's outputs are compared (the largest difference printed).
//! Devices: `NN_BENCH_DEVICES` as in `benches/matmul.rs` (`wgpu:0` when unset).
//!
//! `cargo bench -p kernels --bench conv2d` (`-- 'model 3x3'` for one size)

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernels::conv2d::{Geometry, Kernel, conv2d_on};
use kernels::{FloatType, GpuBuffer, channels_last_conv};

mod common;
use common::{open, values};

/// `(name, geometry)`: the model's 3x3 and 1x1 convolutions at batch 256, a ResNet stage, a ResNet stem.
fn shapes() -> Vec<(&'static str, Geometry)> {
    let grouped = |batch, channels, size: usize, out_channels, kernel: usize, stride: usize, padding: usize, groups| {
        let out = (size + 2 * padding - kernel) / stride + 1;
        Geometry {
            batch,
            channels,
            height: size,
            width: size,
            out_channels,
            groups,
            kernel: [kernel, kernel],
            out_size: [out, out],
            padding: [padding, padding],
            stride: [stride, stride],
            dilation: [1, 1],
        }
    };
    let g = |batch, channels, size, out_channels, kernel, stride, padding| {
        grouped(batch, channels, size, out_channels, kernel, stride, padding, 1)
    };
    vec![
        ("model 3x3 (256, 18, 3, 3) * (16, 18, 3, 3)", g(256, 18, 3, 16, 3, 1, 1)),
        ("model 1x1 (256, 16, 3, 3) * (4, 16, 1, 1)", g(256, 16, 3, 4, 1, 1, 0)),
        (
            "ResNet stage (8, 64, 16, 16) * (64, 64, 3, 3)",
            g(8, 64, 16, 64, 3, 1, 1),
        ),
        (
            "ResNet stem (2, 3, 64, 64) * (32, 3, 7, 7), stride 2",
            g(2, 3, 64, 32, 7, 2, 3),
        ),
        // Between the two kinds, to place the routing threshold: few taps per output (k = C / groups · kH · kW).
        (
            "3x3 of 4 channels (256, 4, 3, 3) * (16, 4, 3, 3)",
            g(256, 4, 3, 16, 3, 1, 1),
        ),
        (
            "1x1 of 64 channels (8, 64, 16, 16) * (64, 64, 1, 1)",
            g(8, 64, 16, 64, 1, 1, 0),
        ),
        (
            "1x1 of 256 channels (8, 256, 8, 8) * (64, 256, 1, 1)",
            g(8, 256, 8, 64, 1, 1, 0),
        ),
        (
            "depthwise 3x3 (8, 64, 16, 16) * (64, 1, 3, 3), groups 64",
            grouped(8, 64, 16, 64, 3, 1, 1, 64),
        ),
        (
            "ResNet downsampling (8, 64, 16, 16) * (128, 64, 3, 3), stride 2",
            g(8, 64, 16, 128, 3, 2, 1),
        ),
        (
            "3x3 of 16 channels (256, 16, 3, 3) * (16, 16, 3, 3)",
            g(256, 16, 3, 16, 3, 1, 1),
        ),
        // The reference model's own: 14 output channels, and 14 inputs in its residual block.
        (
            "model 3x3 in (256, 16, 3, 3) * (14, 16, 3, 3)",
            g(256, 16, 3, 14, 3, 1, 1),
        ),
        (
            "model 3x3 res (256, 14, 3, 3) * (14, 14, 3, 3)",
            g(256, 14, 3, 14, 3, 1, 1),
        ),
        (
            "3x3 to 12 channels (256, 14, 3, 3) * (12, 14, 3, 3)",
            g(256, 14, 3, 12, 3, 1, 1),
        ),
    ]
}

/// ResNet-50's convolutions at batch 32 (1.6–3.7 G multiply-adds each), for GPUs only.
fn gpu_shapes() -> Vec<(&'static str, Geometry)> {
    let g = |channels, size: usize, out_channels, kernel: usize| Geometry {
        batch: 32,
        channels,
        height: size,
        width: size,
        out_channels,
        groups: 1,
        kernel: [kernel, kernel],
        out_size: [size, size],
        padding: [kernel / 2, kernel / 2],
        stride: [1, 1],
        dilation: [1, 1],
    };
    vec![
        ("ResNet-50 3x3 (32, 64, 56, 56) * (64, 64, 3, 3)", g(64, 56, 64, 3)),
        ("ResNet-50 1x1 (32, 256, 56, 56) * (64, 256, 1, 1)", g(256, 56, 64, 1)),
        ("ResNet-50 3x3 (32, 512, 7, 7) * (512, 512, 3, 3)", g(512, 7, 512, 3)),
    ]
}

fn floats(buffer: &GpuBuffer) -> Vec<f32> {
    bytemuck::cast_slice(&buffer.to_bytes().unwrap()).to_vec()
}

fn bench(c: &mut Criterion) {
    let devices = std::env::var("NN_BENCH_DEVICES").unwrap_or_else(|_| "wgpu:0".into());
    let f32 = FloatType::F32;
    for name in devices.split(',') {
        let Some(device) = open(name) else { continue };
        let mut group = c.benchmark_group(format!("{} f32 conv2d", name.trim()));
        group.sample_size(10);
        let large = if device.is_software() { vec![] } else { gpu_shapes() };
        for (shape, g) in shapes().into_iter().chain(large) {
            let upload = |len, seed| GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&values(len, seed)));
            let (x, w, b) = (
                upload(g.input_len(), 1),
                upload(g.weight_len(), 2),
                upload(g.out_channels, 3),
            );
            let ours = conv2d_on(Kernel::Direct, f32, &x, &w, Some(&b), g).unwrap();
            let theirs = match channels_last_conv::conv2d(f32, &x, &w, Some(&b), g) {
                Ok(y) => y,
                Err(e) => {
                    eprintln!("{name} {shape}: cubek-convolution refused: {e}");
                    continue;
                }
            };
            let worst = floats(&ours)
                .iter()
                .zip(floats(&theirs))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            eprintln!("{name} {shape}: largest |nn - cubek| = {worst:e}");
            let (xl, wl) = channels_last_conv::to_channels_last(f32, &x, &w, g).unwrap();
            group.throughput(Throughput::Elements(
                (2 * g.output_len() * g.kernel[0] * g.kernel[1] * g.channels / g.groups) as u64,
            ));
            let sync = |y: GpuBuffer| device.synchronize().map(|()| y).unwrap();
            group.bench_function(format!("{shape}, nn direct"), |bench| {
                bench.iter(|| black_box(sync(conv2d_on(Kernel::Direct, f32, &x, &w, Some(&b), g).unwrap())))
            });
            group.bench_function(format!("{shape}, cubek, permuted"), |bench| {
                bench.iter(|| black_box(sync(channels_last_conv::conv2d(f32, &x, &w, Some(&b), g).unwrap())))
            });
            group.bench_function(format!("{shape}, cubek, channels-last"), |bench| {
                bench.iter(|| {
                    black_box(sync(
                        channels_last_conv::conv2d_channels_last(f32, &xl, &wl, Some(&b), g).unwrap(),
                    ))
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
