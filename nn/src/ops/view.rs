//! The view operations: tensors that share their input's storage and only say where its elements lie
//! (`view`, `reshape`, `flatten`, `unflatten`, `squeeze`, `unsqueeze`, `permute`, `transpose`, `t`, `narrow`,
//! `slice`, `select`, `expand`, `diagonal`, `as_strided`), on every device and dtype, each recorded with its
//! gradient. No element moves: an operation that needs a view's elements in row-major order reads them then
//! (`ops::run`), and [`Tensor::contiguous`] does it on request.

use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Formula, is_grad_enabled};
use crate::tensor::view::{Geometry, Strides};
use crate::{Error, Result, Shape, Tensor};

/// What a view picks from its input.
#[derive(Clone, Debug)]
enum Kind {
    /// The same elements in the same order, at other sizes (`view`, `reshape`, `flatten`, `squeeze`, ...).
    Reshape(Shape),
    /// [`Kind::Reshape`] of a dense copy made for it, as a tensor of its own rather than a view (PyTorch's
    /// `_unsafe_view`, after `reshape` copied).
    OwnReshape(Shape),
    /// The dimensions reordered: output dimension `i` is input dimension `order[i]`.
    Permute(Vec<usize>),
    /// `len` entries of `dim` from `start`, `step` apart (`narrow`, `slice`).
    Slice {
        dim: usize,
        start: usize,
        step: usize,
        len: usize,
    },
    /// Entry `index` of `dim`, the dimension dropped.
    Select { dim: usize, index: usize },
    /// Size-1 dimensions (and new leading ones) repeated to `shape`, at stride 0.
    Expand(Shape),
    /// The diagonal of dimensions `dim1` and `dim2`, `offset` above it, as a last dimension.
    Diagonal { offset: isize, dim1: usize, dim2: usize },
    /// Elements of the storage at a geometry of their own.
    AsStrided(Geometry),
}

impl Kind {
    /// Where the view's elements lie, for an input whose elements lie at `at`.
    fn geometry(&self, at: &Geometry) -> Option<Geometry> {
        let (shape, strides, offset) = (&at.shape, &at.strides, at.offset);
        Some(match self {
            Kind::Reshape(new) | Kind::OwnReshape(new) => Geometry {
                shape: new.clone(),
                strides: crate::tensor::view::view_strides(shape, strides, new)?,
                offset,
            },
            Kind::Permute(order) => Geometry {
                shape: order.iter().map(|&o| shape[o]).collect(),
                strides: order.iter().map(|&o| strides[o]).collect(),
                offset,
            },
            &Kind::Slice { dim, start, step, len } => {
                let mut sizes = shape.to_vec();
                sizes[dim] = len;
                let mut s = strides.clone();
                s[dim] *= step;
                Geometry {
                    shape: sizes.into(),
                    strides: s,
                    offset: offset + start * strides[dim],
                }
            }
            &Kind::Select { dim, index } => {
                let mut sizes = shape.to_vec();
                sizes.remove(dim);
                let mut s = strides.clone();
                s.remove(dim);
                Geometry {
                    shape: sizes.into(),
                    strides: s,
                    offset: offset + index * strides[dim],
                }
            }
            Kind::Expand(target) => {
                let lead = target.rank() - shape.rank();
                let s = (0..target.rank())
                    .map(|d| match d.checked_sub(lead) {
                        Some(own) if shape[own] == target[d] => strides[own],
                        _ => 0,
                    })
                    .collect();
                Geometry {
                    shape: target.clone(),
                    strides: s,
                    offset,
                }
            }
            &Kind::Diagonal { offset: k, dim1, dim2 } => {
                let (n1, n2) = (shape[dim1] as isize, shape[dim2] as isize);
                let len = if k >= 0 { n1.min(n2 - k) } else { (n1 + k).min(n2) }.max(0) as usize;
                let shift = match (len, k >= 0) {
                    (0, _) => 0,
                    (_, true) => k as usize * strides[dim2],
                    (_, false) => k.unsigned_abs() * strides[dim1],
                };
                let keep = |d: &usize| *d != dim1 && *d != dim2;
                let mut sizes: Vec<usize> = (0..shape.rank()).filter(keep).map(|d| shape[d]).collect();
                let mut s: Strides = (0..shape.rank()).filter(keep).map(|d| strides[d]).collect();
                sizes.push(len);
                s.push(strides[dim1] + strides[dim2]);
                Geometry {
                    shape: sizes.into(),
                    strides: s,
                    offset: offset + shift,
                }
            }
            Kind::AsStrided(g) => g.clone(),
        })
    }
}

/// A view of `x`; inputs `[x]`. Shares the storage, so runs on every device.
struct ViewOp {
    name: &'static str,
    kind: Kind,
}

impl Op for ViewOp {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::Anywhere;
    const STRIDED: bool = true;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        if let Kind::OwnReshape(shape) = &self.kind {
            return Ok(x.reshaped(shape.clone()));
        }
        let g = self
            .kind
            .geometry(&Geometry::of(x))
            .ok_or_else(|| Error::invalid(self.name, NOT_VIEWABLE))?;
        Ok(x.as_view(g.shape, g.strides, g.offset))
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let x = inputs[0];
        let shape = x.shape().clone();
        let backward: Box<dyn Backward> = match &self.kind {
            Kind::Reshape(_) | Kind::OwnReshape(_) => {
                Formula::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].reshape(shape.clone())?)]))
                    .saving_nothing()
                    .differentiable()
                    .boxed()
            }
            Kind::Permute(order) => {
                let mut inverse = vec![0; order.len()];
                for (i, &o) in order.iter().enumerate() {
                    inverse[o] = i;
                }
                Formula::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].permute(&inverse)?)]))
                    .saving_nothing()
                    .differentiable()
                    .boxed()
            }
            Kind::Expand(_) => Formula::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].sum_to(&shape)?)]))
                .saving_nothing()
                .differentiable()
                .boxed(),
            Kind::AsStrided(at) => {
                let (at, input, len) = (at.clone(), Geometry::of(x), x.storage_len());
                Formula::new(move |g: &[Tensor], _: &[bool]| {
                    if input.overlaps() {
                        return Err(Error::autograd(
                            "as_strided",
                            "the gradient of as_strided of a tensor whose elements overlap is not supported",
                        ));
                    }
                    let storage = place(&g[0], &Shape::from([len]), &at)?;
                    Ok(vec![Some(
                        storage
                            .as_view(input.shape.clone(), input.strides.clone(), input.offset)
                            .dense()?,
                    )])
                })
                .saving_nothing()
                .boxed()
            }
            kind => {
                let at = kind
                    .geometry(&Geometry::dense(&shape))
                    .expect("a picking view has a geometry");
                // A run of one dimension (`narrow`, `select`, `x[:, i]`) is placed by a recorded `cat` while
                // recording (`create_graph`), so its gradient differentiates again.
                let span = match *kind {
                    Kind::Slice {
                        dim,
                        start,
                        step: 1,
                        len,
                    } => Some((dim, start, len, false)),
                    Kind::Select { dim, index } => Some((dim, index, 1, true)),
                    _ => None,
                };
                let formula = Formula::new(move |g: &[Tensor], _: &[bool]| {
                    Ok(vec![Some(match span {
                        Some((dim, start, len, dropped)) if is_grad_enabled() => {
                            let g = if dropped {
                                g[0].unsqueeze(dim as isize)?
                            } else {
                                g[0].clone()
                            };
                            place_run(&g, &shape, dim, start, len)?
                        }
                        _ => place(&g[0], &shape, &at)?,
                    })])
                })
                .saving_nothing();
                if span.is_some() {
                    formula.differentiable().boxed()
                } else {
                    formula.boxed()
                }
            }
        };
        Some(backward)
    }
}

/// PyTorch's sentence for a `view` whose sizes cut across dimensions that do not lie one after the other.
const NOT_VIEWABLE: &str = "view size is not compatible with input tensor's size and stride (at least one dimension \
                            spans across two contiguous subspaces). Use .reshape(...) instead.";

/// `g`, of a view's shape, placed where the view's elements lie (`at`) within zeros of `shape` laid out densely:
/// the gradient of a view that picks elements. An element the view reaches more than once (`expand`, overlapping
/// `as_strided` windows) takes the sum of its gradients.
fn place(g: &Tensor, shape: &Shape, at: &Geometry) -> Result<Tensor> {
    if !at.overlaps() {
        return g.place_in(shape, at);
    }
    let out = Tensor::try_zeros(shape.clone(), g.dtype())?.to_device(g.device())?;
    let index = Tensor::from_vec(at.positions(), [at.shape.numel()])?.to_device(g.device())?;
    out.reshape([shape.numel()])?
        .index_add(0, &index, &g.reshape([g.numel()])?)?
        .reshape(shape.clone())
}

/// `g`, entries `start..start + len` of dimension `dim` of `shape`, placed there within zeros by a recorded `cat`.
fn place_run(g: &Tensor, shape: &Shape, dim: usize, start: usize, len: usize) -> Result<Tensor> {
    let zeros = |n: usize| -> Result<Tensor> {
        let mut sizes = shape.dims().to_vec();
        sizes[dim] = n;
        Tensor::try_zeros(sizes, g.dtype())?.to_device(g.device())
    };
    let (before, after) = (zeros(start)?, zeros(shape[dim] - start - len)?);
    Tensor::cat(&[&before, g, &after], dim as isize)
}

/// A copy of `x`'s elements in row-major order in a storage of their own (PyTorch's `clone()`); inputs `[x]`.
struct CloneOp;

impl Op for CloneOp {
    type Output = Tensor;
    const NAME: &'static str = "clone";
    const DEVICE: DevicePath = DevicePath::Anywhere;
    const STRIDED: bool = true;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].deep_copy()
    }

    fn gradient(&self, _: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        Some(
            Formula::new(|g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].clone())]))
                .saving_nothing()
                .differentiable()
                .boxed(),
        )
    }
}

impl Tensor {
    /// A view of `kind` named `name`.
    fn view_op(&self, name: &'static str, kind: Kind) -> Result<Tensor> {
        run(&ViewOp { name, kind }, &[self])
    }

    /// The same elements at other sizes, `-1` inferred from the element count, as a view (PyTorch's `view`):
    /// an error where the sizes cut across dimensions that do not lie one after the other in the storage (then
    /// [`reshape`](Self::reshape) copies).
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)?;
    /// let v = x.view(&[2, -1])?;
    /// assert_eq!(v.shape(), &[2, 3]);
    /// v.select(0, 1)?.fill_(0.0)?;                    // writes land in x
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0, 1.0, 2.0, 0.0, 0.0, 0.0]);
    /// assert!(v.t()?.view(&[6]).is_err());            // needs .reshape(6)
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn view(&self, sizes: &[isize]) -> Result<Tensor> {
        let shape = infer_shape("view", self.numel(), sizes)?;
        if self.view_strides(&shape).is_none() {
            return Err(Error::invalid("view", NOT_VIEWABLE));
        }
        self.view_op("view", Kind::Reshape(shape))
    }

    /// The same elements at `shape`, of equal element count (PyTorch's `reshape`): a view where the strides
    /// allow ([`view`](Self::view)), else a copy.
    ///
    /// ```
    /// let t = nn::Tensor::zeros([2, 6], nn::DType::F32);
    /// assert_eq!(t.reshape([3, 4]).unwrap().shape(), &[3, 4]);
    /// assert!(t.reshape([5]).is_err());
    /// ```
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        if shape.numel() != self.numel() {
            return Err(Error::invalid(
                "reshape",
                format!("shape '{}' is invalid for input of size {}", shape, self.numel()),
            ));
        }
        if self.view_strides(&shape).is_some() {
            return self.view_op("reshape", Kind::Reshape(shape));
        }
        self.contiguous()?.view_op("_unsafe_view", Kind::OwnReshape(shape))
    }

    /// [`reshape`](Self::reshape) where one size may be `-1`, inferred from the element count.
    ///
    /// ```
    /// let t = nn::Tensor::zeros([2, 3, 4], nn::DType::F32);
    /// assert_eq!(t.reshape_infer(&[-1, 12]).unwrap().shape(), &[2, 12]);
    /// ```
    pub fn reshape_infer(&self, sizes: &[isize]) -> Result<Tensor> {
        let shape = infer_shape("reshape", self.numel(), sizes)?;
        self.reshape(shape)
    }

    /// Dimensions `start..=end` merged into one (negative indices count from the end), as `torch.flatten`: a view
    /// where the strides allow, else a copy.
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            return self.reshape([1]);
        }
        let s = self.dim_index("flatten", start)?;
        let e = self.dim_index("flatten", end)?;
        if s > e {
            return Err(Error::invalid(
                "flatten",
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        if s == e {
            return Ok(self.clone());
        }
        let dims = self.shape();
        let mut shape: Shape = dims[..s].iter().copied().collect();
        shape.push(dims[s..=e].iter().product());
        for &d in &dims[e + 1..] {
            shape.push(d);
        }
        self.reshape(shape)
    }

    /// Dimension `dim` split into `sizes` (one of them `-1` at most), as a view (PyTorch's `unflatten`).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 6], nn::DType::F32);
    /// assert_eq!(x.unflatten(1, &[3, -1])?.shape(), &[2, 3, 2]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<Tensor> {
        let op = "unflatten";
        if sizes.is_empty() {
            return Err(Error::invalid(op, "unflatten: sizes must be non-empty"));
        }
        let d = self.dim_index(op, dim)?;
        let size = self.shape()[d];
        let listed = format!(
            "[{}]",
            sizes.iter().map(isize::to_string).collect::<Vec<_>>().join(", ")
        );
        let inner = infer_shape(op, size, sizes).map_err(|_| {
            Error::invalid(
                op,
                format!(
                    "unflatten: Provided sizes {listed} don't multiply up to the size of dim {d} ({size}) in the \
                     input tensor"
                ),
            )
        })?;
        let mut shape: Vec<usize> = self.shape()[..d].to_vec();
        shape.extend_from_slice(&inner);
        shape.extend_from_slice(&self.shape()[d + 1..]);
        self.reshape(shape)
    }

    /// A view with a size-1 dimension inserted at `dim` (`-1` appends).
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        let d = crate::tensor::normalize_dim("unsqueeze", dim, self.rank() + 1)?;
        let mut sizes: Vec<usize> = self.shape().to_vec();
        sizes.insert(d, 1);
        self.view_op("unsqueeze", Kind::Reshape(sizes.into()))
    }

    /// A view without dimension `dim` where its size is 1 (PyTorch leaves other sizes alone: so does this).
    pub fn squeeze(&self, dim: isize) -> Result<Tensor> {
        let d = if self.rank() == 0 {
            0
        } else {
            self.dim_index("squeeze", dim)?
        };
        let mut sizes: Vec<usize> = self.shape().to_vec();
        if self.rank() > 0 && sizes[d] == 1 {
            sizes.remove(d);
        }
        self.view_op("squeeze", Kind::Reshape(sizes.into()))
    }

    /// A view with the dimensions reordered: output dimension `i` is input dimension `order[i]`.
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 3, 4], nn::DType::F32);
    /// let p = x.permute(&[2, 0, 1])?;
    /// assert_eq!((p.shape().to_vec(), p.stride()), (vec![4, 2, 3], vec![1, 12, 4]));
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn permute(&self, order: &[usize]) -> Result<Tensor> {
        let rank = self.rank();
        if order.len() != rank {
            return Err(Error::invalid(
                "permute",
                format!(
                    "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the \
                     desired ordering of dimensions i.e. input.dim() = {rank} is not equal to len(dims) = {}",
                    order.len()
                ),
            ));
        }
        let mut seen = vec![false; rank];
        for &o in order {
            if o >= rank {
                self.dim_index("permute", o as isize)?;
            }
            if std::mem::replace(&mut seen[o], true) {
                return Err(Error::invalid("permute", "permute(): duplicate dims are not allowed."));
            }
        }
        self.view_op("permute", Kind::Permute(order.to_vec()))
    }

    /// A view with dimensions `a` and `b` swapped.
    pub fn transpose(&self, a: isize, b: isize) -> Result<Tensor> {
        let (a, b) = (self.dim_index("transpose", a)?, self.dim_index("transpose", b)?);
        let mut order: Vec<usize> = (0..self.rank()).collect();
        if self.rank() > 0 {
            order.swap(a, b);
        }
        self.view_op("transpose", Kind::Permute(order))
    }

    /// The transpose of a matrix as a view; a tensor of rank 0 or 1 as it is (PyTorch's `t()`).
    ///
    /// ```
    /// let x = nn::Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])?;
    /// assert_eq!(x.t()?.to_vec::<f32>()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn t(&self) -> Result<Tensor> {
        if self.rank() > 2 {
            return Err(Error::invalid(
                "t",
                format!(
                    "t() expects a tensor with <= 2 dimensions, but self is {}D",
                    self.rank()
                ),
            ));
        }
        let order: Vec<usize> = (0..self.rank()).rev().collect();
        self.view_op("t", Kind::Permute(order))
    }

    /// A view of `len` entries of dimension `dim` starting at `start`.
    ///
    /// ```
    /// let t = nn::Tensor::arange(0.0, 6.0, 1.0, nn::DType::F32).unwrap().reshape([2, 3]).unwrap();
    /// assert_eq!(t.narrow(1, 1, 2).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 2.0, 4.0, 5.0]);
    /// ```
    pub fn narrow(&self, dim: isize, start: usize, len: usize) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(Error::invalid(
                "narrow",
                "narrow() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = self.dim_index("narrow", dim)?;
        let size = self.shape()[d];
        if start > size || len > size - start {
            return Err(Error::invalid(
                "narrow",
                format!("start ({start}) + length ({len}) exceeds dimension size ({size})."),
            ));
        }
        let kind = Kind::Slice {
            dim: d,
            start,
            step: 1,
            len,
        };
        self.view_op("narrow", kind)
    }

    /// A view of the entries `start..end` of dimension `dim`, `step` apart: Python's `x[start:end:step]` along
    /// `dim` (negative bounds count from the end, bounds past the ends are clamped, `None` is the end).
    ///
    /// ```
    /// let x = nn::Tensor::arange(0.0, 10.0, 1.0, nn::DType::I64)?;
    /// assert_eq!(x.slice(0, Some(1), None, 3)?.to_vec::<i64>()?, vec![1, 4, 7]);     // x[1::3]
    /// assert_eq!(x.slice(0, Some(-3), Some(-1), 1)?.to_vec::<i64>()?, vec![7, 8]);   // x[-3:-1]
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn slice(&self, dim: isize, start: Option<isize>, end: Option<isize>, step: usize) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(Error::invalid("slice", "slice() cannot be applied to a 0-dim tensor."));
        }
        if step == 0 {
            return Err(Error::invalid("slice", "slice step cannot be zero"));
        }
        let d = self.dim_index("slice", dim)?;
        let size = self.shape()[d] as isize;
        let clamp = |i: isize| if i < 0 { (i + size).max(0) } else { i.min(size) };
        let start = clamp(start.unwrap_or(0)) as usize;
        let end = (clamp(end.unwrap_or(size)) as usize).max(start);
        let kind = Kind::Slice {
            dim: d,
            start,
            step,
            len: (end - start).div_ceil(step),
        };
        self.view_op("slice", kind)
    }

    /// The view of entry `index` of dimension `dim` (negative counts from the end), without that dimension
    /// (PyTorch's `select`, and `x[i]` along the first dimension).
    ///
    /// ```
    /// let x = nn::Tensor::arange(0.0, 6.0, 1.0, nn::DType::F32)?.reshape([2, 3])?;
    /// assert_eq!(x.select(1, -1)?.to_vec::<f32>()?, vec![2.0, 5.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn select(&self, dim: isize, index: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(Error::invalid(
                "select",
                "select() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = self.dim_index("select", dim)?;
        let size = self.shape()[d] as isize;
        if index < -size || index >= size {
            return Err(Error::invalid(
                "select",
                format!(
                    "select(): index {index} out of range for tensor of size {} at dimension {d}",
                    self.shape()
                ),
            ));
        }
        let index = if index < 0 { index + size } else { index } as usize;
        self.view_op("select", Kind::Select { dim: d, index })
    }

    /// This tensor seen with its size-1 dimensions (and new leading ones) repeated to `sizes`, `-1` keeping a
    /// size: a view whose repeated elements are one element of the storage (PyTorch's `expand`); the gradient
    /// sums over the copies. A write into it is refused, as PyTorch refuses it.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2, 1])?;
    /// let e = x.expand(&[2, 3])?;
    /// assert_eq!(e.to_vec::<f32>()?, vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    /// assert_eq!(e.stride(), vec![1, 0]);
    /// assert_eq!(x.expand(&[2, -1, 2])?.shape(), &[2, 2, 2]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn expand(&self, sizes: &[isize]) -> Result<Tensor> {
        let op = "expand";
        let listed = |s: &[isize]| format!("[{}]", s.iter().map(isize::to_string).collect::<Vec<_>>().join(", "));
        let lead = sizes.len().checked_sub(self.rank()).ok_or_else(|| {
            Error::invalid(
                op,
                format!(
                    "expand(torch.{}Tensor{{{}}}, size={}): the number of sizes provided ({}) must be greater or \
                     equal to the number of dimensions in the tensor ({})",
                    self.dtype().scalar_type_name(),
                    self.shape(),
                    listed(sizes),
                    sizes.len(),
                    self.rank()
                ),
            )
        })?;
        let mut target = Vec::with_capacity(sizes.len());
        for (i, &s) in sizes.iter().enumerate() {
            let own = i.checked_sub(lead).map(|d| self.shape()[d]);
            let size = match (s, own) {
                (-1, Some(own)) => own,
                (s, Some(own)) if s >= 0 && (own == s as usize || own == 1) => s as usize,
                (s, None) if s >= 0 => s as usize,
                (-1, None) => {
                    return Err(Error::invalid(
                        op,
                        format!(
                            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                        ),
                    ));
                }
                (s, Some(own)) => {
                    return Err(Error::invalid(
                        op,
                        format!(
                            "The expanded size of the tensor ({s}) must match the existing size ({own}) at \
                             non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                            listed(sizes),
                            self.shape()
                        ),
                    ));
                }
                (s, None) => {
                    return Err(Error::invalid(
                        op,
                        format!("Trying to create tensor with negative dimension {s}: {}", listed(sizes)),
                    ));
                }
            };
            target.push(size);
        }
        self.view_op(op, Kind::Expand(target.into()))
    }

    /// [`expand`](Self::expand) to `other`'s shape.
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        let sizes: Vec<isize> = other.shape().iter().map(|&s| s as isize).collect();
        self.expand(&sizes)
    }

    /// The view of the diagonal of dimensions `dim1` and `dim2` (`offset` above it, below for a negative one) as
    /// a last dimension (PyTorch's `diagonal`).
    ///
    /// ```
    /// let x = nn::Tensor::arange(0.0, 9.0, 1.0, nn::DType::F32)?.reshape([3, 3])?;
    /// assert_eq!(x.diagonal(0, 0, 1)?.to_vec::<f32>()?, vec![0.0, 4.0, 8.0]);
    /// assert_eq!(x.diagonal(1, 0, 1)?.to_vec::<f32>()?, vec![1.0, 5.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        let (d1, d2) = (self.dim_index("diagonal", dim1)?, self.dim_index("diagonal", dim2)?);
        if d1 == d2 {
            return Err(Error::invalid(
                "diagonal",
                format!("diagonal dimensions cannot be identical {dim1}, {dim2}"),
            ));
        }
        let kind = Kind::Diagonal {
            offset,
            dim1: d1,
            dim2: d2,
        };
        self.view_op("diagonal", kind)
    }

    /// The view of the storage's elements at `size` and `stride` from `storage_offset` (this tensor's own offset
    /// when `None`), as PyTorch's `as_strided`: the geometry is the storage's, not this tensor's.
    ///
    /// ```
    /// let x = nn::Tensor::arange(0.0, 5.0, 1.0, nn::DType::F32)?;
    /// let windows = x.as_strided(&[3, 3], &[1, 1], None)?;        // sliding windows of 3
    /// assert_eq!(windows.to_vec::<f32>()?, vec![0.0, 1.0, 2.0, 1.0, 2.0, 3.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn as_strided(&self, size: &[usize], stride: &[usize], storage_offset: Option<usize>) -> Result<Tensor> {
        let op = "as_strided";
        if size.len() != stride.len() {
            return Err(Error::invalid(
                op,
                format!(
                    "mismatch in length of strides and shape: {} strides for {} sizes",
                    stride.len(),
                    size.len()
                ),
            ));
        }
        let offset = storage_offset.unwrap_or(self.storage_offset());
        let numel = crate::shape::numel(size.iter().copied());
        let item = self.dtype().size_in_bytes();
        let needed = if numel == 0 {
            0
        } else {
            size.iter()
                .zip(stride)
                .try_fold(offset, |acc, (&n, &s)| {
                    (n - 1).checked_mul(s).and_then(|r| acc.checked_add(r))
                })
                .and_then(|last| last.checked_add(1))
                .unwrap_or(usize::MAX)
        };
        if needed > self.storage_len() {
            let list = |v: &[usize]| format!("[{}]", v.iter().map(usize::to_string).collect::<Vec<_>>().join(", "));
            return Err(Error::invalid(
                op,
                format!(
                    "setStorage: sizes {}, strides {}, storage offset {offset}, and itemsize {item} requiring a storage \
                     size of {} are out of bounds for storage of size {}",
                    list(size),
                    list(stride),
                    needed.saturating_mul(item),
                    self.storage_len() * item
                ),
            ));
        }
        let at = Geometry {
            shape: size.into(),
            strides: stride.iter().copied().collect(),
            offset,
        };
        self.view_op(op, Kind::AsStrided(at))
    }

    /// This tensor's elements in row-major order in a storage of their own where they do not lie so already
    /// (then a copy, recorded as PyTorch's `CloneBackward0`), else the tensor itself (PyTorch's `contiguous()`).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 3], nn::DType::F32);
    /// let c = x.t()?.contiguous()?;
    /// assert!(c.is_contiguous() && !c.shares_storage(&x));
    /// assert!(x.contiguous()?.shares_storage(&x));
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        self.recorded_copy()
    }

    /// A copy of the elements in a storage of their own, recorded as PyTorch's `clone()` (`CloneBackward0`).
    pub(crate) fn recorded_copy(&self) -> Result<Tensor> {
        run(&CloneOp, &[self])
    }
}

/// The shape `sizes` give for `numel` elements, one of them `-1` at most (PyTorch's `infer_size`).
fn infer_shape(op: &'static str, numel: usize, sizes: &[isize]) -> Result<Shape> {
    let listed = || {
        format!(
            "[{}]",
            sizes.iter().map(isize::to_string).collect::<Vec<_>>().join(", ")
        )
    };
    if sizes.iter().filter(|&&s| s == -1).count() > 1 {
        return Err(Error::invalid(op, "only one dimension can be inferred"));
    }
    if let Some(&s) = sizes.iter().find(|&&s| s < -1) {
        return Err(Error::invalid(op, format!("invalid shape dimension {s}")));
    }
    let known = crate::shape::numel(sizes.iter().filter(|&&s| s >= 0).map(|&s| s as usize));
    let invalid = || Error::invalid(op, format!("shape '{}' is invalid for input of size {numel}", listed()));
    let inferred = if sizes.contains(&-1) {
        if known == 0 || !numel.is_multiple_of(known) {
            return Err(invalid());
        }
        numel / known
    } else {
        if known != numel {
            return Err(invalid());
        }
        0
    };
    Ok(sizes
        .iter()
        .map(|&s| if s == -1 { inferred } else { s as usize })
        .collect())
}
