//! Indexing as PyTorch's `x[...]`: [`Tensor::i`] reads and [`Tensor::index_put_`] writes, with integers,
//! slices with steps, negative positions, new axes, an ellipsis, integer index tensors and bool masks.
//!
//! Integers, slices and new axes give a view sharing the tensor's storage (`select`, `slice`, `unsqueeze`);
//! index tensors and masks give a copy (PyTorch's advanced indexing: the index tensors broadcast together, their
//! dimensions in place of the indexed ones when those are adjacent, else first), read with `index_select` on
//! the tensor's device, so the gradient flows back through both kinds.
//!
//! ```
//! use nn::prelude::*;
//! use nn::Index;
//! let x = Tensor::arange(0.0, 24.0, 1.0, DType::I64)?.reshape([2, 3, 4])?;
//! assert_eq!(x.i((1, .., -1))?.to_vec::<i64>()?, vec![15, 19, 23]);            // x[1, :, -1]
//! assert_eq!(x.i((0, 0, (1..).step(2)))?.to_vec::<i64>()?, vec![1, 3]);       // x[0, 0, 1::2]
//! assert_eq!(x.i((Index::Ellipsis, 0))?.shape(), &[2, 3]);                   // x[..., 0]
//! assert_eq!(x.i((0, Index::NewAxis))?.shape(), &[1, 3, 4]);                 // x[0, None]
//! let rows = Tensor::from_vec(vec![2i64, 0], [2])?;
//! assert_eq!(x.i((0, &rows, 0))?.to_vec::<i64>()?, vec![8, 0]);              // x[0, rows, 0]
//! let mask = x.i((0, 0))?.gt_scalar(1.0)?;
//! assert_eq!(x.i((0, 0, &mask))?.to_vec::<i64>()?, vec![2, 3]);              // x[0, 0, mask]
//! x.index_put_((.., 0, 0), &Tensor::scalar(-1i64), false)?;                  // x[:, 0, 0] = -1
//! assert_eq!(x.i((.., 0, 0))?.to_vec::<i64>()?, vec![-1, -1]);
//! # Ok::<(), nn::Error>(())
//! ```

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use super::elementwise::broadcast_shape;
use crate::{DType, Error, Result, Shape, Tensor};

/// One entry of an index, as in PyTorch's `x[a, b, ...]`. Made from an integer (`0`, `-1`), a range (`1..3`,
/// `..`, `(1..).step(2)`), a tensor (`&idx`), or the two markers.
#[derive(Clone, Debug)]
pub enum Index {
    /// One position of the dimension, which disappears; negative counts from the end.
    At(i64),
    /// Positions `start..end`, `step` apart (`x[start:end:step]`): `None` for an end, negative bounds from the end,
    /// bounds past the ends clamped; `step` above 0.
    Slice {
        /// The first position (`None`: 0).
        start: Option<i64>,
        /// The end, excluded (`None`: the size).
        end: Option<i64>,
        /// The distance between positions.
        step: i64,
    },
    /// A new dimension of size 1 (PyTorch's `None`).
    NewAxis,
    /// As many whole dimensions as the other entries leave (`...`).
    Ellipsis,
    /// An integer tensor of positions (advanced indexing), or a bool mask covering as many dimensions as it has.
    Tensor(Tensor),
}

macro_rules! integer_indices {
    ($($t:ty),*) => {$(
        impl From<$t> for Index {
            fn from(i: $t) -> Index {
                Index::At(i as i64)
            }
        }
        impl From<Range<$t>> for Index {
            fn from(r: Range<$t>) -> Index {
                Index::Slice { start: Some(r.start as i64), end: Some(r.end as i64), step: 1 }
            }
        }
        impl From<RangeFrom<$t>> for Index {
            fn from(r: RangeFrom<$t>) -> Index {
                Index::Slice { start: Some(r.start as i64), end: None, step: 1 }
            }
        }
        impl From<RangeTo<$t>> for Index {
            fn from(r: RangeTo<$t>) -> Index {
                Index::Slice { start: None, end: Some(r.end as i64), step: 1 }
            }
        }
        impl From<RangeInclusive<$t>> for Index {
            fn from(r: RangeInclusive<$t>) -> Index {
                Index::Slice { start: Some(*r.start() as i64), end: inclusive_end(*r.end() as i64), step: 1 }
            }
        }
        impl From<RangeToInclusive<$t>> for Index {
            fn from(r: RangeToInclusive<$t>) -> Index {
                Index::Slice { start: None, end: inclusive_end(r.end as i64), step: 1 }
            }
        }
        impl Stepped for Range<$t> {}
        impl Stepped for RangeFrom<$t> {}
        impl Stepped for RangeTo<$t> {}
        impl Stepped for RangeInclusive<$t> {}
        impl Stepped for RangeToInclusive<$t> {}
    )*};
}

integer_indices!(i32, i64, isize, usize);

/// The exclusive end of an inclusive one: `..=-1` runs to the end.
fn inclusive_end(end: i64) -> Option<i64> {
    if end == -1 { None } else { Some(end + 1) }
}

impl From<RangeFull> for Index {
    fn from(_: RangeFull) -> Index {
        Index::Slice {
            start: None,
            end: None,
            step: 1,
        }
    }
}

impl Stepped for RangeFull {}

impl From<Tensor> for Index {
    fn from(t: Tensor) -> Index {
        Index::Tensor(t)
    }
}

impl From<&Tensor> for Index {
    fn from(t: &Tensor) -> Index {
        Index::Tensor(t.clone())
    }
}

/// A range with a step, as Python's `start:end:step`: `(1..).step(2)` is `1::2`, `(..).step(3)` is `::3`.
pub trait Stepped: Into<Index> {
    /// This range's positions, `step` apart (a step of 0 or below is refused when the index is used).
    fn step(self, step: i64) -> Index {
        match self.into() {
            Index::Slice { start, end, .. } => Index::Slice { start, end, step },
            other => other,
        }
    }
}

/// What [`Tensor::i`] and [`Tensor::index_put_`] take: one entry, a tuple of up to eight, or a `Vec` of
/// [`Index`].
pub trait IntoIndices {
    /// The entries, in order.
    fn into_indices(self) -> Vec<Index>;
}

impl<T: Into<Index>> IntoIndices for T {
    fn into_indices(self) -> Vec<Index> {
        vec![self.into()]
    }
}

impl IntoIndices for Vec<Index> {
    fn into_indices(self) -> Vec<Index> {
        self
    }
}

macro_rules! tuple_indices {
    ($(($($t:ident),+)),*) => {$(
        impl<$($t: Into<Index>),+> IntoIndices for ($($t,)+) {
            #[allow(non_snake_case, reason = "the tuple's fields, named after their types")]
            fn into_indices(self) -> Vec<Index> {
                let ($($t,)+) = self;
                vec![$($t.into()),+]
            }
        }
    )*};
}

tuple_indices!(
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F),
    (A, B, C, D, E, F, G),
    (A, B, C, D, E, F, G, H)
);

/// How many dimensions an entry consumes.
fn consumed(index: &Index) -> usize {
    match index {
        Index::At(_) | Index::Slice { .. } => 1,
        Index::Tensor(t) if is_mask(t) => t.rank(),
        Index::Tensor(_) => 1,
        Index::NewAxis | Index::Ellipsis => 0,
    }
}

/// Whether an index tensor is a mask (bool, or PyTorch's deprecated `uint8`).
fn is_mask(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::Bool | DType::U8)
}

/// The entries with the ellipsis (or the trailing whole dimensions) spelled out as whole slices, after PyTorch's
/// check of their count.
fn expanded(op: &'static str, rank: usize, indices: Vec<Index>) -> Result<Vec<Index>> {
    let ellipses = indices.iter().filter(|i| matches!(i, Index::Ellipsis)).count();
    let used: usize = indices.iter().map(consumed).sum();
    if used > rank {
        return Err(Error::invalid(
            op,
            format!("too many indices for tensor of dimension {rank}"),
        ));
    }
    let whole = || Index::from(..);
    let mut out = Vec::with_capacity(indices.len() + rank - used);
    let mut first = true;
    for index in indices {
        if matches!(index, Index::Ellipsis) {
            // As PyTorch: the first ellipsis stands for every dimension left, any later one for none.
            if std::mem::take(&mut first) {
                out.extend((0..rank - used).map(|_| whole()));
            }
        } else {
            out.push(index);
        }
    }
    if ellipses == 0 {
        out.extend((0..rank - used).map(|_| whole()));
    }
    Ok(out)
}

/// A position `i` along a dimension of `size`, negative from the end, or PyTorch's out-of-bounds error.
fn position(op: &'static str, i: i64, dim: usize, size: usize) -> Result<i64> {
    let size = size as i64;
    if i < -size || i >= size {
        return Err(Error::invalid(
            op,
            format!("index {i} is out of bounds for dimension {dim} with size {size}"),
        ));
    }
    Ok(if i < 0 { i + size } else { i })
}

impl Tensor {
    /// `x[index]`, as PyTorch reads it: integers select (and drop) a dimension, ranges slice it (with
    /// [`Stepped::step`] for a step), [`Index::NewAxis`] adds one, [`Index::Ellipsis`] stands for the dimensions
    /// left; a view sharing storage. Integer index tensors and bool masks index as PyTorch's advanced indexing,
    /// in a copy. See the [module](crate::Index) for examples.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)?.reshape([2, 3])?;
    /// assert_eq!(x.i((.., 1..))?.to_vec::<f32>()?, vec![1.0, 2.0, 4.0, 5.0]);   // x[:, 1:]
    /// assert_eq!(x.i(-1)?.to_vec::<f32>()?, vec![3.0, 4.0, 5.0]);               // x[-1]
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn i(&self, index: impl IntoIndices) -> Result<Tensor> {
        let op = "index";
        let indices = expanded(op, self.rank(), index.into_indices())?;
        let mut t = self.clone();
        let mut dim = 0;
        let mut advanced: Vec<(usize, Tensor)> = Vec::new();
        for index in indices {
            match index {
                Index::At(i) => {
                    let at = position(op, i, dim, t.shape()[dim])?;
                    t = t.select(dim as isize, at as isize)?;
                }
                Index::Slice { start, end, step } => {
                    if step <= 0 {
                        let message = if step == 0 {
                            "slice step cannot be zero"
                        } else {
                            "step must be greater than zero"
                        };
                        return Err(Error::invalid(op, message));
                    }
                    t = t.slice(
                        dim as isize,
                        start.map(|s| s as isize),
                        end.map(|e| e as isize),
                        step as usize,
                    )?;
                    dim += 1;
                }
                Index::NewAxis => {
                    t = t.unsqueeze(dim as isize)?;
                    dim += 1;
                }
                Index::Ellipsis => unreachable!("spelled out by `expanded`"),
                Index::Tensor(ix) if is_mask(&ix) && ix.rank() == 0 => {
                    // `x[True]` adds a dimension of size 1, `x[False]` one of size 0.
                    t = t.unsqueeze(dim as isize)?;
                    let kept = ix.cpu()?.to_dtype(DType::Bool)?.to_vec::<bool>()?[0];
                    let positions = if kept { vec![0i64] } else { vec![] };
                    let n = positions.len();
                    advanced.push((dim, Tensor::from_vec(positions, [n])?));
                    dim += 1;
                }
                Index::Tensor(ix) if is_mask(&ix) => {
                    for (k, positions) in mask_positions(op, &ix, &t, dim)?.into_iter().enumerate() {
                        advanced.push((dim + k, positions));
                    }
                    dim += ix.rank();
                }
                Index::Tensor(ix) => {
                    if !matches!(ix.dtype(), DType::I64 | DType::I32) {
                        return Err(Error::invalid(
                            op,
                            "tensors used as indices must be long, int, byte or bool tensors",
                        ));
                    }
                    advanced.push((dim, ix));
                    dim += 1;
                }
            }
        }
        if advanced.is_empty() {
            return Ok(t);
        }
        advanced_index(op, &t, &advanced)
    }

    /// `x[index] = values` (PyTorch's `__setitem__`), or with `accumulate` `x[index] += values` where repeated
    /// positions add up (`index_put_(indices, values, accumulate=True)`): `values` broadcast to what
    /// [`i`](Self::i) reads there and cast to this tensor's dtype, written through every handle. An index of
    /// integers, slices and new axes writes through the view; one with index tensors or masks scatters, after
    /// finding the positions it writes through an int64 tensor of this tensor's size on the host. Recorded as
    /// PyTorch's in-place writes are.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let x = Tensor::zeros([2, 3], DType::F32);
    /// x.index_put_((.., 0), &Tensor::scalar(5.0f32), false)?;                  // x[:, 0] = 5
    /// let cols = Tensor::from_vec(vec![2i64, 2], [2])?;
    /// x.index_put_((0, &cols), &Tensor::scalar(1.0f32), true)?;                // x[0].index_put_((cols,), 1, True)
    /// assert_eq!(x.to_vec::<f32>()?, vec![5.0, 0.0, 2.0, 5.0, 0.0, 0.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn index_put_(&self, index: impl IntoIndices, values: &Tensor, accumulate: bool) -> Result<()> {
        let op = "index_put_";
        let indices = index.into_indices();
        let values = values.to_dtype(self.dtype())?;
        if !indices.iter().any(|i| matches!(i, Index::Tensor(_))) {
            let view = self.i(indices)?;
            let values = broadcast_values(op, &values, view.shape())?;
            return if accumulate {
                view.add_(&values)
            } else {
                view.copy_(&values)
            };
        }
        // The flat position in this tensor of each element the index reads, found by indexing the positions.
        let n = self.numel();
        let positions = Tensor::arange(0.0, n as f64, 1.0, DType::I64)?
            .reshape(self.shape().clone())?
            .i(indices)?;
        let values = broadcast_values(op, &values, positions.shape())?;
        let m = positions.numel();
        let positions = positions.reshape([m])?.to_device(self.device())?;
        let values = values.contiguous()?.reshape([m])?;
        let written = {
            // Dropped before the copy: a tensor that requires no grad takes the copy's history only while no
            // other handle shares its storage.
            let flat = self.reshape([n])?;
            if accumulate {
                flat.scatter_add(0, &positions, &values)?
            } else {
                flat.scatter(0, &positions, &values)?
            }
        };
        self.copy_(&written.reshape(self.shape().clone())?)
    }
}

/// `values` expanded to `shape`, or PyTorch's error where it does not broadcast there.
fn broadcast_values(op: &'static str, values: &Tensor, shape: &Shape) -> Result<Tensor> {
    let fits = broadcast_shape(op, values.shape(), shape).is_ok_and(|s| &s == shape);
    if !fits {
        return Err(Error::invalid(
            op,
            format!(
                "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
                values.shape().dims(),
                shape.dims()
            ),
        ));
    }
    let sizes: Vec<isize> = shape.iter().map(|&s| s as isize).collect();
    values.expand(&sizes)
}

/// The positions of a mask's true elements along each dimension it covers (`t`'s dimensions from `dim`), as
/// int64 tensors: PyTorch's `mask.nonzero()` columns.
fn mask_positions(op: &'static str, mask: &Tensor, t: &Tensor, dim: usize) -> Result<Vec<Tensor>> {
    for (k, &size) in mask.shape().iter().enumerate() {
        if t.shape()[dim + k] != size {
            return Err(Error::invalid(
                op,
                format!(
                    "The shape of the mask {:?} at index {k} does not match the shape of the indexed tensor {:?} at \
                     index {}",
                    mask.shape().dims(),
                    t.shape().dims(),
                    dim + k
                ),
            ));
        }
    }
    let truth = mask.cpu()?.to_dtype(DType::Bool)?.to_vec::<bool>()?;
    let strides = mask.shape().strides();
    let mut columns = vec![Vec::new(); mask.rank()];
    for flat in (0..truth.len()).filter(|&f| truth[f]) {
        for (k, column) in columns.iter_mut().enumerate() {
            column.push(((flat / strides[k]) % mask.shape()[k]) as i64);
        }
    }
    columns
        .into_iter()
        .map(|c| Tensor::from_vec(c.clone(), [c.len()]))
        .collect()
}

/// PyTorch's advanced indexing of `t` by the index tensors `advanced` (each at its dimension of `t`): they
/// broadcast together into shape `B`; the result has `B` in place of the indexed dimensions when those are
/// adjacent, else first, then `t`'s other dimensions.
fn advanced_index(op: &'static str, t: &Tensor, advanced: &[(usize, Tensor)]) -> Result<Tensor> {
    let mut shape = Shape::scalar();
    for (_, ix) in advanced {
        shape = broadcast_shape(op, &shape, ix.shape()).map_err(|_| {
            Error::invalid(
                op,
                format!(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                    advanced
                        .iter()
                        .map(|(_, ix)| format!("{:?}", ix.shape().dims()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
    }
    let dims: Vec<usize> = advanced.iter().map(|(d, _)| *d).collect();
    let sizes: Vec<usize> = dims.iter().map(|&d| t.shape()[d]).collect();
    // The flat position of each indexed element among the indexed dimensions (row-major in their order).
    let count = shape.numel();
    let mut linear = vec![0i64; count];
    let expand_to: Vec<isize> = shape.iter().map(|&s| s as isize).collect();
    // An index out of bounds names its place among the index tensors, as PyTorch's message does.
    for (j, ((_, ix), &size)) in advanced.iter().zip(&sizes).enumerate() {
        let values = ix.cpu()?.to_dtype(DType::I64)?.expand(&expand_to)?.to_vec::<i64>()?;
        for (l, &v) in linear.iter_mut().zip(&values) {
            *l = *l * size as i64 + position(op, v, j, size)?;
        }
    }
    let rest: Vec<usize> = (0..t.rank()).filter(|d| !dims.contains(d)).collect();
    let order: Vec<usize> = dims.iter().chain(&rest).copied().collect();
    let mut flat_shape = vec![sizes.iter().product::<usize>()];
    flat_shape.extend(rest.iter().map(|&d| t.shape()[d]));
    let flat = t.permute(&order)?.reshape(flat_shape)?;
    let picked = flat.index_select(0, &Tensor::from_vec(linear, [count])?.to_device(t.device())?)?;
    let mut out_shape: Vec<usize> = shape.dims().to_vec();
    out_shape.extend(rest.iter().map(|&d| t.shape()[d]));
    let out = picked.reshape(out_shape)?;
    let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
    if !adjacent || dims[0] == 0 {
        return Ok(out);
    }
    // Adjacent indexed dimensions after others: `B` goes back to where they were.
    let b = shape.rank();
    let before = dims[0];
    let order: Vec<usize> = (b..b + before).chain(0..b).chain(b + before..out.rank()).collect();
    out.permute(&order)
}
