//! `nn::utils::fusion` against PyTorch 2.5.1's `torch.nn.utils.fusion` (`fixtures/utils/fusion.safetensors`, made by
//! `fixtures/generate/fusion.py`): the fused weights and biases, the fused layer's output, and that output
//! against the two layers run one after the other, on the CPU and on the device; with PyTorch's own unit
//! tests' checks (test/test_nn.py, `TestFusionUtils.test_fuse_conv_bn_requires_grad` and
//! `test_fuse_linear_bn_requires_grad`; `TestFusionEval.test_fuse_module_eval_numerics`, which compares a
//! Conv2d → BatchNorm2d pair in eval with its fusion) and the refusals of `fuse_*_eval` (training layers,
//! no running statistics, mismatched features).

use integration_tests::{assert_close, lacks_dtype, on_cpu_and_gpu, tensors};
use nn::functional::{Conv2dOptions, Padding2d};
use nn::prelude::*;
use nn::utils::{BatchNorm, fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights};

const FILE: &str = "utils/fusion.safetensors";

fn field(file: &StateDict, case: &str, name: &str) -> Tensor {
    file[&format!("{case}.{name}")].clone()
}

fn optional(file: &StateDict, case: &str, name: &str) -> Option<Tensor> {
    file.get(&format!("{case}.{name}")).cloned()
}

/// A batch norm of the case's features with its statistics and affine parameters (affine when the fixture has
/// them), in eval, on `device`.
fn batch_norm<B: BatchNorm>(
    file: &StateDict,
    case: &str,
    make: impl Fn(usize) -> B,
    set: impl Fn(&mut B, [Option<Tensor>; 4]),
    device: Device,
) -> B {
    let mean = field(file, case, "bn_running_mean");
    let mut bn = make(mean.numel());
    set(
        &mut bn,
        [
            Some(mean),
            Some(field(file, case, "bn_running_var")),
            optional(file, case, "bn_weight"),
            optional(file, case, "bn_bias"),
        ],
    );
    bn.eval();
    bn.to_device(device).unwrap();
    bn
}

macro_rules! setter {
    ($t:ty, $eps:expr) => {
        |bn: &mut $t, [mean, var, weight, bias]: [Option<Tensor>; 4]| {
            bn.eps = $eps;
            bn.running_mean = mean;
            bn.running_var = var;
            bn.affine = weight.is_some();
            bn.weight = weight.map(Param::new);
            bn.bias = bias.map(Param::new);
        }
    };
}

/// The fixture's conv case `case` as nn layers in eval on `device`, fused, and checked three ways.
fn check_conv(file: &StateDict, case: &str, options: Conv2dOptions, eps: f64, device: Device) {
    let weight = field(file, case, "weight");
    if lacks_dtype(device, weight.dtype()) {
        return;
    }
    let bias = optional(file, case, "bias");
    let s = weight.shape().to_vec();
    let mut conv = Conv2d::new(s[1] * options.groups, s[0], [s[2], s[3]], options, bias.is_some()).unwrap();
    conv.weight.set_data(weight);
    if let (Some(p), Some(b)) = (&conv.bias, bias) {
        p.set_data(b);
    }
    conv.eval();
    conv.to_device(device).unwrap();
    let bn = batch_norm(file, case, BatchNorm2d::new, setter!(BatchNorm2d, eps), device);
    let fused = fuse_conv_bn_eval(&conv, &bn).unwrap();
    assert!(!fused.is_training(), "{case}: the fused layer keeps conv's mode");
    assert_eq!(
        fused.to_string(),
        conv.to_string().replace(", bias=False", ""),
        "{case}: repr"
    );
    assert_close(
        &format!("{case} fused weight"),
        &fused.weight.data(),
        &field(file, case, "fused_weight"),
    );
    let fused_bias = fused.bias.as_ref().expect("a fused layer has a bias").data();
    assert_close(
        &format!("{case} fused bias"),
        &fused_bias,
        &field(file, case, "fused_bias"),
    );
    let x = field(file, case, "x").to_device(device).unwrap();
    let y = fused.forward(x.clone()).unwrap();
    assert_close(&format!("{case} fused output"), &y, &field(file, case, "y_fused"));
    assert_close(
        &format!("{case} fused output vs conv then bn"),
        &y,
        &field(file, case, "y"),
    );
    let unfused = bn.forward(conv.forward(x).unwrap()).unwrap();
    assert_close(&format!("{case} nn's conv then bn"), &unfused, &field(file, case, "y"));
}

fn conv_cases(device: Device) {
    let file = tensors(FILE);
    let strided = Conv2dOptions {
        stride: [2, 2],
        padding: Padding2d::Explicit(1, 1),
        ..Conv2dOptions::default()
    };
    check_conv(&file, "conv", strided, 1e-3, device);
    let grouped = Conv2dOptions {
        padding: Padding2d::Explicit(1, 0),
        groups: 2,
        ..Conv2dOptions::default()
    };
    check_conv(&file, "conv_nobias_groups", grouped, 1e-5, device);
    check_conv(&file, "conv_f64", Conv2dOptions::default(), 1e-5, device);
}

on_cpu_and_gpu!(
    conv_bn_fusion_matches_pytorch_on_cpu,
    conv_bn_fusion_matches_pytorch_on_gpu,
    conv_cases
);

fn linear_cases(device: Device) {
    let file = tensors(FILE);
    for (case, eps) in [("linear", 1e-4), ("linear_nobias_bn1", 1e-5)] {
        let weight = field(&file, case, "weight");
        let bias = optional(&file, case, "bias");
        let mut linear = Linear::new(weight.shape()[1], weight.shape()[0], bias.is_some());
        linear.weight.set_data(weight);
        if let (Some(p), Some(b)) = (&linear.bias, bias) {
            p.set_data(b);
        }
        linear.eval();
        linear.to_device(device).unwrap();
        let bn = batch_norm(&file, case, BatchNorm1d::new, setter!(BatchNorm1d, eps), device);
        let fused = fuse_linear_bn_eval(&linear, &bn).unwrap();
        assert_close(
            &format!("{case} fused weight"),
            &fused.weight.data(),
            &field(&file, case, "fused_weight"),
        );
        // PyTorch keeps the one value a one-feature batch norm gives; nn repeats it to the outputs.
        let fused_bias = fused.bias.as_ref().expect("a fused layer has a bias").data();
        let want = field(&file, case, "fused_bias")
            .expand(&[fused.out_features as isize])
            .unwrap();
        assert_close(&format!("{case} fused bias"), &fused_bias, &want);
        let y = fused
            .forward(field(&file, case, "x").to_device(device).unwrap())
            .unwrap();
        assert_close(&format!("{case} fused output"), &y, &field(&file, case, "y_fused"));
        assert_close(
            &format!("{case} fused output vs linear then bn"),
            &y,
            &field(&file, case, "y"),
        );
    }
}

on_cpu_and_gpu!(
    linear_bn_fusion_matches_pytorch_on_cpu,
    linear_bn_fusion_matches_pytorch_on_gpu,
    linear_cases
);

/// The weight functions on their own: one batch-norm feature broadcast over a convolution's 4 channels, and a
/// transposed convolution's weight (scaled along its second dimension).
#[test]
fn fuse_conv_bn_weights_broadcasts_and_transposes_as_pytorch_does() {
    let file = tensors(FILE);
    for (case, transpose) in [("conv_bn1", false), ("conv_transpose_weights", true)] {
        let (w, b) = fuse_conv_bn_weights(
            &field(&file, case, "weight"),
            optional(&file, case, "bias").as_ref(),
            &field(&file, case, "bn_running_mean"),
            &field(&file, case, "bn_running_var"),
            1e-5,
            optional(&file, case, "bn_weight").as_ref(),
            optional(&file, case, "bn_bias").as_ref(),
            transpose,
        )
        .unwrap();
        assert_close(
            &format!("{case} weight"),
            &w.data(),
            &field(&file, case, "fused_weight"),
        );
        assert_close(&format!("{case} bias"), &b.data(), &field(&file, case, "fused_bias"));
    }
}

/// test_nn.py's `TestFusionUtils.test_fuse_conv_bn_requires_grad` and `test_fuse_linear_bn_requires_grad`: the
/// fused parameters require gradients exactly where the layer's weight and bias did.
#[test]
fn fused_parameters_require_grad_where_the_layers_did() {
    let conv = Conv2d::new(3, 3, [3, 3], Conv2dOptions::default(), true).unwrap();
    let bn = BatchNorm2d::new(3);
    let linear = Linear::new(3, 3, true);
    let bn1 = BatchNorm1d::new(3);
    for w_rg in [true, false] {
        for b_rg in [true, false] {
            let (stats, (bw, bb)) = (bn.running_stats().unwrap(), bn.affine_params());
            let (cw, cb) = (
                conv.weight.data().requires_grad_(w_rg).unwrap(),
                conv.bias.as_ref().unwrap().data(),
            );
            let cb = cb.requires_grad_(b_rg).unwrap();
            let (w, b) = fuse_conv_bn_weights(
                &cw,
                Some(&cb),
                stats.0,
                stats.1,
                bn.eps,
                bw.map(Param::data).as_ref(),
                bb.map(Param::data).as_ref(),
                false,
            )
            .unwrap();
            assert_eq!((w.requires_grad(), b.requires_grad()), (w_rg, b_rg), "conv");
            let (stats, (bw, bb)) = (bn1.running_stats().unwrap(), bn1.affine_params());
            let lw = linear.weight.data().requires_grad_(w_rg).unwrap();
            let lb = linear.bias.as_ref().unwrap().data().requires_grad_(b_rg).unwrap();
            let (w, b) = fuse_linear_bn_weights(
                &lw,
                Some(&lb),
                stats.0,
                stats.1,
                bn1.eps,
                &bw.unwrap().data(),
                &bb.unwrap().data(),
            )
            .unwrap();
            assert_eq!((w.requires_grad(), b.requires_grad()), (w_rg, b_rg), "linear");
        }
    }
    // A missing bias is zeros that require no gradient (PyTorch's `torch.zeros_like(bn_rm)`).
    let (stats, _) = (bn.running_stats().unwrap(), ());
    let (_, b) = fuse_conv_bn_weights(&conv.weight.data(), None, stats.0, stats.1, 1e-5, None, None, false).unwrap();
    assert!(!b.requires_grad());
}

/// The error's message of a fusion that must be refused (`why`).
fn refusal<T>(result: nn::Result<T>, why: &str) -> String {
    match result {
        Ok(_) => panic!("a fusion with {why} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn fusion_refuses_training_layers_missing_statistics_and_other_feature_counts() {
    let mut conv = Conv2d::new(2, 4, [1, 1], Conv2dOptions::default(), true).unwrap();
    let mut bn = BatchNorm2d::new(4);
    let e = refusal(fuse_conv_bn_eval(&conv, &bn), "both training");
    assert!(e.contains("Fusion only for eval"), "{e}");
    conv.eval();
    let e = refusal(fuse_conv_bn_eval(&conv, &bn), "bn training");
    assert!(e.contains("Fusion only for eval"), "{e}");
    bn.eval();
    assert!(fuse_conv_bn_eval(&conv, &bn).is_ok());
    let mut other = BatchNorm2d::new(3);
    other.eval();
    let e = refusal(fuse_conv_bn_eval(&conv, &other), "3 features for 4 channels");
    assert!(e.contains("(4)") && e.contains("(3)"), "{e}");
    let mut untracked = BatchNorm2d::with_options(4, 1e-5, Some(0.1), true, false);
    untracked.eval();
    let e = refusal(fuse_conv_bn_eval(&conv, &untracked), "no running statistics");
    assert!(e.contains("running statistics"), "{e}");
    let mut linear = Linear::new(2, 5, true);
    linear.eval();
    let mut bn1 = BatchNorm1d::new(4);
    bn1.eval();
    let e = refusal(fuse_linear_bn_eval(&linear, &bn1), "4 features for 5 outputs");
    assert!(e.contains("linear.out_features (5)"), "{e}");
}
