//! `tril` and `triu`: the lower or upper triangle of the last two dims, the rest zero. Each gathers the kept
//! elements beside one zero (`index_select`), so infinities and NaN outside the triangle become 0 as in
//! PyTorch, on every device and dtype; each is one recorded node (`TrilBackward0`, `TriuBackward0`) whose
//! gradient is the same triangle of the incoming gradient.
//!
//! ```
//! use nn::Tensor;
//! let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6, 7, 8, 9], [3, 3])?;
//! assert_eq!(x.tril(0)?.to_vec::<i64>()?, vec![1, 0, 0, 4, 5, 0, 7, 8, 9]);
//! assert_eq!(x.triu(1)?.to_vec::<i64>()?, vec![0, 2, 3, 0, 0, 6, 0, 0, 0]);
//! # Ok::<(), nn::Error>(())
//! ```

use crate::tensor::autograd::{no_grad, record_function};
use crate::{Error, Result, Shape, Tensor};

/// Which triangle an op keeps.
#[derive(Clone, Copy)]
enum Triangle {
    /// Elements on and below the `diagonal`-th diagonal: column − row ≤ diagonal.
    Lower,
    /// Elements on and above it: column − row ≥ diagonal.
    Upper,
}

impl Triangle {
    fn name(self) -> &'static str {
        match self {
            Triangle::Lower => "tril",
            Triangle::Upper => "triu",
        }
    }

    fn keeps(self, row: usize, col: usize, diagonal: i64) -> bool {
        let offset = col as i64 - row as i64;
        match self {
            Triangle::Lower => offset <= diagonal,
            Triangle::Upper => offset >= diagonal,
        }
    }
}

impl Tensor {
    /// The lower triangle of the last two dims, on and below the `diagonal`-th diagonal (0 the main one,
    /// positive above it, negative below), the rest zero (PyTorch's `tril`).
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle(Triangle::Lower, diagonal)
    }

    /// The upper triangle of the last two dims, on and above the `diagonal`-th diagonal, the rest zero
    /// (PyTorch's `triu`).
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle(Triangle::Upper, diagonal)
    }

    fn triangle(&self, triangle: Triangle, diagonal: i64) -> Result<Tensor> {
        let op = triangle.name();
        let rank = self.rank();
        if rank < 2 {
            return Err(Error::invalid(
                op,
                format!("{op}: input tensor must have at least 2 dimensions"),
            ));
        }
        let (rows, cols) = (self.shape()[rank - 2], self.shape()[rank - 1]);
        let per_matrix = rows * cols;
        let mut out = {
            let _forward = no_grad();
            if self.numel() == 0 {
                self.zeros_like()?
            } else {
                // Each matrix flattened, one zero appended, and every position read from itself or the zero.
                let batch = self.numel() / per_matrix;
                let index: Vec<i64> = (0..per_matrix)
                    .map(|p| {
                        let (row, col) = (p / cols, p % cols);
                        (if triangle.keeps(row, col, diagonal) {
                            p
                        } else {
                            per_matrix
                        }) as i64
                    })
                    .collect();
                let index = Tensor::from_vec(index, [per_matrix])?.to_device(self.device())?;
                let flat = self.reshape(Shape::from([batch, per_matrix]))?;
                let zero = Tensor::zeros([batch, 1], self.dtype()).to_device(self.device())?;
                let padded = Tensor::cat(&[&flat, &zero], 1)?;
                padded.index_select(1, &index)?.reshape(self.shape().clone())?
            }
        };
        record_function(op, &[self], &mut out, move |g, _| {
            Ok(vec![Some(g.triangle(triangle, diagonal)?)])
        });
        Ok(out)
    }
}
