//! What a weights file holds, without loading it: keys, dtypes, shapes, element counts and bytes of a PyTorch
//! checkpoint (`.pt`, `.pth`; in the order its `state_dict()` had when saved) or a safetensors file (in its data
//! order).
//!
//! `cargo run --release --example inspect -- FILE [--key KEY] [--strip-prefix PREFIX]`
//!
//! `--key` reads a checkpoint's weights from under a top-level key (`{"state_dict": …, "epoch": 3}`);
//! `--strip-prefix` drops a prefix such as `DataParallel`'s `module.`.

use std::path::PathBuf;
use std::process::ExitCode;

use nn::io::{PtOptions, TensorInfo, inspect, is_safetensors};

fn main() -> ExitCode {
    let usage = |problem: &str| {
        if !problem.is_empty() {
            eprintln!("error: {problem}");
        }
        eprintln!("usage: inspect FILE [--key KEY] [--strip-prefix PREFIX]");
        ExitCode::from(2)
    };
    let mut args = std::env::args().skip(1);
    let mut file: Option<PathBuf> = None;
    let mut options = PtOptions::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--key" => match args.next() {
                Some(key) => options = options.key(key),
                None => return usage("--key takes a key"),
            },
            "--strip-prefix" => match args.next() {
                Some(prefix) => options = options.strip_prefix(prefix),
                None => return usage("--strip-prefix takes a prefix"),
            },
            "-h" | "--help" => return usage(""),
            other if file.is_none() && !other.starts_with("--") => file = Some(PathBuf::from(other)),
            other => return usage(&format!("unexpected argument {other:?}")),
        }
    }
    let Some(file) = file else {
        return usage("FILE is missing");
    };
    let listed = is_safetensors(&file).and_then(|safetensors| Ok((safetensors, inspect(&file, &options)?)));
    match listed {
        Ok((safetensors, infos)) => {
            let format = if safetensors {
                "safetensors"
            } else {
                "PyTorch checkpoint"
            };
            print!("{}", report(&file.display().to_string(), format, &infos));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            if let nn::Error::NestedCheckpoint {
                suggestion: Some(key), ..
            } = &e
            {
                eprintln!("hint: inspect {} --key {key}", file.display());
            }
            ExitCode::FAILURE
        }
    }
}

/// One line per tensor under a header, then the totals.
fn report(file: &str, format: &str, infos: &[TensorInfo]) -> String {
    let key_width = infos.iter().map(|i| i.key.len()).max().unwrap_or(3).max(3);
    let dtype_width = infos.iter().map(|i| i.dtype.len()).max().unwrap_or(5).max(5);
    let shapes: Vec<String> = infos.iter().map(|i| format!("{:?}", i.shape)).collect();
    let shape_width = shapes.iter().map(String::len).max().unwrap_or(5).max(5);
    let mut out = format!("{file}: {format}, {} tensors\n", infos.len());
    out += &format!(
        "{:key_width$}  {:dtype_width$}  {:shape_width$}  {:>12}  {:>12}\n",
        "key", "dtype", "shape", "elements", "bytes"
    );
    for (info, shape) in infos.iter().zip(&shapes) {
        let unsupported = if info.nn_dtype.is_none() {
            "  (nn has no such dtype)"
        } else {
            ""
        };
        out += &format!(
            "{:key_width$}  {:dtype_width$}  {shape:shape_width$}  {:>12}  {:>12}{unsupported}\n",
            info.key,
            info.dtype,
            info.numel(),
            info.bytes
        );
    }
    let elements: u64 = infos.iter().map(TensorInfo::numel).sum();
    let floating: u64 = infos
        .iter()
        .filter(|i| i.nn_dtype.is_some_and(|d| d.is_floating_point()))
        .map(TensorInfo::numel)
        .sum();
    let bytes: u64 = infos.iter().map(|i| i.bytes).sum();
    out += &format!(
        "total: {elements} elements ({floating} in floating-point tensors), {bytes} bytes ({:.1} MiB)\n",
        bytes as f64 / (1 << 20) as f64
    );
    out
}
