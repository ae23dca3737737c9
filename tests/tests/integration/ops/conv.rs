//! `conv2d` against PyTorch 2.5.1 over 64 random geometries: the forward and the gradients of the input, the
//! weight and the bias (`tests/fixtures/ops/conv.safetensors`, from `tests/fixtures/generate/conv_sweep.py`,
//! which lists what the geometries cover), on the CPU and on a device (wgpu, or `NN_TEST_DEVICE`; without one
//! the device test skips, and fails under `CI=true`).
//!
//! Tolerance: float64 cases with `torch.testing.assert_close`'s float64 defaults against PyTorch's result.
//! Float32 cases against the exact result (PyTorch's, computed in float64 from the same tensors), each element
//! within float32's defaults or within twice PyTorch's own float32 error on that tensor, whichever is larger:
//! a weight gradient sums over every position of the batch (thousands of terms), and two correct float32
//! summation orders differ by more than the defaults there.

use integration_tests::{CasesRun, assert_close, assert_close_to_exact, lacks_dtype, on_cpu_and_gpu, tensors};
use nn::functional::{Conv2dOptions, Padding2d, conv2d};
use nn::{DType, Device, StateDict, Tensor};

struct Case {
    name: String,
    options: Conv2dOptions,
    dtype: DType,
}

fn case(sd: &StateDict, i: usize) -> Case {
    let c: Vec<i64> = sd[&format!("{i}.config")].to_vec::<i64>().unwrap();
    let u = |j: usize| c[j] as usize;
    let padding = match c[9] {
        0 => Padding2d::Explicit(u(10), u(11)),
        1 => Padding2d::Valid,
        _ => Padding2d::Same,
    };
    let options = Conv2dOptions {
        stride: [u(7), u(8)],
        padding,
        dilation: [u(12), u(13)],
        groups: u(14),
    };
    let dtype = if c[16] == 1 { DType::F64 } else { DType::F32 };
    let name = format!(
        "case {i} (n {}, c {}, {}×{}, o {}, kernel {}×{}, {options:?}, bias {})",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[15]
    );
    Case { name, options, dtype }
}

/// Runs every case on `device` and checks it; returns how many ran in each dtype.
fn sweep(device: Device) -> CasesRun {
    let sd = tensors("ops/conv.safetensors");
    let cases = (0..).take_while(|i| sd.contains_key(&format!("{i}.config"))).count();
    assert_eq!(cases, 64, "the fixture's cases");
    let mut run = CasesRun::default();
    for i in 0..cases {
        let case = case(&sd, i);
        if lacks_dtype(device, case.dtype) {
            continue;
        }
        let get = |k: &str| sd.get(&format!("{i}.{k}")).cloned();
        let leaf = |t: Tensor| t.to_device(device).unwrap().requires_grad_(true).unwrap();
        let x = leaf(get("x").unwrap());
        let weight = leaf(get("weight").unwrap());
        let bias = get("bias").map(leaf);
        let y = conv2d(&x, &weight, bias.as_ref(), &case.options)
            .unwrap_or_else(|e| panic!("{} on {device}: {e}", case.name));
        y.backward_with(&get("dy").unwrap().to_device(device).unwrap()).unwrap();
        let mut results = vec![("y", y), ("dx", x.grad().unwrap()), ("dweight", weight.grad().unwrap())];
        if let Some(b) = &bias {
            results.push(("dbias", b.grad().unwrap()));
        }
        for (name, got) in results {
            let what = format!("{} on {device}: {name}", case.name);
            assert_eq!((got.dtype(), got.device()), (case.dtype, device), "{what}");
            let got = got.cpu().unwrap();
            let pytorch = get(name).unwrap();
            match case.dtype {
                DType::F64 => assert_close(&what, &got, &pytorch),
                _ => assert_close_to_exact(&what, &got, &pytorch, &get(&format!("{name}_exact")).unwrap()),
            }
        }
        run.ran(case.dtype);
    }
    run
}

/// Every case the device computes in its dtype: every float32 case, and every float64 one on the CPU.
fn check(device: Device) {
    sweep(device).assert_every_case(device, 48, 16);
}

on_cpu_and_gpu!(
    conv2d_and_its_gradients_match_pytorch_over_random_geometries,
    conv2d_and_its_gradients_on_a_device_match_pytorch_over_random_geometries,
    check
);
