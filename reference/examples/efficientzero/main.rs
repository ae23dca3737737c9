//! Builds LightZero's EfficientZero `DynamicsNetwork` from a PyTorch export and checks it against PyTorch.
//!
//! `cargo run --release --example efficientzero -- DIR [--device cpu|wgpu]`
//!
//! `DIR` holds `config.json`, `weights.safetensors`, `io.safetensors` and the listings PyTorch wrote
//! (`state_dict_keys.txt`, `named_*.txt`, `repr.txt`, `state_dict_after_half.txt`). Prints one line per check
//! and `N passed, M failed`; exits non-zero if any check failed.

use std::path::PathBuf;
use std::process::ExitCode;

use nn::Device;
use reference::efficientzero::check_export;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut device = Device::Cpu;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--device" => match args.next().as_deref().and_then(Device::parse) {
                Some(d) => device = d,
                None => return usage("--device takes cpu, wgpu or cuda"),
            },
            "-h" | "--help" => return usage(""),
            other if dir.is_none() && !other.starts_with("--") => dir = Some(PathBuf::from(other)),
            other => return usage(&format!("unexpected argument {other:?}")),
        }
    }
    let Some(dir) = dir else { return usage("DIR is missing") };
    let report = check_export(&dir, device);
    println!("{report}");
    if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage(problem: &str) -> ExitCode {
    if !problem.is_empty() {
        eprintln!("error: {problem}");
    }
    eprintln!("usage: efficientzero DIR [--device cpu|wgpu|cuda]");
    ExitCode::from(2)
}
