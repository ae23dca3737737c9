//! The losses of `nn::functional` called by name from a case of a loss fixture (`losses/cases.json`,
//! `losses/sweep.json`): the JSON names PyTorch's function and its keyword arguments.

use nn::functional::{
    ClassLossOptions, KlReduction, Reduction, binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
    huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss,
};
use nn::{Result, Tensor};
use serde_json::Value;

/// The loss `spec` describes (`fn`, `reduction`, and `beta`, `delta`, `ignore_index`, `label_smoothing`,
/// `log_target` where given; PyTorch's defaults otherwise) of `input`, with its other tensors (`target`, and
/// `weight` / `pos_weight` where the case has them) from `get`.
pub fn loss(spec: &Value, input: &Tensor, get: &dyn Fn(&str) -> Option<Tensor>) -> Result<Tensor> {
    let target = get("target").expect("every loss case has a target");
    let reduction = spec["reduction"].as_str().expect("every loss case names its reduction");
    let f64_of = |k: &str, default: f64| spec[k].as_f64().unwrap_or(default);
    let class_options = || -> Result<ClassLossOptions> {
        Ok(ClassLossOptions {
            weight: get("weight"),
            ignore_index: spec["ignore_index"].as_i64().unwrap_or(-100),
            reduction: Reduction::parse(reduction)?,
            label_smoothing: f64_of("label_smoothing", 0.0),
        })
    };
    match spec["fn"].as_str().expect("every loss case names its function") {
        "mse_loss" => mse_loss(input, &target, Reduction::parse(reduction)?),
        "l1_loss" => l1_loss(input, &target, Reduction::parse(reduction)?),
        "smooth_l1_loss" => smooth_l1_loss(input, &target, Reduction::parse(reduction)?, f64_of("beta", 1.0)),
        "huber_loss" => huber_loss(input, &target, Reduction::parse(reduction)?, f64_of("delta", 1.0)),
        "cross_entropy" => cross_entropy(input, &target, &class_options()?),
        "nll_loss" => nll_loss(input, &target, &class_options()?),
        "binary_cross_entropy" => {
            binary_cross_entropy(input, &target, get("weight").as_ref(), Reduction::parse(reduction)?)
        }
        "binary_cross_entropy_with_logits" => binary_cross_entropy_with_logits(
            input,
            &target,
            get("weight").as_ref(),
            get("pos_weight").as_ref(),
            Reduction::parse(reduction)?,
        ),
        "kl_div" => kl_div(
            input,
            &target,
            KlReduction::parse(reduction)?,
            spec["log_target"].as_bool().unwrap_or(false),
        ),
        other => panic!("no loss {other}"),
    }
}
