//! [`Embedding`]: a lookup table.

use crate::functional::embedding_padded;
use crate::module::ExtraRepr;
use crate::{DType, Error, Module, Param, Result, Tensor};

/// PyTorch's `nn.Embedding(num_embeddings, embedding_dim, padding_idx=None)`: weight `N(0, 1)`, the padding row
/// zero.
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
    training: bool,
    hooks: crate::Hooks,
}

impl Embedding {
    /// A table in `f32`, initialised as PyTorch does; `padding_idx` must be a row of it.
    pub fn new(num_embeddings: usize, embedding_dim: usize, padding_idx: Option<usize>) -> Result<Embedding> {
        if let Some(p) = padding_idx
            && p >= num_embeddings
        {
            return Err(Error::invalid(
                "Embedding",
                format!("padding_idx {p} must be below num_embeddings {num_embeddings}"),
            ));
        }
        let weight = Tensor::randn([num_embeddings, embedding_dim], DType::F32);
        if let Some(p) = padding_idx {
            let mut rows = weight.to_vec::<f32>()?;
            rows[p * embedding_dim..(p + 1) * embedding_dim]
                .iter_mut()
                .for_each(|v| *v = 0.0);
            weight.copy_(&Tensor::from_vec(rows, [num_embeddings, embedding_dim])?)?;
        }
        Ok(Embedding {
            weight: Param::new(weight),
            num_embeddings,
            embedding_dim,
            padding_idx,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl ExtraRepr for Embedding {
    fn extra_repr(&self) -> String {
        let mut s = format!("{}, {}", self.num_embeddings, self.embedding_dim);
        if let Some(p) = self.padding_idx {
            s.push_str(&format!(", padding_idx={p}"));
        }
        s
    }
}

reads_input!(Embedding, |layer, indices| embedding_padded(
    indices,
    &layer.weight.data(),
    layer.padding_idx
));
