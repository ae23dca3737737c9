//! Runs every case of an activation parity file (the layout of `activation/parity.safetensors`) on a device and
//! compares forward `y`, backward `dx` and PReLU's `dweight` with PyTorch's.
//!
//! `cargo run --release --example activations -- FILE [--device cpu|wgpu|cuda]`
//!
//! Prints one line per case (`PASS` / `FAIL` with the max abs error, `REFUSED` with the reason when the
//! device does not support the dtype), then `N passed, M failed`; exits non-zero if any case failed.

use std::process::ExitCode;

use reference::parity::activations::{Verdict, run_file};

fn main() -> ExitCode {
    let (file, device) = match reference::cli::path_and_device("activations", "FILE") {
        Ok(args) => args,
        Err(code) => return code,
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
