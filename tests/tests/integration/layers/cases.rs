//! Layers against PyTorch 2.5.1, as data (`fixtures/layers/cases.{json,safetensors}`, from
//! `fixtures/generate/layer_cases.py`, which lists what the cases cover): each case names the layer and
//! PyTorch's constructor arguments; the runner builds it from them, loads PyTorch's state dict (strict), checks
//! the keys and the repr, runs forward (with the case's forward arguments) and backward along the case's
//! projection, and compares the output and the gradients of the input and of every parameter within
//! `torch.testing.assert_close`'s defaults (float32: or within twice PyTorch's own distance from the float64
//! result); a case PyTorch refuses is refused with its message, where PyTorch raises it. On the CPU and on a
//! device (wgpu, or `NN_TEST_DEVICE`), float64 cases where the device has float64.
//!
//! A new case, or a new layer of a family here, is a line of the generator; a new family is a draw function
//! there and an arm of [`build`].

use std::fmt::Display;

use integration_tests::{lacks_dtype, on_cpu_and_gpu, under};
use nn::functional::{
    AvgPool1dOptions, Conv1dOptions, Conv2dOptions, ConvTranspose1dOptions, ConvTranspose2dOptions, MaxPool1dOptions,
    Padding1d, Padding2d,
};
use nn::prelude::*;
use nn::{Device, Result, StateDict};
use serde_json::Value;

/// The cases of the fixture.
const CASES: usize = 339;

/// A case's constructor arguments, read by PyTorch's names with PyTorch's defaults.
struct Args<'a>(&'a Value);

impl Args<'_> {
    fn usize(&self, key: &str, default: usize) -> usize {
        self.0
            .get(key)
            .map_or(default, |v| v.as_u64().unwrap_or_else(|| panic!("{key}: {v}")) as usize)
    }

    fn f64(&self, key: &str) -> f64 {
        self.0[key].as_f64().unwrap_or_else(|| panic!("{key}: {}", self.0[key]))
    }

    fn bool(&self, key: &str, default: bool) -> bool {
        self.0.get(key).map_or(default, |v| v.as_bool().unwrap())
    }

    /// A size per spatial dimension: PyTorch's int (the same for each) or tuple.
    fn sizes<const N: usize>(&self, key: &str, default: usize) -> [usize; N] {
        match self.0.get(key) {
            None => [default; N],
            Some(Value::Array(values)) => {
                let values: Vec<usize> = values.iter().map(|v| v.as_u64().unwrap() as usize).collect();
                values
                    .try_into()
                    .unwrap_or_else(|v| panic!("{key}: {v:?} has not {N} values"))
            }
            Some(v) => [v.as_u64().unwrap_or_else(|| panic!("{key}: {v}")) as usize; N],
        }
    }

    /// `padding`: sizes, `'same'` or `'valid'`.
    fn padding<const N: usize>(&self) -> Result<[usize; N], &str> {
        match self.0.get("padding").and_then(Value::as_str) {
            Some(mode) => Err(mode),
            None => Ok(self.sizes("padding", 0)),
        }
    }

    fn padding1d(&self) -> Padding1d {
        match self.padding::<1>() {
            Ok([p]) => Padding1d::Explicit(p),
            Err("same") => Padding1d::Same,
            Err("valid") => Padding1d::Valid,
            Err(other) => panic!("padding {other}"),
        }
    }

    fn padding2d(&self) -> Padding2d {
        match self.padding::<2>() {
            Ok([h, w]) => Padding2d::Explicit(h, w),
            Err("same") => Padding2d::Same,
            Err("valid") => Padding2d::Valid,
            Err(other) => panic!("padding {other}"),
        }
    }

    /// A padding layer's `padding`: an int (every side) or a tuple of `N`.
    fn pad_sizes<const N: usize>(&self) -> [i64; N] {
        match &self.0["padding"] {
            Value::Array(values) => {
                let values: Vec<i64> = values.iter().map(|v| v.as_i64().unwrap()).collect();
                values
                    .try_into()
                    .unwrap_or_else(|v| panic!("padding {v:?} has not {N} values"))
            }
            v => [v.as_i64().unwrap_or_else(|| panic!("padding {v}")); N],
        }
    }

    fn channels(&self) -> (usize, usize) {
        (self.usize("in_channels", 0), self.usize("out_channels", 0))
    }
}

/// What a case checks of a layer `M`, with its forward pass `forward` (the case's forward arguments applied).
struct Case<'a> {
    what: String,
    spec: &'a Value,
    tensors: StateDict,
    device: Device,
}

impl Case<'_> {
    fn get(&self, key: &str) -> Tensor {
        self.tensors
            .get(key)
            .unwrap_or_else(|| panic!("{}: no tensor {key}", self.what))
            .clone()
    }

    /// Checks the layer `built` against the case; returns whether it ran (false where the device lacks the
    /// case's dtype).
    fn check<M>(&self, built: Result<M>, forward: impl Fn(&M, &Tensor) -> Result<Tensor>) -> bool
    where
        M: Module + Display,
    {
        let what = &self.what;
        let dtype = super::case_dtype(self.spec);
        if lacks_dtype(self.device, dtype) {
            return false;
        }
        let refusal = self.spec["error"].as_str();
        let refused = |err: nn::Error, at: &str| super::refused_as_pytorch(what, self.spec, err, at);
        let mut m = match built {
            Ok(m) => m,
            Err(err) => return refused(err, "new"),
        };
        m.to_dtype(dtype).unwrap();
        let sd = under(&self.tensors, "param.");
        m.load_state_dict(&sd, true, false)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let keys: Vec<String> = m.state_dict().keys().cloned().collect();
        let want: Vec<String> = serde_json::from_value(self.spec["keys"].clone()).unwrap();
        assert_eq!(keys, want, "{what}: state dict keys");
        assert_eq!(m.to_string(), self.spec["repr"].as_str().unwrap(), "{what}: repr");
        m.to_device(self.device).unwrap();
        let x = self
            .get("input")
            .to_device(self.device)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let y = match forward(&m, &x) {
            Ok(y) => y,
            Err(e @ nn::Error::UnsupportedOnDevice { .. }) if !self.device.is_cpu() && dtype == nn::DType::F64 => {
                // float64 `pow` / `exp` on wgpu (README): a typed refusal, not a result to check.
                eprintln!("{what}: {e}");
                return false;
            }
            Err(err) => return refused(err, "forward"),
        };
        assert!(
            refusal.is_none(),
            "{what}: accepted; PyTorch refuses: {}",
            refusal.unwrap()
        );
        let compare = |name: &str, got: &Tensor, key: &str| super::compare_to_case(what, &self.tensors, name, got, key);
        compare("output", &y, "output");
        match y.backward_with(&self.get("proj").to_device(self.device).unwrap()) {
            Ok(()) => {}
            Err(e @ nn::Error::UnsupportedOnDevice { .. }) if !self.device.is_cpu() => {
                // A device function its parity probe refused (lavapipe's `pow` backward): typed, not checked.
                eprintln!("{what}: backward: {e}");
                return true;
            }
            Err(e) => panic!("{what}: backward: {e}"),
        }
        let params = m.named_parameters();
        for name in self.spec["grads"].as_array().unwrap() {
            let name = name.as_str().unwrap();
            let grad = if name == "input" {
                x.grad()
            } else {
                let (_, p) = params.iter().find(|(n, _)| n == name).unwrap();
                p.grad()
            };
            let grad = grad.unwrap_or_else(|| panic!("{what}: no gradient of {name}"));
            compare(&format!("gradient of {name}"), &grad, &format!("grad.{name}"));
        }
        true
    }
}

/// The forward pass of a layer of one input.
fn plain<M: Forward<Input = Tensor, Output = Tensor>>(m: &M, x: &Tensor) -> Result<Tensor> {
    m.forward_ref(x)
}

/// Builds case `i`'s layer by its name and runs the case.
fn build(case: &Case) -> bool {
    let a = Args(&case.spec["args"]);
    let output_size: Option<Vec<usize>> = case.spec["forward"]
        .get("output_size")
        .map(|s| serde_json::from_value(s.clone()).unwrap());
    let (cin, cout) = a.channels();
    let bias = a.bool("bias", true);
    // A norm layer of PyTorch's `_NormBase` arguments; `affine` and `track_running_stats` default to `$on`.
    macro_rules! norm_layer {
        ($layer:ident, $on:expr) => {
            case.check(
                Ok($layer::with_options(
                    a.usize("num_features", 0),
                    a.f64("eps"),
                    a.0["momentum"].as_f64(),
                    a.bool("affine", $on),
                    a.bool("track_running_stats", $on),
                )),
                plain,
            )
        };
    }
    match case.spec["layer"].as_str().unwrap() {
        "Conv1d" => {
            let opts = Conv1dOptions {
                stride: a.usize("stride", 1),
                padding: a.padding1d(),
                dilation: a.usize("dilation", 1),
                groups: a.usize("groups", 1),
            };
            let [k] = a.sizes("kernel_size", 0);
            case.check(Conv1d::new(cin, cout, k, opts, bias), |m, x| m.forward_ref(x))
        }
        "Conv2d" => {
            let opts = Conv2dOptions {
                stride: a.sizes("stride", 1),
                padding: a.padding2d(),
                dilation: a.sizes("dilation", 1),
                groups: a.usize("groups", 1),
            };
            let k = a.sizes("kernel_size", 0);
            case.check(Conv2d::new(cin, cout, k, opts, bias), |m, x| m.forward_ref(x))
        }
        "ConvTranspose1d" => {
            let opts = ConvTranspose1dOptions {
                stride: a.usize("stride", 1),
                padding: a.usize("padding", 0),
                output_padding: a.usize("output_padding", 0),
                groups: a.usize("groups", 1),
                dilation: a.usize("dilation", 1),
            };
            let [k] = a.sizes("kernel_size", 0);
            case.check(
                ConvTranspose1d::new(cin, cout, k, opts, bias),
                |m, x| match &output_size {
                    Some(size) => m.forward_with_output_size(x, size),
                    None => m.forward_ref(x),
                },
            )
        }
        "ConvTranspose2d" => {
            let opts = ConvTranspose2dOptions {
                stride: a.sizes("stride", 1),
                padding: a.sizes("padding", 0),
                output_padding: a.sizes("output_padding", 0),
                groups: a.usize("groups", 1),
                dilation: a.sizes("dilation", 1),
            };
            let k = a.sizes("kernel_size", 0);
            case.check(
                ConvTranspose2d::new(cin, cout, k, opts, bias),
                |m, x| match &output_size {
                    Some(size) => m.forward_with_output_size(x, size),
                    None => m.forward_ref(x),
                },
            )
        }
        "ZeroPad1d" => case.check(Ok(ZeroPad1d::new(a.pad_sizes())), plain),
        "ZeroPad2d" => case.check(Ok(ZeroPad2d::new(a.pad_sizes())), plain),
        "ZeroPad3d" => case.check(Ok(ZeroPad3d::new(a.pad_sizes())), plain),
        "ConstantPad1d" => case.check(Ok(ConstantPad1d::new(a.pad_sizes(), a.f64("value"))), plain),
        "ConstantPad2d" => case.check(Ok(ConstantPad2d::new(a.pad_sizes(), a.f64("value"))), plain),
        "ConstantPad3d" => case.check(Ok(ConstantPad3d::new(a.pad_sizes(), a.f64("value"))), plain),
        "ReflectionPad1d" => case.check(Ok(ReflectionPad1d::new(a.pad_sizes())), plain),
        "ReflectionPad2d" => case.check(Ok(ReflectionPad2d::new(a.pad_sizes())), plain),
        "ReflectionPad3d" => case.check(Ok(ReflectionPad3d::new(a.pad_sizes())), plain),
        "ReplicationPad1d" => case.check(Ok(ReplicationPad1d::new(a.pad_sizes())), plain),
        "ReplicationPad2d" => case.check(Ok(ReplicationPad2d::new(a.pad_sizes())), plain),
        "ReplicationPad3d" => case.check(Ok(ReplicationPad3d::new(a.pad_sizes())), plain),
        "CircularPad1d" => case.check(Ok(CircularPad1d::new(a.pad_sizes())), plain),
        "CircularPad2d" => case.check(Ok(CircularPad2d::new(a.pad_sizes())), plain),
        "CircularPad3d" => case.check(Ok(CircularPad3d::new(a.pad_sizes())), plain),
        "InstanceNorm1d" => norm_layer!(InstanceNorm1d, false),
        "InstanceNorm2d" => norm_layer!(InstanceNorm2d, false),
        "InstanceNorm3d" => norm_layer!(InstanceNorm3d, false),
        "BatchNorm3d" => norm_layer!(BatchNorm3d, true),
        "RMSNorm" => {
            let shape: Vec<usize> = serde_json::from_value(a.0["normalized_shape"].clone()).unwrap();
            case.check(
                Ok(RMSNorm::with_options(
                    shape,
                    a.0["eps"].as_f64(),
                    a.bool("elementwise_affine", true),
                )),
                plain,
            )
        }
        "LocalResponseNorm" => case.check(
            Ok(LocalResponseNorm::with_options(
                a.usize("size", 0),
                a.f64("alpha"),
                a.f64("beta"),
                a.f64("k"),
            )),
            plain,
        ),
        "MaxPool1d" => {
            let options = MaxPool1dOptions {
                stride: a.0["stride"].as_u64().map(|s| s as usize),
                padding: a.usize("padding", 0),
                dilation: Some(a.usize("dilation", 1)),
                ceil_mode: a.bool("ceil_mode", false),
            };
            case.check(Ok(MaxPool1d::with_options(a.usize("kernel_size", 0), options)), plain)
        }
        "AvgPool1d" => {
            let options = AvgPool1dOptions {
                stride: a.0["stride"].as_u64().map(|s| s as usize),
                padding: a.usize("padding", 0),
                ceil_mode: a.bool("ceil_mode", false),
                count_include_pad: a.bool("count_include_pad", true),
            };
            case.check(Ok(AvgPool1d::with_options(a.usize("kernel_size", 0), options)), plain)
        }
        "AdaptiveAvgPool1d" => case.check(Ok(AdaptiveAvgPool1d::new(a.usize("output_size", 0))), plain),
        "PixelShuffle" => case.check(Ok(PixelShuffle::new(a.usize("upscale_factor", 1))), plain),
        "PixelUnshuffle" => case.check(Ok(PixelUnshuffle::new(a.usize("downscale_factor", 1))), plain),
        "ChannelShuffle" => case.check(Ok(ChannelShuffle::new(a.usize("groups", 1))), plain),
        "Unflatten" => {
            let sizes: Vec<isize> = a.0["unflattened_size"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap() as isize)
                .collect();
            let dim = a.0["dim"].as_i64().unwrap() as isize;
            case.check(Ok(Unflatten::new(dim, &sizes)), plain)
        }
        other => panic!("no layer {other} in the runner"),
    }
}

fn check(device: Device) {
    super::run_fixture("cases", CASES, 15, device, |i, spec, tensors| {
        let what = format!(
            "case {i} ({} {} {}) on {device}",
            spec["layer"], spec["args"], spec["dtype"]
        );
        build(&Case {
            what,
            spec,
            tensors,
            device,
        })
    });
}

on_cpu_and_gpu!(
    every_layer_case_matches_pytorch,
    every_layer_case_on_a_device_matches_pytorch,
    check
);
