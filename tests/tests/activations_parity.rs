//! Forward `y`, backward `dx` and PReLU's `dweight` of every activation against PyTorch 2.5.1, for every
//! dtype, on the CPU and on wgpu (lavapipe in CI).
//!
//! Tolerances (`reference::parity::activations::tolerance`), `|got - want| <= tol · max(|want|, 1)`: `1e-6` for
//! `f32` and `f64`, two ulps for `f16` (`2^-9`) and `bf16` (`2^-6`). On a device, a case may instead be
//! refused with `UnsupportedOnDevice` naming the device and dtype (bf16 on wgpu; f64 where the driver's
//! math functions fail the parity probe, as lavapipe's `exp` does) — never a wrong number.

use integration_tests::{tensors, wgpu_or_skip};
use nn::{DType, Device, Tensor};
use reference::parity::activations::{CaseReport, Verdict, run_file};

const FILES: [&str; 2] = ["activations.safetensors", "activations_more.safetensors"];

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
    let Some(device) = wgpu_or_skip("every_case_passes_or_is_refused_on_wgpu") else {
        return;
    };
    let reports = run(device);
    assert!(failures(&reports).is_empty(), "{:#?}", failures(&reports));
    for r in &reports {
        let dtype = r.name.rsplit('.').next().unwrap();
        match (&r.verdict, dtype) {
            // f32 and f16 are what a GPU must do: no refusal.
            (Verdict::Refused(why), "f32" | "f16") => panic!("{} refused: {why}", r.name),
            (Verdict::Refused(why), _) => {
                assert!(
                    why.contains("wgpu:0") && why.contains("not supported"),
                    "{}: {why}",
                    r.name
                );
                if dtype == "f64" {
                    assert!(why.contains("differs from the CPU's"), "{}: {why}", r.name);
                }
            }
            _ => {}
        }
    }
    let passed = reports.iter().filter(|r| r.verdict == Verdict::Pass).count();
    println!("{passed} of {} cases pass on wgpu, the rest refused", reports.len());
    assert!(passed >= 2 * 31, "only {passed} cases ran on wgpu");
}

#[test]
fn bf16_on_wgpu_is_a_typed_error_naming_device_and_dtype() {
    let Some(device) = wgpu_or_skip("bf16_on_wgpu_is_a_typed_error") else {
        return;
    };
    let x = Tensor::from_vec(vec![1.0f32, -2.0], [2])
        .unwrap()
        .to_dtype(DType::BF16)
        .unwrap();
    let x = x.to_device(device).expect("bf16 bytes can be stored");
    let err = nn::functional::Activation::Gelu.forward(&x).unwrap_err();
    match &err {
        nn::Error::UnsupportedOnDevice { dtype, device: d, .. } => {
            assert_eq!((*dtype, *d), (DType::BF16, device));
        }
        other => panic!("expected UnsupportedOnDevice, got {other:?}"),
    }
    assert!(
        err.to_string().contains("wgpu:0") && err.to_string().contains("bfloat16"),
        "{err}"
    );
}
