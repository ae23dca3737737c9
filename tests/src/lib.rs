//! Helpers shared by the integration tests: fixture paths and readers, tolerances, and the zoo model.

pub mod activations;
pub mod losses;
pub mod recurrent;
pub mod zoo;

/// The Rust code blocks of README.md and docs/, compiled and run as this crate's doctests.
#[cfg(doctest)]
mod doc_pages;

use std::path::PathBuf;

use nn::{DType, Tensor};

/// The fixture folders holding a model's exported weights (`weights.safetensors`, `weights.pt`,
/// `weights_legacy.pt`): the zoo and the five DynamicsNetwork configs.
pub const WEIGHT_FOLDERS: [&str; 6] = [
    "zoo",
    "dynamics_small",
    "dynamics_gelu_ln",
    "dynamics_ln_downsample",
    "dynamics_prelu_deep",
    "dynamics_wide",
];

/// The eight DynamicsNetwork exports (`config.json`, weights, inputs and outputs of each config), the folders
/// the parity checks of `reference::parity` run on.
pub const DYNAMICS_EXPORTS: [&str; 8] = [
    "dynamics_small",
    "dynamics_gelu_ln",
    "dynamics_prelu_deep",
    "dynamics_ln_downsample",
    "dynamics_wide",
    "dynamics_bn_downsample_1x1",
    "dynamics_lstm1_bn",
    "dynamics_bn_grad_batch4",
];

/// A path inside `tests/fixtures/`.
pub fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(relative)
}

/// The lines of a fixture text file.
pub fn lines(relative: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixture(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"));
    text.lines().map(str::to_owned).collect()
}

/// The tensors of a fixture safetensors file.
pub fn tensors(relative: &str) -> nn::StateDict {
    nn::io::load_safetensors(&fixture(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The entries of `sd` whose keys start with `prefix`, the prefix taken off: one part of a fixture file (a
/// case's parameters, a model's weights).
pub fn under(sd: &nn::StateDict, prefix: &str) -> nn::StateDict {
    sd.iter()
        .filter_map(|(k, t)| k.strip_prefix(prefix).map(|k| (k.to_owned(), t.clone())))
        .collect()
}

/// The largest `|a - b|`, after checking shapes; NaN on both sides counts as equal, NaN on one as infinite.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    max_error(a, b, |_| 1.0)
}

/// The largest `|a - b| / max(|b|, floor)`: relative error, absolute below `floor`.
pub fn max_rel_diff(a: &Tensor, b: &Tensor, floor: f64) -> f64 {
    max_error(a, b, |y| y.abs().max(floor))
}

/// The largest `|a - b| / scale(b)` over the elements, after checking shapes; NaN on both sides counts as
/// equal, NaN on one as infinite.
fn max_error(a: &Tensor, b: &Tensor, scale: impl Fn(f64) -> f64) -> f64 {
    assert_eq!(a.shape(), b.shape(), "shapes differ");
    let (a, b) = (a.to_vec_f64().unwrap(), b.to_vec_f64().unwrap());
    a.iter()
        .zip(&b)
        .map(|(x, y)| match (x.is_nan(), y.is_nan()) {
            (true, true) => 0.0,
            (false, false) if x == y => 0.0,
            (false, false) => (x - y).abs() / scale(*y),
            _ => f64::INFINITY,
        })
        .fold(0.0, f64::max)
}

/// `name<TAB>dtype<TAB>[shape]` of every state-dict entry, as the fixtures list them.
pub fn describe_state(sd: &nn::StateDict) -> Vec<String> {
    sd.iter()
        .map(|(k, t)| format!("{k}\t{}\t{}", t.dtype(), t.shape()))
        .collect()
}

/// The names of named items (`named_parameters()`, `named_buffers()`…), in order.
pub fn names<T>(items: Vec<(String, T)>) -> Vec<String> {
    items.into_iter().map(|(name, _)| name).collect()
}

/// Whether two tensors hold the same bits (dtype, shape and bytes).
pub fn bit_equal(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape() && a.to_bytes().unwrap() == b.to_bytes().unwrap()
}

/// Asserts that two state dicts hold the same keys in the same order, each tensor bit for bit (dtype, shape,
/// bytes); `what` names the case in the message.
pub fn assert_same_ordered(what: &str, got: &nn::StateDict, want: &nn::StateDict) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: keys"
    );
    for (key, tensor) in want {
        assert_eq!(got[key].dtype(), tensor.dtype(), "{what}: {key}");
        assert!(bit_equal(&got[key], tensor), "{what}: {key} differs");
    }
}

/// A short name for a dtype in fixture keys (`f32`).
pub fn short(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I64 => "i64",
        DType::I32 => "i32",
        DType::U8 => "u8",
        DType::Bool => "bool",
    }
}

/// The device the device tests run on: `NN_TEST_DEVICE` (`wgpu:0` when unset; `cuda:0` in a build with the
/// `cuda` feature on a machine with an NVIDIA GPU), when this machine has it. Without it the caller skips,
/// printing why — unless `CI=true`, where a missing device is a failure (CI installs Mesa's Vulkan driver).
///
/// The test calling it must have `gpu` or `device` in its path (checked here): the runs on other adapters select
/// the tests that depend on one by those words.
pub fn gpu_or_skip(test: &str) -> Option<nn::Device> {
    if let Some(path) = std::thread::current().name().filter(|path| path.contains("::")) {
        assert!(
            path.contains("gpu") || path.contains("device"),
            "{path} uses a device: its path must contain `gpu` or `device`, which select the device tests"
        );
    }
    let name = std::env::var("NN_TEST_DEVICE").unwrap_or_else(|_| "wgpu:0".into());
    let device = match nn::Device::parse(&name) {
        Some(device) if !device.is_cpu() => device,
        _ => panic!("{test}: NN_TEST_DEVICE={name:?} is not a device such as wgpu:0 or cuda:0"),
    };
    match Tensor::zeros([1], DType::F32).to_device(device) {
        Ok(_) => Some(device),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{test}: CI=true but no {device} on this machine: {e}")
        }
        Err(e) => {
            eprintln!("{test}: skipped, no {device} on this machine ({e})");
            None
        }
    }
}

/// Runs `body` in a process of its own: this test binary again, running only the calling test, for a test that
/// changes or measures what the whole process shares (the global generator's stream, global hooks, the thread
/// count, the count of live storages, the allocator's peak), which the other tests, running in parallel threads
/// of this process, would disturb. The child's failure is this test's, with its output.
pub fn in_own_process(body: impl FnOnce()) {
    const CHILD: &str = "NN_TEST_OWN_PROCESS";
    let name = std::thread::current()
        .name()
        .expect("in_own_process runs in a test's thread, which is named after the test")
        .to_owned();
    if std::env::var(CHILD).as_deref() == Ok(name.as_str()) {
        body();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD, &name)
        .output()
        .unwrap_or_else(|e| panic!("{name}: cannot run this test binary again: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{name}, in a process of its own, failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "{name}: the child process ran no test:\n{stdout}\n{stderr}"
    );
    print!("{stdout}");
    eprint!("{stderr}");
}

/// Two tests of `check(device)`: `$cpu` on the CPU, `$gpu` on the device [`gpu_or_skip`] chooses (skipped as it
/// says).
#[macro_export]
macro_rules! on_cpu_and_gpu {
    ($cpu:ident, $gpu:ident, $check:path) => {
        #[test]
        fn $cpu() {
            $check(nn::Device::Cpu);
        }

        #[test]
        fn $gpu() {
            if let Some(device) = $crate::gpu_or_skip(stringify!($gpu)) {
                $check(device);
            }
        }
    };
}

/// How many cases of a sweep ran in float64 and in the other dtypes.
#[derive(Debug, Default)]
pub struct CasesRun {
    float32: usize,
    float64: usize,
}

impl CasesRun {
    /// Counts a case that ran in `dtype`.
    pub fn ran(&mut self, dtype: DType) {
        match dtype {
            DType::F64 => self.float64 += 1,
            _ => self.float32 += 1,
        }
    }

    /// Asserts that `float32` cases ran on `device`, and `float64` ones too on the CPU (a device may lack it).
    pub fn assert_every_case(&self, device: nn::Device, float32: usize, float64: usize) {
        assert_eq!(self.float32, float32, "float32 cases on {device}");
        if device.is_cpu() {
            assert_eq!(self.float64, float64, "float64 cases on {device}");
        }
    }
}

/// Two tests of the sweep fixture `$fixture` of `$cases` cases ([`sweep`], each case checked by `$run`): `$cpu`
/// on the CPU, where every case must run, and `$gpu` on the device, where every case whose tensor
/// `{i}.$tensor` is float32 must.
#[macro_export]
macro_rules! sweep_on_cpu_and_gpu {
    ($cpu:ident, $gpu:ident, $fixture:literal, $cases:expr, $tensor:literal, $run:path) => {
        fn check(device: nn::Device) {
            let float32 = |f: &nn::StateDict, _: &serde_json::Value, i: usize| {
                f[&format!(concat!("{}.", $tensor), i)].dtype() == nn::DType::F32
            };
            $crate::sweep($fixture, $cases, device, float32, $run);
        }

        $crate::on_cpu_and_gpu!($cpu, $gpu, check);
    };
}

/// Whether `device`'s adapter reports that it lacks `dtype` (printing what it lacks): there an operation in that
/// dtype may be refused with `UnsupportedOnDevice`; a dtype the adapter reports must compute. (lavapipe has f16
/// and f64; Mesa's GL adapter, found when the Vulkan driver is hidden, has neither; no wgpu adapter has bf16.)
pub fn lacks_dtype(device: nn::Device, dtype: DType) -> bool {
    match device.check_dtype(dtype) {
        Ok(()) => false,
        Err(e) => {
            eprintln!("{device} lacks {dtype}: {e}");
            true
        }
    }
}

/// `torch.testing.assert_close`'s default (rtol, atol) for a dtype.
pub fn default_tolerance(dtype: DType) -> (f64, f64) {
    reference::parity::close_tolerance(dtype)
}

/// Asserts `|actual - expected| <= atol + rtol * |expected|` element by element, with
/// `torch.testing.assert_close`'s defaults for `expected`'s dtype; shapes must be equal, `actual` may be on any
/// device; NaN matches NaN and equal infinities match.
pub fn assert_close(what: &str, actual: &Tensor, expected: &Tensor) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shapes differ");
    let (rtol, atol) = default_tolerance(expected.dtype());
    let actual = actual.cpu().unwrap();
    let (a, e) = (actual.to_vec_f64().unwrap(), expected.to_vec_f64().unwrap());
    for (i, (x, y)) in a.iter().zip(&e).enumerate() {
        assert!(
            x == y || (x - y).abs() <= atol + rtol * y.abs() || (x.is_nan() && y.is_nan()),
            "{what}[{i}]: {x}, expected {y} (rtol {rtol}, atol {atol}; {} elements)",
            a.len()
        );
    }
}

/// Asserts a float32 (or half-precision) result `got` is close to the `exact` one (computed in float64, rounded
/// to `got`'s dtype): each element within `torch.testing.assert_close`'s defaults for that dtype of it, or
/// within twice (`reference::parity::SPREAD_MARGIN`) PyTorch's own result's largest distance from it, whichever
/// is larger. For reductions over thousands of terms, where two correct float32 summation orders differ by more
/// than the defaults, and for PyTorch's half-precision kernels that round intermediates to the dtype. NaN
/// matches NaN, and equal infinities match.
pub fn assert_close_to_exact(what: &str, got: &Tensor, pytorch: &Tensor, exact: &Tensor) {
    assert_eq!(got.shape(), exact.shape(), "{what}: shapes differ");
    let (rtol, atol) = default_tolerance(exact.dtype());
    let got = got.cpu().unwrap();
    let (got, pytorch, exact) = (
        got.to_vec_f64().unwrap(),
        pytorch.to_vec_f64().unwrap(),
        exact.to_vec_f64().unwrap(),
    );
    let pytorch_err = pytorch
        .iter()
        .zip(&exact)
        .map(|(p, e)| (p - e).abs())
        .fold(0.0, f64::max);
    for (j, (g, e)) in got.iter().zip(&exact).enumerate() {
        let bound = (atol + rtol * e.abs()).max(reference::parity::SPREAD_MARGIN * pytorch_err);
        assert!(
            (g - e).abs() <= bound || g == e || (g.is_nan() && e.is_nan()),
            "{what}[{j}]: {g}, exact {e} (bound {bound:e}; PyTorch's result is {pytorch_err:e} off at most)"
        );
    }
}

/// A new leaf holding `t`'s values that requires grad (`t.detach().requires_grad_()`).
pub fn leaf_of(t: &Tensor) -> Tensor {
    let mut t = t.detach();
    t.set_requires_grad(true).unwrap();
    t
}

/// Asserts that a gradient element computed by autograd matches its central difference, with
/// `torch.autograd.gradcheck`'s tolerances (atol 1e-5, rtol 1e-3).
pub fn assert_gradient(what: &str, analytic: f64, numeric: f64) {
    assert!(
        (numeric - analytic).abs() <= 1e-5 + 1e-3 * numeric.abs(),
        "{what}: {analytic} by autograd, {numeric} by finite differences"
    );
}

/// Checks element `j` of `param`'s gradient `analytic` against the central difference (step 1e-6) of `loss`
/// as that element moves (under `no_grad`); the element is put back.
pub fn check_param_element(what: &str, param: &nn::Param, j: usize, analytic: f64, loss: impl Fn() -> f64) {
    let base = param.data().to_vec_f64().unwrap();
    let at = |d: f64| {
        let _no_grad = nn::no_grad();
        let mut v = base.clone();
        v[j] += d;
        param
            .data()
            .copy_(&Tensor::from_vec(v, param.shape().clone()).unwrap())
            .unwrap();
        loss()
    };
    let numeric = (at(1e-6) - at(-1e-6)) / 2e-6;
    at(0.0);
    assert_gradient(&format!("{what}[{j}]"), analytic, numeric);
}

/// Deterministic values in `[-2, 2]` of `shape`, in `dtype`: `2·sin(0.37·(i + phase))` at flat index `i`.
pub fn sine_values(shape: &[usize], phase: f64, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let xs: Vec<f64> = (0..n).map(|i| 2.0 * ((i as f64 + phase) * 0.37).sin()).collect();
    Tensor::from_vec(xs, shape.to_vec()).unwrap().to_dtype(dtype).unwrap()
}

/// A second module built by `make`, loaded with `cpu`'s state and moved to `dev`.
pub fn twin<M: nn::Module>(cpu: &M, make: impl Fn() -> M, dev: nn::Device) -> M {
    use nn::ModuleExt;
    let mut m = make();
    m.load_state_dict(&cpu.state_dict(), true, false).unwrap();
    m.to_device(dev).unwrap();
    m
}

/// The backward of `(y · proj).sum()`, the loss the sweep generators differentiate: `y`'s gradient is `proj`
/// (moved to `y`'s device); `what` names the case in a failure.
pub fn backward_along(what: &str, y: &Tensor, proj: &Tensor) {
    y.backward_with(&proj.to_device(y.device()).unwrap())
        .unwrap_or_else(|e| panic!("{what}: backward: {e}"));
}

/// Runs the sweep fixture `{name}.safetensors` / `{name}.json` (a JSON list of `expected` cases) on `device`:
/// `run(tensors, spec, i, device)` checks case `i` and returns whether it ran (false where the device lacks
/// what it needs). Every case must run on the CPU, and on a device at least those `must_run(tensors, spec,
/// i)` names (the float32 ones, typically).
pub fn sweep(
    name: &str,
    expected: usize,
    device: nn::Device,
    must_run: impl Fn(&nn::StateDict, &serde_json::Value, usize) -> bool,
    run: impl Fn(&nn::StateDict, &serde_json::Value, usize, nn::Device) -> bool,
) {
    let f = tensors(&format!("{name}.safetensors"));
    let text = std::fs::read_to_string(fixture(&format!("{name}.json"))).unwrap();
    let specs: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(specs.len(), expected, "the cases of {name}");
    let required = specs
        .iter()
        .enumerate()
        .filter(|(i, spec)| device.is_cpu() || must_run(&f, spec, *i))
        .count();
    let ran = specs
        .iter()
        .enumerate()
        .filter(|(i, spec)| run(&f, spec, *i, device))
        .count();
    assert!(
        ran >= required,
        "{ran} cases of {name} ran on {device}, {required} must"
    );
}

/// Asserts that `got` (on any device) equals PyTorch's `want` bit for bit, dtype and shape too: any NaN equals
/// any NaN, `-0.0` differs from `0.0`. For results that are exact (integers, bools, exact float formulas).
pub fn identical(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (got.cpu().unwrap().to_vec_f64().unwrap(), want.to_vec_f64().unwrap());
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        assert!(
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            "{what}: element {i} is {x:e}, PyTorch's {y:e}"
        );
    }
}

/// The node PyTorch prints for `t`'s `grad_fn` (`MulBackward0`), read from its printout.
pub fn printed_grad_fn(t: &Tensor) -> String {
    let printed = t.to_string();
    let at = printed
        .rfind("grad_fn=<")
        .expect("a recorded tensor prints its grad_fn");
    printed[at + 9..printed.len() - 2].to_string()
}

/// The fixture tensor `key` of `f` on `device`, floats cast to `dtype` (integers and bools as they are).
pub fn fixture_on(f: &nn::StateDict, key: &str, dtype: DType, device: nn::Device) -> Tensor {
    let t = &f[key];
    let t = if t.is_floating_point() {
        t.to_dtype(dtype).unwrap()
    } else {
        t.clone()
    };
    t.to_device(device).unwrap()
}

/// The widest float dtype `device` stores: f64, or f32 where it has none (Mesa's GL adapter).
pub fn widest_float(device: nn::Device) -> DType {
    if lacks_dtype(device, DType::F64) {
        DType::F32
    } else {
        DType::F64
    }
}
