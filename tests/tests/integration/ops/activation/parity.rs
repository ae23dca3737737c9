//! Forward `y`, backward `dx` and PReLU's `dweight` of every activation against PyTorch 2.5.1, for every
//! dtype, on the CPU and on wgpu (lavapipe in CI).
//!
//! Tolerances (`reference::parity::activations::tolerance`), `|got - want| <= tol · max(|want|, 1)`: `1e-6` for
//! `f32` and `f64`, two ulps for `f16` (`2^-9`) and `bf16` (`2^-6`). On a device, a case may instead be
//! refused with `UnsupportedOnDevice` naming the device and dtype where the adapter reports that it lacks the
//! dtype (bf16 on every wgpu adapter; f16 and f64 on Mesa's GL adapter), or for f64 where the driver's math
//! functions fail the parity probe, as lavapipe's `exp` does — never a wrong number.

use integration_tests::{gpu_or_skip, lacks_dtype, tensors};
use nn::{DType, Device, Tensor};
use reference::parity::activations::{CaseReport, Verdict, run_file};

const FILES: [&str; 2] = ["activation/parity.safetensors", "activation/more.safetensors"];

fn run(device: Device) -> Vec<CaseReport> {
    FILES.iter().flat_map(|f| run_file(&tensors(f), device)).collect()
}

fn failures(reports: &[CaseReport]) -> Vec<String> {
    reports
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_case_passes_on_the_cpu_in_every_dtype() {
    let reports = run(Device::Cpu);
    assert!(failures(&reports).is_empty(), "{:#?}", failures(&reports));
    assert!(reports.iter().all(|r| r.verdict == Verdict::Pass));
    // 7 + 24 names; every dtype of each; prelu_c3 only in f64.
    assert_eq!(reports.len(), 29 + 72, "cases run");
    let backward = reports.iter().filter(|r| r.detail.contains("dx:")).count();
    assert_eq!(backward, reports.len(), "every case has a backward");
}

#[test]
fn every_case_passes_or_is_refused_on_wgpu() {
    let Some(device) = gpu_or_skip("every_case_passes_or_is_refused_on_wgpu") else {
        return;
    };
    let reports = run(device);
    assert!(failures(&reports).is_empty(), "{:#?}", failures(&reports));
    let dtype_of = |name: &str| match name.rsplit('.').next().unwrap() {
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => panic!("{name}: no dtype {other}"),
    };
    for r in &reports {
        let dtype = dtype_of(&r.name);
        let Verdict::Refused(why) = &r.verdict else {
            continue;
        };
        assert!(
            why.contains(&device.to_string()) && why.contains("not supported"),
            "{}: {why}",
            r.name
        );
        if lacks_dtype(device, dtype) {
            assert!(why.contains("reports no"), "{}: {why}", r.name);
            continue;
        }
        // A dtype the adapter reports must compute; only f64 may be refused: an activation computing exp, tanh
        // or erf, which wgpu's shading languages lack in f64, before it runs, or one the parity probe caught.
        assert!(
            dtype == DType::F64
                && (why.contains("16- and 32-bit floats only") || why.contains("differs from the CPU's")),
            "{} refused though {device} reports {dtype}: {why}",
            r.name
        );
    }
    let passed = reports.iter().filter(|r| r.verdict == Verdict::Pass).count();
    println!("{passed} of {} cases pass on wgpu, the rest refused", reports.len());
    let f32_cases = reports.iter().filter(|r| dtype_of(&r.name) == DType::F32).count();
    let f16_cases = reports.iter().filter(|r| dtype_of(&r.name) == DType::F16).count();
    let must_pass = f32_cases + if lacks_dtype(device, DType::F16) { 0 } else { f16_cases };
    assert!(passed >= must_pass, "only {passed} cases ran on wgpu, {must_pass} must");
}

/// bf16 on a device whose adapter lacks it (every wgpu adapter) is a typed error naming device and dtype; on
/// one that has it (CUDA) the activation computes, as the CPU does.
#[test]
fn bf16_on_wgpu_is_a_typed_error_naming_device_and_dtype() {
    let Some(device) = gpu_or_skip("bf16_on_wgpu_is_a_typed_error") else {
        return;
    };
    let x = Tensor::from_vec(vec![1.0f32, -2.0], [2])
        .unwrap()
        .to_dtype(DType::BF16)
        .unwrap();
    let on_device = x.to_device(device).expect("bf16 bytes can be stored");
    let result = nn::functional::Activation::Gelu.forward(&on_device);
    if !lacks_dtype(device, DType::BF16) {
        let expected = nn::functional::Activation::Gelu.forward(&x).unwrap();
        integration_tests::assert_close("bf16 GELU", &result.unwrap(), &expected);
        return;
    }
    let err = result.unwrap_err();
    match &err {
        nn::Error::UnsupportedOnDevice { dtype, device: d, .. } => {
            assert_eq!((*dtype, *d), (DType::BF16, device));
        }
        other => panic!("expected UnsupportedOnDevice, got {other:?}"),
    }
    assert!(
        err.to_string().contains(&device.to_string()) && err.to_string().contains("bfloat16"),
        "{err}"
    );
}
