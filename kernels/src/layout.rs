//! A tensor seen as `[outer, channels, inner]` around the one dimension an operation works along: the
//! channels of PReLU's weights and of a batch norm, the dimension a softmax reduces.

use crate::launch::elements;
use crate::{FloatType, GpuBuffer, KernelError, Result};

/// A tensor's shape as `[outer, channels, inner]` around the dimension an operation works along.
///
/// ```
/// // dim 1 of [2, 3, 4, 4]
/// let layout = kernels::layout::Layout { outer: 2, channels: 3, inner: 16 };
/// assert_eq!(layout.len(), 96);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Elements before the dimension (the batch).
    pub outer: usize,
    /// The dimension's length: the channel count (1 for PReLU's single shared weight), or the length of the
    /// dimension a softmax reduces.
    pub channels: usize,
    /// Elements after the dimension.
    pub inner: usize,
}

impl Layout {
    /// The layout of a tensor of `shape` around dimension `dim`; a `dim` at or past the rank is a trailing
    /// dimension of length 1 (so a scalar is `[1, 1, 1]`).
    ///
    /// ```
    /// use kernels::layout::Layout;
    /// assert_eq!(Layout::around(&[2, 3, 4, 4], 1), Layout { outer: 2, channels: 3, inner: 16 });
    /// assert_eq!(Layout::around(&[], 0), Layout { outer: 1, channels: 1, inner: 1 });
    /// ```
    pub fn around(shape: &[usize], dim: usize) -> Layout {
        let dim = dim.min(shape.len());
        Layout {
            outer: shape[..dim].iter().product(),
            channels: shape.get(dim).copied().unwrap_or(1),
            inner: shape.get(dim + 1..).map_or(1, |rest| rest.iter().product()),
        }
    }

    /// Elements in the tensor.
    pub fn len(&self) -> usize {
        self.outer * self.channels * self.inner
    }

    /// Whether the tensor is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements of one channel (`outer · inner`).
    pub fn per_channel(&self) -> usize {
        self.outer * self.inner
    }

    /// Checks that `x`'s device computes in `dtype` and that `x` holds this layout's elements; returns how many.
    pub(crate) fn check(&self, op: &'static str, dtype: FloatType, x: &GpuBuffer) -> Result<usize> {
        x.device().check_dtype(op, dtype)?;
        let len = elements(op, x, dtype)?;
        if len != self.len() {
            return Err(KernelError::InvalidArgument {
                op,
                message: format!("{len} elements do not fit the layout {self:?}"),
            });
        }
        Ok(len)
    }
}
