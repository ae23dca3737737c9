//! Every element-wise activation as PyTorch's `F.<name>(x, …)`, as the method `x.<name>(…)` and in place as
//! `x.<name>_(…)`, against PyTorch 2.5.1's outputs (the layers' fixtures, made with the layers' default
//! arguments), in every dtype on the CPU; and PyTorch's refusals of `F.hardtanh` and `F.gelu`.

use integration_tests::tensors;
use nn::functional as F;
use nn::{DType, Result, Tensor};
use reference::parity::activations::tolerance;

type Function = fn(&Tensor) -> Result<Tensor>;
type InPlace = fn(&Tensor) -> Result<()>;

/// The fixture's name, the function with PyTorch's default arguments, and the in-place method.
fn functions() -> Vec<(&'static str, Function, InPlace)> {
    vec![
        ("relu", |x| F::relu(x), |x| x.relu_()),
        ("relu6", |x| F::relu6(x), |x| x.relu6_()),
        ("leaky_relu", |x| F::leaky_relu(x, 0.01), |x| x.leaky_relu_(0.01)),
        ("threshold", |x| F::threshold(x, 0.1, 20.0), |x| x.threshold_(0.1, 20.0)),
        ("hardtanh", |x| F::hardtanh(x, -1.0, 1.0), |x| x.hardtanh_(-1.0, 1.0)),
        ("elu", |x| F::elu(x, 1.0), |x| x.elu_(1.0)),
        ("selu", |x| F::selu(x), |x| x.selu_()),
        ("celu", |x| F::celu(x, 1.0), |x| x.celu_(1.0)),
        ("silu", |x| F::silu(x), |x| x.silu_()),
        ("mish", |x| F::mish(x), |x| x.mish_()),
        ("softplus", |x| F::softplus(x, 1.0, 20.0), |x| x.softplus_(1.0, 20.0)),
        ("softsign", |x| F::softsign(x), |x| x.softsign_()),
        ("sigmoid", |x| F::sigmoid(x), |x| x.sigmoid_()),
        ("tanh", |x| F::tanh(x), |x| x.tanh_()),
        ("hardsigmoid", |x| F::hardsigmoid(x), |x| x.hardsigmoid_()),
        ("hardswish", |x| F::hardswish(x), |x| x.hardswish_()),
        ("tanhshrink", |x| F::tanhshrink(x), |x| x.tanhshrink_()),
        ("hardshrink", |x| F::hardshrink(x, 0.5), |x| x.hardshrink_(0.5)),
        ("softshrink", |x| F::softshrink(x, 0.5), |x| x.softshrink_(0.5)),
        ("logsigmoid", |x| F::logsigmoid(x), |x| x.logsigmoid_()),
        ("gelu", |x| F::gelu(x, "none"), |x| x.gelu_("none")),
        ("gelu_tanh", |x| x.gelu("tanh"), |x| x.gelu_("tanh")),
    ]
}

fn assert_near(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let tol = tolerance(want.dtype());
    let (g, w) = (got.to_vec_f64().unwrap(), want.to_vec_f64().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let close = a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol * b.abs().max(1.0);
        assert!(close, "{what}[{i}]: {a}, PyTorch {b}");
    }
}

#[test]
fn every_activation_function_method_and_in_place_form_equals_pytorch() {
    let files = [
        tensors("activation/parity.safetensors"),
        tensors("activation/more.safetensors"),
    ];
    let functions = functions();
    for (name, function, in_place) in &functions {
        let file = files.iter().find(|f| f.contains_key(&format!("{name}.f32.x"))).unwrap();
        for dtype in ["f64", "f32", "f16", "bf16"] {
            let x = &file[&format!("{name}.{dtype}.x")];
            let want = &file[&format!("{name}.{dtype}.y")];
            assert_near(&format!("F.{name} {dtype}"), &function(x).unwrap(), want);
            let changed = x.deep_copy().unwrap();
            in_place(&changed).unwrap();
            assert_near(&format!("{name}_ {dtype}"), &changed, want);
        }
    }
    assert_eq!(functions.len(), 22, "every element-wise activation");
    // The method forms are the functions.
    let x = &files[1]["leaky_relu.f32.x"];
    assert_near(
        "x.leaky_relu",
        &x.leaky_relu(0.01).unwrap(),
        &files[1]["leaky_relu.f32.y"],
    );
    assert_near(
        "x.softplus",
        &x.softplus(1.0, 20.0).unwrap(),
        &F::softplus(x, 1.0, 20.0).unwrap(),
    );
}

/// `F.hardtanh(x, 1.0, -1.0)` and `F.gelu(x, approximate="exact")` raise in PyTorch; here they are errors with
/// PyTorch's sentence, and equal bounds clamp to that value as PyTorch's do.
#[test]
fn crossed_bounds_and_unknown_approximations_are_pytorchs_errors() {
    let x = Tensor::from_vec(vec![-2.0f32, 0.5, 2.0], [3]).unwrap();
    let err = F::hardtanh(&x, 1.0, -1.0).unwrap_err().to_string();
    assert!(err.contains("min_val cannot be greater than max_val"), "{err}");
    assert!(x.hardtanh_(1.0, -1.0).is_err());
    assert_eq!(
        x.to_vec::<f32>().unwrap(),
        vec![-2.0, 0.5, 2.0],
        "a refused call changes nothing"
    );
    assert_eq!(
        F::hardtanh(&x, 1.0, 1.0).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0; 3]
    );
    let err = F::gelu(&x, "exact").unwrap_err().to_string();
    assert!(
        err.contains("approximate argument must be either none or tanh"),
        "{err}"
    );
    assert_eq!(x.dtype(), DType::F32);
}
