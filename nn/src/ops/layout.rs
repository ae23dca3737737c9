//! Layout operations: views that share storage (`reshape`, `flatten`, `unsqueeze`, `squeeze`) and copies that
//! rearrange elements (`permute`, `transpose`, `narrow`, `cat`), on the CPU and on devices (where the copies
//! are gather kernels: exact, so not probed).

use kernels::GpuDevice;
use kernels::gather::{self, Element};

use super::{DevicePath, Op, run};
use crate::tensor::autograd::Backward;
use crate::tensor::storage::{CpuData, with_cpu_data};
use crate::{DType, Error, Result, Shape, Tensor};

/// `x` seen with another shape of its element count; inputs `[x]`. Shares storage, on any device.
struct View(Shape);

impl Op for View {
    type Output = Tensor;
    const NAME: &'static str = "reshape";
    const DEVICE: DevicePath = DevicePath::Anywhere;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        Ok(inputs[0].view(self.0.clone()))
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let shape = inputs[0].shape().clone();
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(g[0].reshape(shape.clone())?)])
        }))
    }
}

/// How elements of `x`'s dtype move on a device, or an error naming `op` for dtypes no kernel moves.
pub(crate) fn element(op: &'static str, x: &Tensor) -> Result<Element> {
    match x.dtype() {
        DType::F16 => Ok(Element::F16),
        DType::BF16 => Ok(Element::BF16),
        DType::F32 | DType::I32 => Ok(Element::Bits32),
        DType::F64 | DType::I64 => Ok(Element::Bits64),
        dtype @ (DType::U8 | DType::Bool) => Err(Error::UnsupportedOnDevice {
            op,
            dtype,
            device: x.device(),
            reason: "1-byte elements are not moved by the device kernels; move the tensor with .cpu() first".into(),
        }),
    }
}

/// The elements of a tensor at `offset + Σ index·strides` for every index of `shape`: a permutation or a
/// slice, which [`Gather::of`] works out from the input.
struct Gather {
    shape: Shape,
    strides: Vec<usize>,
    offset: usize,
}

/// `permute(order)` or `narrow(dim, start, len)`; inputs `[x]`.
pub(super) enum Rearrange {
    Permute(Vec<usize>),
    Narrow { dim: usize, start: usize, len: usize },
}

impl Rearrange {
    /// The gather that reads `x` rearranged.
    fn of(&self, x: &Tensor) -> Gather {
        let in_strides = x.shape().strides();
        match self {
            Rearrange::Permute(order) => Gather {
                shape: order.iter().map(|&o| x.shape()[o]).collect(),
                strides: order.iter().map(|&o| in_strides[o]).collect(),
                offset: 0,
            },
            Rearrange::Narrow { dim, start, len } => {
                let mut sizes = x.shape().to_vec();
                sizes[*dim] = *len;
                Gather {
                    shape: Shape::from(sizes),
                    strides: in_strides.to_vec(),
                    offset: start * in_strides[*dim],
                }
            }
        }
    }
}

impl Op for Rearrange {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::Exact;

    fn name(&self) -> &'static str {
        match self {
            Rearrange::Permute(_) => "permute",
            Rearrange::Narrow { .. } => "narrow",
        }
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let g = self.of(x);
        let data = x.read_cpu(
            self.name(),
            |d| with_cpu_data!(d, v => CpuData::from_vec(gather_host(v, &g.shape, &g.strides, g.offset))),
        )?;
        Ok(Tensor::from_cpu(data, g.shape))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, op) = (inputs[0], self.name());
        let g = self.of(x);
        let out = gather::gather(&x.gpu_buffer(op)?, element(op, x)?, &g.shape, &g.strides, g.offset)
            .map_err(|e| x.kernel_error(op, e))?;
        Ok(x.with_gpu(out, g.shape))
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let x = inputs[0];
        let (shape, dtype, device) = (x.shape().clone(), x.dtype(), x.device());
        let backward: Box<dyn Backward> = match self {
            Rearrange::Permute(order) => {
                let mut inverse = vec![0; order.len()];
                for (i, &o) in order.iter().enumerate() {
                    inverse[o] = i;
                }
                Box::new(move |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].permute(&inverse)?)]))
            }
            &Rearrange::Narrow { dim, start, len } => Box::new(move |g: &[Tensor], _: &[bool]| {
                // The gradient in the slice, zeros before and after it.
                let zeros = |n: usize| -> Result<Tensor> {
                    let mut sizes = shape.to_vec();
                    sizes[dim] = n;
                    Tensor::zeros(sizes, dtype).to_device(device)
                };
                let (before, after) = (zeros(start)?, zeros(shape[dim] - start - len)?);
                Ok(vec![Some(Tensor::cat(&[&before, &g[0], &after], dim as isize)?)])
            }),
        };
        Some(backward)
    }
}

/// The inputs joined along `dim` (checked: one dtype, equal sizes off `dim`); inputs: the tensors.
struct Cat {
    dim: usize,
}

impl Cat {
    /// The joined shape, and the `(outer, row)` layout of the output: `outer` rows of `row` elements.
    fn layout(&self, inputs: &[&Tensor]) -> (Shape, usize, usize) {
        let d = self.dim;
        let mut sizes = inputs[0].shape().to_vec();
        sizes[d] = inputs.iter().map(|t| t.shape()[d]).sum();
        let out_shape = Shape::from(sizes);
        let outer = out_shape[..d].iter().product();
        let row = out_shape[d..].iter().product();
        (out_shape, outer, row)
    }
}

impl Op for Cat {
    type Output = Tensor;
    const NAME: &'static str = "cat";
    const DEVICE: DevicePath = DevicePath::Exact;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (out_shape, outer, out_row) = self.layout(inputs);
        let mut out = CpuData::zeros(inputs[0].dtype(), out_shape.numel());
        let mut col = 0;
        for t in inputs {
            let row: usize = t.shape()[self.dim..].iter().product();
            t.read_cpu("cat", |src| copy_rows(src, &mut out, outer, row, out_row, col))?;
            col += row;
        }
        Ok(Tensor::from_cpu(out, out_shape))
    }

    fn device(&self, inputs: &[&Tensor], gpu: &GpuDevice) -> Result<Tensor> {
        let first = inputs[0];
        let element = element("cat", first)?;
        let (out_shape, outer, out_row) = self.layout(inputs);
        let out = kernels::GpuBuffer::uninit(gpu, out_shape.numel() * first.dtype().size_in_bytes());
        let mut col = 0;
        for t in inputs {
            let row: usize = t.shape()[self.dim..].iter().product();
            gather::place_rows(&t.gpu_buffer("cat")?, &out, element, outer, row, out_row, col)
                .map_err(|e| t.kernel_error("cat", e))?;
            col += row;
        }
        Ok(first.with_gpu(out, out_shape))
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let dim = self.dim;
        let sizes: Vec<usize> = inputs.iter().map(|t| t.shape()[dim]).collect();
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let mut start = 0;
            let mut grads = Vec::with_capacity(sizes.len());
            for (&len, &need) in sizes.iter().zip(needs) {
                grads.push(need.then(|| g[0].narrow(dim as isize, start, len)).transpose()?);
                start += len;
            }
            Ok(grads)
        }))
    }
}

impl Tensor {
    /// The same data viewed with another shape of equal element count (shares storage, as PyTorch's `view`).
    ///
    /// ```
    /// let t = nn::Tensor::zeros([2, 6], nn::DType::F32);
    /// assert_eq!(t.reshape([3, 4]).unwrap().shape(), &[3, 4]);
    /// assert!(t.reshape([5]).is_err());
    /// ```
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        if shape.numel() != self.numel() {
            return Err(Error::shapes(
                "reshape",
                self.shape(),
                &shape,
                "the same number of elements",
            ));
        }
        run(&View(shape), &[self])
    }

    /// [`reshape`](Self::reshape) where one size may be `-1`, inferred from the element count.
    ///
    /// ```
    /// let t = nn::Tensor::zeros([2, 3, 4], nn::DType::F32);
    /// assert_eq!(t.reshape_infer(&[-1, 12]).unwrap().shape(), &[2, 12]);
    /// ```
    pub fn reshape_infer(&self, sizes: &[isize]) -> Result<Tensor> {
        let known = crate::shape::numel(sizes.iter().filter(|&&s| s >= 0).map(|&s| s as usize));
        let inferred = sizes.iter().filter(|&&s| s == -1).count();
        if inferred > 1 || sizes.iter().any(|&s| s < -1) {
            return Err(Error::invalid(
                "reshape",
                format!("sizes {sizes:?}: at most one -1 and no other negative size"),
            ));
        }
        let shape: Shape = if inferred == 1 {
            if known == 0 || !self.numel().is_multiple_of(known) {
                return Err(Error::invalid(
                    "reshape",
                    format!(
                        "shape {:?} is invalid for a tensor of {} elements ({})",
                        sizes,
                        self.numel(),
                        self.shape()
                    ),
                ));
            }
            sizes
                .iter()
                .map(|&s| if s == -1 { self.numel() / known } else { s as usize })
                .collect()
        } else {
            sizes.iter().map(|&s| s as usize).collect()
        };
        self.reshape(shape)
    }

    /// Dimensions `start..=end` merged into one (negative indices count from the end), as `torch.flatten`.
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            return self.reshape([1]);
        }
        let s = self.dim_index("flatten", start)?;
        let e = self.dim_index("flatten", end)?;
        if s > e {
            return Err(Error::invalid(
                "flatten",
                format!("start_dim {start} comes after end_dim {end}"),
            ));
        }
        let dims = self.shape();
        let mut shape: Shape = dims[..s].iter().copied().collect();
        shape.push(dims[s..=e].iter().product());
        for &d in &dims[e + 1..] {
            shape.push(d);
        }
        self.reshape(shape)
    }

    /// A view with a size-1 dimension inserted at `dim` (`-1` appends).
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        let d = crate::tensor::normalize_dim("unsqueeze", dim, self.rank() + 1)?;
        let mut sizes: Vec<usize> = self.shape().to_vec();
        sizes.insert(d, 1);
        self.reshape(sizes)
    }

    /// A view without dimension `dim`, which must have size 1 (PyTorch leaves other sizes alone: so does this).
    pub fn squeeze(&self, dim: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            return Ok(self.clone());
        }
        let d = self.dim_index("squeeze", dim)?;
        if self.shape()[d] != 1 {
            return Ok(self.clone());
        }
        let mut sizes: Vec<usize> = self.shape().to_vec();
        sizes.remove(d);
        self.reshape(sizes)
    }

    /// A copy with the dimensions reordered: output dimension `i` is input dimension `order[i]`.
    pub fn permute(&self, order: &[usize]) -> Result<Tensor> {
        let rank = self.rank();
        let mut seen = vec![false; rank];
        if order.len() != rank
            || order
                .iter()
                .any(|&o| o >= rank || std::mem::replace(&mut seen[o], true))
        {
            return Err(Error::invalid(
                "permute",
                format!(
                    "{order:?} is not a permutation of the {rank} dimensions of a tensor of shape {}",
                    self.shape()
                ),
            ));
        }
        run(&Rearrange::Permute(order.to_vec()), &[self])
    }

    /// A copy with dimensions `a` and `b` swapped.
    pub fn transpose(&self, a: isize, b: isize) -> Result<Tensor> {
        let (a, b) = (self.dim_index("transpose", a)?, self.dim_index("transpose", b)?);
        let mut order: Vec<usize> = (0..self.rank()).collect();
        order.swap(a, b);
        self.permute(&order)
    }

    /// A copy of `len` entries of dimension `dim` starting at `start`.
    ///
    /// ```
    /// let t = nn::Tensor::arange(0.0, 6.0, 1.0, nn::DType::F32).unwrap().reshape([2, 3]).unwrap();
    /// assert_eq!(t.narrow(1, 1, 2).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 2.0, 4.0, 5.0]);
    /// ```
    pub fn narrow(&self, dim: isize, start: usize, len: usize) -> Result<Tensor> {
        let d = self.dim_index("narrow", dim)?;
        if self.rank() == 0 || start + len > self.shape()[d] {
            return Err(Error::invalid(
                "narrow",
                format!(
                    "entries {start}..{} of dimension {d} do not fit in shape {}",
                    start + len,
                    self.shape()
                ),
            ));
        }
        run(&Rearrange::Narrow { dim: d, start, len }, &[self])
    }

    /// The tensors, of one shape, stacked along a new dimension `dim` (PyTorch's `torch.stack`): each
    /// unsqueezed there, then joined.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
    /// let b = Tensor::from_vec(vec![3.0f32, 4.0], [2])?;
    /// let s = Tensor::stack(&[&a, &b], 1)?;
    /// assert_eq!(s.shape(), &[2, 2]);
    /// assert_eq!(s.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let first = tensors
            .first()
            .ok_or_else(|| Error::invalid("stack", "no tensors given"))?;
        if let Some(t) = tensors.iter().find(|t| t.shape() != first.shape()) {
            return Err(Error::shapes("stack", first.shape(), t.shape(), "tensors of one shape"));
        }
        let d = crate::tensor::normalize_dim("stack", dim, first.rank() + 1)? as isize;
        let parts = tensors.iter().map(|t| t.unsqueeze(d)).collect::<Result<Vec<_>>>()?;
        Tensor::cat(&parts.iter().collect::<Vec<_>>(), d)
    }

    /// This tensor repeated along its size-1 dimensions (and new leading ones) to `sizes`, `-1` keeping a
    /// size (PyTorch's `expand`, here a new tensor rather than a view); the gradient sums over the copies.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2, 1])?;
    /// assert_eq!(x.expand(&[2, 3])?.to_vec::<f32>()?, vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    /// assert_eq!(x.expand(&[2, -1, 2])?.shape(), &[2, 2, 2]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn expand(&self, sizes: &[isize]) -> Result<Tensor> {
        let op = "expand";
        let lead = sizes.len().checked_sub(self.rank()).ok_or_else(|| {
            Error::invalid(
                op,
                format!("{} sizes for a tensor of rank {}", sizes.len(), self.rank()),
            )
        })?;
        let mut target = Vec::with_capacity(sizes.len());
        for (i, &s) in sizes.iter().enumerate() {
            let own = i.checked_sub(lead).map(|d| self.shape()[d]);
            let size = match (s, own) {
                (-1, Some(own)) => own,
                (s, Some(own)) if s >= 0 && (own == s as usize || own == 1) => s as usize,
                (s, None) if s >= 0 => s as usize,
                _ => {
                    return Err(Error::invalid(
                        op,
                        format!(
                            "cannot expand shape {} to {sizes:?}: only size-1 dimensions grow",
                            self.shape()
                        ),
                    ));
                }
            };
            target.push(size);
        }
        // A product with ones keeps every value's bits (-0.0, NaN), and its gradient sums over the copies.
        let ones = Tensor::ones(target, self.dtype()).to_device(self.device())?;
        ones.mul(self)
    }

    /// The tensors joined along `dim`; all other sizes and the dtypes must agree.
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let first = tensors
            .first()
            .ok_or_else(|| Error::invalid("cat", "no tensors given"))?;
        let d = first.dim_index("cat", dim)?;
        for t in tensors {
            let same_rest = t.rank() == first.rank()
                && t.shape()
                    .iter()
                    .zip(first.shape().iter())
                    .enumerate()
                    .all(|(i, (a, b))| i == d || a == b);
            if !same_rest {
                return Err(Error::shapes(
                    "cat",
                    first.shape(),
                    t.shape(),
                    "equal sizes outside the joined dimension",
                ));
            }
        }
        super::same_dtype("cat", first, &tensors.iter().map(|t| Some(*t)).collect::<Vec<_>>())?;
        run(&Cat { dim: d }, tensors)
    }
}

/// Elements of `v` read at `offset + Σ index[i] * strides[i]` over `shape`, in row-major order.
fn gather_host<T: Copy>(v: &[T], shape: &Shape, strides: &[usize], offset: usize) -> Vec<T> {
    let n = shape.numel();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    // The trailing dimensions laid out contiguously in `v` are copied as runs (a narrow along dimension 1
    // copies whole rows of the rest).
    let mut rank = shape.rank();
    let mut run = 1;
    while rank > 0 && strides[rank - 1] == run {
        run *= shape[rank - 1];
        rank -= 1;
    }
    let mut index = vec![0usize; rank];
    let mut at = offset;
    for _ in 0..n / run {
        out.extend_from_slice(&v[at..at + run]);
        for d in (0..rank).rev() {
            index[d] += 1;
            at += strides[d];
            if index[d] < shape[d] {
                break;
            }
            at -= strides[d] * shape[d];
            index[d] = 0;
        }
    }
    out
}

/// Copies `outer` rows of `row` elements from `src` into `dst` rows of `dst_row` elements, at column `col`.
fn copy_rows(src: &CpuData, dst: &mut CpuData, outer: usize, row: usize, dst_row: usize, col: usize) {
    macro_rules! rows {
        ($($variant:ident),*) => {
            match (src, dst) {
                $((CpuData::$variant(s), CpuData::$variant(d)) => {
                    for o in 0..outer {
                        d[o * dst_row + col..o * dst_row + col + row].copy_from_slice(&s[o * row..(o + 1) * row]);
                    }
                })*
                _ => unreachable!("cat checked the dtypes"),
            }
        };
    }
    rows!(F16, BF16, F32, F64, I64, I32, U8, Bool)
}
