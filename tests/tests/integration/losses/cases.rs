//! The losses against PyTorch 2.5.1 (`fixtures/losses/cases.safetensors` and `losses/cases.json`, made by
//! `fixtures/generate/losses.py`): value and input gradient of every case (each loss, option set and reduction)
//! in f32 and f64 on the CPU and in f32 on wgpu, within `torch.testing.assert_close`'s tolerances; the f64
//! gradients also against central finite differences; the modules' repr and state dict; typed errors.

use integration_tests::losses::loss;
use integration_tests::{assert_close, assert_gradient, fixture, gpu_or_skip, tensors};
use nn::Error;
use nn::functional::{
    ClassLossOptions, KlReduction, Reduction, binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
    huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss,
};
use nn::prelude::*;
use serde_json::Value;

/// One case of `losses/cases.json`.
struct Case {
    name: String,
    spec: Value,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixture("losses/cases.json")).unwrap();
    let list: Vec<Value> = serde_json::from_str(&text).unwrap();
    list.into_iter()
        .map(|spec| Case {
            name: spec["name"].as_str().unwrap().to_owned(),
            spec,
        })
        .collect()
}

/// Runs every case in `dtype` on `device`: the loss and the input's gradient against PyTorch's.
fn check_all(dtype: &str, device: Device) -> usize {
    let file = tensors("losses/cases.safetensors");
    let mut checked = 0;
    for case in cases() {
        let key = |field: &str| format!("{}.{dtype}.{field}", case.name);
        let get = |field: &str| file.get(&key(field)).map(|t| t.to_device(device).unwrap());
        let input = get("input").unwrap().requires_grad_(true).unwrap();
        let what = format!("{} {dtype} on {device}", case.name);
        let out = loss(&case.spec, &input, &get).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(out.dtype(), input.dtype(), "{what}");
        assert_close(&format!("{what}: loss"), &out, &file[&key("output")]);
        out.backward_with(&get("proj").unwrap())
            .unwrap_or_else(|e| panic!("{what}: backward: {e}"));
        assert_close(
            &format!("{what}: grad"),
            &input.grad().unwrap(),
            &file[&key("grad_input")],
        );
        checked += 1;
    }
    checked
}

#[test]
fn every_loss_matches_pytorch_on_the_cpu_in_f32_and_f64() {
    assert_eq!(check_all("f32", Device::Cpu), 77);
    assert_eq!(check_all("f64", Device::Cpu), 77);
}

#[test]
fn every_loss_matches_pytorch_on_wgpu_in_f32() {
    let Some(device) = gpu_or_skip("losses") else { return };
    assert_eq!(check_all("f32", device), 77);
}

/// The f64 gradients against central differences of the loss (`gradcheck`'s step and tolerances), for every
/// element of every case's input, through `proj`.
#[test]
fn every_loss_gradient_matches_finite_differences_in_f64() {
    let file = tensors("losses/cases.safetensors");
    for case in cases() {
        let key = |field: &str| format!("{}.f64.{field}", case.name);
        let get = |field: &str| file.get(&key(field)).cloned();
        let x0 = file[&key("input")].to_vec_f64().unwrap();
        let shape = file[&key("input")].shape().clone();
        let proj = get("proj").unwrap();
        let scalar = |values: &[f64]| -> f64 {
            let _guard = nn::no_grad();
            let x = Tensor::from_vec(values.to_vec(), shape.clone()).unwrap();
            let out = loss(&case.spec, &x, &get).unwrap();
            out.mul(&proj).unwrap().sum_all().unwrap().item().unwrap()
        };
        let analytic = file[&key("grad_input")].to_vec_f64().unwrap();
        if scalar(&x0).is_nan() {
            // PyTorch's NaN mean over no target (every one ignored) has zero gradients: nothing to difference.
            assert!(analytic.iter().all(|g| *g == 0.0), "{}", case.name);
            continue;
        }
        for j in 0..x0.len() {
            // Away from the kinks (|d| = beta or delta, a probability at exactly 0 or 1) where the difference
            // quotient straddles two branches.
            let h = 1e-6;
            if case.spec["fn"] == "binary_cross_entropy" && !(h..=1.0 - h).contains(&x0[j]) {
                continue;
            }
            let (mut plus, mut minus) = (x0.clone(), x0.clone());
            plus[j] += h;
            minus[j] -= h;
            let numeric = (scalar(&plus) - scalar(&minus)) / (2.0 * h);
            if numeric.is_nan() {
                assert!(analytic[j].is_nan(), "{}[{j}]: NaN by differences only", case.name);
                continue;
            }
            assert_gradient(&format!("{}[{j}]", case.name), analytic[j], numeric);
        }
    }
}

#[test]
fn the_modules_print_and_save_as_pytorch() {
    let weight = Tensor::from_vec(vec![1.0f32, 2.0, 0.5], [3]).unwrap();
    let modules: Vec<(String, Vec<String>)> = vec![
        (MSELoss::new().to_string(), vec![]),
        (L1Loss::new().to_string(), vec![]),
        (SmoothL1Loss::with_options(Reduction::Sum, 0.5).to_string(), vec![]),
        (HuberLoss::new().to_string(), vec![]),
        (
            KLDivLoss::with_options(KlReduction::BatchMean, true).to_string(),
            vec![],
        ),
        (
            CrossEntropyLoss::with_options(ClassLossOptions {
                weight: Some(weight.clone()),
                ..Default::default()
            })
            .to_string(),
            CrossEntropyLoss::with_options(ClassLossOptions {
                weight: Some(weight.clone()),
                ..Default::default()
            })
            .state_dict()
            .keys()
            .cloned()
            .collect(),
        ),
        (
            NLLLoss::new().to_string(),
            NLLLoss::new().state_dict().keys().cloned().collect(),
        ),
        (BCELoss::new().to_string(), vec![]),
        (
            BCEWithLogitsLoss::with_options(Some(weight.clone()), Reduction::Mean, Some(weight.clone())).to_string(),
            BCEWithLogitsLoss::with_options(Some(weight.clone()), Reduction::Mean, Some(weight))
                .state_dict()
                .keys()
                .cloned()
                .collect(),
        ),
    ];
    let reprs: Vec<&str> = modules.iter().map(|(r, _)| r.as_str()).collect();
    // PyTorch 2.5.1's reprs: a loss module has no extra_repr.
    assert_eq!(
        reprs,
        [
            "MSELoss()",
            "L1Loss()",
            "SmoothL1Loss()",
            "HuberLoss()",
            "KLDivLoss()",
            "CrossEntropyLoss()",
            "NLLLoss()",
            "BCELoss()",
            "BCEWithLogitsLoss()"
        ]
    );
    // PyTorch registers weight and pos_weight as buffers, in that order, when given.
    assert_eq!(modules[5].1, ["weight"]);
    assert!(modules[6].1.is_empty());
    assert_eq!(modules[8].1, ["weight", "pos_weight"]);
}

#[test]
fn a_module_forward_equals_its_function() {
    let x = Tensor::from_vec(vec![0.5f32, -1.0, 2.0, 0.0, 1.5, -0.5], [2, 3]).unwrap();
    let t = Tensor::from_vec(vec![2i64, 0], [2]).unwrap();
    let options = ClassLossOptions {
        label_smoothing: 0.1,
        reduction: Reduction::Sum,
        ..Default::default()
    };
    let module = CrossEntropyLoss::with_options(options.clone());
    let a = module.forward((x.clone(), t.clone())).unwrap();
    let b = cross_entropy(&x, &t, &options).unwrap();
    assert_eq!(a.item().unwrap(), b.item().unwrap());
    let y = Tensor::from_vec(vec![0.0f32; 6], [2, 3]).unwrap();
    let h = HuberLoss::with_options(Reduction::Mean, 0.7)
        .forward((x.clone(), y.clone()))
        .unwrap();
    assert_eq!(
        h.item().unwrap(),
        huber_loss(&x, &y, Reduction::Mean, 0.7).unwrap().item().unwrap()
    );
}

#[test]
fn bad_targets_and_options_are_typed_errors() {
    let x = Tensor::zeros([2, 3], DType::F32);
    let out_of_range = Tensor::from_vec(vec![0i64, 3], [2]).unwrap();
    let err = cross_entropy(&x, &out_of_range, &ClassLossOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("target 3 is out of bounds") && err.to_string().contains("3 classes"),
        "{err}"
    );
    let negative = Tensor::from_vec(vec![-1i64, 0], [2]).unwrap();
    assert!(nll_loss(&x, &negative, &ClassLossOptions::default()).is_err());
    let wrong_shape = Tensor::from_vec(vec![0i64, 1, 2], [3]).unwrap();
    let err = cross_entropy(&x, &wrong_shape, &ClassLossOptions::default()).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    let float_wrong = Tensor::zeros([2, 4], DType::F32);
    assert!(matches!(
        mse_loss(&x, &float_wrong, Reduction::Mean).unwrap_err(),
        Error::ShapeMismatch { .. }
    ));
    let f64_target = Tensor::zeros([2, 3], DType::F64);
    assert!(matches!(
        l1_loss(&x, &f64_target, Reduction::Mean).unwrap_err(),
        Error::DTypeMismatch { .. }
    ));
    let y = Tensor::zeros([2, 3], DType::F32);
    assert!(smooth_l1_loss(&x, &y, Reduction::Mean, -1.0).is_err());
    assert!(huber_loss(&x, &y, Reduction::Mean, 0.0).is_err());
    let bad_weight = Tensor::ones([4], DType::F32);
    let opts = ClassLossOptions {
        weight: Some(bad_weight),
        ..Default::default()
    };
    assert!(matches!(
        cross_entropy(&x, &Tensor::from_vec(vec![0i64, 1], [2]).unwrap(), &opts).unwrap_err(),
        Error::ShapeMismatch { .. }
    ));
    let above_one = Tensor::from_vec(vec![0.5f32, 1.5], [2]).unwrap();
    let err = binary_cross_entropy(&above_one, &Tensor::zeros([2], DType::F32), None, Reduction::Mean).unwrap_err();
    assert!(err.to_string().contains("between 0 and 1"), "{err}");
    assert!(Reduction::parse("average").is_err());
    assert!(KlReduction::parse("batchmean").is_ok());
    // PyTorch 2.5.1 differentiates binary_cross_entropy's target (`losses/sweep.rs` checks its values) but none of
    // the losses' weights: "The function 'binary_cross_entropy' is not differentiable with respect to argument
    // 'weight'. This input cannot have requires_grad True." (and so for nll_loss_forward's class weights and
    // binary_cross_entropy_with_logits' weight and pos_weight). Without grad mode the weights are accepted.
    let weight_with_grad = Tensor::ones([2], DType::F32).requires_grad_(true).unwrap();
    let p = Tensor::from_vec(vec![0.5f32, 0.25], [2]).unwrap();
    let t = Tensor::zeros([2], DType::F32);
    let refusals = [
        binary_cross_entropy(&p, &t, Some(&weight_with_grad), Reduction::Mean),
        binary_cross_entropy_with_logits(&p, &t, Some(&weight_with_grad), None, Reduction::Mean),
        binary_cross_entropy_with_logits(&p, &t, None, Some(&weight_with_grad), Reduction::Mean),
        nll_loss(
            &Tensor::zeros([1, 2], DType::F32),
            &Tensor::from_vec(vec![1i64], [1]).unwrap(),
            &ClassLossOptions {
                weight: Some(weight_with_grad.clone()),
                ..Default::default()
            },
        ),
    ];
    for (refusal, argument) in refusals
        .into_iter()
        .zip(["'weight'", "'weight'", "'pos_weight'", "'weight'"])
    {
        let err = refusal.unwrap_err();
        assert!(matches!(err, Error::Autograd { .. }), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("not differentiable with respect to argument {argument}")),
            "{err}"
        );
    }
    {
        let _guard = nn::no_grad();
        assert!(binary_cross_entropy(&p, &t, Some(&weight_with_grad), Reduction::Mean).is_ok());
    }
    // Class probabilities with an ignore_index of a class: PyTorch's "ignore_index is not supported for floating
    // point target"; a negative one (the default -100, or -1) is accepted.
    let probabilities = Tensor::from_vec(vec![0.5f32, 0.5], [1, 2]).unwrap();
    let logits = Tensor::zeros([1, 2], DType::F32);
    for (ignore_index, accepted) in [(0, false), (1, false), (-1, true), (-100, true)] {
        let options = ClassLossOptions {
            ignore_index,
            ..Default::default()
        };
        let result = cross_entropy(&logits, &probabilities, &options);
        assert_eq!(result.is_ok(), accepted, "ignore_index {ignore_index}");
        if let Err(err) = result {
            assert!(
                err.to_string()
                    .contains("ignore_index is not supported for floating point target"),
                "{err}"
            );
        }
    }
}
