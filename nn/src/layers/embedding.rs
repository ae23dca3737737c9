//! [`Embedding`]: a lookup table.

use crate::functional::{EmbeddingOptions, embedding_with};
use crate::module::{ExtraRepr, py_bool, py_float};
use crate::{DType, Error, Module, Param, Result, Tensor};

/// PyTorch's `nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
/// scale_grad_by_freq=False, sparse=False)`: weight `N(0, 1)`, the padding row zero; the options as
/// [`EmbeddingOptions`] ([`Embedding::with_options`], [`Embedding::from_pretrained`]).
///
/// ```
/// use nn::prelude::*;
/// let emb = Embedding::new(10, 3, Some(0)).unwrap();
/// assert_eq!(emb.to_string(), "Embedding(10, 3, padding_idx=0)");
/// let y = emb.forward(Tensor::from_vec(vec![0i64, 4], [2]).unwrap()).unwrap();
/// assert_eq!(y.shape(), &[2, 3]);
/// ```
#[derive(Module)]
#[module(extra_repr)]
pub struct Embedding {
    /// `(num_embeddings, embedding_dim)`.
    pub weight: Param,
    /// Rows of the table.
    pub num_embeddings: usize,
    /// Width of a row.
    pub embedding_dim: usize,
    /// A row kept at zero, if any.
    pub padding_idx: Option<usize>,
    /// Rows looked up with a larger norm are renormalised in place ([`EmbeddingOptions::max_norm`]).
    pub max_norm: Option<f64>,
    /// The `p` of `max_norm`'s norm.
    pub norm_type: f64,
    /// Whether a row's gradient is divided by its lookups in the batch.
    pub scale_grad_by_freq: bool,
    /// PyTorch's sparse gradient flag: the gradient is dense here, with the same values.
    pub sparse: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl Embedding {
    /// A table in `f32`, initialised as PyTorch does; `padding_idx` must be a row of it.
    pub fn new(num_embeddings: usize, embedding_dim: usize, padding_idx: Option<usize>) -> Result<Embedding> {
        let options = EmbeddingOptions {
            padding_idx,
            ..EmbeddingOptions::default()
        };
        Embedding::with_options(num_embeddings, embedding_dim, options)
    }

    /// A table in `f32` with every option of PyTorch's constructor, initialised as PyTorch does (the padding row
    /// zero); `padding_idx` must be a row of it, `norm_type` positive where `max_norm` is set.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::functional::EmbeddingOptions;
    /// let options = EmbeddingOptions { max_norm: Some(1.0), scale_grad_by_freq: true, ..Default::default() };
    /// let emb = Embedding::with_options(10, 3, options)?;
    /// assert_eq!(emb.to_string(), "Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True)");
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn with_options(num_embeddings: usize, embedding_dim: usize, options: EmbeddingOptions) -> Result<Embedding> {
        check_options(num_embeddings, &options)?;
        let weight = Tensor::randn([num_embeddings, embedding_dim], DType::F32);
        if let Some(p) = options.padding_idx {
            let mut rows = weight.to_vec::<f32>()?;
            rows[p * embedding_dim..(p + 1) * embedding_dim]
                .iter_mut()
                .for_each(|v| *v = 0.0);
            weight.copy_(&Tensor::from_vec(rows, [num_embeddings, embedding_dim])?)?;
        }
        Ok(Embedding::of(Param::new(weight), options))
    }

    /// PyTorch's `nn.Embedding.from_pretrained(embeddings, freeze=True, ...)`: a layer whose table is
    /// `embeddings` itself (2-d; shared, not copied; its padding row is left as it is), which requires no
    /// gradient when `freeze`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::functional::EmbeddingOptions;
    /// let table = Tensor::from_vec(vec![1.0f32, 2.3, 3.0, 4.0, 5.1, 6.3], [2, 3])?;
    /// let emb = Embedding::from_pretrained(table, true, EmbeddingOptions::default())?;
    /// assert!(!emb.weight.requires_grad());
    /// let y = emb.forward(Tensor::from_vec(vec![1i64], [1])?)?;
    /// assert_eq!(y.to_vec::<f32>()?, [4.0, 5.1, 6.3]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn from_pretrained(embeddings: Tensor, freeze: bool, options: EmbeddingOptions) -> Result<Embedding> {
        if embeddings.rank() != 2 {
            return Err(Error::invalid(
                "Embedding.from_pretrained",
                format!(
                    "Embeddings parameter is expected to be 2-dimensional, got shape {}",
                    embeddings.shape()
                ),
            ));
        }
        check_options(embeddings.shape()[0], &options)?;
        Ok(Embedding::of(Param::with_requires_grad(embeddings, !freeze), options))
    }

    fn of(weight: Param, options: EmbeddingOptions) -> Embedding {
        let (num_embeddings, embedding_dim) = (weight.shape()[0], weight.shape()[1]);
        Embedding {
            weight,
            num_embeddings,
            embedding_dim,
            padding_idx: options.padding_idx,
            max_norm: options.max_norm,
            norm_type: options.norm_type,
            scale_grad_by_freq: options.scale_grad_by_freq,
            sparse: options.sparse,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// The layer's options, as [`embedding_with`] takes them.
    pub fn options(&self) -> EmbeddingOptions {
        EmbeddingOptions {
            padding_idx: self.padding_idx,
            max_norm: self.max_norm,
            norm_type: self.norm_type,
            scale_grad_by_freq: self.scale_grad_by_freq,
            sparse: self.sparse,
        }
    }
}

/// PyTorch's constructor checks: the padding row within the table; and a positive `norm_type` for `max_norm`.
fn check_options(num_embeddings: usize, options: &EmbeddingOptions) -> Result<()> {
    if let Some(p) = options.padding_idx
        && p >= num_embeddings
    {
        return Err(Error::invalid(
            "Embedding",
            format!("Padding_idx must be within num_embeddings: padding_idx {p}, num_embeddings {num_embeddings}"),
        ));
    }
    if options.max_norm.is_some() && (options.norm_type.is_nan() || options.norm_type <= 0.0) {
        return Err(Error::invalid(
            "Embedding",
            format!("norm_type is {}: max_norm's norm needs a positive p", options.norm_type),
        ));
    }
    Ok(())
}

impl ExtraRepr for Embedding {
    fn extra_repr(&self) -> String {
        let mut s = format!("{}, {}", self.num_embeddings, self.embedding_dim);
        if let Some(p) = self.padding_idx {
            s.push_str(&format!(", padding_idx={p}"));
        }
        if let Some(m) = self.max_norm {
            s.push_str(&format!(", max_norm={}", py_float(m)));
        }
        if self.norm_type != 2.0 {
            s.push_str(&format!(", norm_type={}", py_float(self.norm_type)));
        }
        if self.scale_grad_by_freq {
            s.push_str(&format!(", scale_grad_by_freq={}", py_bool(true)));
        }
        if self.sparse {
            s.push_str(", sparse=True");
        }
        s
    }
}

reads_input!(Embedding, |layer, indices| embedding_with(
    indices,
    &layer.weight.data(),
    &layer.options()
));
