//! `sign` as PyTorch 2.5.1's CPU kernel gives it: `(0 < x) - (x < 0)`, so 0 (never -0) at ±0 and at NaN, in
//! every float dtype, on the CPU and on a device; its gradient is zero (`derivatives.yaml`: `zeros_like`).
//! PyTorch's values: `torch.sign(torch.tensor([nan, -0., 0., -2., 3., inf, -inf, 1e-30]))` gives
//! `[0., 0., 0., -1., 1., 1., -1., 1.]`, none with the sign bit set.

use integration_tests::{lacks_dtype, on_cpu_and_gpu};
use nn::prelude::*;

fn check(device: Device) {
    let x = [f64::NAN, -0.0, 0.0, -2.0, 3.0, f64::INFINITY, f64::NEG_INFINITY, 1e-30];
    let want = [0.0, 0.0, 0.0, -1.0, 1.0, 1.0, -1.0, 1.0];
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        if lacks_dtype(device, dtype) {
            continue;
        }
        let t = Tensor::from_vec(x.to_vec(), [8]).unwrap().to_dtype(dtype).unwrap();
        let t = t.to_device(device).unwrap().requires_grad_(true).unwrap();
        let y = t.sign().unwrap();
        assert_eq!(y.dtype(), dtype);
        let got = y.cpu().unwrap().to_vec_f64().unwrap();
        // 1e-30 rounds to 0 in f16, and PyTorch's sign of that is 0.
        let mut expected = want;
        if dtype == DType::F16 {
            expected[7] = 0.0;
        }
        assert_eq!(got, expected, "{dtype} on {device}");
        assert!(
            got.iter().all(|v| !v.is_sign_negative() || *v < 0.0),
            "{dtype}: a -0 in {got:?}"
        );
        y.mul_scalar(3.0).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(
            t.grad().unwrap().cpu().unwrap().to_vec_f64().unwrap(),
            [0.0; 8],
            "{dtype} on {device}"
        );
    }
}

on_cpu_and_gpu!(sign_is_pytorchs_on_the_cpu, sign_on_a_device_is_pytorchs, check);
