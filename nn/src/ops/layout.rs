//! Joining tensors: `cat` and `stack`, on the CPU and on devices (where the copy is a kernel that places rows:
//! exact, so not probed). The views that share storage are in `ops/view.rs`.

use kernels::GpuDevice;
use kernels::gather::{self, Element};

use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Formula};
use crate::tensor::storage::CpuData;
use crate::{Error, Result, Shape, Tensor};

/// How elements of `x`'s dtype move on a device, or an error naming `op` for dtypes no kernel moves.
pub(crate) fn element(op: &'static str, x: &Tensor) -> Result<Element> {
    crate::tensor::device::element(op, x.dtype(), x.device())
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
        Some(
            Formula::new(move |g: &[Tensor], needs: &[bool]| {
                let mut start = 0;
                let mut grads = Vec::with_capacity(sizes.len());
                for (&len, &need) in sizes.iter().zip(needs) {
                    grads.push(need.then(|| g[0].narrow(dim as isize, start, len)).transpose()?);
                    start += len;
                }
                Ok(grads)
            })
            .saving_nothing()
            .differentiable()
            .boxed(),
        )
    }
}

impl Tensor {
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
