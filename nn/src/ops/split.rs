//! Cutting a tensor into consecutive pieces along one dimension, as one operation with one output per piece:
//! PyTorch's `split_with_sizes`, `split`, `chunk` and `unbind`. The backward joins the pieces' gradients (zeros
//! for a piece that received none) in one `cat`, so cutting a sequence into its `n` steps costs O(n) in the
//! backward, where `n` separate `narrow`s would each pad their gradient to the whole tensor.

use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Formula};
use crate::{Error, Result, Tensor};

/// `x` cut along `dim` into consecutive pieces of `sizes`, which sum to its size there; inputs `[x]`. The pieces
/// are views of `x`, on every device; `unbind`'s (pieces of 1) drop the dimension.
struct Split {
    name: &'static str,
    dim: usize,
    sizes: Vec<usize>,
}

impl Split {
    /// Whether the pieces drop the dimension they were cut along (`unbind`).
    fn drops_dim(&self) -> bool {
        self.name == "unbind"
    }
}

impl Op for Split {
    type Output = Vec<Tensor>;
    const DEVICE: DevicePath = DevicePath::Anywhere;
    const STRIDED: bool = true;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let (x, d) = (inputs[0], self.dim);
        let (mut shape, mut strides) = (x.shape().to_vec(), x.strides());
        let (mut offset, step) = (x.storage_offset(), strides[d]);
        if self.drops_dim() {
            shape.remove(d);
            strides.remove(d);
        }
        Ok(self
            .sizes
            .iter()
            .map(|&len| {
                if !self.drops_dim() {
                    shape[d] = len;
                }
                let piece = x.as_view(shape.as_slice().into(), strides.clone(), offset);
                offset += len * step;
                piece
            })
            .collect())
    }

    fn gradient(&self, _: &[&Tensor], _: &Vec<Tensor>) -> Option<Box<dyn Backward>> {
        let (dim, stack) = (self.dim as isize, self.drops_dim());
        Some(
            Formula::new(move |g: &[Tensor], _: &[bool]| {
                let parts: Vec<&Tensor> = g.iter().collect();
                let joined = if stack {
                    Tensor::stack(&parts, dim)?
                } else {
                    Tensor::cat(&parts, dim)?
                };
                Ok(vec![Some(joined)])
            })
            .saving_nothing()
            .differentiable()
            .boxed(),
        )
    }
}

impl Tensor {
    /// This tensor cut along `dim` into consecutive pieces of `sizes` entries, which must sum to its size
    /// there (PyTorch's `split_with_sizes`, and `split` with a list). Each piece is a view; autograd joins their
    /// gradients.
    ///
    /// ```
    /// use nn::Tensor;
    /// let t = Tensor::arange(0.0, 5.0, 1.0, nn::DType::F32)?;
    /// let parts = t.split_with_sizes(&[2, 3], 0)?;
    /// assert_eq!(parts[1].to_vec::<f32>()?, vec![2.0, 3.0, 4.0]);
    /// assert!(t.split_with_sizes(&[2, 2], 0).is_err());
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        self.split_named("split_with_sizes", sizes, dim)
    }

    /// [`split_with_sizes`](Self::split_with_sizes) recorded as `name`.
    fn split_named(&self, name: &'static str, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        let d = self.split_dim(dim)?;
        let total = self.shape()[d];
        if sizes.iter().sum::<usize>() != total {
            return Err(Error::invalid(
                "split_with_sizes",
                format!(
                    "split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size at \
                     dimension {d}), but got split_sizes={sizes:?}"
                ),
            ));
        }
        if sizes.is_empty() {
            return Ok(Vec::new());
        }
        run(
            &Split {
                name,
                dim: d,
                sizes: sizes.to_vec(),
            },
            &[self],
        )
    }

    /// This tensor cut along `dim` into pieces of `split_size` entries, the last one smaller if the size there
    /// is not a multiple of it (PyTorch's `split` with an int). `split_size` is 0 only for a dimension of size 0.
    ///
    /// ```
    /// use nn::Tensor;
    /// let t = Tensor::zeros([7, 2], nn::DType::F32);
    /// let sizes: Vec<usize> = t.split(3, 0)?.iter().map(|p| p.shape()[0]).collect();
    /// assert_eq!(sizes, vec![3, 3, 1]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn split(&self, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
        let d = self.split_dim(dim)?;
        let total = self.shape()[d];
        if split_size == 0 && total != 0 {
            return Err(Error::invalid(
                "split",
                format!("split_size can only be 0 if dimension size is 0, but got dimension size of {total}"),
            ));
        }
        let pieces = if split_size == 0 {
            1
        } else {
            total.div_ceil(split_size).max(1)
        };
        let mut sizes = vec![split_size; pieces];
        sizes[pieces - 1] = total - split_size * (pieces - 1);
        self.split_named("split", &sizes, dim)
    }

    /// This tensor cut along `dim` into at most `chunks` pieces of `ceil(size / chunks)` entries, the last one
    /// smaller (PyTorch's `chunk`: it may return fewer pieces than asked; a dimension of size 0 gives `chunks`
    /// empty ones).
    ///
    /// ```
    /// use nn::Tensor;
    /// let t = Tensor::zeros([6], nn::DType::F32);
    /// assert_eq!(t.chunk(4, 0)?.len(), 3); // pieces of 2
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        if chunks == 0 {
            return Err(Error::invalid(
                "chunk",
                "chunk expects `chunks` to be greater than 0, got: 0",
            ));
        }
        let total = self.shape()[self.split_dim(dim)?];
        if total == 0 {
            return self.split_named("split", &vec![0; chunks], dim);
        }
        self.split(total.div_ceil(chunks), dim)
    }

    /// The slices of this tensor along `dim`, each without that dimension (PyTorch's `unbind`): a sequence's
    /// steps, or a batch's rows.
    ///
    /// ```
    /// use nn::Tensor;
    /// let t = Tensor::arange(0.0, 6.0, 1.0, nn::DType::F32)?.reshape([3, 2])?;
    /// let rows = t.unbind(0)?;
    /// assert_eq!((rows.len(), rows[2].to_vec::<f32>()?), (3, vec![4.0, 5.0]));
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn unbind(&self, dim: isize) -> Result<Vec<Tensor>> {
        if self.rank() == 0 {
            return Err(Error::invalid(
                "unbind",
                format!("Dimension specified as {dim} but tensor has no dimensions"),
            ));
        }
        let d = self.dim_index("unbind", dim)?;
        let ones = vec![1; self.shape()[d]];
        self.split_named("unbind", &ones, dim)
    }

    /// `dim` of a tensor of rank 1 or more: what the splitting operations cut along.
    fn split_dim(&self, dim: isize) -> Result<usize> {
        if self.rank() == 0 {
            return Err(Error::invalid("split", "split expects at least a 1-dimensional tensor"));
        }
        self.dim_index("split", dim)
    }
}
