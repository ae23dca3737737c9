//! The margin, ranking, embedding and likelihood loss modules and the distance modules: PyTorch 2.5.1's `repr`s
//! and state-dict keys (printed by PyTorch, copied here), and each module's forward is its function with the
//! module's options (the functions are checked against PyTorch by `sweep.rs`).

use integration_tests::bit_equal;
use nn::functional as F;
use nn::functional::Reduction;
use nn::prelude::*;

/// `$module` with its fields set.
macro_rules! with {
    ($module:expr, $($field:ident = $value:expr),* $(,)?) => {{
        let mut m = $module;
        $(m.$field = $value;)*
        m
    }};
}

fn keys(m: &impl Module) -> Vec<String> {
    m.state_dict().keys().cloned().collect()
}

#[test]
fn the_margin_and_likelihood_loss_modules_print_and_hold_what_pytorch_does() {
    let weight = Some(Tensor::ones([3], DType::F32));
    let cases: Vec<(String, Vec<String>, &str, &[&str])> = vec![
        (
            PoissonNLLLoss::new().to_string(),
            keys(&PoissonNLLLoss::new()),
            "PoissonNLLLoss()",
            &[],
        ),
        (
            GaussianNLLLoss::new().to_string(),
            keys(&GaussianNLLLoss::new()),
            "GaussianNLLLoss()",
            &[],
        ),
        (
            MarginRankingLoss::new().to_string(),
            keys(&MarginRankingLoss::new()),
            "MarginRankingLoss()",
            &[],
        ),
        (
            HingeEmbeddingLoss::new().to_string(),
            keys(&HingeEmbeddingLoss::new()),
            "HingeEmbeddingLoss()",
            &[],
        ),
        (
            SoftMarginLoss::new().to_string(),
            keys(&SoftMarginLoss::new()),
            "SoftMarginLoss()",
            &[],
        ),
        {
            let m = with!(MultiLabelSoftMarginLoss::new(), weight = weight.clone());
            (m.to_string(), keys(&m), "MultiLabelSoftMarginLoss()", &["weight"])
        },
        (
            MultiLabelMarginLoss::new().to_string(),
            keys(&MultiLabelMarginLoss::new()),
            "MultiLabelMarginLoss()",
            &[],
        ),
        {
            let m = with!(MultiMarginLoss::new(), p = 2, weight = weight.clone());
            (m.to_string(), keys(&m), "MultiMarginLoss()", &["weight"])
        },
        (
            CosineEmbeddingLoss::new().to_string(),
            keys(&CosineEmbeddingLoss::new()),
            "CosineEmbeddingLoss()",
            &[],
        ),
        (
            TripletMarginLoss::new().to_string(),
            keys(&TripletMarginLoss::new()),
            "TripletMarginLoss()",
            &[],
        ),
        (
            TripletMarginWithDistanceLoss::new().to_string(),
            keys(&TripletMarginWithDistanceLoss::new()),
            "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)",
            &[],
        ),
        (
            PairwiseDistance::new().to_string(),
            keys(&PairwiseDistance::new()),
            "PairwiseDistance()",
            &[],
        ),
        (
            CosineSimilarity::new().to_string(),
            keys(&CosineSimilarity::new()),
            "CosineSimilarity()",
            &[],
        ),
    ];
    for (repr, keys, want_repr, want_keys) in cases {
        assert_eq!(repr, want_repr);
        assert_eq!(keys, want_keys, "{want_repr}");
    }
}

#[test]
fn each_loss_module_runs_its_function_with_its_options() {
    let x = Tensor::from_vec(vec![0.3f64, -1.2, 0.8, 2.0, -0.4, 0.1], [2, 3]).unwrap();
    let y = Tensor::from_vec(vec![-0.5f64, 0.7, 1.1, 0.2, -0.9, 0.6], [2, 3]).unwrap();
    let z = Tensor::from_vec(vec![1.5f64, 0.4, -0.3, 0.9, 0.2, -1.0], [2, 3]).unwrap();
    let signs = Tensor::from_vec(vec![1.0f64, -1.0], [2]).unwrap();
    let same = |what: &str, a: Tensor, b: Tensor| assert!(bit_equal(&a, &b), "{what}");
    let counts = x.abs().unwrap();
    let m = with!(
        PoissonNLLLoss::new(),
        full = true,
        log_input = false,
        reduction = Reduction::Sum
    );
    let want = F::poisson_nll_loss(&counts, &y.abs().unwrap(), false, true, 1e-8, Reduction::Sum).unwrap();
    same(
        "PoissonNLLLoss",
        m.forward((counts.clone(), y.abs().unwrap())).unwrap(),
        want,
    );
    let var = z.abs().unwrap();
    let m = with!(GaussianNLLLoss::new(), full = true, eps = 0.5);
    let want = F::gaussian_nll_loss(&x, &y, &var, true, 0.5, Reduction::Mean).unwrap();
    same("GaussianNLLLoss", m.forward((x.clone(), y.clone(), var)).unwrap(), want);
    let m = with!(MarginRankingLoss::new(), margin = 0.3);
    let (a, b) = (x.reshape([6]).unwrap(), y.reshape([6]).unwrap());
    let t = z.reshape([6]).unwrap().sign().unwrap();
    let want = F::margin_ranking_loss(&a, &b, &t, 0.3, Reduction::Mean).unwrap();
    same("MarginRankingLoss", m.forward((a, b, t.clone())).unwrap(), want);
    let m = with!(CosineEmbeddingLoss::new(), margin = -0.2, reduction = Reduction::None);
    let want = F::cosine_embedding_loss(&x, &y, &signs, -0.2, Reduction::None).unwrap();
    same(
        "CosineEmbeddingLoss",
        m.forward((x.clone(), y.clone(), signs.clone())).unwrap(),
        want,
    );
    let m = with!(TripletMarginLoss::new(), p = 1.0, swap = true, margin = 0.5);
    let want = F::triplet_margin_loss(&x, &y, &z, 0.5, 1.0, 1e-6, true, Reduction::Mean).unwrap();
    same(
        "TripletMarginLoss",
        m.forward((x.clone(), y.clone(), z.clone())).unwrap(),
        want,
    );
    let m = with!(TripletMarginWithDistanceLoss::new(), swap = true);
    let want = F::triplet_margin_with_distance_loss(&x, &y, &z, None, 1.0, true, Reduction::Mean).unwrap();
    same(
        "TripletMarginWithDistanceLoss",
        m.forward((x.clone(), y.clone(), z.clone())).unwrap(),
        want,
    );
    let m = with!(HingeEmbeddingLoss::new(), margin = 0.7);
    let t = z.sign().unwrap();
    let want = F::hinge_embedding_loss(&x, &t, 0.7, Reduction::Mean).unwrap();
    same("HingeEmbeddingLoss", m.forward((x.clone(), t.clone())).unwrap(), want);
    let want = F::soft_margin_loss(&x, &t, Reduction::Sum).unwrap();
    let m = with!(SoftMarginLoss::new(), reduction = Reduction::Sum);
    same("SoftMarginLoss", m.forward((x.clone(), t)).unwrap(), want);
    let labels = Tensor::from_vec(vec![1.0f64, 0.0, 1.0, 0.0, 0.0, 1.0], [2, 3]).unwrap();
    let w = Tensor::from_vec(vec![0.5f64, 1.0, 2.0], [3]).unwrap();
    let m = with!(MultiLabelSoftMarginLoss::new(), weight = Some(w.clone()));
    let want = F::multilabel_soft_margin_loss(&x, &labels, Some(&w), Reduction::Mean).unwrap();
    same(
        "MultiLabelSoftMarginLoss",
        m.forward((x.clone(), labels)).unwrap(),
        want,
    );
    let classes = Tensor::from_vec(vec![2i64, 0, -1, 1, -1, 0], [2, 3]).unwrap();
    let want = F::multilabel_margin_loss(&x, &classes, Reduction::Mean).unwrap();
    same(
        "MultiLabelMarginLoss",
        MultiLabelMarginLoss::new().forward((x.clone(), classes)).unwrap(),
        want,
    );
    let index = Tensor::from_vec(vec![2i64, 0], [2]).unwrap();
    let m = with!(MultiMarginLoss::new(), p = 2, margin = 0.5, weight = Some(w.clone()));
    let want = F::multi_margin_loss(&x, &index, 2, 0.5, Some(&w), Reduction::Mean).unwrap();
    same("MultiMarginLoss", m.forward((x.clone(), index)).unwrap(), want);
    let m = with!(PairwiseDistance::new(), norm = 3.0, keepdim = true);
    let want = F::pairwise_distance(&x, &y, 3.0, 1e-6, true).unwrap();
    same("PairwiseDistance", m.forward((x.clone(), y.clone())).unwrap(), want);
    let m = with!(CosineSimilarity::new(), dim = 0, eps = 0.1);
    let want = F::cosine_similarity(&x, &y, 0, 0.1).unwrap();
    same("CosineSimilarity", m.forward((x, y)).unwrap(), want);
}
