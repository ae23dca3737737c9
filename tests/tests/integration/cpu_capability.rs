//! Every compiled form of nn's CPU loops against PyTorch 2.5.1: this machine runs the widest (AVX-512 where it
//! has it), so the narrower ones (AVX2 with FMA, the baseline) would go untested. The test re-runs this binary
//! under `NN_CPU_CAPABILITY` = `default`, `avx2`, `avx512` and an invalid value (ignored), each child running the
//! activation parity cases (`activation/parity.safetensors`, `activation/more.safetensors`: forward and backward of
//! every activation, softmax and log-softmax in every dtype) and the five DynamicsNetwork exports (convolution,
//! batch and layer norm, LSTM, their gradients, the folded eval) on the CPU.

use std::process::Command;

use integration_tests::{fixture, tensors};
use nn::Device;
use nn::cpu::{CpuCapability, cpu_capability};
use reference::efficientzero::check_export;
use reference::parity::activations::{Verdict, run_file};

const ACTIVATIONS: [&str; 2] = ["activation/parity.safetensors", "activation/more.safetensors"];
/// The child test's path in this binary (`cpu_capability::parity_under_one_capability`).
fn child() -> String {
    let (_crate, module) = module_path!().split_once("::").unwrap();
    format!("{module}::parity_under_one_capability")
}

#[test]
#[ignore = "the child of every_cpu_capability_matches_pytorch, which runs it under each NN_CPU_CAPABILITY"]
fn parity_under_one_capability() {
    println!("capability {}", cpu_capability());
    let reports: Vec<_> = ACTIVATIONS
        .iter()
        .flat_map(|f| run_file(&tensors(f), Device::Cpu))
        .collect();
    let failed: Vec<String> = reports
        .iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .map(ToString::to_string)
        .collect();
    assert!(failed.is_empty(), "{}:\n{}", cpu_capability(), failed.join("\n"));
    assert!(reports.len() > 100, "only {} activation cases ran", reports.len());
    for dir in integration_tests::DYNAMICS_EXPORTS {
        let report = check_export(&fixture(dir), Device::Cpu);
        assert_eq!(report.failed(), 0, "{} {dir}:\n{report}", cpu_capability());
    }
}

/// The widest capability this CPU has, detected here (not through nn).
fn widest() -> CpuCapability {
    #[cfg(target_arch = "x86_64")]
    {
        let has = |features: &[bool]| features.iter().all(|&f| f);
        use std::arch::is_x86_feature_detected as d;
        let avx2 = has(&[d!("avx2"), d!("fma")]);
        if avx2 && has(&[d!("avx512f"), d!("avx512vl"), d!("avx512bw"), d!("avx512dq")]) {
            return CpuCapability::Avx512;
        }
        if avx2 {
            return CpuCapability::Avx2;
        }
    }
    CpuCapability::Default
}

#[test]
fn every_cpu_capability_matches_pytorch() {
    let exe = std::env::current_exe().unwrap();
    let cases = [
        ("default", CpuCapability::Default),
        ("avx2", CpuCapability::Avx2.min(widest())),
        ("AVX512", CpuCapability::Avx512.min(widest())),
        ("sse9", widest()),
    ];
    for (asked, want) in cases {
        let out = Command::new(&exe)
            .args([
                child().as_str(),
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("NN_CPU_CAPABILITY", asked)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "NN_CPU_CAPABILITY={asked}:\n{stdout}\n{stderr}");
        assert!(
            stdout.contains(&format!("capability {want}\n")),
            "NN_CPU_CAPABILITY={asked} should run {want}:\n{stdout}"
        );
        assert!(
            stdout.contains("1 passed"),
            "NN_CPU_CAPABILITY={asked}: the child ran no test:\n{stdout}"
        );
    }
}
