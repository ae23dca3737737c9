//! [`check_export`]: a `DynamicsNetwork` against a PyTorch export directory.

use std::path::Path;

use super::config::DynamicsConfig;
use super::dynamics::DynamicsNetwork;
use crate::parity::{
    Check, Report, failed, guard, lines_check, state_dict_dtype_lines, structure_checks, tensor_check,
};
use nn::io::load_safetensors;
use nn::{Device, Forward, ModuleExt, Result, StateDict, Tensor};

/// Tolerance of the output checks: `1e-5` absolute, relative above 1.
pub const TOLERANCE: f64 = 1e-5;

/// Builds the network of `dir/config.json`, loads `dir/weights.safetensors` strictly, moves it to `device`,
/// and checks it against the export: state dict, listings and `repr`; eval-mode outputs vs `io.safetensors`'
/// `eval.*`; one train-mode forward vs `train.*` and the state after it vs `train.state_after.*`; dtypes after
/// `half()` vs `state_dict_after_half.txt`. A step that cannot run is a failed check, not an error.
pub fn check_export(dir: &Path, device: Device) -> Report {
    let mut report = Report::default();
    let setup = || -> Result<(DynamicsNetwork, StateDict)> {
        let config = DynamicsConfig::from_file(&dir.join("config.json"))?;
        let mut net = DynamicsNetwork::new(config)?;
        net.load_safetensors(dir.join("weights.safetensors"), true)?;
        net.to_device(device)?;
        let io = load_safetensors(&dir.join("io.safetensors"))?;
        Ok((net, io))
    };
    let (mut net, io) = match setup() {
        Ok(v) => v,
        Err(e) => {
            report.push(failed("build and load weights.safetensors (strict)", e.to_string()));
            return report;
        }
    };
    report.push(Check {
        name: "build and load weights.safetensors (strict)".into(),
        passed: true,
        max_abs_err: None,
        detail: String::new(),
    });
    for check in structure_checks(&net, dir) {
        report.push(check);
    }
    let get = |key: &str| -> Result<Tensor> {
        io.get(key)
            .cloned()
            .ok_or_else(|| nn::Error::invalid("io.safetensors", format!("missing tensor {key}")))?
            .to_device(device)
    };
    let input = || -> Result<(Tensor, (Tensor, Tensor))> {
        Ok((
            get("input.state_action_encoding")?.deep_copy()?,
            (get("input.h0")?, get("input.c0")?),
        ))
    };
    for (mode, training) in [("eval", false), ("train", true)] {
        net.train(training);
        match input().and_then(|x| net.forward(x)) {
            Ok((latent, (h1, c1), value_prefix)) => {
                for (name, t) in [
                    ("next_latent_state", latent),
                    ("h1", h1),
                    ("c1", c1),
                    ("value_prefix", value_prefix),
                ] {
                    let key = format!("{mode}.{name}");
                    report.push(guard(&key, || {
                        Ok(tensor_check(&key, &t.cpu()?, &get(&key)?.cpu()?, TOLERANCE))
                    }));
                }
            }
            Err(e) => report.push(failed(&format!("{mode} forward"), e.to_string())),
        }
    }
    let after = net.state_dict();
    let mut worst = Check {
        name: "train.state_after (whole state dict)".into(),
        passed: true,
        max_abs_err: Some(0.0),
        detail: String::new(),
    };
    for (key, t) in &after {
        let c = guard(key, || {
            Ok(tensor_check(
                key,
                &t.cpu()?,
                &get(&format!("train.state_after.{key}"))?.cpu()?,
                TOLERANCE,
            ))
        });
        worst.max_abs_err = Some(worst.max_abs_err.unwrap_or(0.0).max(c.max_abs_err.unwrap_or(0.0)));
        if !c.passed && worst.passed {
            worst.passed = false;
            worst.detail = format!(
                "{key}: {}",
                if c.detail.is_empty() {
                    "out of tolerance".into()
                } else {
                    c.detail
                }
            );
        }
    }
    report.push(worst);
    report.push(match net.half() {
        Ok(_) => lines_check(
            "dtypes after half()",
            &state_dict_dtype_lines(&net),
            &dir.join("state_dict_after_half.txt"),
        ),
        Err(e) => failed("dtypes after half()", e.to_string()),
    });
    report
}
