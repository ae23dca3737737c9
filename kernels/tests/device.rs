//! Kernels on a real wgpu device (lavapipe in CI). Without an adapter these skip with a printed reason,
//! unless `CI=true`, where a missing adapter fails.

#![cfg(feature = "wgpu")]

use kernels::activation::{self, Gelu, Hardswish, Relu, Threshold};
use kernels::{Backend, FloatType, GpuBuffer, GpuDevice, KernelError};

fn device() -> Option<GpuDevice> {
    match GpuDevice::open(Backend::Wgpu, 0) {
        Ok(d) => Some(d),
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: no wgpu adapter ({e})");
            None
        }
        Err(e) => panic!("CI=true but no wgpu adapter: {e}"),
    }
}

fn upload(device: &GpuDevice, xs: &[f32]) -> GpuBuffer {
    GpuBuffer::from_bytes(device, bytemuck::cast_slice(xs))
}

fn download(buffer: &GpuBuffer) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(&buffer.to_bytes().unwrap())
}

/// Deterministic `f32` values in `[-2, 2]`: `2 sin((i + phase) · 0.37)` for `i < len`.
fn values(len: usize, phase: f64) -> Vec<f32> {
    (0..len)
        .map(|i| (2.0 * ((i as f64 + phase) * 0.37).sin()) as f32)
        .collect()
}

#[test]
fn relu_forward_backward_and_in_place() {
    let Some(dev) = device() else { return };
    let xs: Vec<f32> = (0..1001).map(|i| (i as f32 - 500.0) / 7.0).collect();
    let x = upload(&dev, &xs);
    let y = download(&activation::forward::<Relu>([0.0; 2], FloatType::F32, &x).unwrap());
    assert_eq!(y, xs.iter().map(|&v| v.max(0.0)).collect::<Vec<_>>());
    let dy = upload(&dev, &vec![2.0; xs.len()]);
    let dx = download(&activation::backward::<Relu>([0.0; 2], FloatType::F32, &x, &dy).unwrap());
    assert_eq!(
        dx,
        xs.iter().map(|&v| if v > 0.0 { 2.0 } else { 0.0 }).collect::<Vec<_>>()
    );
    activation::forward_in_place::<Threshold>([0.5, -3.0], FloatType::F32, &x).unwrap();
    let t = download(&x);
    assert_eq!(
        t,
        xs.iter().map(|&v| if v <= 0.5 { -3.0 } else { v }).collect::<Vec<_>>()
    );
}

/// 17M elements of odd length: vector width 1, more cubes than one dispatch dimension holds.
#[test]
fn large_launch_spreads_over_two_dimensions() {
    let Some(dev) = device() else { return };
    let n = 65_535 * 256 + 3;
    let xs: Vec<f32> = (0..n)
        .map(|i| if i % 2 == 0 { -(i as f32) } else { i as f32 })
        .collect();
    let x = upload(&dev, &xs);
    let y = download(&activation::forward::<Relu>([0.0; 2], FloatType::F32, &x).unwrap());
    assert_eq!(y.len(), n);
    let wrong = y.iter().zip(&xs).filter(|(a, b)| **a != b.max(0.0)).count();
    assert_eq!(wrong, 0, "{wrong} of {n} elements wrong; last {}", y[n - 1]);
}

#[test]
fn prelu_weight_gradient_is_reduced_per_channel() {
    let Some(dev) = device() else { return };
    let layout = kernels::prelu::Layout::around(&[3, 5, 7], 1);
    let xs: Vec<f32> = (0..layout.len()).map(|i| ((i * 37) % 23) as f32 - 11.0).collect();
    let ws = [0.1f32, 0.2, 0.3, 0.4, 0.5];
    let dys: Vec<f32> = (0..layout.len()).map(|i| ((i * 11) % 5) as f32 - 2.0).collect();
    let (dx, dw) = kernels::prelu::backward(
        FloatType::F32,
        &upload(&dev, &xs),
        &upload(&dev, &ws),
        &upload(&dev, &dys),
        layout,
    )
    .unwrap();
    let (dx, dw) = (download(&dx), download(&dw));
    let mut expect_dw = [0.0f32; 5];
    for (i, (&x, &g)) in xs.iter().zip(&dys).enumerate() {
        let c = (i / 7) % 5;
        assert_eq!(dx[i], if x > 0.0 { g } else { ws[c] * g }, "dx[{i}]");
        if x <= 0.0 {
            expect_dw[c] += x * g;
        }
    }
    assert_eq!(dw, expect_dw);
}

#[test]
fn softmax_lines_sum_to_one() {
    let Some(dev) = device() else { return };
    let layout = kernels::softmax::Layout::around(&[2, 9, 4], 1);
    let xs: Vec<f32> = (0..layout.len()).map(|i| (i as f32 * 0.37).sin() * 5.0).collect();
    let y = download(&kernels::softmax::forward(FloatType::F32, &upload(&dev, &xs), layout, false).unwrap());
    for o in 0..2 {
        for i in 0..4 {
            let sum: f32 = (0..9).map(|s| y[(o * 9 + s) * 4 + i]).sum();
            assert!((sum - 1.0).abs() < 1e-6, "line ({o}, {i}) sums to {sum}");
        }
    }
}

#[test]
fn unsupported_dtype_is_an_error_not_zeros() {
    let Some(dev) = device() else { return };
    let x = GpuBuffer::from_bytes(&dev, &[0u8; 8]);
    for dtype in FloatType::ALL {
        match activation::forward::<Gelu>([0.0; 2], dtype, &x) {
            Ok(_) => {}
            Err(KernelError::Unsupported { dtype: d, .. }) => assert_eq!(d, dtype),
            Err(e) => panic!("unexpected error for {dtype}: {e}"),
        }
    }
}

#[test]
fn prelu_forward_per_channel() {
    let Some(dev) = device() else { return };
    let layout = kernels::prelu::Layout::around(&[2, 3, 4], 1);
    let xs: Vec<f32> = (0..layout.len()).map(|i| i as f32 - 12.0).collect();
    let ws = [0.5f32, -1.0, 2.0];
    let y = download(&kernels::prelu::forward(FloatType::F32, &upload(&dev, &xs), &upload(&dev, &ws), layout).unwrap());
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(y[i], if x > 0.0 { x } else { ws[(i / 4) % 3] * x }, "y[{i}]");
    }
}

#[test]
fn hardswish_backward_at_each_piece() {
    let Some(dev) = device() else { return };
    let xs = [-4.0f32, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0];
    let dy = upload(&dev, &[1.0; 9]);
    let dx = download(&activation::backward::<Hardswish>([0.0; 2], FloatType::F32, &upload(&dev, &xs), &dy).unwrap());
    let want: Vec<f32> = xs
        .iter()
        .map(|&x| {
            if x < -3.0 {
                0.0
            } else if x >= 3.0 {
                1.0
            } else {
                x / 3.0 + 0.5
            }
        })
        .collect();
    assert_eq!(dx, want);
}

/// The tiled kernel (forced, on shapes below where `Auto` picks it too) and the direct one against a product
/// computed here in f64: single elements, sizes that fill no tile, batches, a shared right side, and `linear`'s
/// transposed weight with a bias.
#[test]
fn tiled_and_direct_products_equal_an_f64_product() {
    use kernels::linear::{Kernel, linear_on, matmul_on};
    let Some(dev) = device() else { return };
    let check = |what: &str, got: Vec<f32>, want: &[f64]| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g as f64 - w).abs() <= 1e-5 * w.abs().max(1.0),
                "{what}: [{i}] {g} vs {w}"
            );
        }
    };
    // (batches, n, k, m, shared)
    for (batches, n, k, m, shared) in [
        (1, 1, 1, 1, true),
        (1, 7, 65, 3, true),
        (1, 130, 70, 33, true),
        (3, 17, 64, 9, false),
        (4, 5, 80, 66, true),
    ] {
        let (a, b) = (
            values(batches * n * k, 0.0),
            values(if shared { k * m } else { batches * k * m }, 1.0),
        );
        let mut want = vec![0.0f64; batches * n * m];
        for p in 0..batches {
            let q = if shared { 0 } else { p };
            for i in 0..n {
                for j in 0..m {
                    want[(p * n + i) * m + j] = (0..k)
                        .map(|t| a[(p * n + i) * k + t] as f64 * b[(q * k + t) * m + j] as f64)
                        .sum();
                }
            }
        }
        let (da, db) = (upload(&dev, &a), upload(&dev, &b));
        for kernel in [Kernel::Direct, Kernel::Tiled, Kernel::Auto] {
            let what = format!("{kernel:?} matmul {batches}x{n}x{k}x{m} shared={shared}");
            let y = matmul_on(kernel, FloatType::F32, &da, &db, [batches, n, k, m], shared);
            check(&what, download(&y.unwrap_or_else(|e| panic!("{what}: {e}"))), &want);
        }
    }
    for (rows, inputs, outputs, bias) in [(1, 1, 1, true), (9, 70, 130, true), (66, 100, 70, false)] {
        let (x, w, b) = (
            values(rows * inputs, 0.0),
            values(outputs * inputs, 1.0),
            values(outputs, 2.0),
        );
        let mut want = vec![0.0f64; rows * outputs];
        for r in 0..rows {
            for o in 0..outputs {
                let dot: f64 = (0..inputs)
                    .map(|t| x[r * inputs + t] as f64 * w[o * inputs + t] as f64)
                    .sum();
                want[r * outputs + o] = dot + if bias { b[o] as f64 } else { 0.0 };
            }
        }
        let (dx, dw, dbias) = (upload(&dev, &x), upload(&dev, &w), upload(&dev, &b));
        for kernel in [Kernel::Direct, Kernel::Tiled, Kernel::Auto] {
            let what = format!("{kernel:?} linear {rows}x{inputs}->{outputs} bias={bias}");
            let y = linear_on(
                kernel,
                FloatType::F32,
                &dx,
                &dw,
                bias.then_some(&dbias),
                rows,
                inputs,
                outputs,
            );
            check(&what, download(&y.unwrap_or_else(|e| panic!("{what}: {e}"))), &want);
        }
    }
    // f64 stays on the direct kernel: the tiled one refuses it with a typed error.
    let one = GpuBuffer::from_bytes(&dev, &[0u8; 8]);
    match matmul_on(Kernel::Tiled, FloatType::F64, &one, &one, [1, 1, 1, 1], true) {
        Err(KernelError::Unsupported {
            dtype: FloatType::F64, ..
        }) => {}
        other => panic!("f64 on the tiled kernel: {:?}", other.map(|_| ())),
    }
}

/// `cubek-convolution`'s direct kernel, on nn's layout through the permutes of `channels_last_conv`, and nn's
/// own direct kernel against a convolution computed here in f64: padding, stride, dilation, groups, a bias or
/// none, a non-square kernel, and the DynamicsNetwork's 3x3 shape.
#[test]
fn channels_last_and_direct_convolutions_equal_an_f64_convolution() {
    use kernels::channels_last_conv;
    use kernels::conv2d::{Geometry, Kernel, conv2d_on};
    let Some(dev) = device() else { return };
    // (batch, channels, h, w, out_channels, groups, kernel, padding, stride, dilation, bias)
    let cases = [
        (2, 3, 7, 6, 4, 1, [3, 3], [1, 1], [1, 1], [1, 1], true),
        (1, 4, 9, 8, 6, 2, [3, 2], [0, 1], [2, 1], [1, 2], false),
        (3, 6, 5, 5, 3, 3, [1, 1], [0, 0], [1, 1], [1, 1], true),
        (4, 18, 3, 3, 16, 1, [3, 3], [1, 1], [1, 1], [1, 1], false),
    ];
    for (batch, channels, height, width, out_channels, groups, kernel, padding, stride, dilation, bias) in cases {
        let out = |d: usize, size: usize| (size + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] + 1;
        let g = Geometry {
            batch,
            channels,
            height,
            width,
            out_channels,
            groups,
            kernel,
            out_size: [out(0, height), out(1, width)],
            padding,
            stride,
            dilation,
        };
        let (x, w, b) = (
            values(g.input_len(), 0.0),
            values(g.weight_len(), 1.0),
            values(out_channels, 2.0),
        );
        let (cg, og) = (channels / groups, out_channels / groups);
        let [ho, wo] = g.out_size;
        let mut want = vec![0.0f64; g.output_len()];
        for n in 0..batch {
            for o in 0..out_channels {
                for (oy, ox) in (0..ho).flat_map(|y| (0..wo).map(move |x| (y, x))) {
                    let mut sum = if bias { b[o] as f64 } else { 0.0 };
                    for ci in 0..cg {
                        let c = (o / og) * cg + ci;
                        for (ky, kx) in (0..kernel[0]).flat_map(|y| (0..kernel[1]).map(move |x| (y, x))) {
                            let iy = (oy * stride[0] + ky * dilation[0]) as isize - padding[0] as isize;
                            let ix = (ox * stride[1] + kx * dilation[1]) as isize - padding[1] as isize;
                            if iy < 0 || ix < 0 || iy >= height as isize || ix >= width as isize {
                                continue;
                            }
                            let xv = x[((n * channels + c) * height + iy as usize) * width + ix as usize];
                            let wv = w[((o * cg + ci) * kernel[0] + ky) * kernel[1] + kx];
                            sum += xv as f64 * wv as f64;
                        }
                    }
                    want[((n * out_channels + o) * ho + oy) * wo + ox] = sum;
                }
            }
        }
        let (dx, dw, db) = (upload(&dev, &x), upload(&dev, &w), upload(&dev, &b));
        let db = bias.then_some(&db);
        let f32 = FloatType::F32;
        let runs = [
            ("nn direct", conv2d_on(Kernel::Direct, f32, &dx, &dw, db, g)),
            ("cubek", conv2d_on(Kernel::ChannelsLast, f32, &dx, &dw, db, g)),
            ("auto", conv2d_on(Kernel::Auto, f32, &dx, &dw, db, g)),
        ];
        // Operands of other sizes are refused before launch, never read out of bounds.
        let short = upload(&dev, &b[..out_channels - 1]);
        let refused = channels_last_conv::conv2d_channels_last(FloatType::F32, &dx, &dw, Some(&short), g);
        assert!(
            matches!(refused, Err(KernelError::InvalidArgument { .. })),
            "{g:?}: a short bias"
        );
        for (which, y) in runs {
            let what = format!("{which} {g:?}");
            let got = download(&y.unwrap_or_else(|e| panic!("{what}: {e}")));
            assert_eq!(got.len(), want.len(), "{what}");
            for (i, (&got, &want)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (got as f64 - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "{what}: [{i}] {got} vs {want}"
                );
            }
        }
    }
}

/// `Kernel::Auto` runs the kernel `channels_last_pays` names for the device it is on, and Mesa's software
/// adapters count as software: the output is bit for bit that kernel's, for a convolution on either side of the
/// threshold, in f32 and f16.
#[test]
fn auto_convolution_runs_the_kernel_the_routing_names() {
    use kernels::conv2d::{Geometry, Kernel, conv2d_on};
    let Some(dev) = device() else { return };
    let name = dev.client().properties().identity.name.clone();
    if name.contains("llvmpipe") {
        assert!(dev.is_software(), "{name} is Mesa's software adapter");
    }
    let g = |channels, kernel: usize| Geometry {
        batch: 4,
        channels,
        height: 6,
        width: 5,
        out_channels: 8,
        groups: 1,
        kernel: [kernel, kernel],
        out_size: [6, 5],
        padding: [kernel / 2, kernel / 2],
        stride: [1, 1],
        dilation: [1, 1],
    };
    let (wide, narrow) = (g(16, 3), g(4, 1));
    assert!(Kernel::channels_last_pays(true, FloatType::F32, wide));
    assert!(!Kernel::channels_last_pays(true, FloatType::F32, narrow));
    for dtype in [FloatType::F32, FloatType::F16] {
        if dev.check_dtype("test", dtype).is_err() {
            continue;
        }
        for g in [wide, narrow] {
            let cast = |v: Vec<f32>| match dtype {
                FloatType::F16 => v
                    .iter()
                    .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
                    .collect::<Vec<u8>>(),
                _ => bytemuck::cast_slice(&v).to_vec(),
            };
            let up = |len, seed| kernels::GpuBuffer::from_bytes(&dev, &cast(values(len, seed)));
            let (x, w, b) = (up(g.input_len(), 0.0), up(g.weight_len(), 1.0), up(g.out_channels, 2.0));
            let run = |k| conv2d_on(k, dtype, &x, &w, Some(&b), g).unwrap().to_bytes().unwrap();
            let pays = Kernel::channels_last_pays(dev.is_software(), dtype, g);
            let named = if pays { Kernel::ChannelsLast } else { Kernel::Direct };
            assert_eq!(
                run(Kernel::Auto),
                run(named),
                "{dtype:?} {g:?} on {name}: Auto is {named:?}"
            );
        }
    }
}

/// The same for the matrix products: `Kernel::Auto` gives the output of the kernel the routing names for this
/// device (on a software adapter, the tiled one from 2¹⁷ multiply-adds with 16 rows and columns).
#[test]
fn auto_matmul_runs_the_kernel_the_routing_names() {
    use kernels::linear::{Kernel, matmul_on};
    let Some(dev) = device() else { return };
    for [batches, rows, inner, cols] in [[1, 256, 36, 16], [1, 32, 36, 16], [2, 4, 512, 64], [1, 64, 64, 64]] {
        let (a, b) = (values(batches * rows * inner, 0.0), values(inner * cols, 1.0));
        let (da, db) = (upload(&dev, &a), upload(&dev, &b));
        let run = |k| {
            let y = matmul_on(k, FloatType::F32, &da, &db, [batches, rows, inner, cols], true);
            y.unwrap().to_bytes().unwrap()
        };
        let tiled = if dev.is_software() {
            Kernel::tiled_pays_in_software(batches, rows, inner, cols)
        } else {
            Kernel::tiled_pays(dev.backend(), batches, rows, inner, cols)
        };
        let named = if tiled { Kernel::Tiled } else { Kernel::Direct };
        assert_eq!(
            run(Kernel::Auto),
            run(named),
            "{batches}x{rows}x{inner}x{cols} on {dev}: Auto is {named:?}"
        );
    }
}

/// A strided scatter is the inverse of the gather: writes land where a view's elements lie, a 0-d view included,
/// and 8-byte elements move as two words.
#[test]
fn scatter_writes_where_gather_reads() {
    use kernels::gather::{Element, gather, scatter};
    let Some(dev) = device() else { return };
    let x = upload(&dev, &(0..12).map(|i| i as f32).collect::<Vec<_>>());
    // column 1 of a 3x4 matrix, then element 2 alone (rank 0)
    scatter(&upload(&dev, &[-1.0, -2.0, -3.0]), &x, Element::Bits32, &[3], &[4], 1).unwrap();
    scatter(&upload(&dev, &[-9.0]), &x, Element::Bits32, &[], &[], 2).unwrap();
    scatter(&upload(&dev, &[-7.0]), &x, Element::Bits32, &[1], &[1], 3).unwrap();
    let want = [0.0, -1.0, -9.0, -7.0, 4.0, -2.0, 6.0, 7.0, 8.0, -3.0, 10.0, 11.0];
    assert_eq!(download(&x), want);
    let t = gather(&x, Element::Bits32, &[4, 3], &[1, 4], 0).unwrap();
    assert_eq!(download(&t)[..3], [0.0, 4.0, 8.0]);
    let wide = GpuBuffer::from_bytes(&dev, bytemuck::cast_slice(&[1.0f64, 2.0, 3.0, 4.0]));
    scatter(
        &GpuBuffer::from_bytes(&dev, bytemuck::cast_slice(&[7.0f64, 8.0])),
        &wide,
        Element::Bits64,
        &[2],
        &[2],
        1,
    )
    .unwrap();
    let back: Vec<f64> = bytemuck::pod_collect_to_vec(&wide.to_bytes().unwrap());
    assert_eq!(back, [1.0, 7.0, 3.0, 8.0]);
    // outside the buffer: an error, nothing written
    assert!(scatter(&upload(&dev, &[1.0, 2.0]), &x, Element::Bits32, &[2], &[8], 5).is_err());
}
