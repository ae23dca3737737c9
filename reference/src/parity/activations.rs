//! Activation parity against PyTorch: a safetensors file laid out as `activation/parity.safetensors` (entries
//! `{name}.{dtype}.{field}`, fields `x`, `y`, `dy`, `dx`, and for PReLU `weight`, `dweight`) is run case by
//! case, forward and backward, on any device.
//!
//! Tolerances, `|got - want| <= tol · max(|want|, 1)` (see [`tolerance`]): `1e-6` for `f32` and `f64`; two
//! units in the last place for `f16` (`2^-9`) and `bf16` (`2^-6`), whose results PyTorch and this crate both
//! compute in `f32` and round once.
//!
//! ```
//! use reference::parity::activations::run_case;
//! use nn::{Device, StateDict, Tensor};
//! let mut file = StateDict::new();
//! let x = Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap();
//! file.insert("relu.f32.x".into(), x.clone());
//! file.insert("relu.f32.y".into(), Tensor::from_vec(vec![0.0f32, 2.0], [2]).unwrap());
//! let line = run_case(&file, "relu", "f32", Device::Cpu);
//! assert!(line.to_string().starts_with("PASS"));
//! ```

use std::fmt;

use nn::functional::{self, Activation};
use nn::{DType, Device, Error, Result, StateDict, Tensor};

/// The largest error allowed for a result of `dtype`, relative to `max(|expected|, 1)`.
pub fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2.0 * 2f64.powi(-10),
        DType::BF16 => 2.0 * 2f64.powi(-7),
        _ => 1e-6,
    }
}

/// What a fixture name computes, with PyTorch's default arguments (`threshold` is `Threshold(0.1, 20.0)`;
/// `prelu*` reads its weight from the file; `softmax` and `log_softmax` run over the last dimension).
#[derive(Clone, Debug)]
pub enum Case {
    /// An element-wise activation.
    Elementwise(Activation),
    /// PReLU with the file's weight: one weight, or one per channel of dimension 1.
    Prelu(Tensor),
    /// Softmax (`log = false`) or LogSoftmax over the last dimension.
    Softmax {
        /// LogSoftmax rather than Softmax.
        log: bool,
    },
}

impl Case {
    /// The case a fixture name stands for, or `None` for an unknown name.
    pub fn from_name(name: &str, file: &StateDict, dtype: &str) -> Option<Case> {
        let act = match name {
            "relu" => Activation::Relu,
            "relu6" => Activation::Relu6,
            "leaky_relu" => Activation::LeakyRelu { negative_slope: 0.01 },
            "threshold" => Activation::Threshold {
                threshold: 0.1,
                value: 20.0,
            },
            "hardtanh" => Activation::Hardtanh {
                min_val: -1.0,
                max_val: 1.0,
            },
            "elu" => Activation::Elu { alpha: 1.0 },
            "selu" => Activation::Selu,
            "celu" => Activation::Celu { alpha: 1.0 },
            "gelu" => Activation::Gelu,
            "gelu_tanh" => Activation::GeluTanh,
            "silu" => Activation::Silu,
            "mish" => Activation::Mish,
            "softplus" => Activation::Softplus {
                beta: 1.0,
                threshold: 20.0,
            },
            "softsign" => Activation::Softsign,
            "sigmoid" => Activation::Sigmoid,
            "tanh" => Activation::Tanh,
            "hardsigmoid" => Activation::Hardsigmoid,
            "hardswish" => Activation::Hardswish,
            "tanhshrink" => Activation::Tanhshrink,
            "hardshrink" => Activation::Hardshrink { lambd: 0.5 },
            "softshrink" => Activation::Softshrink { lambd: 0.5 },
            "logsigmoid" => Activation::LogSigmoid,
            "softmax" => return Some(Case::Softmax { log: false }),
            "log_softmax" => return Some(Case::Softmax { log: true }),
            _ if name == "prelu" || name.starts_with("prelu_") => {
                return Some(Case::Prelu(file.get(&format!("{name}.{dtype}.weight"))?.clone()));
            }
            _ => return None,
        };
        Some(Case::Elementwise(act))
    }

    /// The forward of `x`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Case::Elementwise(act) => act.forward(x),
            Case::Prelu(w) => nn::functional::prelu(x, &w.to_device(x.device())?),
            Case::Softmax { log: false } => x.softmax(-1),
            Case::Softmax { log: true } => x.log_softmax(-1),
        }
    }

    /// `dx` (and PReLU's `dweight`) for the input `x`, its output `y` and the output gradient `dy`.
    pub fn backward(&self, x: &Tensor, y: &Tensor, dy: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
        match self {
            Case::Elementwise(act) => Ok((act.backward(x, dy)?, None)),
            Case::Prelu(w) => {
                let (dx, dw) = functional::prelu_backward(x, &w.to_device(x.device())?, dy)?;
                Ok((dx, Some(dw)))
            }
            Case::Softmax { log: false } => Ok((functional::softmax_backward(y, dy, -1)?, None)),
            Case::Softmax { log: true } => Ok((functional::log_softmax_backward(y, dy, -1)?, None)),
        }
    }
}

/// The `(name, dtype)` cases of a file: one per `{name}.{dtype}.x`, sorted.
pub fn cases(file: &StateDict) -> Vec<(String, String)> {
    let mut cases: Vec<(String, String)> = file
        .keys()
        .filter_map(|k| {
            let mut parts = k.split('.');
            let (name, dtype, field) = (parts.next()?, parts.next()?, parts.next()?);
            (field == "x" && parts.next().is_none()).then(|| (name.to_owned(), dtype.to_owned()))
        })
        .collect();
    cases.sort();
    cases
}

/// How a case ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every field within tolerance.
    Pass,
    /// A field beyond tolerance, or an error.
    Fail,
    /// The device does not support the dtype (or its functions failed their probe there): the reason.
    Refused(String),
}

/// One case's outcome: its name, the largest absolute error over its fields, and per-field details.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// `{name}.{dtype}`.
    pub name: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The largest absolute error over the fields compared.
    pub max_abs_err: f64,
    /// Per field: its max abs error and max relative error, or the error that stopped the case.
    pub detail: String,
}

impl fmt::Display for CaseReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::Refused(reason) => write!(f, "REFUSED  {}  {reason}", self.name),
            v => write!(
                f,
                "{}  {}  max abs err {:.3e}  {}",
                if *v == Verdict::Pass { "PASS" } else { "FAIL" },
                self.name,
                self.max_abs_err,
                self.detail
            ),
        }
    }
}

/// `(max abs error, max error relative to max(|want|, 1))`; NaN against NaN is equal.
fn errors(got: &Tensor, want: &Tensor) -> Result<(f64, f64)> {
    Error::check_shapes("parity", got.shape(), want.shape(), "the fixture's shape")?;
    if got.dtype() != want.dtype() {
        return Err(Error::DTypeMismatch {
            op: "parity",
            expected: want.dtype(),
            got: got.dtype(),
        });
    }
    let (g, w) = (got.cpu()?.to_vec_f64()?, want.to_vec_f64()?);
    let mut abs = 0.0f64;
    let mut rel = 0.0f64;
    for (a, b) in g.iter().zip(&w) {
        let d = match (a.is_nan(), b.is_nan()) {
            (true, true) => 0.0,
            (false, false) if a == b => 0.0,
            (false, false) => (a - b).abs(),
            _ => f64::INFINITY,
        };
        abs = abs.max(d);
        rel = rel.max(d / b.abs().max(1.0));
    }
    Ok((abs, rel))
}

/// Runs case `name` in `dtype` of `file` on `device`: forward `y` from `x`, and when the file has `dy`, the
/// backward `dx` (and `dweight`), each against the file.
pub fn run_case(file: &StateDict, name: &str, dtype: &str, device: Device) -> CaseReport {
    let label = format!("{name}.{dtype}");
    let outcome = (|| -> Result<(Verdict, f64, String)> {
        let get = |field: &str| file.get(&format!("{name}.{dtype}.{field}"));
        let case = Case::from_name(name, file, dtype)
            .ok_or_else(|| Error::invalid("parity", format!("no activation is named {name:?}")))?;
        let x = get("x").ok_or_else(|| Error::invalid("parity", format!("{label}.x is missing")))?;
        let tol = tolerance(x.dtype());
        let x_dev = x.to_device(device)?;
        let y_dev = case.forward(&x_dev)?;
        let mut fields = vec![];
        if let Some(y) = get("y") {
            fields.push(("y", errors(&y_dev, y)?));
        }
        if let Some(dy) = get("dy") {
            // Softmax's backward reads the forward's output: PyTorch's own, where the file has it, so the
            // backward is judged alone.
            let y_saved = match get("y") {
                Some(y) => y.to_device(device)?,
                None => y_dev.clone(),
            };
            let (dx, dw) = case.backward(&x_dev, &y_saved, &dy.to_device(device)?)?;
            if let Some(want) = get("dx") {
                fields.push(("dx", errors(&dx, want)?));
            }
            if let (Some(dw), Some(want)) = (dw, get("dweight")) {
                fields.push(("dweight", errors(&dw, want)?));
            }
        }
        if fields.is_empty() {
            return Err(Error::invalid(
                "parity",
                format!("{label} has no y, dx or dweight to compare"),
            ));
        }
        let pass = fields.iter().all(|(_, (_, rel))| *rel <= tol);
        let max_abs = fields.iter().map(|(_, (abs, _))| *abs).fold(0.0, f64::max);
        let detail = fields
            .iter()
            .map(|(f, (abs, rel))| format!("{f}: abs {abs:.2e} rel {rel:.2e}"))
            .collect::<Vec<_>>()
            .join(", ");
        Ok((
            if pass { Verdict::Pass } else { Verdict::Fail },
            max_abs,
            format!("{detail} (tol {tol:.1e})"),
        ))
    })();
    match outcome {
        Ok((verdict, max_abs_err, detail)) => CaseReport {
            name: label,
            verdict,
            max_abs_err,
            detail,
        },
        Err(e @ Error::UnsupportedOnDevice { .. }) => CaseReport {
            name: label,
            verdict: Verdict::Refused(e.to_string()),
            max_abs_err: 0.0,
            detail: String::new(),
        },
        Err(e) => CaseReport {
            name: label,
            verdict: Verdict::Fail,
            max_abs_err: f64::INFINITY,
            detail: e.to_string(),
        },
    }
}

/// Every case of `file` on `device`, in [`cases`] order.
pub fn run_file(file: &StateDict, device: Device) -> Vec<CaseReport> {
    cases(file)
        .iter()
        .map(|(name, dtype)| run_case(file, name, dtype, device))
        .collect()
}
