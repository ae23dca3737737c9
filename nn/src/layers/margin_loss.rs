//! PyTorch's margin, ranking, embedding and likelihood loss modules, and the distance modules: each holds its
//! options (and `weight` as a buffer, as PyTorch registers it), prints as PyTorch does (`MarginRankingLoss()`),
//! and calls its function in [`functional`](crate::functional).

use std::sync::Arc;

use crate::functional::{
    Reduction, cosine_embedding_loss, cosine_similarity, gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss,
    multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, pairwise_distance, poisson_nll_loss,
    soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss,
};
use crate::{Forward, Module, Result, Tensor};

/// A loss module: the struct with its buffers and options (PyTorch's defaults), `new`, `Default`, and
/// `Forward` on `$input` running `$body`.
macro_rules! loss_module {
    (
        $(#[$doc:meta])* $layer:ident ($input:ty)
        buffers { $( $(#[$bdoc:meta])* $buffer:ident ),* $(,)? }
        options { $( $(#[$fdoc:meta])* $field:ident : $ty:ty = $default:expr ),* $(,)? }
        |$this:ident, $x:pat_param| $body:expr
    ) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        pub struct $layer {
            $( $(#[$bdoc])* pub $buffer: Option<Tensor>, )*
            $( $(#[$fdoc])* #[module(skip)] pub $field: $ty, )*
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// PyTorch's defaults (set the public fields for others).
            pub fn new() -> $layer {
                $layer {
                    $( $buffer: None, )*
                    $( $field: $default, )*
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }
        }

        impl Default for $layer {
            fn default() -> $layer {
                $layer::new()
            }
        }

        impl Forward for $layer {
            type Input = $input;
            type Output = Tensor;
            fn forward(&self, $x: $input) -> Result<Tensor> {
                let $this = self;
                $body
            }
        }
    };
}

loss_module!(
    /// PyTorch's `nn.PoissonNLLLoss(log_input=True, full=False, eps=1e-8, reduction='mean')`:
    /// [`poisson_nll_loss`] of `(input, target)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut loss = PoissonNLLLoss::new();
/// loss.full = true;
    /// assert_eq!(loss.to_string(), "PoissonNLLLoss()");
    /// ```
    PoissonNLLLoss((Tensor, Tensor))
    buffers {}
    options {
        /// Whether the input is the log of the rate.
        log_input: bool = true,
        /// Whether to add the Stirling term.
        full: bool = false,
        /// Added to the rate before its log (`log_input=False`).
        eps: f64 = 1e-8,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t)| poisson_nll_loss(&x, &t, this.log_input, this.full, this.eps, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.GaussianNLLLoss(full=False, eps=1e-6, reduction='mean')`: [`gaussian_nll_loss`] of
    /// `(input, target, var)`.
    GaussianNLLLoss((Tensor, Tensor, Tensor))
    buffers {}
    options {
        /// Whether to add the constant `½·log 2π`.
        full: bool = false,
        /// The variance's floor.
        eps: f64 = 1e-6,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t, var)| gaussian_nll_loss(&x, &t, &var, this.full, this.eps, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.MarginRankingLoss(margin=0.0, reduction='mean')`: [`margin_ranking_loss`] of
    /// `(x1, x2, target)`.
    MarginRankingLoss((Tensor, Tensor, Tensor))
    buffers {}
    options {
        /// The margin.
        margin: f64 = 0.0,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (a, b, t)| margin_ranking_loss(&a, &b, &t, this.margin, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.HingeEmbeddingLoss(margin=1.0, reduction='mean')`: [`hinge_embedding_loss`] of
    /// `(input, target)`.
    HingeEmbeddingLoss((Tensor, Tensor))
    buffers {}
    options {
        /// The margin.
        margin: f64 = 1.0,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t)| hinge_embedding_loss(&x, &t, this.margin, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.SoftMarginLoss(reduction='mean')`: [`soft_margin_loss`] of `(input, target)`.
    SoftMarginLoss((Tensor, Tensor))
    buffers {}
    options {
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t)| soft_margin_loss(&x, &t, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.MultiLabelSoftMarginLoss(weight=None, reduction='mean')`: [`multilabel_soft_margin_loss`]
    /// of `(input, target)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let mut loss = MultiLabelSoftMarginLoss::new();
/// loss.weight = Some(Tensor::ones([3], DType::F32));
    /// assert_eq!(loss.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    /// ```
    MultiLabelSoftMarginLoss((Tensor, Tensor))
    buffers {
        /// A weight per class (a buffer, in the state dict as `weight`, when given).
        weight,
    }
    options {
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t)| multilabel_soft_margin_loss(&x, &t, this.weight.as_ref(), this.reduction)
);

loss_module!(
    /// PyTorch's `nn.MultiLabelMarginLoss(reduction='mean')`: [`multilabel_margin_loss`] of `(input, target)`.
    MultiLabelMarginLoss((Tensor, Tensor))
    buffers {}
    options {
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t)| multilabel_margin_loss(&x, &t, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.MultiMarginLoss(p=1, margin=1.0, weight=None, reduction='mean')`: [`multi_margin_loss`] of
    /// `(input, target)`.
    MultiMarginLoss((Tensor, Tensor))
    buffers {
        /// A weight per class (a buffer, in the state dict as `weight`, when given).
        weight,
    }
    options {
        /// 1 or 2.
        p: u32 = 1,
        /// The margin.
        margin: f64 = 1.0,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (x, t)| multi_margin_loss(&x, &t, this.p, this.margin, this.weight.as_ref(), this.reduction)
);

loss_module!(
    /// PyTorch's `nn.CosineEmbeddingLoss(margin=0.0, reduction='mean')`: [`cosine_embedding_loss`] of
    /// `(x1, x2, target)`.
    CosineEmbeddingLoss((Tensor, Tensor, Tensor))
    buffers {}
    options {
        /// The margin, in `[-1, 1]`.
        margin: f64 = 0.0,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (a, b, t)| cosine_embedding_loss(&a, &b, &t, this.margin, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.TripletMarginLoss(margin=1.0, p=2.0, eps=1e-6, swap=False, reduction='mean')`:
    /// [`triplet_margin_loss`] of `(anchor, positive, negative)`.
    TripletMarginLoss((Tensor, Tensor, Tensor))
    buffers {}
    options {
        /// The margin.
        margin: f64 = 1.0,
        /// The norm of the distance.
        p: f64 = 2.0,
        /// Added to the differences.
        eps: f64 = 1e-6,
        /// Whether the negative's distance is the smaller of the anchor's and the positive's.
        swap: bool = false,
        /// The reduction.
        reduction: Reduction = Reduction::Mean,
    }
    |this, (a, p, n)| triplet_margin_loss(&a, &p, &n, this.margin, this.p, this.eps, this.swap, this.reduction)
);

loss_module!(
    /// PyTorch's `nn.PairwiseDistance(p=2.0, eps=1e-6, keepdim=False)`: [`pairwise_distance`] of `(x1, x2)`.
    PairwiseDistance((Tensor, Tensor))
    buffers {}
    options {
        /// The norm.
        norm: f64 = 2.0,
        /// Added to the differences.
        eps: f64 = 1e-6,
        /// Whether the last dimension stays, of size 1.
        keepdim: bool = false,
    }
    |this, (a, b)| pairwise_distance(&a, &b, this.norm, this.eps, this.keepdim)
);

loss_module!(
    /// PyTorch's `nn.CosineSimilarity(dim=1, eps=1e-8)`: [`cosine_similarity`] of `(x1, x2)`.
    CosineSimilarity((Tensor, Tensor))
    buffers {}
    options {
        /// The dimension of the vectors.
        dim: isize = 1,
        /// The norms' floor.
        eps: f64 = 1e-8,
    }
    |this, (a, b)| cosine_similarity(&a, &b, this.dim, this.eps)
);

/// A distance function of [`TripletMarginWithDistanceLoss`].
pub type DistanceFn = Arc<dyn Fn(&Tensor, &Tensor) -> Result<Tensor> + Send + Sync>;

/// PyTorch's `nn.TripletMarginWithDistanceLoss(distance_function=None, margin=1.0, swap=False,
/// reduction='mean')`: [`triplet_margin_with_distance_loss`] of `(anchor, positive, negative)`. Its distance is
/// a [`PairwiseDistance`] child by default, as PyTorch's, or a function ([`with_distance`](Self::with_distance)).
///
/// ```
/// use nn::prelude::*;
/// assert_eq!(
///     TripletMarginWithDistanceLoss::new().to_string(),
///     "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)"
/// );
/// let cosine = |a: &Tensor, b: &Tensor| nn::functional::cosine_similarity(a, b, 1, 1e-8)?.affine(-1.0, 1.0);
/// let loss = TripletMarginWithDistanceLoss::with_distance(cosine);
/// assert_eq!(loss.to_string(), "TripletMarginWithDistanceLoss()");
/// ```
#[derive(Module, Clone)]
pub struct TripletMarginWithDistanceLoss {
    /// The distance as a module (PyTorch's default, a [`PairwiseDistance`]); `None` with a function.
    pub distance_function: Option<PairwiseDistance>,
    /// The distance as a function, which PyTorch does not print.
    #[module(skip)]
    pub distance_fn: Option<DistanceFn>,
    /// The margin, above 0.
    #[module(skip)]
    pub margin: f64,
    /// Whether the negative's distance is the smaller of the anchor's and the positive's.
    #[module(skip)]
    pub swap: bool,
    /// The reduction.
    #[module(skip)]
    pub reduction: Reduction,
    training: bool,
    hooks: crate::Hooks,
}

impl TripletMarginWithDistanceLoss {
    /// PyTorch's defaults (set the public fields for others).
    pub fn new() -> TripletMarginWithDistanceLoss {
        TripletMarginWithDistanceLoss {
            distance_function: Some(PairwiseDistance::new()),
            distance_fn: None,
            margin: 1.0,
            swap: false,
            reduction: Reduction::Mean,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// With `distance` as the distance function.
    pub fn with_distance(
        distance: impl Fn(&Tensor, &Tensor) -> Result<Tensor> + Send + Sync + 'static,
    ) -> TripletMarginWithDistanceLoss {
        TripletMarginWithDistanceLoss {
            distance_function: None,
            distance_fn: Some(Arc::new(distance)),
            ..TripletMarginWithDistanceLoss::new()
        }
    }
}

impl Default for TripletMarginWithDistanceLoss {
    fn default() -> TripletMarginWithDistanceLoss {
        TripletMarginWithDistanceLoss::new()
    }
}

impl Forward for TripletMarginWithDistanceLoss {
    type Input = (Tensor, Tensor, Tensor);
    type Output = Tensor;
    fn forward(&self, (a, p, n): (Tensor, Tensor, Tensor)) -> Result<Tensor> {
        let module = self
            .distance_function
            .as_ref()
            .map(|m| move |x: &Tensor, y: &Tensor| m.forward((x.clone(), y.clone())));
        let distance: Option<crate::functional::Distance<'_>> = match (&self.distance_fn, &module) {
            (Some(f), _) => Some(f.as_ref()),
            (None, Some(m)) => Some(m),
            (None, None) => None,
        };
        triplet_margin_with_distance_loss(&a, &p, &n, distance, self.margin, self.swap, self.reduction)
    }
}
