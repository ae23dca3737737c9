//! Runs every case of an activation parity file (the layout of `activations.safetensors`) on a device and
//! compares forward `y`, backward `dx` and PReLU's `dweight` with PyTorch's.
//!
//! `cargo run --release --example activations -- FILE [--device cpu|wgpu|cuda]`
//!
//! Prints one line per case (`PASS` / `FAIL` with the max abs error, `REFUSED` with the reason when the
//! device does not support the dtype), then `N passed, M failed`; exits non-zero if any case failed.

use std::path::PathBuf;
use std::process::ExitCode;

use nn::Device;
use reference::parity::activations::{Verdict, run_file};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut file: Option<PathBuf> = None;
    let mut device = Device::Cpu;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--device" => match args.next().as_deref().and_then(Device::parse) {
                Some(d) => device = d,
                None => return usage("--device takes cpu, wgpu or cuda"),
            },
            "-h" | "--help" => return usage(""),
            other if file.is_none() && !other.starts_with("--") => file = Some(PathBuf::from(other)),
            other => return usage(&format!("unexpected argument {other:?}")),
        }
    }
    let Some(file) = file else {
        return usage("FILE is missing");
    };
    let fixture = match nn::io::load_safetensors(&file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = nn::Tensor::zeros([1], nn::DType::F32).to_device(device) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let reports = run_file(&fixture, device);
    for r in &reports {
        println!("{r}");
    }
    let passed = reports.iter().filter(|r| r.verdict == Verdict::Pass).count();
    let failed = reports.iter().filter(|r| r.verdict == Verdict::Fail).count();
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage(problem: &str) -> ExitCode {
    if !problem.is_empty() {
        eprintln!("error: {problem}");
    }
    eprintln!("usage: activations FILE [--device cpu|wgpu|cuda]");
    ExitCode::from(2)
}
