//! The losses of `nn::functional` called by name from a case of a loss fixture (`losses/cases.json`,
//! `losses/sweep.json`): the JSON names PyTorch's function and its keyword arguments.

use nn::functional::{
    ClassLossOptions, KlReduction, Reduction, binary_cross_entropy, binary_cross_entropy_with_logits,
    cosine_embedding_loss, cosine_similarity, cross_entropy, gaussian_nll_loss, hinge_embedding_loss, huber_loss,
    kl_div, l1_loss, margin_ranking_loss, mse_loss, multi_margin_loss, multilabel_margin_loss,
    multilabel_soft_margin_loss, nll_loss, pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
    triplet_margin_loss, triplet_margin_with_distance_loss,
};
use nn::{Result, Tensor};
use serde_json::Value;

/// The loss `spec` describes (`fn`, `reduction`, and `beta`, `delta`, `ignore_index`, `label_smoothing`,
/// `log_target` where given; PyTorch's defaults otherwise) of `input`, with its other tensors (`target`, and
/// `weight` / `pos_weight` where the case has them) from `get`.
pub fn loss(spec: &Value, input: &Tensor, get: &dyn Fn(&str) -> Option<Tensor>) -> Result<Tensor> {
    if let Some(result) = margin_loss(spec, input, get) {
        return result;
    }
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

/// The losses and distances of `losses/margin_sweep.json` (`None` for another function): the margin, ranking,
/// embedding and likelihood losses, `pairwise_distance` and `cosine_similarity`, with their options by
/// PyTorch's names and defaults and their tensors `input`, `input2`, `input3`, `target`, `weight`, `var`.
fn margin_loss(spec: &Value, input: &Tensor, get: &dyn Fn(&str) -> Option<Tensor>) -> Option<Result<Tensor>> {
    let f = |k: &str, default: f64| spec[k].as_f64().unwrap_or(default);
    let flag = |k: &str, default: bool| spec[k].as_bool().unwrap_or(default);
    let reduction = || Reduction::parse(spec["reduction"].as_str().unwrap_or("mean"));
    let tensor = |k: &str| get(k).unwrap_or_else(|| panic!("the case has no {k}"));
    let run = || -> Result<Tensor> {
        Ok(match spec["fn"].as_str().unwrap() {
            "poisson_nll_loss" => poisson_nll_loss(
                input,
                &tensor("target"),
                flag("log_input", true),
                flag("full", false),
                f("eps", 1e-8),
                reduction()?,
            )?,
            "gaussian_nll_loss" => gaussian_nll_loss(
                input,
                &tensor("target"),
                &tensor("var"),
                flag("full", false),
                f("eps", 1e-6),
                reduction()?,
            )?,
            "margin_ranking_loss" => margin_ranking_loss(
                input,
                &tensor("input2"),
                &tensor("target"),
                f("margin", 0.0),
                reduction()?,
            )?,
            "hinge_embedding_loss" => hinge_embedding_loss(input, &tensor("target"), f("margin", 1.0), reduction()?)?,
            "soft_margin_loss" => soft_margin_loss(input, &tensor("target"), reduction()?)?,
            "multilabel_soft_margin_loss" => {
                multilabel_soft_margin_loss(input, &tensor("target"), get("weight").as_ref(), reduction()?)?
            }
            "multilabel_margin_loss" => multilabel_margin_loss(input, &tensor("target"), reduction()?)?,
            "multi_margin_loss" => multi_margin_loss(
                input,
                &tensor("target"),
                spec["p"].as_u64().unwrap_or(1) as u32,
                f("margin", 1.0),
                get("weight").as_ref(),
                reduction()?,
            )?,
            "cosine_embedding_loss" => cosine_embedding_loss(
                input,
                &tensor("input2"),
                &tensor("target"),
                f("margin", 0.0),
                reduction()?,
            )?,
            "triplet_margin_loss" => triplet_margin_loss(
                input,
                &tensor("input2"),
                &tensor("input3"),
                f("margin", 1.0),
                f("p", 2.0),
                f("eps", 1e-6),
                flag("swap", false),
                reduction()?,
            )?,
            "triplet_margin_with_distance_loss" => {
                let cosine = |a: &Tensor, b: &Tensor| cosine_similarity(a, b, 1, 1e-8)?.affine(-1.0, 1.0);
                let distance: Option<nn::functional::Distance<'_>> = match spec["distance_function"].as_str() {
                    Some("cosine") => Some(&cosine),
                    _ => None,
                };
                triplet_margin_with_distance_loss(
                    input,
                    &tensor("input2"),
                    &tensor("input3"),
                    distance,
                    f("margin", 1.0),
                    flag("swap", false),
                    reduction()?,
                )?
            }
            "pairwise_distance" => pairwise_distance(
                input,
                &tensor("input2"),
                f("p", 2.0),
                f("eps", 1e-6),
                flag("keepdim", false),
            )?,
            "cosine_similarity" => cosine_similarity(
                input,
                &tensor("input2"),
                spec["dim"].as_i64().unwrap_or(1) as isize,
                f("eps", 1e-8),
            )?,
            _ => unreachable!("checked below"),
        })
    };
    const NAMES: [&str; 13] = [
        "poisson_nll_loss",
        "gaussian_nll_loss",
        "margin_ranking_loss",
        "hinge_embedding_loss",
        "soft_margin_loss",
        "multilabel_soft_margin_loss",
        "multilabel_margin_loss",
        "multi_margin_loss",
        "cosine_embedding_loss",
        "triplet_margin_loss",
        "triplet_margin_with_distance_loss",
        "pairwise_distance",
        "cosine_similarity",
    ];
    NAMES.contains(&spec["fn"].as_str()?).then(run)
}
