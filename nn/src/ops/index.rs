//! Selection by index along one dimension: `index_select` (and the embedding lookup, its `dim = 0` case),
//! `max` / `min` over a dimension (values and indices), and `index_add` (the scatter their gradients need), on
//! the CPU and on devices (`kernels::index`). Selections move elements as bytes, so every dtype is exact.
//!
//! On a device, the indices are checked there before use (one small kernel and a read of its verdict, the one
//! wait these ops add); an index out of range is the same typed error as on the CPU.

use kernels::GpuDevice;
use kernels::index::{self as kernel, IndexType, Layout};

use super::layout::element;
use super::{DevicePath, Op, probe_tensor, run};
use crate::tensor::autograd::{Backward, Saved};
use crate::tensor::device::float_type;
use crate::{DType, Error, Result, Shape, Tensor};

/// `(outer, size, inner)`: the elements before dimension `dim`, its size, and the elements after it.
fn split(shape: &Shape, dim: usize) -> (usize, usize, usize) {
    (
        shape[..dim].iter().product(),
        shape[dim],
        shape[dim + 1..].iter().product(),
    )
}

/// [`split`] as the kernels' layout.
fn layout(shape: &Shape, dim: usize) -> Layout {
    let (outer, channels, inner) = split(shape, dim);
    Layout { outer, channels, inner }
}

/// How `index` stores its indices, or an error naming `op` for a dtype that is not int64 or int32.
pub(crate) fn index_type(op: &'static str, index: &Tensor) -> Result<IndexType> {
    match index.dtype() {
        DType::I64 => Ok(IndexType::I64),
        DType::I32 => Ok(IndexType::I32),
        dtype => Err(Error::UnsupportedDType {
            op,
            dtype,
            hint: "; indices must be int64 or int32",
        }),
    }
}

/// Checks that `index` is a 0-d or 1-d int64 or int32 tensor, for `op`.
fn check_index_vector(op: &'static str, index: &Tensor) -> Result<()> {
    index_type(op, index)?;
    if index.rank() > 1 {
        return Err(Error::invalid(
            op,
            format!("the index must be a 0-d or 1-d tensor; got shape {}", index.shape()),
        ));
    }
    Ok(())
}

/// The indices of `index` (int64 or int32, on the CPU), each checked against `size` (the error names the
/// index, its position and the dimension).
pub(crate) fn indices(op: &'static str, index: &Tensor, dim: usize, size: usize) -> Result<Vec<usize>> {
    index
        .to_dtype(DType::I64)?
        .to_vec::<i64>()?
        .into_iter()
        .enumerate()
        .map(|(pos, i)| {
            usize::try_from(i).ok().filter(|&i| i < size).ok_or_else(|| {
                Error::invalid(
                    op,
                    format!("index {i} at position {pos} is out of range for dimension {dim} of size {size}"),
                )
            })
        })
        .collect()
}

/// Checks on the device that every index of `index` (there) is in `0..size`; a failure is [`indices`]' error,
/// which reads the indices back to name the one out of range.
fn check_on_device(op: &'static str, index: &Tensor, dim: usize, size: usize) -> Result<GpuIndex> {
    let ty = index_type(op, index)?;
    let buffer = index.gpu_buffer(op)?;
    let fine = kernel::check(&buffer, ty, index.numel(), size).map_err(|e| index.kernel_error(op, e))?;
    if !fine {
        indices(op, &index.cpu()?, dim, size)?;
        return Err(Error::invalid(
            op,
            format!("an index is out of range for dimension {dim} of size {size}"),
        ));
    }
    Ok(GpuIndex {
        buffer,
        ty,
        count: index.numel(),
    })
}

/// Indices on a device that passed [`check_on_device`].
struct GpuIndex {
    buffer: kernels::GpuBuffer,
    ty: IndexType,
    count: usize,
}

/// The slices of `x` at `index` along `dim`; inputs `[x, index]`. Slices taken from index `skip` get no
/// gradient (the embedding's `padding_idx`). `name`: `index_select`, or `embedding` for its lookup.
pub(crate) struct IndexSelect {
    pub(crate) dim: usize,
    pub(crate) skip: Option<usize>,
    pub(crate) name: &'static str,
}

impl IndexSelect {
    fn out_shape(&self, x: &Tensor, picks: usize) -> Shape {
        let mut shape = x.shape().to_vec();
        shape[self.dim] = picks;
        Shape::from(shape)
    }
}

impl Op for IndexSelect {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::Exact;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, index) = (inputs[0], inputs[1]);
        let (outer, size, inner) = split(x.shape(), self.dim);
        let picks = indices(self.name, index, self.dim, size)?;
        let width = inner * x.dtype().size_in_bytes();
        let bytes = x.with_bytes(|src| {
            let mut out = Vec::with_capacity(outer * picks.len() * width);
            for o in 0..outer {
                for &i in &picks {
                    let at = (o * size + i) * width;
                    out.extend_from_slice(&src[at..at + width]);
                }
            }
            out
        })?;
        Tensor::from_bytes(&bytes, self.out_shape(x, picks.len()), x.dtype())
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, index, op) = (inputs[0], inputs[1], self.name);
        let layout = layout(x.shape(), self.dim);
        let at = check_on_device(op, index, self.dim, layout.channels)?;
        let out = kernel::select(&x.gpu_buffer(op)?, element(op, x)?, layout, &at.buffer, at.ty, at.count)
            .map_err(|e| x.kernel_error(op, e))?;
        Ok(x.with_gpu(out, self.out_shape(x, at.count)))
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (dim, skip, name) = (self.dim, self.skip, self.name);
        let (shape, index) = (inputs[0].shape().clone(), Saved::new(inputs[1]));
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            // Each selected slice's gradient goes back to the slice it came from (summed when picked twice).
            let zeros = Tensor::zeros(shape.clone(), g[0].dtype()).to_device(g[0].device())?;
            let index = index.get(name)?;
            Ok(vec![Some(run(&IndexAdd { dim, skip }, &[&zeros, index, &g[0]])?), None])
        }))
    }
}

/// `x` with the slices of `src` added at `index` along `dim`, those sent to index `skip` left out; inputs
/// `[x, index, src]`.
struct IndexAdd {
    dim: usize,
    skip: Option<usize>,
}

impl Op for IndexAdd {
    type Output = Tensor;
    const NAME: &'static str = "index_add";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, index, src) = (inputs[0], inputs[1], inputs[2]);
        let (outer, size, inner) = split(x.shape(), self.dim);
        let picks = indices(Self::NAME, index, self.dim, size)?;
        let mut out = x.to_vec_f64()?;
        let add = src.to_vec_f64()?;
        for o in 0..outer {
            for (k, &i) in picks.iter().enumerate() {
                if Some(i) == self.skip {
                    continue;
                }
                let (to, from) = ((o * size + i) * inner, (o * picks.len() + k) * inner);
                for j in 0..inner {
                    out[to + j] += add[from + j];
                }
            }
        }
        Tensor::from_vec(out, x.shape().clone())?.to_dtype(x.dtype())
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, index, src, op) = (inputs[0], inputs[1], inputs[2], Self::NAME);
        let layout = layout(x.shape(), self.dim);
        let at = check_on_device(op, index, self.dim, layout.channels)?;
        let dtype = float_type(op, x.dtype())?;
        let out = kernel::add(
            dtype,
            &x.gpu_buffer(op)?,
            layout,
            &at.buffer,
            at.ty,
            &src.gpu_buffer(op)?,
            self.skip,
        )
        .map_err(|e| x.kernel_error(op, e))?;
        Ok(x.like_gpu(out))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Repeated indices (summed in order), an index never picked, and a skipped one.
        let index = Tensor::from_vec(vec![3i64, 0, 3, 1, 3], [5])?;
        let case = |skip| -> Result<(Self, Vec<Tensor>)> {
            let inputs = vec![
                probe_tensor(&[2, 4, 3], 0.0, dtype)?.mul_scalar(100.0)?,
                index.clone(),
                probe_tensor(&[2, 5, 3], 1.0, dtype)?,
            ];
            Ok((IndexAdd { dim: 1, skip }, inputs))
        };
        Ok(vec![case(None)?, case(Some(3))?])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (dim, skip, index) = (self.dim, self.skip, Saved::new(inputs[1]));
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let index = index.get(Self::NAME)?;
            // The skipped slices added nothing: their gradient is zero.
            let dsrc = needs[2]
                .then(|| match skip {
                    Some(s) => zero_slice(&g[0], dim, s)?.index_select(dim as isize, index),
                    None => g[0].index_select(dim as isize, index),
                })
                .transpose()?;
            Ok(vec![needs[0].then(|| g[0].clone()), None, dsrc])
        }))
    }
}

/// `g` with its slice `at` along `dim` zeroed (with ops, so on `g`'s device); `g` itself when there is none.
fn zero_slice(g: &Tensor, dim: usize, at: usize) -> Result<Tensor> {
    let size = g.shape()[dim];
    if at >= size {
        return Ok(g.clone());
    }
    let mut one = g.shape().to_vec();
    one[dim] = 1;
    let zeros = Tensor::zeros(one, g.dtype()).to_device(g.device())?;
    let d = dim as isize;
    Tensor::cat(&[&g.narrow(d, 0, at)?, &zeros, &g.narrow(d, at + 1, size - at - 1)?], d)
}

/// The largest (or smallest) element of each slice along `dim` and its index; inputs `[x]`. NaN wins, as in
/// PyTorch; among equal values the first.
struct Extreme {
    dim: usize,
    keepdim: bool,
    largest: bool,
}

impl Extreme {
    fn out_shape(&self, x: &Tensor) -> Shape {
        let mut shape = x.shape().to_vec();
        if self.keepdim {
            shape[self.dim] = 1;
        } else {
            shape.remove(self.dim);
        }
        Shape::from(shape)
    }

    fn empty_error(&self) -> Error {
        Error::invalid(
            self.name(),
            format!("cannot reduce over dimension {} of size 0", self.dim),
        )
    }
}

impl Op for Extreme {
    type Output = (Tensor, Tensor);

    fn name(&self) -> &'static str {
        if self.largest { "max" } else { "min" }
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<(Tensor, Tensor)> {
        let x = inputs[0];
        let (outer, size, inner) = split(x.shape(), self.dim);
        if size == 0 {
            return Err(self.empty_error());
        }
        let v = x.to_vec_f64()?;
        let mut at = Vec::with_capacity(outer * inner);
        for o in 0..outer {
            for j in 0..inner {
                let value = |i: usize| v[(o * size + i) * inner + j];
                let mut best = 0;
                for i in 1..size {
                    let (a, b) = (value(i), value(best));
                    if b.is_nan() {
                        break;
                    }
                    if a.is_nan() || (self.largest && a > b) || (!self.largest && a < b) {
                        best = i;
                    }
                }
                at.push(best);
            }
        }
        let shape = self.out_shape(x);
        let picked = x.with_bytes(|src| {
            let width = x.dtype().size_in_bytes();
            let mut out = Vec::with_capacity(at.len() * width);
            for (k, &i) in at.iter().enumerate() {
                let (o, j) = (k / inner.max(1), k % inner.max(1));
                let start = ((o * size + i) * inner + j) * width;
                out.extend_from_slice(&src[start..start + width]);
            }
            out
        })?;
        let values = Tensor::from_bytes(&picked, shape.clone(), x.dtype())?;
        let index = Tensor::from_vec(at.iter().map(|&i| i as i64).collect::<Vec<_>>(), shape)?;
        Ok((values, index))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<(Tensor, Tensor)> {
        let (x, op) = (inputs[0], self.name());
        let layout = layout(x.shape(), self.dim);
        if layout.channels == 0 {
            return Err(self.empty_error());
        }
        let (values, at) = kernel::extreme(float_type(op, x.dtype())?, &x.gpu_buffer(op)?, layout, self.largest)
            .map_err(|e| x.kernel_error(op, e))?;
        let shape = self.out_shape(x);
        Ok((x.with_gpu(values, shape.clone()), x.with_gpu_as(at, shape, DType::I64)))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        // Ties (the first wins), a NaN in a line (it wins), large magnitudes, along a middle dimension.
        let mut values = probe_tensor(&[2, 5, 3], 0.0, DType::F64)?
            .mul_scalar(1000.0)?
            .to_vec::<f64>()?;
        (values[0], values[3]) = (5000.0, 5000.0);
        (values[2], values[5]) = (-5000.0, -5000.0);
        values[7] = f64::NAN;
        values[16] = f64::NAN;
        let x = Tensor::from_vec(values, [2, 5, 3])?.to_dtype(dtype)?;
        let case = Extreme {
            dim: 1,
            keepdim: false,
            largest: self.largest,
        };
        Ok(vec![(case, vec![x])])
    }

    fn gradient(&self, inputs: &[&Tensor], output: &(Tensor, Tensor)) -> Option<Box<dyn Backward>> {
        let spread = ExtremeGrad {
            dim: self.dim,
            shape: inputs[0].shape().clone(),
        };
        let index = output.1.clone();
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(run(&spread, &[&g[0], &index])?)])
        }))
    }
}

/// The gradient of [`Extreme`]: each line's gradient at the index chosen, zeros elsewhere, in the input's
/// `shape`; inputs `[g, index]` (`index` as `Extreme` gave it).
struct ExtremeGrad {
    dim: usize,
    shape: Shape,
}

impl Op for ExtremeGrad {
    type Output = Tensor;
    const NAME: &'static str = "max backward";
    const DEVICE: DevicePath = DevicePath::Exact;

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (g, index) = (inputs[0], inputs[1]);
        let (outer, size, inner) = split(&self.shape, self.dim);
        let at = index.to_vec::<i64>()?;
        let dv = g.to_vec_f64()?;
        let mut dx = vec![0.0; outer * size * inner];
        for (k, (&i, &d)) in at.iter().zip(&dv).enumerate() {
            let (o, j) = (k / inner.max(1), k % inner.max(1));
            dx[(o * size + i as usize) * inner + j] = d;
        }
        Tensor::from_vec(dx, self.shape.clone())?.to_dtype(g.dtype())
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (g, index, op) = (inputs[0], inputs[1], Self::NAME);
        let dx = kernel::spread(
            &g.gpu_buffer(op)?,
            element(op, g)?,
            &index.gpu_buffer(op)?,
            layout(&self.shape, self.dim),
        )
        .map_err(|e| g.kernel_error(op, e))?;
        Ok(g.with_gpu(dx, self.shape.clone()))
    }
}

impl Tensor {
    /// The slices at `index` (a 1-d int64 or int32 tensor) along `dim`, in a new tensor (PyTorch's
    /// `index_select`); an index out of range is an error.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2])?;
    /// let i = Tensor::from_vec(vec![2i64, 0], [2])?;
    /// assert_eq!(x.index_select(0, &i)?.to_vec::<f32>()?, vec![5.0, 6.0, 1.0, 2.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let name = "index_select";
        let dim = self.dim_index(name, dim)?;
        check_index_vector(name, index)?;
        run(&IndexSelect { dim, skip: None, name }, &[self, index])
    }

    /// This tensor with the slices of `src` added at `index` along `dim` (PyTorch's out-of-place
    /// `index_add`); `src` has this tensor's shape but `index.len()` along `dim`.
    pub fn index_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let op = "index_add";
        let dim = self.dim_index(op, dim)?;
        check_index_vector(op, index)?;
        let mut want = self.shape().to_vec();
        want[dim] = index.numel();
        if src.shape().as_ref() != want.as_slice() || src.dtype() != self.dtype() {
            return Err(Error::invalid(
                op,
                format!(
                    "src must be {} of shape {want:?}; got {} of shape {}",
                    self.dtype(),
                    src.dtype(),
                    src.shape()
                ),
            ));
        }
        run(&IndexAdd { dim, skip: None }, &[self, index, src])
    }

    /// The largest element along `dim` and its index (PyTorch's `torch.max(x, dim, keepdim)`): NaN is the
    /// largest; among equal values the first index. The gradient goes to the element chosen.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0, 4.0], [2, 2])?;
    /// let (values, indices) = x.max_dim(1, false)?;
    /// assert_eq!(values.to_vec::<f32>()?, vec![5.0, 4.0]);
    /// assert_eq!(indices.to_vec::<i64>()?, vec![1, 1]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn max_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dim = self.dim_index("max", dim)?;
        run(
            &Extreme {
                dim,
                keepdim,
                largest: true,
            },
            &[self],
        )
    }

    /// The smallest element along `dim` and its index (PyTorch's `torch.min(x, dim, keepdim)`), as
    /// [`max_dim`](Self::max_dim).
    pub fn min_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dim = self.dim_index("min", dim)?;
        run(
            &Extreme {
                dim,
                keepdim,
                largest: false,
            },
            &[self],
        )
    }
}
