//! Softmax's and log-softmax's backward against PyTorch 2.5.1 (`fixtures/ops/softmax_backward.safetensors`, written
//! by `fixtures/generate/softmax_backward.py`): rows, columns (a middle dimension), one long first dimension, and
//! `-inf` inputs, in every dtype, on the CPU and on wgpu.
//!
//! Each case runs as PyTorch gave it, and stacked eight times along a dimension whose blocks are independent
//! (so that the CPU loops split over threads): the result is then PyTorch's stacked the same way. Tolerances are
//! `torch.testing.assert_close`'s defaults for the dtype. On wgpu `f64` and `bf16` may be refused with
//! `UnsupportedOnDevice` (lavapipe's `f64` math fails the parity probe; no adapter stores `bf16`).
//!
//! A device's `f16` / `bf16` result is held to the exact one instead ([`assert_close_to_exact`]): along the
//! last dimension PyTorch's CPU kernel rounds each row's sum to the dtype, and a device's `f32` sum, added in
//! another order, can round to the neighbouring half value; where `y · (dy - sum)` cancels, that is 2 ulps of the
//! output. Through NVIDIA's Vulkan driver (an H200, 2026-11-30) one element of `softmax_rows.f16` came out
//! -0.0178986 where PyTorch gives -0.0178680 and the exact value is -0.0178916: nearer the exact value, 2 ulps
//! from PyTorch's.

use integration_tests::{assert_close, assert_close_to_exact, backward_along, lacks_dtype, on_cpu_and_gpu, tensors};
use nn::functional::{log_softmax_backward, softmax_backward};
use nn::prelude::*;
use nn::{Error, Result};

/// The generator's cases: name, the dimension of the softmax, whether it is the log-softmax.
const CASES: [(&str, isize, bool); 6] = [
    ("softmax_rows", 1, false),
    ("log_softmax_rows", 1, true),
    ("softmax_columns", 1, false),
    ("log_softmax_columns", 1, true),
    ("softmax_first", 0, false),
    ("log_softmax_masked", 1, true),
];

const DTYPES: [&str; 4] = ["f64", "f32", "f16", "bf16"];

/// Copies of each case stacked for the threaded check.
const COPIES: usize = 8;

/// `backward(y, dy)` along `dim`, the log-softmax's when `log`.
fn backward(y: &Tensor, dy: &Tensor, dim: isize, log: bool) -> Result<Tensor> {
    if log {
        log_softmax_backward(y, dy, dim)
    } else {
        softmax_backward(y, dy, dim)
    }
}

/// The exact input gradient, in `f64` from `y` and `dy` as given, rounded to their dtype.
fn exact(y: &Tensor, dy: &Tensor, dim: isize, log: bool) -> Tensor {
    let shape = y.shape().to_vec();
    let d = if dim < 0 { dim + shape.len() as isize } else { dim } as usize;
    let (outer, size, inner) = (
        shape[..d].iter().product::<usize>(),
        shape[d],
        shape[d + 1..].iter().product::<usize>(),
    );
    let (y64, dy64) = (y.to_vec_f64().unwrap(), dy.to_vec_f64().unwrap());
    let mut dx = vec![0.0; y64.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * size + k) * inner + i;
            let sum: f64 = (0..size)
                .map(|k| if log { dy64[at(k)] } else { dy64[at(k)] * y64[at(k)] })
                .sum();
            for k in 0..size {
                let (out, g) = (y64[at(k)], dy64[at(k)]);
                dx[at(k)] = if log { g - out.exp() * sum } else { out * (g - sum) };
            }
        }
    }
    Tensor::from_vec(dx, shape).unwrap().to_dtype(y.dtype()).unwrap()
}

/// `t` repeated [`COPIES`] times along `dim`.
fn stacked(t: &Tensor, dim: isize) -> Tensor {
    let copies = vec![t; COPIES];
    Tensor::cat(&copies, dim).unwrap()
}

fn check(device: Device) {
    let file = tensors("ops/softmax_backward.safetensors");
    let (mut ran, mut ran_f32) = (0, 0);
    for (name, dim, log) in CASES {
        for dtype in DTYPES {
            let what = format!("{name}.{dtype} on {device}");
            let field = |f: &str| file[&format!("{name}.{dtype}.{f}")].clone();
            let (y, dy, dx) = (field("y"), field("dy"), field("dx"));
            // Blocks along any other dimension are independent: stack along the first that is not `dim`.
            let along = if dim == 0 { 1 } else { 0 };
            let run = || -> Result<()> {
                let on = |t: &Tensor| t.to_device(device);
                let half = matches!(dx.dtype(), DType::F16 | DType::BF16);
                let check = |what: &str, got: &Tensor, dx: &Tensor, exact: &dyn Fn() -> Tensor| {
                    if half && !device.is_cpu() {
                        assert_close_to_exact(what, got, dx, &exact());
                    } else {
                        assert_close(what, got, dx);
                    }
                };
                let got = backward(&on(&y)?, &on(&dy)?, dim, log)?;
                assert_eq!(got.dtype(), dx.dtype(), "{what}: dtype");
                check(&what, &got, &dx, &|| exact(&y, &dy, dim, log));
                let got = backward(&on(&stacked(&y, along))?, &on(&stacked(&dy, along))?, dim, log)?;
                let exact_stacked = || stacked(&exact(&y, &dy, dim, log), along);
                check(&format!("{what}, stacked"), &got, &stacked(&dx, along), &exact_stacked);
                Ok(())
            };
            match run() {
                Ok(()) => {
                    ran += 1;
                    ran_f32 += usize::from(dtype == "f32");
                }
                Err(Error::UnsupportedOnDevice { dtype: d, .. })
                    if !device.is_cpu() && (d == DType::F64 || lacks_dtype(device, d)) => {}
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    // The CPU runs every case, a device at least every f32 one.
    assert_eq!(ran_f32, CASES.len(), "f32 cases run on {device}");
    if device.is_cpu() {
        assert_eq!(ran, CASES.len() * DTYPES.len(), "cases run on the CPU");
    }
}

on_cpu_and_gpu!(backward_from_the_output_cpu, backward_from_the_output_wgpu, check);

/// Through autograd: `x` → softmax → `(y · dy).sum()` gives `x` PyTorch's `dx`, in `f64` and `f32` on the CPU
/// (where nn's forward rounds as PyTorch's).
#[test]
fn autograd_gives_pytorchs_gradient() {
    let file = tensors("ops/softmax_backward.safetensors");
    for (name, dim, log) in CASES {
        for dtype in ["f64", "f32"] {
            let field = |f: &str| file[&format!("{name}.{dtype}.{f}")].clone();
            let x = field("x").requires_grad_(true).unwrap();
            let y = if log { x.log_softmax(dim) } else { x.softmax(dim) }.unwrap();
            backward_along(name, &y, &field("dy"));
            assert_close(&format!("{name}.{dtype}"), &x.grad().unwrap(), &field("dx"));
        }
    }
}
