//! `MaxPool2d`, `AvgPool2d` and `AdaptiveAvgPool2d` against PyTorch 2.5.1 over 96 random layers
//! (`tests/fixtures/pool_sweep.{json,safetensors}`, from `tests/fixtures/generate/pool_sweep.py`: windows as an
//! int or a pair, strides, padding, dilation, `ceil_mode`, `count_include_pad`, `divisor_override`, adaptive
//! sizes with `None`; batched, unbatched and empty batches; float32 and float64; integer-valued inputs whose
//! ties send the gradient to a window's first maximum): the repr, the output and the input's gradient, within
//! `torch.testing.assert_close`'s defaults, on the CPU and on a device (wgpu, or `NN_TEST_DEVICE`; without one
//! the device test skips, and fails under `CI=true`). Then PyTorch's refusals, with its messages.

use integration_tests::{assert_close, lacks_dtype, on_cpu_and_gpu};
use nn::functional::{
    AvgPool2dOptions, MaxPool2dOptions, OutputSize2d, Size2d, adaptive_avg_pool2d, avg_pool2d, max_pool2d,
};
use nn::prelude::*;
use nn::{Device, StateDict};
use serde_json::Value;

const CASES: usize = 96;

/// A size of the JSON: an int, or a list of two.
fn size(v: &Value) -> Option<Size2d> {
    match v {
        Value::Null => None,
        Value::Array(a) => Some(Size2d::Each(
            a[0].as_u64().unwrap() as usize,
            a[1].as_u64().unwrap() as usize,
        )),
        v => Some(Size2d::Both(v.as_u64().unwrap() as usize)),
    }
}

/// The layer of a case's JSON, as a tensor-to-tensor module.
fn layer(spec: &Value) -> Box<dyn TensorModule> {
    let kernel = || size(&spec["kernel_size"]).unwrap();
    match spec["kind"].as_str().unwrap() {
        "max" => Box::new(MaxPool2d::with_options(
            kernel(),
            MaxPool2dOptions {
                stride: size(&spec["stride"]),
                padding: size(&spec["padding"]),
                dilation: size(&spec["dilation"]),
                ceil_mode: spec["ceil_mode"].as_bool().unwrap(),
            },
        )),
        "avg" => Box::new(AvgPool2d::with_options(
            kernel(),
            AvgPool2dOptions {
                stride: size(&spec["stride"]),
                padding: size(&spec["padding"]),
                ceil_mode: spec["ceil_mode"].as_bool().unwrap(),
                count_include_pad: spec["count_include_pad"].as_bool().unwrap(),
                divisor_override: spec["divisor_override"].as_u64().map(|d| d as usize),
            },
        )),
        _ => {
            let out = &spec["output_size"];
            let one = |v: &Value| v.as_u64().map(|n| n as usize);
            Box::new(AdaptiveAvgPool2d::new(match out {
                Value::Array(a) => OutputSize2d::Each(one(&a[0]), one(&a[1])),
                v => OutputSize2d::Both(one(v).unwrap()),
            }))
        }
    }
}

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(f: &StateDict, spec: &Value, i: usize, device: Device) -> bool {
    let get = |key: &str| &f[&format!("{i}.{key}")];
    let x = get("x");
    if lacks_dtype(device, x.dtype()) {
        return false;
    }
    let what = format!("case {i} ({}, input {}) on {device}", spec["repr"], x.shape());
    let layer = layer(spec);
    assert_eq!(layer.to_string(), spec["repr"].as_str().unwrap(), "{what}");
    let x = x.to_device(device).unwrap().requires_grad_(true).unwrap();
    let y = layer.call_tensor(x.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_close(&format!("{what}: output"), &y, get("y"));
    integration_tests::backward_along(&what, &y, get("proj"));
    assert_close(&format!("{what}: grad"), &x.grad().unwrap(), get("grad"));
    if spec["kind"] == "max" {
        // `return_indices=True`: the same values, and PyTorch's indices exactly.
        let kernel = size(&spec["kernel_size"]).unwrap();
        let options = MaxPool2dOptions {
            stride: size(&spec["stride"]),
            padding: size(&spec["padding"]),
            dilation: size(&spec["dilation"]),
            ceil_mode: spec["ceil_mode"].as_bool().unwrap(),
        };
        let (values, at) = MaxPool2d::with_options(kernel, options)
            .forward_with_indices(&x)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_close(&format!("{what}: values with indices"), &values, get("y"));
        let want = get("indices").to_vec::<i64>().unwrap();
        assert_eq!(at.shape(), get("indices").shape(), "{what}: indices' shape");
        assert_eq!(at.cpu().unwrap().to_vec::<i64>().unwrap(), want, "{what}: indices");
    }
    true
}

integration_tests::sweep_on_cpu_and_gpu!(
    pooling_matches_pytorch_over_random_layers,
    pooling_on_a_device_matches_pytorch_over_random_layers,
    "ops/pool",
    CASES,
    "x",
    run_case
);

/// NaNs, windows of `-inf` and overlapping windows, as PyTorch 2.5.1 pools them (values printed there by
/// `F.max_pool2d(x, ..., return_indices=True)` and the input's gradient after `(y * w).sum().backward()`): a NaN
/// wins its window and a later NaN replaces it; a window of `-inf`s picks its first tap inside the input; the
/// gradients of overlapping windows add up.
fn max_pool_edges(device: Device) {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    // (input, its shape, window, options, output weights, output, indices, input gradient)
    type Edge = (
        Vec<f64>,
        [usize; 4],
        usize,
        MaxPool2dOptions,
        Vec<f64>,
        Vec<f64>,
        Vec<i64>,
        Vec<f64>,
    );
    let cases: [Edge; 3] = [
        (
            vec![nan, 1.0, nan, 2.0, -inf, -inf, 3.0, nan],
            [1, 1, 2, 4],
            2,
            MaxPool2dOptions::default(),
            vec![1.0, 1.0],
            vec![nan, nan],
            vec![0, 7],
            vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        ),
        (
            vec![-inf, -inf],
            [1, 1, 1, 2],
            2,
            MaxPool2dOptions {
                stride: Some(1.into()),
                padding: Some(1.into()),
                ..Default::default()
            },
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
            vec![-inf; 6],
            vec![0, 0, 1, 0, 0, 1],
            vec![27.0, 36.0],
        ),
        (
            vec![0.0, 5.0, 1.0, 2.0, 3.0, 4.0, 1.0, 0.0, 2.0],
            [1, 1, 3, 3],
            2,
            MaxPool2dOptions {
                stride: Some(1.into()),
                ..Default::default()
            },
            vec![1.0, 2.0, 4.0, 8.0],
            vec![5.0, 5.0, 3.0, 4.0],
            vec![1, 1, 4, 5],
            vec![0.0, 3.0, 0.0, 0.0, 4.0, 8.0, 0.0, 0.0, 0.0],
        ),
    ];
    for (i, (x, shape, k, options, w, y, at, grad)) in cases.into_iter().enumerate() {
        let what = format!("case {i} on {device}");
        let x = Tensor::from_vec(x, shape).unwrap().to_dtype(DType::F32).unwrap();
        let x = x.to_device(device).unwrap().requires_grad_(true).unwrap();
        let (values, indices) = nn::functional::max_pool2d_with_indices(&x, k, options).unwrap();
        let out = values.shape().clone();
        let w = Tensor::from_vec(w, out.clone()).unwrap().to_dtype(DType::F32).unwrap();
        assert_close(&format!("{what}: values"), &values, &Tensor::from_vec(y, out).unwrap());
        assert_eq!(indices.cpu().unwrap().to_vec::<i64>().unwrap(), at, "{what}: indices");
        values
            .mul(&w.to_device(device).unwrap())
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(
            x.grad().unwrap().cpu().unwrap().to_vec::<f32>().unwrap(),
            grad.iter().map(|&g| g as f32).collect::<Vec<_>>(),
            "{what}: grad"
        );
    }
}

on_cpu_and_gpu!(
    max_pool_edges_as_pytorchs,
    max_pool_edges_on_a_device_as_pytorchs,
    max_pool_edges
);

/// `float16` and `bfloat16` pool in `float32` as PyTorch's CPU kernels do (the compute type), rounded once: the
/// outputs and input gradients are those of the `float32` pooling of the same values, rounded, within the
/// dtype's tolerance (the maxima exactly).
fn half_precision(device: Device) {
    let x32 = Tensor::randn([2, 3, 9, 10], DType::F32);
    for dtype in [DType::F16, DType::BF16] {
        if lacks_dtype(device, dtype) {
            continue;
        }
        let x = x32.to_dtype(dtype).unwrap();
        let exact = x.to_dtype(DType::F32).unwrap();
        let max = MaxPool2dOptions {
            stride: Some(2.into()),
            padding: Some(1.into()),
            ..Default::default()
        };
        let avg = AvgPool2dOptions {
            stride: Some((2, 3).into()),
            padding: Some(1.into()),
            count_include_pad: false,
            ..Default::default()
        };
        type Pool = Box<dyn Fn(&Tensor) -> Tensor>;
        let pools: [(&str, Pool); 3] = [
            ("max", Box::new(move |x: &Tensor| max_pool2d(x, 3, max).unwrap())),
            ("avg", Box::new(move |x: &Tensor| avg_pool2d(x, (3, 2), avg).unwrap())),
            (
                "adaptive",
                Box::new(|x: &Tensor| adaptive_avg_pool2d(x, (4, 3)).unwrap()),
            ),
        ];
        for (name, pool) in pools {
            let what = format!("{name} in {dtype:?} on {device}");
            let run = |x: &Tensor| {
                let x = x.to_device(device).unwrap().requires_grad_(true).unwrap();
                let y = pool(&x);
                let w = Tensor::from_vec(
                    (0..y.numel()).map(|i| (i % 7) as f32 - 3.0).collect(),
                    y.shape().clone(),
                )
                .unwrap()
                .to_dtype(x.dtype())
                .unwrap();
                y.mul(&w.to_device(device).unwrap())
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                (y.detach(), x.grad().unwrap())
            };
            let (y, grad) = run(&x);
            let (y32, grad32) = run(&exact);
            assert_eq!(y.dtype(), dtype, "{what}");
            assert_close(
                &format!("{what}: output"),
                &y,
                &y32.to_dtype(dtype).unwrap().cpu().unwrap(),
            );
            assert_close(
                &format!("{what}: grad"),
                &grad,
                &grad32.to_dtype(dtype).unwrap().cpu().unwrap(),
            );
        }
    }
}

on_cpu_and_gpu!(
    half_precision_pools_in_float32,
    half_precision_pools_in_float32_on_a_device,
    half_precision
);

/// Windows whose taps, or the windows reading one input element, pass what one device unit takes in one
/// launch (16,384 loop iterations) run in several launches on a device: the same values and gradients as on
/// the CPU. A window row wider than that is refused there, with the reason.
#[test]
fn wide_windows_on_a_device_match_the_cpu() {
    integration_tests::in_own_process(|| {
        let Some(device) = integration_tests::gpu_or_skip("wide_windows_on_a_device_match_the_cpu") else {
            return;
        };
        let x = Tensor::randn([1, 2, 260, 300], DType::F32);
        let wide = |x: &Tensor| -> Vec<Tensor> {
            let x = x.detach().requires_grad_(true).unwrap();
            let max = MaxPool2dOptions {
                stride: Some(5.into()),
                ..Default::default()
            };
            let avg = AvgPool2dOptions {
                stride: Some(1.into()),
                ..Default::default()
            };
            let ys = [
                // 256 x 260 taps (past lavapipe's 65,535); 129 x 130 taps, an element read by up to 129 x 130
                // windows; 130 x 150 taps.
                max_pool2d(&x, (256, 260), max).unwrap(),
                avg_pool2d(&x, (129, 130), avg).unwrap(),
                adaptive_avg_pool2d(&x, (2, 2)).unwrap(),
            ];
            let mut out = Vec::new();
            for y in ys {
                let w = Tensor::randn(y.shape().clone(), DType::F32);
                y.mul(&w.to_device(x.device()).unwrap())
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                out.push(y.detach());
            }
            out.push(x.grad().unwrap());
            out
        };
        nn::manual_seed(3);
        let want = wide(&x);
        nn::manual_seed(3);
        let got = wide(&x.to_device(device).unwrap());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_close(&format!("result {i} on {device}"), g, w);
        }
        let row = Tensor::zeros([1, 1, 1, 16_400], DType::F32).to_device(device).unwrap();
        let refused = max_pool2d(&row, (1, 16_385), MaxPool2dOptions::default())
            .unwrap_err()
            .to_string();
        assert!(refused.contains("windows of 16385 columns"), "{refused}");
        let on_cpu = max_pool2d(&row.cpu().unwrap(), (1, 16_385), MaxPool2dOptions::default()).unwrap();
        assert_eq!(on_cpu.shape(), &[1, 1, 1, 1]);
    });
}

/// The refusals PyTorch 2.5.1 raises for the same calls, with its messages (each printed by
/// `F.max_pool2d(...)` / `F.avg_pool2d(...)` / `F.adaptive_avg_pool2d(...)` there).
#[test]
fn refusals_carry_pytorchs_messages() {
    let x = Tensor::zeros([2, 3, 5, 5], DType::F32);
    let max = |x: &Tensor, k: usize, o: MaxPool2dOptions| max_pool2d(x, k, o).unwrap_err().to_string();
    let avg = |x: &Tensor, k: usize, o: AvgPool2dOptions| avg_pool2d(x, k, o).unwrap_err().to_string();
    let m = MaxPool2dOptions::default;
    let a = AvgPool2dOptions::default;
    let cases = [
        (
            max(
                &x,
                3,
                MaxPool2dOptions {
                    padding: Some(2.into()),
                    ..m()
                },
            ),
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1",
        ),
        (
            max(
                &x,
                3,
                MaxPool2dOptions {
                    padding: Some(2.into()),
                    dilation: Some(2.into()),
                    ..m()
                },
            ),
            "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, kW = 3, kH = 3",
        ),
        (max(&x, 0, m()), "stride should not be zero"),
        (
            max(
                &x,
                2,
                MaxPool2dOptions {
                    stride: Some(0.into()),
                    ..m()
                },
            ),
            "stride should not be zero",
        ),
        (
            max(
                &x,
                2,
                MaxPool2dOptions {
                    dilation: Some(0.into()),
                    ..m()
                },
            ),
            "dilation should be greater than zero, but got dilationH: 0 dilationW: 0",
        ),
        (
            max(&Tensor::zeros([5, 5], DType::F32), 2, m()),
            "non-empty 3D or 4D (batch mode) tensor expected for input",
        ),
        (
            max(&Tensor::zeros([2, 0, 5, 5], DType::F32), 2, m()),
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 5, 5]",
        ),
        (
            max(&Tensor::zeros([2, 3, 2, 2], DType::F32), 3, m()),
            "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small",
        ),
        (
            avg(
                &x,
                3,
                AvgPool2dOptions {
                    padding: Some(2.into()),
                    ..a()
                },
            ),
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1",
        ),
        (
            avg(&Tensor::zeros([2, 3, 2, 2], DType::F32), 3, a()),
            "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small",
        ),
        (
            avg(
                &x,
                2,
                AvgPool2dOptions {
                    divisor_override: Some(0),
                    ..a()
                },
            ),
            "divisor must be not zero",
        ),
        (
            adaptive_avg_pool2d(&Tensor::zeros([5, 5], DType::F32), 2)
                .unwrap_err()
                .to_string(),
            "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]",
        ),
        (
            adaptive_avg_pool2d(&Tensor::zeros([2, 3, 0, 5], DType::F32), 2)
                .unwrap_err()
                .to_string(),
            "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has \
             sizes [2, 3, 0, 5] with dimension 2 being empty",
        ),
    ];
    for (got, want) in cases {
        assert!(got.contains(want), "{got:?} does not say {want:?}");
    }
    // An empty batch pools to an empty batch; an adaptive output of size 0 is empty, as PyTorch's.
    let empty = max_pool2d(&Tensor::zeros([0, 3, 5, 5], DType::F32), 2, m()).unwrap();
    assert_eq!(empty.shape(), &[0, 3, 2, 2]);
    assert_eq!(adaptive_avg_pool2d(&x, 0).unwrap().shape(), &[2, 3, 0, 0]);
    // Arguments past any tensor's size are typed errors, never an overflow; an adaptive output too large to
    // allocate is `Error::Allocation`, and an empty one is empty however large its spatial size.
    let huge = 1usize << 40;
    assert!(
        max_pool2d(&x, huge, m())
            .unwrap_err()
            .to_string()
            .contains("below 2^31")
    );
    assert!(
        avg_pool2d(
            &x,
            2,
            AvgPool2dOptions {
                stride: Some(huge.into()),
                ..a()
            }
        )
        .is_err()
    );
    assert!(matches!(
        adaptive_avg_pool2d(&x, usize::MAX),
        Err(nn::Error::Allocation { .. })
    ));
    let none = adaptive_avg_pool2d(&Tensor::zeros([0, 3, 5, 5], DType::F32), huge).unwrap();
    assert_eq!(none.shape(), &[0, 3, huge, huge]);
    // Integer tensors are refused with a typed error (PyTorch pools them; nn's pooling is for floats).
    let ids = Tensor::from_vec(vec![1i64; 16], [1, 1, 4, 4]).unwrap();
    assert!(max_pool2d(&ids, 2, m()).is_err());
}

/// The layers' defaults print as PyTorch's: `MaxPool2d(3)`, `AvgPool2d(3)`, `AdaptiveAvgPool2d((None, 7))`.
#[test]
fn default_layers_print_as_pytorchs() {
    assert_eq!(
        MaxPool2d::new(3).to_string(),
        "MaxPool2d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"
    );
    assert_eq!(
        AvgPool2d::new(3).to_string(),
        "AvgPool2d(kernel_size=3, stride=3, padding=0)"
    );
    assert_eq!(
        AdaptiveAvgPool2d::new(OutputSize2d::Each(None, Some(7))).to_string(),
        "AdaptiveAvgPool2d(output_size=(None, 7))"
    );
    let model = Sequential::new()
        .append(MaxPool2d::new(2))
        .append(AdaptiveAvgPool2d::new(1));
    assert!(model.state_dict().is_empty());
}
