//! Builds LightZero's EfficientZero `DynamicsNetwork` from a PyTorch export and checks it against PyTorch.
//!
//! `cargo run --release --example efficientzero -- DIR [--device cpu|wgpu] [--weights FILE]`
//!
//! `DIR` holds `config.json`, the weights (`weights.safetensors`, else `weights.pt`: PyTorch's
//! `torch.save(model.state_dict())`; or any `.safetensors` / `.pt` / `.pth` given with `--weights`), `io.safetensors`, optionally `grad.safetensors` (one
//! backward pass checked against PyTorch's gradients) and the listings PyTorch wrote
//! (`state_dict_keys.txt`, `named_*.txt`, `repr.txt`, `state_dict_after_half.txt`). Prints one line per check
//! and `N passed, M failed`; exits non-zero if any check failed.

use std::process::ExitCode;

use reference::efficientzero::{check_export_with, folder_weights};

fn main() -> ExitCode {
    let args = match reference::cli::export_args("efficientzero") {
        Ok(args) => args,
        Err(code) => return code,
    };
    let weights = args.weights.unwrap_or_else(|| folder_weights(&args.path));
    let report = check_export_with(&args.path, &weights, args.device);
    println!("{report}");
    if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
