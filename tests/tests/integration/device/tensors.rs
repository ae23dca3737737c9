//! Tensors and modules on wgpu (lavapipe in CI): data moves for real, activation layers run their kernels
//! there, state goes in and out; without an adapter these skip (and fail under `CI=true`).

use integration_tests::{bit_equal, gpu_or_skip, lacks_dtype, twin};
use nn::functional::Activation;
use nn::prelude::*;
use nn::{Error, Result};

fn samples(n: usize) -> Tensor {
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 50.0 - 10.0).collect();
    Tensor::from_vec(xs, [n]).unwrap()
}

#[test]
fn every_dtype_round_trips_bit_for_bit() {
    let Some(dev) = gpu_or_skip("round_trip") else { return };
    for dtype in DType::ALL {
        for n in [0usize, 1, 3, 5, 1000] {
            let host = samples(n).to_dtype(dtype).unwrap();
            let on = host.to_device(dev).unwrap();
            assert_eq!((on.device(), on.dtype(), on.shape()), (dev, dtype, host.shape()));
            assert_eq!(
                on.to_vec_f64().unwrap(),
                host.to_vec_f64().unwrap(),
                "reading values downloads them"
            );
            let back = on.cpu().unwrap();
            assert!(bit_equal(&back, &host), "{dtype} x {n}");
            let copy = on.deep_copy().unwrap();
            assert!(!copy.shares_storage(&on));
            assert!(bit_equal(&copy.cpu().unwrap(), &host), "deep_copy {dtype} x {n}");
        }
    }
}

#[test]
fn copy_fill_and_to_dtype_on_the_device() {
    let Some(dev) = gpu_or_skip("copy_fill") else { return };
    let t = Tensor::zeros([5], DType::F32).to_device(dev).unwrap();
    let alias = t.clone();
    t.copy_(&Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.5], [5]).unwrap())
        .unwrap();
    assert_eq!(
        alias.cpu().unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 5.5]
    );
    let other = Tensor::full([5], 7.0, DType::F32).to_device(dev).unwrap();
    t.copy_(&other).unwrap();
    assert_eq!(alias.cpu().unwrap().to_vec::<f32>().unwrap(), vec![7.0; 5]);
    t.fill_(-1.25).unwrap();
    assert_eq!(alias.cpu().unwrap().to_vec::<f32>().unwrap(), vec![-1.25; 5]);
    let half = t.to_dtype(DType::F16).unwrap();
    assert_eq!((half.device(), half.dtype()), (dev, DType::F16));
    assert_eq!(half.cpu().unwrap().to_vec_f64().unwrap(), vec![-1.25; 5]);
    let err = t.copy_(&Tensor::zeros([4], DType::F32)).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
}

#[test]
fn activations_run_on_the_device_in_place_and_into() {
    let Some(dev) = gpu_or_skip("in_place") else { return };
    let host = samples(4099);
    for act in [
        Activation::Relu,
        Activation::Threshold {
            threshold: 0.1,
            value: 20.0,
        },
        Activation::Gelu,
    ] {
        let want = act.forward(&host).unwrap();
        let x = host.to_device(dev).unwrap();
        let y = act.forward(&x).unwrap();
        assert_eq!(y.device(), dev);
        let err = integration_tests::max_rel_diff(&y.cpu().unwrap(), &want, 1.0);
        assert!(err <= 1e-6, "{} out of place: {err:e}", act.name());
        let out = Tensor::zeros([4099], DType::F32).to_device(dev).unwrap();
        act.forward_into(&x, &out).unwrap();
        assert!(integration_tests::max_rel_diff(&out.cpu().unwrap(), &want, 1.0) <= 1e-6);
        let alias = x.clone();
        act.forward_(&x).unwrap();
        assert!(
            integration_tests::max_rel_diff(&alias.cpu().unwrap(), &want, 1.0) <= 1e-6,
            "{}",
            act.name()
        );
    }
    let cpu_out = Tensor::zeros([4099], DType::F32);
    let err = Activation::Relu
        .forward_into(&host.to_device(dev).unwrap(), &cpu_out)
        .unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
}

/// 65,535 × 256 + 1 elements of f16 (f32 on an adapter without f16): an odd length (vector width 1) over more cubes than one dispatch
/// dimension holds.
#[test]
fn a_tensor_larger_than_one_dispatch_dimension() {
    let Some(dev) = gpu_or_skip("large") else { return };
    let n = 65_535 * 256 + 1;
    // f16 where the adapter has it, else f32: at an odd length both run one element per unit.
    let dtype = if lacks_dtype(dev, DType::F16) {
        DType::F32
    } else {
        DType::F16
    };
    let host = Tensor::from_vec((0..n).map(|i| if i % 3 == 0 { -1.0f32 } else { 2.0 }).collect(), [n])
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    let y = Activation::Relu
        .forward(&host.to_device(dev).unwrap())
        .unwrap()
        .cpu()
        .unwrap();
    let ys = y.to_vec_f64().unwrap();
    let wrong = ys
        .iter()
        .enumerate()
        .filter(|(i, v)| **v != if i % 3 == 0 { 0.0 } else { 2.0 })
        .count();
    assert_eq!(wrong, 0);
}

#[derive(Module)]
struct Head {
    act: PReLU,
    gelu: GELU,
    softmax: Softmax,
}

impl Forward for Head {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.softmax.forward(self.gelu.forward(self.act.forward(x)?)?)
    }
}

fn head() -> Head {
    let mut act = PReLU::new(3, 0.25);
    act.weight = Param::new(Tensor::from_vec(vec![0.1f32, -0.3, 2.0], [3]).unwrap());
    Head {
        act,
        gelu: GELU::new("none").unwrap(),
        softmax: Softmax::new(1),
    }
}

#[test]
fn a_module_moved_to_wgpu_runs_there_and_its_state_moves_back() {
    let Some(dev) = gpu_or_skip("module") else { return };
    let x = Tensor::from_vec((0..2 * 3 * 5).map(|i| (i as f32 - 14.0) / 3.0).collect(), [2, 3, 5]).unwrap();
    let cpu = head();
    let want = cpu.forward(x.clone()).unwrap();
    let mut model = head();
    match dev {
        Device::Wgpu(i) => model.wgpu(i).unwrap(),
        Device::Cuda(i) => model.cuda(i).unwrap(),
        Device::Cpu => unreachable!("gpu_or_skip gives a device"),
    };
    assert!(model.parameters().iter().all(|p| p.device() == dev));
    let y = model.call(x.to_device(dev).unwrap()).unwrap();
    assert_eq!(y.device(), dev);
    assert!(integration_tests::max_rel_diff(&y.cpu().unwrap(), &want, 1.0) <= 1e-6);

    // A CPU state dict loads into the device model, and stays on the device.
    let mut state = cpu.state_dict();
    state.insert(
        "act.weight".into(),
        Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [3]).unwrap(),
    );
    model.load_state_dict(&state, true, false).unwrap();
    let w = model.get_parameter("act.weight").unwrap();
    assert_eq!((w.device(), w.dtype()), (dev, DType::F32));
    assert_eq!(w.data().cpu().unwrap().to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);

    // Saved from the device, loaded on the CPU.
    let path = std::env::temp_dir().join(format!("nn-device-{}.safetensors", std::process::id()));
    model.save_safetensors(&path).unwrap();
    let mut back = head();
    back.load_safetensors(&path, true).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(
        back.get_parameter("act.weight")
            .unwrap()
            .data()
            .to_vec::<f32>()
            .unwrap(),
        vec![1.0, 2.0, 3.0]
    );

    // And the whole model back on the CPU.
    model.cpu().unwrap();
    assert!(model.parameters().iter().all(|p| p.device() == Device::Cpu));
}

#[test]
fn an_operation_on_host_memory_says_so_for_a_device_tensor() {
    let Some(dev) = gpu_or_skip("no_kernel") else { return };
    let x = Tensor::zeros([2, 3], DType::F32).to_device(dev).unwrap();
    let err = x.with_bytes(|b| b.len()).unwrap_err();
    assert!(matches!(err, Error::UnsupportedOnDevice { .. }), "{err}");
    assert!(err.to_string().contains(&dev.to_string()), "{err}");
}

/// Empty operands in float64 on the device: a product over no inputs (`linear` of 0 input features, and so the
/// weight's gradient of a batch of 0) gives zeros plus the bias, as on the CPU and in PyTorch. An empty buffer
/// bound as an array of float64 had been 4 bytes, which wgpu's validation refused ("bound with size 4 where the
/// shader expects 8"), losing the device (found by `rnn_sweep.py`'s further seeds: an `RNNCell` of float64 with
/// an empty batch).
#[test]
fn empty_float64_operands_bind_on_the_device() {
    let Some(dev) = gpu_or_skip("empty float64 operands") else {
        return;
    };
    for dtype in [DType::F64, DType::F32] {
        if lacks_dtype(dev, dtype) {
            continue;
        }
        let on = |t: Tensor| t.to_dtype(dtype).unwrap().to_device(dev).unwrap();
        let bias = on(Tensor::from_vec(vec![0.5f32, -2.0], [2]).unwrap());
        let y = on(Tensor::zeros([3, 0], DType::F32)).linear(&on(Tensor::zeros([2, 0], DType::F32)), Some(&bias));
        assert_eq!(
            y.unwrap().to_vec_f64().unwrap(),
            [0.5, -2.0, 0.5, -2.0, 0.5, -2.0],
            "{dtype}"
        );
        let leaf = |shape: [usize; 2]| {
            let mut t = on(Tensor::ones(shape, DType::F32));
            t.set_requires_grad(true).unwrap();
            t
        };
        let (x, w) = (leaf([0, 3]), leaf([2, 3]));
        x.linear(&w, Some(&bias))
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(w.grad().unwrap().to_vec_f64().unwrap(), [0.0; 6], "{dtype}");
        assert_eq!(x.grad().unwrap().shape(), &[0, 3], "{dtype}");
    }
}

/// `maximum` / `minimum` on the device bit for bit as on the CPU: NaN from either side wins, broadcasting, in place
/// too, and the second operand where the two are equal (for `±0`: PyTorch 2.5.1's CPU gives the first in its
/// vectorised loop and the second in its tail, so either is PyTorch's). What AMSGrad's running maximum runs on.
#[test]
fn maximum_and_minimum_on_the_device_equal_the_cpus() {
    let Some(dev) = gpu_or_skip("maximum") else { return };
    let nan = f32::NAN;
    let a = Tensor::from_vec(vec![1.0f32, -2.0, nan, 3.0, -0.0, 0.0, f32::INFINITY, 5.0], [2, 4]).unwrap();
    let b = Tensor::from_vec(vec![0.5f32, -1.0, 4.0, nan, 0.0, -0.0, 7.0, f32::NEG_INFINITY], [2, 4]).unwrap();
    let row = Tensor::from_vec(vec![0.0f32, nan, -1.0, 2.0], [4]).unwrap();
    let bits = |t: &Tensor| -> Vec<u32> {
        t.cpu()
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    let on = |t: &Tensor| t.to_device(dev).unwrap();
    for (x, y) in [(&a, &b), (&b, &a), (&a, &row)] {
        assert_eq!(bits(&on(x).maximum(&on(y)).unwrap()), bits(&x.maximum(y).unwrap()));
        assert_eq!(bits(&on(x).minimum(&on(y)).unwrap()), bits(&x.minimum(y).unwrap()));
        let (inplace, want) = (on(x), x.mul_scalar(1.0).unwrap());
        inplace.maximum_(&on(y)).unwrap();
        want.maximum_(y).unwrap();
        assert_eq!(bits(&inplace), bits(&want));
    }
    let max = bits(&on(&a).maximum(&on(&b)).unwrap());
    assert_eq!(max[..4], [1.0f32, -1.0, nan, nan].map(f32::to_bits));
    assert_eq!(max[6..], [f32::INFINITY, 5.0].map(f32::to_bits));
}

/// A sum or mean over fewer elements than a cube (one unit per output) is pairwise on the device: 255 × 0.1
/// stays within 2 ulps of the exact sum (a sequential float32 sum is 32 ulps off; a Kahan sum would be exact,
/// but Mesa's shader compiler simplified its compensation away). A batch norm's gradient cancels around such a
/// mean: 7 ulps off, it had missed PyTorch's by 3.35× the tolerance on lavapipe (seed 812 of
/// `dynamics_sweep.py --grad-batch`). A longer one, 2²⁰ × 0.1 (4,096 terms per unit before the cube's tree),
/// stays within 4.
#[test]
fn device_sums_are_pairwise_a_few_ulps_from_the_exact_sum() {
    let Some(dev) = gpu_or_skip("short sums") else { return };
    let x = Tensor::full([3, 255], 0.1, DType::F32);
    let exact = 255.0 * f64::from(0.1f32);
    let eps = f64::from(f32::EPSILON);
    let on = x.to_device(dev).unwrap();
    // The spacing of floats is 16·eps in [16, 32) (the sum, 25.5) and eps / 16 in [1/16, 1/8) (the mean, 0.1).
    for (what, got, want, ulp) in [
        ("sum", on.sum_dims(&[1], false).unwrap(), exact, 16.0 * eps),
        ("mean", on.mean_dims(&[1], false).unwrap(), exact / 255.0, eps / 16.0),
    ] {
        for v in got.cpu().unwrap().to_vec_f64().unwrap() {
            assert!((v - want).abs() <= 2.0 * ulp, "{what} on {dev}: {v}, exact {want}");
        }
    }
    let long = Tensor::full([2, 1 << 20], 0.1, DType::F32).to_device(dev).unwrap();
    let exact = f64::from(1u32 << 20) * f64::from(0.1f32);
    let ulp = eps * f64::from(1u32 << 16); // the spacing of floats in [2^16, 2^17), where 104,857.6 lies
    for v in long.sum_dims(&[1], false).unwrap().cpu().unwrap().to_vec_f64().unwrap() {
        assert!((v - exact).abs() <= 4.0 * ulp, "long sum on {dev}: {v}, exact {exact}");
    }
}

#[test]
fn softmax_of_large_rows_on_the_device_keeps_the_small_outputs_exact() {
    let Some(dev) = gpu_or_skip("softmax_large_rows") else {
        return;
    };
    // PyTorch 2.5.1 (`torch.log_softmax(t, 1)`, float32): [-1.3132616, -0.31326166] for [88, 89].
    let x = Tensor::from_vec(vec![88.0f32, 89.0, 1.0, 2.0, -200.0, 0.0], [3, 2]).unwrap();
    let on = x.to_device(dev).unwrap();
    for log in [false, true] {
        let (cpu, gpu) = if log {
            (x.log_softmax(1).unwrap(), on.log_softmax(1).unwrap())
        } else {
            (x.softmax(1).unwrap(), on.softmax(1).unwrap())
        };
        let (cpu, gpu) = (
            cpu.to_vec::<f32>().unwrap(),
            gpu.cpu().unwrap().to_vec::<f32>().unwrap(),
        );
        for (c, g) in cpu.iter().zip(&gpu) {
            assert!(
                (c - g).abs() <= 1e-6 * c.abs().max(1e-6),
                "log={log}: cpu {cpu:?} vs wgpu {gpu:?}"
            );
        }
        if log {
            assert!((gpu[1] - -0.313_261_66).abs() <= 1e-6 * 0.32, "{gpu:?}");
        }
    }
}

/// Rows of 128 elements and more run one cube per row (`kernels::softmax::ROW_CUBE_FROM`): softmax and
/// log-softmax, forward and gradient, equal the exact ones (the CPU's in float64) on rows at and past the threshold, rows that leave units
/// idle or give them several elements, rows holding NaN, ±inf or huge values, and more rows than one dispatch
/// dimension holds (70,000 cubes); shorter rows and columns stay on a unit each. Lines across a dimension of
/// `kernels::softmax::LINE_CUBE_FROM` elements or more (4,096) run a cube each too (just below and past it).
#[test]
fn softmax_of_long_lines_on_a_cube_each_matches_the_exact_result() {
    let Some(dev) = gpu_or_skip("softmax_rows") else {
        return;
    };
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let rows = |shape: &[usize], special: &[(usize, f64)]| -> Tensor {
        let n: usize = shape.iter().product();
        let mut xs: Vec<f64> = (0..n).map(|i| 8.0 * ((i as f64) * 0.37).sin()).collect();
        for &(at, v) in special {
            xs[at] = v;
        }
        Tensor::from_vec(xs, shape.to_vec()).unwrap()
    };
    let cases = [
        rows(&[3, 128], &[]),
        rows(&[2, 1000], &[(700, nan), (1500, 1e30)]),
        rows(&[4, 257], &[(5, inf), (300, -inf), (600, 60.0)]),
        rows(&[1, 5000], &[]),
        rows(&[2, 3, 300], &[]),
        rows(&[70_000, 128], &[]),
        rows(&[5, 127], &[(3, -inf)]),
        rows(&[130, 300], &[]),
        // Across a dimension: a unit per line walks 3 × 30,000 elements, past lavapipe's 65,535 iterations.
        rows(&[30_000, 3], &[(4, 50.0)]),
        rows(&[2, 5000, 2], &[]),
        rows(&[2, 4095, 3], &[]),
    ];
    for (dtype, tol) in [(DType::F32, 2e-6), (DType::F16, 2e-3), (DType::F64, 1e-13)] {
        for (i, x) in cases.iter().enumerate() {
            let x = x.to_dtype(dtype).unwrap();
            let dim = match i {
                7 | 8 => 0,
                9 | 10 => 1,
                _ => -1,
            };
            let n = x.shape().numel();
            let w: Vec<f64> = (0..n).map(|i| (i as f64 * 0.61).cos()).collect();
            let w = Tensor::from_vec(w, x.shape().clone()).unwrap().to_dtype(dtype).unwrap();
            for log in [false, true] {
                let run = |x: &Tensor, w: &Tensor, on: Device| -> Result<(Tensor, Tensor)> {
                    let mut leaf = x.to_device(on)?;
                    leaf.set_requires_grad(true)?;
                    let y = if log {
                        leaf.log_softmax(dim)?
                    } else {
                        leaf.softmax(dim)?
                    };
                    y.mul(&w.to_device(on)?)?.sum_all()?.backward()?;
                    Ok((y.detach().cpu()?, leaf.grad().unwrap().cpu()?))
                };
                let what = format!("{dtype} case {i} {:?}, log={log}", x.shape());
                // The exact result: the CPU's in float64 from the same (rounded) values.
                let wide = |t: &Tensor| t.to_dtype(DType::F64).unwrap();
                let (want_y, want_g) = run(&wide(&x), &wide(&w), Device::Cpu).unwrap();
                match run(&x, &w, dev) {
                    Ok((y, g)) => {
                        // Softmax outputs relative (to 1e-3); log-softmax outputs, `(x - max) - ln(sum)`, and
                        // gradients, sums of a row's terms, absolute below 1. (A log-softmax output near 0 holds
                        // `ln(sum)` for a sum near 1, whose rounding is absolute: on an H200 in f64, case 8's
                        // largest element was 2.4e-15 from the CPU's, 11 ulps of a sum of 1 and 30,000 terms
                        // below 1e-18 added in another order.)
                        let output_floor = if log { 1.0 } else { 1e-3 };
                        for (name, got, want, floor) in
                            [("output", &y, &want_y, output_floor), ("gradient", &g, &want_g, 1.0)]
                        {
                            let err = integration_tests::max_rel_diff(got, want, floor);
                            assert!(err <= tol, "{what}: {name} off by {err:e}");
                        }
                    }
                    Err(Error::UnsupportedOnDevice { .. }) if lacks_dtype(dev, dtype) || dtype == DType::F64 => {}
                    Err(e) => panic!("{what}: {e}"),
                }
            }
        }
    }
}

/// A long sum on the device stays within a few ulps of the exact sum, as PyTorch's (pairwise on the CPU, a
/// tree on a GPU) does, however long: one unit per output summed only the first 21,845 of 2¹⁸ values on
/// lavapipe, which ends a loop after 65,535 iterations.
#[test]
fn long_sums_on_the_device_stay_close_to_the_exact_sum() {
    let Some(dev) = gpu_or_skip("long_sums") else {
        return;
    };
    // Values of one sign and varied size, so rounding errors add up instead of cancelling.
    let values = |n: usize| -> Vec<f64> { (0..n).map(|i| 0.1 + ((i as f64) * 0.37).sin().abs()).collect() };
    for (shape, dims) in [
        (vec![1usize << 18], vec![0isize]),
        (vec![64, 12, 64], vec![0, 2]),
        (vec![3, 40_000], vec![1]),
        (vec![5000, 7], vec![0]),
        // Past what one cube sums (2²⁰ elements): slices added by a second kernel. More than lavapipe's
        // 65,535 loop iterations would allow one unit or one cube.
        (vec![2, 6_000_000], vec![1]),
    ] {
        let n: usize = shape.iter().product();
        let xs = values(n);
        let exact = Tensor::from_vec(xs.clone(), shape.clone())
            .unwrap()
            .sum_dims(&dims, false)
            .unwrap();
        let x = Tensor::from_vec(xs, shape.clone())
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap();
        for mean in [false, true] {
            let got = if mean {
                x.to_device(dev).unwrap().mean_dims(&dims, false).unwrap()
            } else {
                x.to_device(dev).unwrap().sum_dims(&dims, false).unwrap()
            };
            let count = (n / exact.numel()) as f64;
            let want: Vec<f64> = exact
                .to_vec_f64()
                .unwrap()
                .iter()
                .map(|s| if mean { s / count } else { *s })
                .collect();
            for (g, w) in got.cpu().unwrap().to_vec_f64().unwrap().iter().zip(&want) {
                // 8 float32 ulps of the result.
                assert!(
                    (g - w).abs() <= 8.0 * f32::EPSILON as f64 * w.abs(),
                    "{shape:?} over {dims:?} (mean {mean}) on {dev}: {g}, exact {w}"
                );
            }
        }
    }
}

/// `(device result, exact result)` pairs: `run` on the device in float32, and on the CPU in float64 from the same
/// float32 values (the CPU paths are checked against PyTorch elsewhere).
fn device_and_exact(
    dev: Device,
    inputs: &[(Vec<usize>, bool)],
    run: impl Fn(&[Tensor]) -> Vec<Tensor>,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    // Values of one sign and varied size, so that a term left out shows (a sum cut short is far off).
    let values = |n: usize, seed: usize| -> Vec<f64> {
        (0..n)
            .map(|i| 0.1 + (((i + 7 * seed) as f64) * 0.37).sin().abs())
            .collect()
    };
    let exact: Vec<Tensor> = inputs
        .iter()
        .enumerate()
        .map(|(seed, (shape, _))| {
            let x = Tensor::from_vec(values(shape.iter().product(), seed), shape.clone()).unwrap();
            // Rounded to float32 first, so that both sides see the same numbers.
            x.to_dtype(DType::F32).unwrap().to_dtype(DType::F64).unwrap()
        })
        .collect();
    let on_device: Vec<Tensor> = exact
        .iter()
        .map(|x| x.to_dtype(DType::F32).unwrap().to_device(dev).unwrap())
        .collect();
    let leaves = |ts: &[Tensor]| -> Vec<Tensor> {
        ts.iter()
            .zip(inputs)
            .map(|(t, (_, leaf))| {
                if *leaf {
                    t.clone().requires_grad_(true).unwrap()
                } else {
                    t.clone()
                }
            })
            .collect()
    };
    let got = run(&leaves(&on_device));
    let want = run(&leaves(&exact));
    got.iter()
        .zip(&want)
        .map(|(g, w)| {
            assert_eq!((g.dtype(), g.device()), (DType::F32, dev));
            (g.cpu().unwrap().to_vec_f64().unwrap(), w.to_vec_f64().unwrap())
        })
        .collect()
}

/// The first element of each of `results` (device, exact) farther from the exact value than `bound(exact,
/// largest exact magnitude in that result)`, described for a failure message under `name`.
fn far_from_exact(name: &str, results: Vec<(Vec<f64>, Vec<f64>)>, bound: impl Fn(f64, f64) -> f64) -> Vec<String> {
    let mut far = Vec::new();
    for (i, (got, want)) in results.into_iter().enumerate() {
        if got.len() != want.len() {
            far.push(format!(
                "{name}: result {i} holds {} elements, expected {}",
                got.len(),
                want.len()
            ));
            continue;
        }
        let scale = want.iter().fold(0.0f64, |m, w| m.max(w.abs()));
        let first = got
            .iter()
            .zip(&want)
            .enumerate()
            .find(|(_, (g, w))| (*g - *w).abs() > bound(**w, scale));
        if let Some((k, (g, w))) = first {
            far.push(format!("{name}: result {i}, element {k}: {g}, exact {w}"));
        }
    }
    far
}

#[test]
fn long_dot_products_and_weight_gradients_on_the_device_sum_every_term() {
    let Some(dev) = gpu_or_skip("long_dot_products") else {
        return;
    };
    // Each sums more terms per output than lavapipe's 65,535 loop iterations would let one unit take.
    let conv = |x: &Tensor, w: &Tensor, padding: usize| -> Vec<Tensor> {
        let opts = nn::functional::Conv2dOptions {
            padding: nn::functional::Padding2d::Explicit(padding, padding),
            ..Default::default()
        };
        let y = nn::functional::conv2d(x, w, None, &opts).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        vec![y, w.grad().unwrap()]
    };
    // (name, the inputs' shapes and whether each needs a gradient, what runs).
    type Run = Box<dyn Fn(&[Tensor]) -> Vec<Tensor>>;
    type Inputs = Vec<(Vec<usize>, bool)>;
    let cases: Vec<(&str, Inputs, Run)> = vec![
        (
            "linear over 70,000 inputs",
            vec![(vec![2, 70_000], false), (vec![3, 70_000], false), (vec![3], false)],
            Box::new(|t: &[Tensor]| vec![t[0].linear(&t[1], Some(&t[2])).unwrap()]),
        ),
        (
            "batched matmul over 70,000 terms",
            vec![(vec![2, 2, 70_000], false), (vec![2, 70_000, 3], false)],
            Box::new(|t: &[Tensor]| vec![t[0].matmul(&t[1]).unwrap()]),
        ),
        (
            "matmul with one right side over 70,000 terms",
            vec![(vec![2, 2, 70_000], false), (vec![70_000, 3], false)],
            Box::new(|t: &[Tensor]| vec![t[0].matmul(&t[1]).unwrap()]),
        ),
        (
            "conv2d weight gradient over 256 × 24 × 24 positions",
            vec![(vec![256, 2, 24, 24], false), (vec![3, 2, 3, 3], true)],
            Box::new(move |t: &[Tensor]| conv(&t[0], &t[1], 1)),
        ),
        (
            "conv2d weight gradient over rows of 70,000 positions",
            vec![(vec![2, 1, 1, 70_002], false), (vec![2, 1, 1, 3], true)],
            Box::new(move |t: &[Tensor]| conv(&t[0], &t[1], 0)),
        ),
        (
            "PReLU's single weight's gradient over 17,000,000 elements",
            vec![(vec![2, 8_500_000], false), (vec![1], true)],
            Box::new(|t: &[Tensor]| {
                // Negative inputs, so that every element adds to the weight's gradient.
                let y = nn::functional::prelu(&t[0].neg().unwrap(), &t[1]).unwrap();
                y.sum_all().unwrap().backward().unwrap();
                vec![t[1].grad().unwrap()]
            }),
        ),
    ];
    let mut failures = Vec::new();
    for (name, inputs, run) in cases {
        // A float32 sum of positive terms, in slices of at most 16,384: well within 1e-4 of the exact one; one
        // cut short after 65,535 terms is more than 5 % off.
        let results = device_and_exact(dev, &inputs, run);
        failures.extend(far_from_exact(name, results, |w, _| 1e-4 * w.abs()));
    }
    assert!(failures.is_empty(), "on {dev}:\n{}", failures.join("\n"));
}

/// An LSTM over up to 20,000 input features on the device equals the CPU's in float64, with and without
/// autograd: the fused step's unit sums its four gates' `inputs + hidden` terms in one loop, which lavapipe ends
/// after 65,535 iterations (the last gates were cut short at 16,380 + 3 features). 16,320 is the widest cell the
/// fused step runs; one more feature takes the separate operations.
#[test]
fn lstm_over_20000_inputs_on_the_device_sums_every_term() {
    let Some(dev) = gpu_or_skip("long_lstm") else {
        return;
    };
    // Positive values of varied size: a sum cut short moves a gate far past the tolerance.
    let positive = |shape: &[usize], seed: usize, scale: f64| -> Tensor {
        let n: usize = shape.iter().product();
        let xs = (0..n)
            .map(|i| scale * (0.1 + (((i + 7 * seed) as f64) * 0.37).sin().abs()))
            .collect();
        Tensor::from_vec(xs, shape.to_vec()).unwrap()
    };
    let hidden = 3;
    for inputs in [16_317, 16_318, 20_000] {
        let make = || LSTM::new(inputs, hidden);
        let mut exact = make();
        // Input weights scaled so that each gate's sum is of order one, not saturated.
        let scale_ih = 1.0 / inputs as f64;
        let state: StateDict = exact
            .state_dict()
            .iter()
            .enumerate()
            .map(|(seed, (k, t))| {
                let scale = if k.starts_with("weight_ih") { scale_ih } else { 0.1 };
                (
                    k.clone(),
                    positive(t.shape(), seed, scale).to_dtype(DType::F32).unwrap(),
                )
            })
            .collect();
        exact.load_state_dict(&state, true, false).unwrap();
        let on_device = twin(&exact, make, dev);
        exact.to_dtype(DType::F64).unwrap();
        let x = positive(&[2, 2, inputs], 9, 1.0).to_dtype(DType::F32).unwrap();
        let want = exact.forward((x.to_dtype(DType::F64).unwrap(), None)).unwrap();
        for grad in [false, true] {
            let got = {
                let _mode = (!grad).then(nn::no_grad);
                on_device.forward((x.to_device(dev).unwrap(), None)).unwrap()
            };
            for (name, g, w) in [
                ("output", &got.0, &want.0),
                ("h_n", &got.1.0, &want.1.0),
                ("c_n", &got.1.1, &want.1.1),
            ] {
                assert_eq!(g.device(), dev);
                let g = g.cpu().unwrap().to_vec_f64().unwrap();
                let w = w.to_vec_f64().unwrap();
                for (k, (g, w)) in g.iter().zip(&w).enumerate() {
                    assert!(
                        (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                        "{inputs} inputs: {name} (autograd {grad}) on {dev}, element {k}: {g}, exact {w}"
                    );
                }
            }
        }
    }
}

/// Batch norm over 9,000,003 elements per channel and layer norm over rows of 6,000,000 on the device equal the
/// CPU's in float64: one cube per channel (or row) took every 256th element in two passes (three for layer
/// norm), which lavapipe cuts short past 65,535 loop iterations (the variance, and the ends of the rows, were
/// wrong). They now take slices of 4,194,304 elements and merge the slices' moments, the last slice here short.
#[test]
fn norms_over_millions_of_elements_per_channel_on_the_device_take_every_element() {
    let Some(dev) = gpu_or_skip("long_norms") else {
        return;
    };
    let batch_norm = |t: &[Tensor]| -> Vec<Tensor> {
        let (mean, var) = (t[3].clone(), t[4].clone());
        let running = nn::functional::RunningStats { mean: &mean, var: &var };
        let y = nn::functional::batch_norm(&t[0], Some(running), Some(&t[1]), Some(&t[2]), true, 0.1, 1e-5).unwrap();
        vec![y, mean, var]
    };
    let layer_norm = |t: &[Tensor]| -> Vec<Tensor> {
        vec![nn::functional::layer_norm(&t[0], &[6_000_000], Some(&t[1]), Some(&t[2]), 1e-5).unwrap()]
    };
    type Run<'a> = &'a dyn Fn(&[Tensor]) -> Vec<Tensor>;
    type Inputs = Vec<(Vec<usize>, bool)>;
    let cases: [(&str, Inputs, Run); 2] = [
        (
            "batch norm",
            [vec![3, 2, 3_000_001], vec![2], vec![2], vec![2], vec![2]]
                .map(|s| (s, false))
                .to_vec(),
            &batch_norm,
        ),
        (
            "layer norm",
            [vec![2, 6_000_000], vec![6_000_000], vec![6_000_000]]
                .map(|s| (s, false))
                .to_vec(),
            &layer_norm,
        ),
    ];
    let mut failures = Vec::new();
    for (name, inputs, run) in cases {
        // Normalised values of order one, off by a few float32 ulps; a variance taken over part of a channel is
        // several per cent off.
        let results = device_and_exact(dev, &inputs, run);
        failures.extend(far_from_exact(name, results, |w, _| 1e-4 * w.abs().max(1.0)));
    }
    assert!(failures.is_empty(), "on {dev}:\n{}", failures.join("\n"));
}

/// Softmax and LogSoftmax over lines of 9,000,000 and 4,500,000 elements on the device, forward and backward,
/// equal the CPU's in float64: one cube per line walked it three times forward (twice backward), which lavapipe
/// cuts short past 65,535 loop iterations per unit (from 5.6 million elements forward). Such lines now run in
/// slices of 4,194,304 elements, the last one short here, merged by a second kernel.
#[test]
fn softmax_over_millions_of_elements_on_the_device_takes_every_element() {
    let Some(dev) = gpu_or_skip("long_softmax") else {
        return;
    };
    let softmax = |dim: isize, log: bool| {
        move |t: &[Tensor]| -> Vec<Tensor> {
            let y = if log {
                nn::functional::log_softmax(&t[0], dim)
            } else {
                nn::functional::softmax(&t[0], dim)
            }
            .unwrap();
            // A loss weighting each output by a second input, so that the gradient's line sums matter.
            y.mul(&t[1]).unwrap().sum_all().unwrap().backward().unwrap();
            vec![y, t[0].grad().unwrap()]
        }
    };
    let mut failures = Vec::new();
    for (shape, dim) in [(vec![9_000_000], 0), (vec![4_500_000, 2], 0)] {
        for log in [false, true] {
            let inputs = vec![(shape.clone(), true), (shape.clone(), false)];
            let name = format!(
                "{} over {shape:?} along {dim}",
                if log { "log_softmax" } else { "softmax" }
            );
            // Within 1e-4 of the result's largest magnitude: a line sum taken over part of the line is several
            // per cent off.
            let results = device_and_exact(dev, &inputs, softmax(dim, log));
            failures.extend(far_from_exact(&name, results, |_, scale| 1e-4 * scale));
        }
    }
    assert!(failures.is_empty(), "on {dev}:\n{}", failures.join("\n"));
    // A slice of -inf beside a finite element adds nothing (0 and 1 out, not NaN); +inf or NaN makes the whole
    // line NaN, as on the CPU (PyTorch's `x - max` is `inf - inf` there).
    let n = 4_194_305;
    for (last, special) in [
        (0.0, f64::NEG_INFINITY),
        (f64::NEG_INFINITY, f64::NEG_INFINITY),
        (0.0, f64::INFINITY),
        (0.0, f64::NAN),
    ] {
        let mut xs = vec![special; n];
        xs[n - 1] = last;
        let x = Tensor::from_vec(xs, vec![n]).unwrap().to_dtype(DType::F32).unwrap();
        for log in [false, true] {
            let run = |x: &Tensor| {
                if log {
                    nn::functional::log_softmax(x, 0)
                } else {
                    nn::functional::softmax(x, 0)
                }
            };
            let want = run(&x).unwrap().to_vec_f64().unwrap();
            let got = run(&x.to_device(dev).unwrap())
                .unwrap()
                .cpu()
                .unwrap()
                .to_vec_f64()
                .unwrap();
            let same = got.iter().zip(&want).all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
            assert!(
                same,
                "softmax (log {log}) of {special} and {last} on {dev}: {:?}, CPU {:?}",
                &got[n - 2..],
                &want[n - 2..]
            );
        }
    }
}

/// `max` / `min` along a dimension of 100,000 elements and `index_add` of 70,000 positions on the device equal
/// the CPU's exactly, and an index out of range after 17,000,000 is refused: a unit walked a whole line for the
/// extreme, scanned ahead for the next position of its index (70,000 positions apart here) and walked its
/// index's chain of positions (over 65,535 long here), and lavapipe ends a unit's loops after 65,535 iterations.
#[test]
fn index_operations_along_long_dimensions_on_the_device_take_every_element() {
    let Some(dev) = gpu_or_skip("long_index") else {
        return;
    };
    let n = 100_000;
    // The extremes near the end, repeated (the first one wins), and a NaN in one line (it wins).
    let mut xs: Vec<f32> = (0..2 * n).map(|i| ((i as f32) * 0.37).sin()).collect();
    for at in [n - 7, n - 3, 2 * n - 5] {
        xs[at] = 2.0;
    }
    xs[n - 9] = -2.0;
    xs[2 * n - 2] = f32::NAN;
    let x = Tensor::from_vec(xs, [2, n]).unwrap();
    for (shape, dim) in [([2, n], 1), ([n, 2], 0)] {
        let x = x.reshape(shape).unwrap();
        let xd = x.to_device(dev).unwrap();
        for largest in [true, false] {
            let run = |t: &Tensor| {
                if largest {
                    t.max_dim(dim, false)
                } else {
                    t.min_dim(dim, false)
                }
                .unwrap()
            };
            let (want_v, want_i) = run(&x);
            let (got_v, got_i) = run(&xd);
            let what = format!(
                "{} along {dim} of {shape:?} on {dev}",
                if largest { "max" } else { "min" }
            );
            assert!(bit_equal(&got_v.cpu().unwrap(), &want_v), "{what}: values");
            assert_eq!(
                got_i.cpu().unwrap().to_vec::<i64>().unwrap(),
                want_i.to_vec::<i64>().unwrap(),
                "{what}"
            );
        }
    }
    // 70,000 positions: most go to index 2 (a chain of 69,928), every 1,000th to index 0, and the first and the
    // last to index 1. Small integers, so every order of summation is exact.
    let picks = 70_000;
    let index: Vec<i64> = (0..picks)
        .map(|k| match k {
            0 | 69_999 => 1,
            k if k % 1000 == 500 => 0,
            _ => 2,
        })
        .collect();
    let index = Tensor::from_vec(index, [picks]).unwrap();
    let src: Vec<f32> = (0..picks * 3).map(|i| 1.0 + (i % 7) as f32).collect();
    let src = Tensor::from_vec(src, [picks, 3]).unwrap();
    let x = Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), [4, 3]).unwrap();
    let want = x.index_add(0, &index, &src).unwrap();
    let on = |t: &Tensor| t.to_device(dev).unwrap();
    let got = on(&x).index_add(0, &on(&index), &on(&src)).unwrap();
    assert_eq!(
        got.cpu().unwrap().to_vec::<f32>().unwrap(),
        want.to_vec::<f32>().unwrap(),
        "index_add of {picks} positions on {dev}"
    );
    // An index out of range after 17,000,000 good ones is refused, as on the CPU: one cube checked them all,
    // every 256th per unit, and lavapipe stopped it after 65,535 of them (16.7 million indices).
    let count = 17_000_000;
    let mut far = vec![0i32; count];
    far[count - 1] = 3;
    let far = Tensor::from_vec(far, [count]).unwrap();
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3]).unwrap();
    assert!(x.index_select(0, &far).is_err());
    let refused = on(&x).index_select(0, &on(&far));
    assert!(
        refused.is_err(),
        "index_select at 3 of 3 elements on {dev} was not refused"
    );
}

/// A runtime this build leaves out is refused with the feature to turn on: nn's (cubecl's own message names
/// cubecl's feature, which a user of nn does not set).
#[cfg(not(feature = "cuda"))]
#[test]
fn a_runtime_not_built_in_names_nns_feature() {
    let Err(err) = samples(4).to_device(Device::Cuda(0)) else {
        panic!("this build has no CUDA runtime")
    };
    let Error::DeviceUnavailable { device, reason } = &err else {
        panic!("{err}")
    };
    assert_eq!(device.to_string(), "cuda:0");
    assert!(reason.contains("`cuda` feature of nn"), "{err}");
}
