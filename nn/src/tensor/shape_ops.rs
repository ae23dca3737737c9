//! Shape operations: views that share storage (`reshape`, `flatten`, `unsqueeze`, `squeeze`) and copies that
//! rearrange elements (`permute`, `narrow`, `cat`).

use super::Tensor;
use super::storage::{CpuData, with_cpu_data};
use crate::{Error, Result, Shape};

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
                &self.shape,
                &shape,
                "the same number of elements",
            ));
        }
        Ok(Tensor {
            shape,
            storage: self.storage.clone(),
            grad_meta: self.grad_meta.clone(),
        })
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
                        self.shape
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
        let mut shape: Shape = self.shape[..s].iter().copied().collect();
        shape.push(self.shape[s..=e].iter().product());
        for &d in &self.shape[e + 1..] {
            shape.push(d);
        }
        self.reshape(shape)
    }

    /// A view with a size-1 dimension inserted at `dim` (`-1` appends).
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        let d = super::normalize_dim("unsqueeze", dim, self.rank() + 1)?;
        let mut sizes: Vec<usize> = self.shape.to_vec();
        sizes.insert(d, 1);
        self.reshape(sizes)
    }

    /// A view without dimension `dim`, which must have size 1 (PyTorch leaves other sizes alone: so does this).
    pub fn squeeze(&self, dim: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            return Ok(self.clone());
        }
        let d = self.dim_index("squeeze", dim)?;
        if self.shape[d] != 1 {
            return Ok(self.clone());
        }
        let mut sizes: Vec<usize> = self.shape.to_vec();
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
                    self.shape
                ),
            ));
        }
        let in_strides = self.shape.strides();
        let out_shape: Shape = order.iter().map(|&o| self.shape[o]).collect();
        let strides: Vec<usize> = order.iter().map(|&o| in_strides[o]).collect();
        if !self.device().is_cpu() {
            return crate::gpu::gather("permute", self, out_shape, &strides, 0);
        }
        let data = self.read_cpu(
            "permute",
            |d| with_cpu_data!(d, v => CpuData::from_vec(gather(v, &out_shape, &strides, 0))),
        )?;
        Ok(Tensor::from_cpu(data, out_shape))
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
        if self.rank() == 0 || start + len > self.shape[d] {
            return Err(Error::invalid(
                "narrow",
                format!(
                    "entries {start}..{} of dimension {d} do not fit in shape {}",
                    start + len,
                    self.shape
                ),
            ));
        }
        let mut out_shape = self.shape.clone();
        let strides = self.shape.strides();
        let mut sizes = out_shape.to_vec();
        sizes[d] = len;
        out_shape = Shape::from(sizes);
        let offset = start * strides[d];
        if !self.device().is_cpu() {
            return crate::gpu::gather("narrow", self, out_shape, &strides, offset);
        }
        let data = self.read_cpu(
            "narrow",
            |dd| with_cpu_data!(dd, v => CpuData::from_vec(gather(v, &out_shape, &strides, offset))),
        )?;
        Ok(Tensor::from_cpu(data, out_shape))
    }

    /// The tensors joined along `dim`; all other sizes and the dtypes must agree.
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let first = tensors
            .first()
            .ok_or_else(|| Error::invalid("cat", "no tensors given"))?;
        let d = first.dim_index("cat", dim)?;
        let mut total = 0;
        for t in tensors {
            let same_rest = t.rank() == first.rank()
                && t.shape
                    .iter()
                    .zip(first.shape.iter())
                    .enumerate()
                    .all(|(i, (a, b))| i == d || a == b);
            if !same_rest {
                return Err(Error::shapes(
                    "cat",
                    &first.shape,
                    &t.shape,
                    "equal sizes outside the joined dimension",
                ));
            }
            if t.dtype() != first.dtype() {
                return Err(Error::DTypeMismatch {
                    op: "cat",
                    expected: first.dtype(),
                    got: t.dtype(),
                });
            }
            total += t.shape[d];
        }
        let mut sizes = first.shape.to_vec();
        sizes[d] = total;
        let out_shape = Shape::from(sizes);
        if !first.device().is_cpu() {
            return crate::gpu::cat(tensors, d, out_shape);
        }
        let outer: usize = first.shape[..d].iter().product();
        let mut out = CpuData::zeros(first.dtype(), out_shape.numel());
        let row = |t: &Tensor| t.shape[d..].iter().product::<usize>();
        let out_row = row(&Tensor::zeros(out_shape.clone(), first.dtype()));
        let mut col = 0;
        for t in tensors {
            let r = row(t);
            t.read_cpu("cat", |src| copy_rows(src, &mut out, outer, r, out_row, col))?;
            col += r;
        }
        Ok(Tensor::from_cpu(out, out_shape))
    }
}

/// Elements of `v` read at `offset + Σ index[i] * strides[i]` over `shape`, in row-major order.
fn gather<T: Copy>(v: &[T], shape: &Shape, strides: &[usize], offset: usize) -> Vec<T> {
    let n = shape.numel();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let rank = shape.rank();
    let mut index = vec![0usize; rank];
    let mut at = offset;
    for _ in 0..n {
        out.push(v[at]);
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
