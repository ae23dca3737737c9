//! LightZero's EfficientZero DynamicsNetwork, built with the derive from each export's `config.json`, against
//! PyTorch: the same checks as `cargo run --release --example efficientzero -- DIR`.
//!
//! `dynamics_small` is the shared fixture; the others were made by `fixtures/generate/dynamics.py` with
//! LightZero 0.2.0: LayerNorm with GELU and two residual blocks, PReLU with three blocks and a 4-layer head,
//! LayerNorm with `downsample`, and a wide one (64 channels, three blocks, one PReLU shared by all, 601 support
//! bins, eval outputs up to 8.5), and one with batch norm on a 1×1 map after downsampling, found by
//! `fixtures/generate/dynamics_sweep.py`. Outputs and gradients are judged with `torch.testing.assert_close`'s
//! float32 tolerances (`atol 1e-5 + rtol 1.3e-6·|expected|`), gradients against PyTorch's float32 ones or, where
//! those miss, its float64 ones; the report prints the worst error in both terms.

use integration_tests::fixture;
use nn::Device;
use reference::efficientzero::check_export;

fn check(dir: &str) {
    let report = check_export(&fixture(dir), Device::Cpu);
    println!("{dir}\n{report}");
    assert_eq!(report.failed(), 0, "{dir}:\n{report}");
    assert_eq!(report.checks.len(), 20, "{dir}:\n{report}");
}

#[test]
fn dynamics_small_matches_pytorch() {
    check("dynamics_small");
}

#[test]
fn layer_norm_gelu_two_blocks_matches_pytorch() {
    check("dynamics_gelu_ln");
}

#[test]
fn shared_prelu_deep_head_matches_pytorch() {
    check("dynamics_prelu_deep");
}

#[test]
fn layer_norm_downsample_matches_pytorch() {
    check("dynamics_ln_downsample");
}

#[test]
fn wide_shared_prelu_matches_pytorch() {
    check("dynamics_wide");
}

#[test]
fn batch_norm_on_a_1x1_map_after_downsampling_matches_pytorch() {
    check("dynamics_bn_downsample_1x1");
}

#[test]
fn a_missing_directory_is_a_failed_check_not_a_panic() {
    let report = check_export(&fixture("no_such_dir"), Device::Cpu);
    assert_eq!(report.failed(), 1);
    assert!(report.to_string().ends_with("0 passed, 1 failed"));
}
