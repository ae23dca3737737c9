//! [`check_export`]: a `DynamicsNetwork` against a PyTorch export directory.

use std::path::{Path, PathBuf};

use super::config::DynamicsConfig;
use super::dynamics::DynamicsNetwork;
use crate::parity::{
    Check, Exact, JudgedBy, Report, SPREAD_MARGIN, failed, guard, lines_check, state_dict_dtype_lines,
    structure_checks, tensor_check, tensor_check_or_exact,
};
use nn::io::load_safetensors;
use nn::{Device, Forward, ModuleExt, Result, StateDict, Tensor};

/// [`check_export_with`] the folder's own weights ([`folder_weights`]).
pub fn check_export(dir: &Path, device: Device) -> Report {
    check_export_with(dir, &folder_weights(dir), device)
}

/// The weights of an export folder: `weights.safetensors`, else `weights.pt` (PyTorch's
/// `torch.save(model.state_dict())`).
pub fn folder_weights(dir: &Path) -> PathBuf {
    let safetensors = dir.join("weights.safetensors");
    let pt = dir.join("weights.pt");
    if !safetensors.exists() && pt.exists() {
        pt
    } else {
        safetensors
    }
}

/// Loads a weights file strictly, safetensors or a PyTorch checkpoint (told apart by its first bytes).
pub fn load_weights(net: &mut DynamicsNetwork, weights: &Path) -> Result<()> {
    if nn::io::is_safetensors(weights)? {
        net.load_safetensors(weights, true)?;
    } else {
        net.load_pt(weights, true)?;
    }
    Ok(())
}

/// Builds the network of `dir/config.json`, loads `weights` strictly (safetensors or `.pt`), moves it to `device`,
/// and checks it against the export: state dict, listings and `repr`; eval-mode outputs vs `io.safetensors`'
/// `eval.*`; one train-mode forward vs `train.*` and the state after it vs `train.state_after.*`; dtypes after
/// `half()` vs `state_dict_after_half.txt`; the eval outputs again with the network folded by
/// [`DynamicsNetwork::fusion_groups`] and `nn::utils::fuse_modules`; and when the folder has `grad.safetensors` (written by
/// `tests/fixtures/generate/dynamics_grad.py`), one backward pass in train and in eval mode: every parameter's
/// and input's gradient vs PyTorch's (its f32 one, or its f64 one where the folder has it and the f32 one
/// misses, or within the spread of its own f32 one over batch orders where the folder records it:
/// [`crate::parity::tensor_check_or_exact`]). A step that cannot run is a failed check, not an error.
pub fn check_export_with(dir: &Path, weights: &Path, device: Device) -> Report {
    let mut report = Report::default();
    let load_name = format!(
        "build and load {} (strict)",
        weights
            .file_name()
            .map_or_else(|| weights.display().to_string(), |n| n.to_string_lossy().into_owned())
    );
    let setup = || -> Result<(DynamicsNetwork, StateDict)> {
        let config = DynamicsConfig::from_file(&dir.join("config.json"))?;
        let mut net = DynamicsNetwork::new(config)?;
        load_weights(&mut net, weights)?;
        net.to_device(device)?;
        let io = load_safetensors(&dir.join("io.safetensors"))?;
        Ok((net, io))
    };
    let (mut net, io) = match setup() {
        Ok(v) => v,
        Err(e) => {
            report.push(failed(&load_name, e.to_string()));
            return report;
        }
    };
    report.push(Check {
        name: load_name,
        passed: true,
        errors: None,
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
            Ok(outputs) => {
                for (name, t) in named(outputs) {
                    let key = format!("{mode}.{name}");
                    report.push(guard(&key, || Ok(tensor_check(&key, &t.cpu()?, &get(&key)?.cpu()?))));
                }
            }
            Err(e) => report.push(failed(&format!("{mode} forward"), e.to_string())),
        }
    }
    report.push(folded_eval_check(dir, weights, device, input, get));
    for check in gradient_checks(dir, weights, device) {
        report.push(check);
    }
    let after = net.state_dict();
    let mut worst = Check::worst_of("train.state_after (whole state dict)");
    for (key, t) in &after {
        let c = guard(key, || {
            Ok(tensor_check(
                key,
                &t.cpu()?,
                &get(&format!("train.state_after.{key}"))?.cpu()?,
            ))
        });
        worst.fold(key, c);
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

/// A fresh network with [`DynamicsNetwork::fusion_groups`] folded by `nn::utils::fuse_modules`, in eval, against
/// PyTorch's (unfused) eval outputs: one check with the worst error over the four outputs.
fn folded_eval_check(
    dir: &Path,
    weights: &Path,
    device: Device,
    input: impl Fn() -> Result<(Tensor, (Tensor, Tensor))>,
    get: impl Fn(&str) -> Result<Tensor>,
) -> Check {
    let name = "eval, folded by fuse_modules (every output)";
    guard(name, || {
        let mut net = DynamicsNetwork::new(DynamicsConfig::from_file(&dir.join("config.json"))?)?;
        load_weights(&mut net, weights)?;
        net.to_device(device)?;
        net.eval();
        let groups = net.fusion_groups();
        nn::utils::fuse_modules(&mut net, &groups)?;
        let outputs = net.forward(input()?)?;
        let mut worst = Check::worst_of(name);
        for (output, t) in named(outputs) {
            let key = format!("eval.{output}");
            worst.fold(&key, tensor_check(&key, &t.cpu()?, &get(&key)?.cpu()?));
        }
        if worst.passed {
            worst.detail = format!("{} groups folded", groups.len());
        }
        Ok(worst)
    })
}

/// A forward's four outputs with the names the fixtures give them.
fn named((latent, (h1, c1), value_prefix): (Tensor, (Tensor, Tensor), Tensor)) -> [(&'static str, Tensor); 4] {
    [
        ("next_latent_state", latent),
        ("h1", h1),
        ("c1", c1),
        ("value_prefix", value_prefix),
    ]
}

/// The loss `dynamics_grad.py` differentiates: `Σ over the four outputs of (output * proj).sum()`.
fn projected_loss(net: &DynamicsNetwork, inputs: &[Tensor; 3], grads: &StateDict, device: Device) -> Result<Tensor> {
    let [x, h, c] = inputs;
    let outputs = net.forward((x.clone(), (h.clone(), c.clone())))?;
    projected_sum(outputs, |name| {
        grads
            .get(&format!("proj.{name}"))
            .ok_or_else(|| nn::Error::invalid("grad.safetensors", format!("missing tensor proj.{name}")))?
            .to_device(device)
    })
}

/// `Σ (output · proj(name)).sum()` over a forward's four outputs, named as the fixtures name them
/// (`next_latent_state`, `h1`, `c1`, `value_prefix`): the loss of the gradient and trajectory fixtures.
pub fn projected_sum(
    outputs: (Tensor, (Tensor, Tensor), Tensor),
    proj: impl Fn(&str) -> Result<Tensor>,
) -> Result<Tensor> {
    let mut loss: Option<Tensor> = None;
    for (name, out) in named(outputs) {
        let term = out.mul(&proj(name)?)?.sum_all()?;
        loss = Some(match loss {
            None => term,
            Some(l) => l.add(&term)?,
        });
    }
    loss.ok_or_else(|| nn::Error::invalid("projected_sum", "no output"))
}

/// One backward pass per mode from freshly loaded weights, every gradient against `grad.safetensors`' f32
/// ones (`{mode}.f32.grad.{name}`, `{mode}.f32.grad.input.{input}`) and, where one misses and the file has
/// PyTorch's f64 gradient (`{mode}.f64.grad.…`), against that, and where that misses too and the file has the
/// spread of PyTorch's own f32 gradient over batch orders (`{mode}.f32_spread.grad.…`), within that spread
/// ([`tensor_check_or_exact`]: train-mode batch norm over a few values per channel leaves PyTorch's own f32
/// gradient most of a tolerance, or several, from the exact one): one check per mode, with the worst error.
fn gradient_checks(dir: &Path, weights: &Path, device: Device) -> Vec<Check> {
    let path = dir.join("grad.safetensors");
    if !path.exists() {
        return vec![Check {
            name: "backward vs grad.safetensors".into(),
            passed: true,
            errors: None,
            detail: "skipped: no grad.safetensors (tests/fixtures/generate/dynamics_grad.py writes it)".into(),
        }];
    }
    ["train", "eval"]
        .into_iter()
        .map(|mode| {
            let name = format!("{mode} backward: every parameter's and input's gradient");
            guard(&name, || {
                let grads = load_safetensors(&path)?;
                let mut net = DynamicsNetwork::new(DynamicsConfig::from_file(&dir.join("config.json"))?)?;
                load_weights(&mut net, weights)?;
                net.to_device(device)?;
                net.train(mode == "train");
                let input = |k: &str| -> Result<Tensor> {
                    grads
                        .get(&format!("input.{k}"))
                        .ok_or_else(|| nn::Error::invalid("grad.safetensors", format!("missing tensor input.{k}")))?
                        .to_device(device)?
                        .requires_grad_(true)
                };
                let inputs = [input("state_action_encoding")?, input("h0")?, input("c0")?];
                projected_loss(&net, &inputs, &grads, device)?.backward()?;
                let mut pairs: Vec<(String, Tensor)> = net
                    .named_parameters()
                    .into_iter()
                    .map(|(k, p)| (k, p.grad()))
                    .chain(
                        ["state_action_encoding", "h0", "c0"]
                            .into_iter()
                            .zip(&inputs)
                            .map(|(k, t)| (format!("input.{k}"), t.grad())),
                    )
                    .map(|(k, g)| {
                        g.map(|g| (k.clone(), g))
                            .ok_or_else(|| nn::Error::invalid("backward", format!("{k} got no gradient")))
                    })
                    .collect::<Result<_>>()?;
                let mut worst = Check::worst_of(&name);
                let (mut by_exact, mut by_spread) = (Vec::new(), Vec::new());
                for (key, grad) in pairs.drain(..) {
                    let want = grads
                        .get(&format!("{mode}.f32.grad.{key}"))
                        .ok_or_else(|| nn::Error::invalid("grad.safetensors", format!("no gradient for {key}")))?;
                    let exact = grads.get(&format!("{mode}.f64.grad.{key}")).map(|value| Exact {
                        value,
                        spread: grads.get(&format!("{mode}.f32_spread.grad.{key}")),
                    });
                    let (check, judged) = tensor_check_or_exact(&key, &grad.cpu()?, want, exact);
                    match judged {
                        _ if !check.passed => {}
                        JudgedBy::SameDtype => {}
                        JudgedBy::Exact => by_exact.push(key.clone()),
                        JudgedBy::Spread => by_spread.push(key.clone()),
                    }
                    worst.fold(&key, check);
                }
                if worst.passed {
                    let mut notes = Vec::new();
                    if !by_exact.is_empty() {
                        notes.push(format!(
                            "{} within tolerance of PyTorch's float64 gradient, not of its float32 one: {}",
                            by_exact.len(),
                            by_exact.join(", ")
                        ));
                    }
                    if !by_spread.is_empty() {
                        notes.push(format!(
                            "{} within {SPREAD_MARGIN}× the spread of PyTorch's own float32 gradient over batch \
                             orders around its float64 one, not within tolerance: {}",
                            by_spread.len(),
                            by_spread.join(", ")
                        ));
                    }
                    worst.detail = notes.join("; ");
                }
                Ok(worst)
            })
        })
        .collect()
}
