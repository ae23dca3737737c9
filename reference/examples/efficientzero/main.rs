//! Builds LightZero's EfficientZero `DynamicsNetwork` from a PyTorch export and checks it against PyTorch.
//!
//! `cargo run --release --example efficientzero -- DIR [--device cpu|wgpu]`
//!
//! `DIR` holds `config.json`, `weights.safetensors`, `io.safetensors`, optionally `grad.safetensors` (one
//! backward pass checked against PyTorch's gradients) and the listings PyTorch wrote
//! (`state_dict_keys.txt`, `named_*.txt`, `repr.txt`, `state_dict_after_half.txt`). Prints one line per check
//! and `N passed, M failed`; exits non-zero if any check failed.

use std::process::ExitCode;

use reference::efficientzero::check_export;

fn main() -> ExitCode {
    let (dir, device) = match reference::cli::path_and_device("efficientzero", "DIR") {
        Ok(args) => args,
        Err(code) => return code,
    };
    let report = check_export(&dir, device);
    println!("{report}");
    if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
