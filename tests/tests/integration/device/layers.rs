//! The layers and tensor operations on wgpu (lavapipe in CI) against the same computation on the CPU, on odd
//! shapes and every option; EfficientZero's DynamicsNetwork on wgpu against PyTorch. Dtypes a device cannot
//! compute right are refused with a typed error, never answered wrongly. Without an adapter these skip (and
//! fail under `CI=true`).

use integration_tests::{bit_equal, fixture, gpu_or_skip, lacks_dtype, max_rel_diff, sine_values as values, twin};
use nn::functional::{Conv2dOptions, Padding2d, conv2d};
use nn::prelude::*;
use nn::{Error, StateDict};
use reference::efficientzero::check_export;

/// Asserts `got` is on `dev` and within `tol` (relative, absolute below 1) of the CPU's `want`.
fn assert_close(what: &str, got: &Tensor, want: &Tensor, dev: Device, tol: f64) {
    assert_eq!(got.device(), dev, "{what}: result not on the device");
    assert_eq!(got.dtype(), want.dtype(), "{what}");
    let err = max_rel_diff(&got.cpu().unwrap(), want, 1.0);
    assert!(err <= tol, "{what}: error {err:e} above {tol:e}");
}

/// Asserts two state dicts hold the same keys, dtypes and (within `tol`) values.
fn assert_same_state(what: &str, got: &StateDict, want: &StateDict, tol: f64) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}"
    );
    for (k, w) in want.iter() {
        let g = got.get(k).unwrap().cpu().unwrap();
        assert_eq!(g.dtype(), w.dtype(), "{what}: {k}");
        let err = max_rel_diff(&g, w, 1.0);
        assert!(err <= tol, "{what}: {k} differs by {err:e}");
    }
}

#[test]
fn dynamics_network_on_wgpu_matches_pytorch() {
    let Some(dev) = gpu_or_skip("dynamics") else { return };
    for dir in integration_tests::DYNAMICS_EXPORTS {
        let report = check_export(&fixture(dir), dev);
        println!("{dir} on {dev}\n{report}");
        assert_eq!(report.failed(), 0, "{dir}:\n{report}");
        assert_eq!(report.checks.len(), 20, "{dir}:\n{report}");
    }
}

#[test]
fn linear_of_any_rank_with_and_without_bias() {
    let Some(dev) = gpu_or_skip("linear") else { return };
    for bias in [true, false] {
        let cpu = Linear::new(7, 5, bias);
        let gpu = twin(&cpu, || Linear::new(7, 5, bias), dev);
        for shape in [vec![7], vec![3, 7], vec![2, 3, 7], vec![0, 7]] {
            let x = values(&shape, 0.5, DType::F32);
            let want = cpu.forward(x.clone()).unwrap();
            let got = gpu.forward(x.to_device(dev).unwrap()).unwrap();
            assert_close(&format!("linear {shape:?} bias={bias}"), &got, &want, dev, 1e-6);
        }
    }
}

#[test]
fn matmul_batched_shared_and_empty_in_every_float_dtype() {
    let Some(dev) = gpu_or_skip("matmul") else { return };
    let cases: [(&[usize], &[usize]); 6] = [
        (&[3, 7], &[7, 5]),
        (&[2, 3, 7], &[2, 7, 5]),
        (&[2, 2, 3, 4], &[4, 1]),
        (&[0, 3, 4], &[4, 5]),
        (&[2, 3, 0], &[2, 0, 5]),
        (&[1, 5], &[5, 9]),
    ];
    for (dtype, tol) in [(DType::F32, 1e-6), (DType::F64, 1e-12), (DType::F16, 4e-3)] {
        matmuls_equal_the_cpus(dev, &cases, dtype, tol);
    }
}

/// Asserts `a @ b` on `dev` equals the CPU's within `tol` (grown past sums of 256 terms: sums in another order
/// round differently, more so the longer they are) for each case, or is refused where the device lacks `dtype`.
fn matmuls_equal_the_cpus(dev: Device, cases: &[(&[usize], &[usize])], dtype: DType, tol: f64) {
    for &(a_shape, b_shape) in cases {
        let (a, b) = (values(a_shape, 0.0, dtype), values(b_shape, 1.0, dtype));
        let want = a.matmul(&b).unwrap();
        let what = format!("{dtype} {a_shape:?} @ {b_shape:?}");
        let inner = a_shape[a_shape.len() - 1];
        match a.to_device(dev).unwrap().matmul(&b.to_device(dev).unwrap()) {
            Ok(got) => assert_close(&what, &got, &want, dev, tol_for(tol, inner)),
            Err(Error::UnsupportedOnDevice { .. }) if lacks_dtype(dev, dtype) => {}
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// `tol` for sums of `inner` terms: as is up to 256, in proportion past.
fn tol_for(tol: f64, inner: usize) -> f64 {
    tol * (inner as f64 / 256.0).max(1.0)
}

/// Products on both of the device's kernels (`kernels::linear::Kernel::tiled_pays`: the tiled one from 2²⁸
/// multiply-adds on CUDA, 2³⁰ through wgpu on a GPU, 2¹⁷ on a software adapter such as lavapipe): odd sizes that fill no tile, batched, shared right sides, one
/// product of 2²⁸, and `Linear` (a transposed weight, with and without a bias), in every float dtype the device
/// has.
#[test]
fn products_on_the_direct_and_tiled_kernels_equal_the_cpus() {
    let Some(dev) = gpu_or_skip("matmul") else { return };
    let cases: [(&[usize], &[usize]); 6] = [
        (&[130, 70], &[70, 33]),
        (&[3, 40, 64], &[3, 64, 50]),
        (&[2, 64, 100], &[100, 65]),
        (&[1, 64], &[64, 4100]),
        (&[256, 512], &[512, 96]),
        (&[512, 1024], &[1024, 512]),
    ];
    for (dtype, tol) in [(DType::F32, 1e-5), (DType::F16, 4e-3), (DType::BF16, 1.6e-2)] {
        matmuls_equal_the_cpus(dev, &cases, dtype, tol);
        for (rows, inputs, outputs, bias) in [(66, 100, 70, true), (66, 64, 129, false), (512, 1024, 513, true)] {
            let make = || -> nn::Result<Linear> {
                let mut linear = Linear::new(inputs, outputs, bias);
                linear.to_dtype(dtype)?;
                Ok(linear)
            };
            let cpu = make().unwrap();
            let x = values(&[rows, inputs], 2.0, dtype);
            let want = cpu.forward(x.clone()).unwrap();
            let what = format!("{dtype} Linear({inputs}, {outputs}, bias={bias})");
            let on_device = || -> nn::Result<Tensor> {
                let mut gpu = make()?;
                gpu.load_state_dict(&cpu.state_dict(), true, false)?;
                gpu.to_device(dev)?;
                gpu.forward(x.to_device(dev)?)
            };
            match on_device() {
                Ok(got) => assert_close(&what, &got, &want, dev, tol_for(tol, inputs)),
                Err(Error::UnsupportedOnDevice { .. }) if lacks_dtype(dev, dtype) => {}
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
}

#[test]
fn conv2d_strides_padding_dilation_groups() {
    let Some(dev) = gpu_or_skip("conv2d") else { return };
    // (in, out, kernel, stride, padding, dilation, groups, bias, input)
    #[rustfmt::skip]
    let cases = [
        (3, 4, [3, 3], [1, 1], Padding2d::Explicit(1, 1), [1, 1], 1, true, vec![2, 3, 7, 5]),
        (4, 6, [3, 2], [2, 1], Padding2d::Explicit(1, 0), [1, 2], 2, false, vec![3, 4, 9, 8]),
        (2, 2, [4, 4], [1, 1], Padding2d::Same, [2, 1], 2, true, vec![1, 2, 6, 7]),
        (6, 3, [1, 1], [3, 2], Padding2d::Valid, [1, 1], 3, true, vec![2, 6, 5, 5]),
        (3, 5, [3, 3], [1, 1], Padding2d::Explicit(2, 1), [1, 1], 1, true, vec![3, 4, 4]),
    ];
    for (i, (cin, cout, k, stride, padding, dilation, groups, bias, shape)) in cases.into_iter().enumerate() {
        let opts = Conv2dOptions {
            stride,
            padding,
            dilation,
            groups,
        };
        let cpu = Conv2d::new(cin, cout, k, opts, bias).unwrap();
        let gpu = twin(&cpu, || Conv2d::new(cin, cout, k, opts, bias).unwrap(), dev);
        let x = values(&shape, i as f64, DType::F32);
        let want = cpu.forward(x.clone()).unwrap();
        let got = gpu.forward(x.to_device(dev).unwrap()).unwrap();
        assert_eq!(got.shape(), want.shape(), "case {i}");
        assert_close(&format!("conv2d case {i}"), &got, &want, dev, 1e-5);
    }
}

#[test]
fn batch_norm_training_updates_running_statistics_on_the_device() {
    let Some(dev) = gpu_or_skip("batch_norm") else { return };
    // Momentum 0.1 and None (cumulative average), affine or not, 2-d and 4-d inputs.
    for (momentum, affine) in [(Some(0.1), true), (None, false)] {
        let make = || BatchNorm2d::with_options(3, 1e-5, momentum, affine, true);
        let cpu = make();
        let gpu = twin(&cpu, make, dev);
        for step in 0..3 {
            let x = values(&[4, 3, 5, 2], step as f64, DType::F32)
                .affine(1.5, 0.25)
                .unwrap();
            let want = cpu.call(x.clone()).unwrap();
            let got = gpu.call(x.to_device(dev).unwrap()).unwrap();
            assert_close(&format!("bn2d train step {step}"), &got, &want, dev, 1e-5);
        }
        assert_same_state("bn2d after training", &gpu.state_dict(), &cpu.state_dict(), 1e-6);
        let n = gpu.num_batches_tracked.as_ref().unwrap();
        assert_eq!((n.device(), n.dtype()), (dev, DType::I64));
        assert_eq!(n.cpu().unwrap().to_vec::<i64>().unwrap(), vec![3]);
    }
    let mut cpu = BatchNorm1d::new(6);
    let mut gpu = twin(&cpu, || BatchNorm1d::new(6), dev);
    for shape in [vec![5, 6], vec![2, 6, 7]] {
        let x = values(&shape, 3.0, DType::F32);
        let want = cpu.call(x.clone()).unwrap();
        let got = gpu.call(x.to_device(dev).unwrap()).unwrap();
        assert_close(&format!("bn1d train {shape:?}"), &got, &want, dev, 1e-5);
    }
    cpu.eval();
    gpu.eval();
    let x = values(&[3, 6, 2], 7.0, DType::F32);
    let want = cpu.call(x.clone()).unwrap();
    let got = gpu.call(x.to_device(dev).unwrap()).unwrap();
    assert_close("bn1d eval", &got, &want, dev, 1e-5);
    assert_same_state("bn1d after eval", &gpu.state_dict(), &cpu.state_dict(), 1e-6);
}

#[test]
fn a_refused_batch_norm_leaves_the_running_statistics_alone() {
    let Some(dev) = gpu_or_skip("batch_norm_refused") else {
        return;
    };
    let mut bn = BatchNorm2d::new(3);
    bn.to_device(dev).unwrap();
    let before = bn.state_dict().deep_copy().unwrap();
    // One value per channel cannot be trained on.
    let err = bn
        .call(values(&[1, 3, 1, 1], 0.0, DType::F32).to_device(dev).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("more than 1 value per channel"), "{err}");
    assert_same_state("bn after a refused call", &bn.state_dict(), &before, 0.0);
}

#[test]
fn layer_norm_over_the_last_dimensions() {
    let Some(dev) = gpu_or_skip("layer_norm") else { return };
    let cases: [(Vec<usize>, bool, bool, Vec<usize>); 3] = [
        (vec![7], true, true, vec![4, 7]),
        (vec![3, 5], true, false, vec![2, 3, 5]),
        (vec![300], false, false, vec![3, 300]),
    ];
    for (normalized, affine, bias, shape) in cases {
        let make = || LayerNorm::with_options(normalized.clone(), 1e-5, affine, bias);
        let cpu = make();
        // Non-trivial affine parameters, so they are tested.
        for p in cpu.parameters() {
            p.data().copy_(&values(p.shape().dims(), 1.0, DType::F32)).unwrap();
        }
        let gpu = twin(&cpu, make, dev);
        let x = values(&shape, 2.0, DType::F32).affine(3.0, 1.0).unwrap();
        let want = cpu.forward(x.clone()).unwrap();
        let got = gpu.forward(x.to_device(dev).unwrap()).unwrap();
        assert_close(
            &format!("layer_norm {normalized:?} over {shape:?}"),
            &got,
            &want,
            dev,
            1e-5,
        );
    }
}

#[test]
fn lstm_layers_directions_batch_first_and_state() {
    let Some(dev) = gpu_or_skip("lstm") else { return };
    let configs = [
        (1, true, false, false),
        (2, true, false, true),
        (3, false, true, false),
        (2, true, true, true),
    ];
    for (num_layers, bias, batch_first, bidirectional) in configs {
        let options = LstmOptions {
            num_layers,
            bias,
            batch_first,
            dropout: 0.0,
            bidirectional,
            proj_size: 0,
        };
        let make = || LSTM::with_options(5, 4, options).unwrap();
        let cpu = make();
        let gpu = twin(&cpu, make, dev);
        let dirs = if bidirectional { 2 } else { 1 };
        let x = values(if batch_first { &[3, 6, 5] } else { &[6, 3, 5] }, 0.0, DType::F32);
        let h0 = values(&[num_layers * dirs, 3, 4], 1.0, DType::F32);
        let c0 = values(&[num_layers * dirs, 3, 4], 2.0, DType::F32);
        let what = format!("lstm layers={num_layers} bias={bias} batch_first={batch_first} bi={bidirectional}");
        for state in [None, Some((h0, c0))] {
            let (want, (wh, wc)) = cpu.forward((x.clone(), state.clone())).unwrap();
            let state_dev = state.map(|(h, c)| (h.to_device(dev).unwrap(), c.to_device(dev).unwrap()));
            let (got, (gh, gc)) = gpu.forward((x.to_device(dev).unwrap(), state_dev)).unwrap();
            assert_close(&format!("{what}: output"), &got, &want, dev, 1e-5);
            assert_close(&format!("{what}: h_n"), &gh, &wh, dev, 1e-5);
            assert_close(&format!("{what}: c_n"), &gc, &wc, dev, 1e-5);
        }
        // Unbatched input (seq, feature).
        let x1 = values(&[6, 5], 3.0, DType::F32);
        let (want, _) = cpu.forward((x1.clone(), None)).unwrap();
        let (got, _) = gpu.forward((x1.to_device(dev).unwrap(), None)).unwrap();
        assert_close(&format!("{what}: unbatched"), &got, &want, dev, 1e-5);
    }
}

#[test]
fn narrow_permute_and_cat_move_every_dtype() {
    let Some(dev) = gpu_or_skip("layout") else { return };
    for dtype in [DType::F32, DType::F64, DType::I64, DType::I32, DType::F16] {
        if lacks_dtype(dev, dtype) {
            continue;
        }
        let a = values(&[2, 5, 3], 0.0, DType::F64)
            .mul_scalar(100.0)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let b = values(&[2, 2, 3], 1.0, DType::F64)
            .mul_scalar(100.0)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let (ad, bd) = (a.to_device(dev).unwrap(), b.to_device(dev).unwrap());
        let same = |what: &str, got: Tensor, want: Tensor| {
            assert_eq!(got.device(), dev, "{what} {dtype}");
            assert!(
                integration_tests::bit_equal(&got.cpu().unwrap(), &want),
                "{what} {dtype}"
            );
        };
        same("narrow", ad.narrow(1, 1, 3).unwrap(), a.narrow(1, 1, 3).unwrap());
        same("narrow last", ad.narrow(-1, 2, 1).unwrap(), a.narrow(-1, 2, 1).unwrap());
        same(
            "permute",
            ad.permute(&[2, 0, 1]).unwrap(),
            a.permute(&[2, 0, 1]).unwrap(),
        );
        same("transpose", ad.transpose(0, 2).unwrap(), a.transpose(0, 2).unwrap());
        same(
            "cat",
            Tensor::cat(&[&ad, &bd, &ad], 1).unwrap(),
            Tensor::cat(&[&a, &b, &a], 1).unwrap(),
        );
        same(
            "cat dim 0",
            Tensor::cat(&[&ad, &ad], 0).unwrap(),
            Tensor::cat(&[&a, &a], 0).unwrap(),
        );
    }
    // 1-byte elements: a narrow is a view, and its elements move (through the host, as no kernel moves them).
    let bytes = Tensor::from_vec(vec![1u8, 2, 3, 4], [4])
        .unwrap()
        .to_device(dev)
        .unwrap();
    let piece = bytes.narrow(0, 1, 2).unwrap();
    assert_eq!(piece.cpu().unwrap().to_vec::<u8>().unwrap(), vec![2, 3]);
    let err = Tensor::cat(&[&piece, &piece], 0).unwrap_err();
    assert!(matches!(err, Error::UnsupportedOnDevice { .. }), "{err}");
}

#[test]
fn broadcast_arithmetic_and_scalars() {
    let Some(dev) = gpu_or_skip("arith") else { return };
    let a = values(&[2, 3, 4], 0.0, DType::F32);
    let b = values(&[3, 1], 1.0, DType::F32).affine(1.0, 3.0).unwrap();
    let (ad, bd) = (a.to_device(dev).unwrap(), b.to_device(dev).unwrap());
    assert_close("add", &ad.add(&bd).unwrap(), &a.add(&b).unwrap(), dev, 0.0);
    assert_close("sub", &bd.sub(&ad).unwrap(), &b.sub(&a).unwrap(), dev, 0.0);
    assert_close("mul", &ad.mul(&bd).unwrap(), &a.mul(&b).unwrap(), dev, 0.0);
    // Vulkan lets a division be 2.5 ulp off, and a multiply-add fuse.
    assert_close("div", &ad.div(&bd).unwrap(), &a.div(&b).unwrap(), dev, 1e-6);
    assert_close(
        "affine",
        &ad.affine(0.5, -2.0).unwrap(),
        &a.affine(0.5, -2.0).unwrap(),
        dev,
        1e-6,
    );
    assert_close(
        "mul_scalar",
        &ad.mul_scalar(3.0).unwrap(),
        &a.mul_scalar(3.0).unwrap(),
        dev,
        0.0,
    );
    // In place, with a broadcast right side and with the tensor itself.
    let (c, cd) = (a.deep_copy().unwrap(), ad.deep_copy().unwrap());
    c.mul_(&b).unwrap();
    cd.mul_(&bd).unwrap();
    c.add_(&c.clone()).unwrap();
    cd.add_(&cd.clone()).unwrap();
    c.add_scalar_(0.5).unwrap();
    cd.add_scalar_(0.5).unwrap();
    assert_close("in place", &cd, &c, dev, 1e-7);
    // Mixed dtypes promote as on the CPU.
    let h = b.to_dtype(DType::F16).unwrap();
    assert_close(
        "promote",
        &ad.add(&h.to_device(dev).unwrap()).unwrap(),
        &a.add(&h).unwrap(),
        dev,
        0.0,
    );
    // A right side that does not broadcast to the left is refused.
    assert!(bd.add_(&ad).is_err());
    // Across devices.
    assert!(matches!(ad.add(&b).unwrap_err(), Error::DeviceMismatch { .. }));
}

#[test]
fn scalar_products_and_negation_keep_signed_zeros_as_pytorch() {
    // PyTorch: `x * 1` keeps -0.0, `x * -1` and `-x` flip the sign of either zero.
    let x = Tensor::from_vec(vec![0.0f32, -0.0, 2.0, -3.0], [4]).unwrap();
    let signs = |t: &Tensor| -> Vec<(f32, bool)> {
        let v = t.to_device(Device::Cpu).unwrap().to_vec::<f32>().unwrap();
        v.into_iter().map(|f| (f, f.is_sign_negative())).collect()
    };
    let flipped = vec![(-0.0, true), (0.0, false), (-2.0, true), (3.0, false)];
    let devices = std::iter::once(Device::Cpu).chain(gpu_or_skip("signed zeros"));
    for dev in devices {
        let xd = x.to_device(dev).unwrap();
        assert_eq!(signs(&xd.mul_scalar(1.0).unwrap()), signs(&x), "x * 1 on {dev}");
        assert_eq!(signs(&xd.mul_scalar(-1.0).unwrap()), flipped, "x * -1 on {dev}");
        assert_eq!(signs(&xd.neg().unwrap()), flipped, "-x on {dev}");
        let y = xd.deep_copy().unwrap();
        y.mul_scalar_(-1.0).unwrap();
        assert_eq!(signs(&y), flipped, "x *= -1 on {dev}");
    }
}

#[test]
fn integer_increments_carry_and_wrap() {
    let Some(dev) = gpu_or_skip("increments") else { return };
    let big = Tensor::from_vec(vec![4_294_967_295i64, -1, i64::MAX, 7], [4]).unwrap();
    let on = big.to_device(dev).unwrap();
    on.add_scalar_(1.0).unwrap();
    big.add_scalar_(1.0).unwrap();
    assert_eq!(on.cpu().unwrap().to_vec::<i64>().unwrap(), big.to_vec::<i64>().unwrap());
    assert_eq!(big.to_vec::<i64>().unwrap(), vec![4_294_967_296, 0, i64::MIN, 8]);
    let small = Tensor::from_vec(vec![i32::MAX, -3], [2])
        .unwrap()
        .to_device(dev)
        .unwrap();
    small.add_scalar_(-2.0).unwrap();
    assert_eq!(small.cpu().unwrap().to_vec::<i32>().unwrap(), vec![i32::MAX - 2, -5]);
    let flags = Tensor::zeros([2], DType::Bool).to_device(dev).unwrap();
    assert!(matches!(
        flags.add_scalar_(1.0).unwrap_err(),
        Error::UnsupportedOnDevice { .. }
    ));
}

/// Runs `f` in `dtype` on the device and on the CPU: the results agree within `tol`, or the device refuses
/// the dtype with a typed error naming it.
fn pass_or_refuse(what: &str, dtype: DType, dev: Device, tol: f64, f: impl Fn(Device) -> nn::Result<Tensor>) {
    let want = f(Device::Cpu).unwrap();
    match f(dev) {
        Ok(got) => assert_close(&format!("{what} in {dtype}"), &got, &want, dev, tol),
        Err(Error::UnsupportedOnDevice { dtype: d, device, .. }) => {
            assert_eq!((d, device), (dtype, dev), "{what}");
            println!("{what}: {dtype} refused on {dev}");
        }
        Err(e) => panic!("{what} in {dtype}: {e}"),
    }
}

#[test]
fn other_float_dtypes_pass_or_are_refused() {
    let Some(dev) = gpu_or_skip("dtypes") else { return };
    for (dtype, tol) in [(DType::F64, 1e-12), (DType::F16, 4e-3), (DType::BF16, 3e-2)] {
        let x = values(&[2, 3, 5, 4], 0.0, dtype);
        let w = values(&[4, 3, 3, 3], 1.0, dtype);
        let on = |t: &Tensor, d: Device| t.to_device(d).unwrap();
        pass_or_refuse("conv2d", dtype, dev, tol, |d| {
            let opts = Conv2dOptions {
                padding: Padding2d::Explicit(1, 1),
                ..Default::default()
            };
            conv2d(&on(&x, d), &on(&w, d), None, &opts)
        });
        let lw = values(&[6, 4], 2.0, dtype);
        pass_or_refuse("linear", dtype, dev, tol, |d| on(&x, d).linear(&on(&lw, d), None));
        pass_or_refuse("layer_norm", dtype, dev, tol, |d| {
            nn::functional::layer_norm(&on(&x, d), &[5, 4], None, None, 1e-5)
        });
        pass_or_refuse("batch_norm", dtype, dev, tol, |d| {
            nn::functional::batch_norm(&on(&x, d), None, None, None, true, 0.1, 1e-5)
        });
        pass_or_refuse("add", dtype, dev, tol, |d| on(&x, d).add(&on(&x, d)));
        let lstm_x = values(&[4, 2, 3], 3.0, dtype);
        let base = LSTM::new(3, 2);
        pass_or_refuse("lstm", dtype, dev, tol, |d| {
            let mut lstm = LSTM::new(3, 2);
            lstm.load_state_dict(&base.state_dict(), true, false)?;
            lstm.to_dtype(dtype)?;
            lstm.to_device(d)?;
            Ok(lstm.forward((on(&lstm_x, d), None))?.0)
        });
    }
}

#[test]
fn prelu_into_and_in_place_on_the_device() {
    let Some(dev) = gpu_or_skip("prelu_into") else { return };
    use nn::functional::{prelu, prelu_into};
    let x = values(&[2, 3, 4, 5], 0.0, DType::F32);
    let w = Tensor::from_vec(vec![0.1f32, -0.5, 2.0], [3]).unwrap();
    let want = prelu(&x, &w).unwrap();
    let (xd, wd) = (x.to_device(dev).unwrap(), w.to_device(dev).unwrap());
    let out = Tensor::zeros([2, 3, 4, 5], DType::F32).to_device(dev).unwrap();
    prelu_into(&xd, &wd, &out).unwrap();
    assert_close("prelu into", &out, &want, dev, 0.0);
    prelu_into(&xd, &wd, &xd).unwrap();
    assert_close("prelu in place", &xd, &want, dev, 0.0);
    let host_out = Tensor::zeros([2, 3, 4, 5], DType::F32);
    assert!(matches!(
        prelu_into(&xd, &wd, &host_out).unwrap_err(),
        Error::DeviceMismatch { .. }
    ));
}

#[test]
fn prelu_input_gradient_alone_equals_the_full_backwards_on_cpu_and_device() {
    use nn::functional::{prelu_backward, prelu_input_backward};
    let x = values(&[2, 3, 4, 5], 0.0, DType::F32);
    let dy = values(&[2, 3, 4, 5], 1.0, DType::F32);
    for w in [
        Tensor::from_vec(vec![0.1f32, -0.5, 2.0], [3]).unwrap(),
        Tensor::from_vec(vec![0.25f32], [1]).unwrap(),
    ] {
        let (want, _) = prelu_backward(&x, &w, &dy).unwrap();
        assert!(bit_equal(&prelu_input_backward(&x, &w, &dy).unwrap(), &want));
        let Some(dev) = gpu_or_skip("prelu_input_backward") else {
            return;
        };
        let on = |t: &Tensor| t.to_device(dev).unwrap();
        let dx = prelu_input_backward(&on(&x), &on(&w), &on(&dy)).unwrap();
        assert_close("prelu input gradient", &dx, &want, dev, 0.0);
    }
    assert!(prelu_input_backward(&x, &Tensor::full([4], 0.25, DType::F32), &dy).is_err());
    assert!(prelu_input_backward(&x, &Tensor::full([3], 0.25, DType::F32), &dy.reshape([6, 20]).unwrap()).is_err());
}

#[test]
fn casts_between_float_types_on_the_device_match_the_cpu() {
    let Some(dev) = gpu_or_skip("casts") else { return };
    let mut xs = vec![
        0.0,
        -0.0,
        1.0 / 3.0,
        -2.5,
        65504.0,
        70000.0,
        3.0e-8,
        5.9e-5,
        1.0e-40,
        1.0e39,
    ];
    xs.extend((0..50).map(|i| (i as f64 * 0.77).sin() * 10f64.powi(i % 9 - 4)));
    xs.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
    let n = xs.len();
    let base = Tensor::from_vec(xs, [n]).unwrap();
    let same = |a: &Tensor, b: &Tensor| {
        let (a, b) = (a.to_vec_f64().unwrap(), b.to_vec_f64().unwrap());
        a.iter()
            .zip(&b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    };
    for from in [DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64] {
        let cpu = base.to_dtype(from).unwrap();
        let on = cpu.to_device(dev).unwrap();
        for to in [DType::F64, DType::F32, DType::F16, DType::BF16, DType::I32] {
            if from == DType::I64 && to == DType::I32 {
                continue;
            }
            let got = on.to_dtype(to).unwrap();
            assert_eq!((got.device(), got.dtype()), (dev, to), "{from} -> {to}");
            assert!(same(&got.cpu().unwrap(), &cpu.to_dtype(to).unwrap()), "{from} -> {to}");
        }
    }
}
