//! Selection by a bool mask: `where_cond` (PyTorch's `torch.where(condition, input, other)`) and `masked_fill`,
//! broadcasting, for every dtype on the CPU and every dtype a device moves, differentiable in the values.

use kernels::GpuDevice;
use kernels::boolean;

use super::arith::operand;
use super::elementwise::{broadcast_shape, broadcast_strides, result_type};
use super::{DevicePath, Op, run};
use crate::tensor::autograd::{Backward, Saved};
use crate::tensor::device::element;
use crate::tensor::storage::{CpuData, with_cpu_data};
use crate::{DType, Error, Result, Shape, Tensor, no_grad};

/// `cond ? a : b` broadcast, `a` and `b` of one dtype; inputs `[cond, a, b]`. Named `where` or `masked_fill`
/// (PyTorch's node of each).
struct Where {
    name: &'static str,
}

/// `cond ? a : b` over `shape`, each operand read through broadcast strides.
fn select_host<T: Copy>(cond: (&[bool], &[usize]), a: (&[T], &[usize]), b: (&[T], &[usize]), shape: &Shape) -> Vec<T> {
    let (n, rank) = (shape.numel(), shape.rank());
    let mut out = Vec::with_capacity(n);
    let (mut index, mut at) = (vec![0; rank], [0usize; 3]);
    let strides = [cond.1, a.1, b.1];
    for _ in 0..n {
        out.push(if cond.0[at[0]] { a.0[at[1]] } else { b.0[at[2]] });
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                (0..3).for_each(|k| at[k] += strides[k][d]);
                break;
            }
            (0..3).for_each(|k| at[k] -= strides[k][d] * (shape[d] - 1));
            index[d] = 0;
        }
    }
    out
}

/// The shape three shapes broadcast to.
fn broadcast3(op: &'static str, a: &Shape, b: &Shape, c: &Shape) -> Result<Shape> {
    broadcast_shape(op, &broadcast_shape(op, a, b)?, c)
}

impl Op for Where {
    type Output = Tensor;
    const DEVICE: DevicePath = DevicePath::Exact;

    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (c, a, b, name) = (inputs[0], inputs[1], inputs[2], self.name);
        let shape = broadcast3(name, c.shape(), a.shape(), b.shape())?;
        let [sc, sa, sb] = [c, a, b].map(|t| broadcast_strides(t.shape(), &shape));
        let data = c.read_cpu(name, |dc| {
            a.read_cpu(name, |da| {
                b.read_cpu(name, |db| {
                    let cond = dc.as_slice::<bool>().expect("the condition is bool");
                    with_cpu_data!(da, x => {
                        let y = db.as_slice().expect("the values were promoted to one dtype");
                        CpuData::from_vec(select_host((cond, &sc), (x, &sa), (y, &sb), &shape))
                    })
                })
            })
        })???;
        Ok(Tensor::from_cpu(data, shape))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (c, a, b, name) = (inputs[0], inputs[1], inputs[2], self.name);
        let shape = broadcast3(name, c.shape(), a.shape(), b.shape())?;
        let kind = element(name, a.dtype(), a.device())?;
        let [bc, ba, bb] = [c, a, b].map(|t| t.gpu_buffer(name));
        let (bc, ba, bb) = (bc?, ba?, bb?);
        let out = boolean::where_cond(kind, operand(&bc, c), operand(&ba, a), operand(&bb, b), &shape)
            .map_err(|e| a.kernel_error(name, e))?;
        Ok(a.with_gpu(out, shape))
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (cond, name) = (Saved::new(inputs[0]), self.name);
        let (a_shape, b_shape) = (inputs[1].shape().clone(), inputs[2].shape().clone());
        Some(Box::new(move |g: &[Tensor], needs: &[bool]| {
            let (c, g) = (cond.get(name)?, &g[0]);
            let zero = Tensor::try_full(Shape::scalar(), 0.0, g.dtype())?.to_device(g.device())?;
            Ok(vec![
                None,
                needs[1].then(|| c.where_cond(g, &zero)?.sum_to(&a_shape)).transpose()?,
                needs[2].then(|| c.where_cond(&zero, g)?.sum_to(&b_shape)).transpose()?,
            ])
        }))
    }
}

impl Tensor {
    /// `input` where this bool tensor is true, else `other`, element by element and broadcasting the three
    /// (PyTorch's `torch.where(condition, input, other)`); the values in their promoted dtype. The gradient
    /// flows to `input` where the condition holds and to `other` elsewhere.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0], [3])?;
    /// let zero = Tensor::from_vec(vec![0.0f32], [1])?;
    /// let relu = x.gt_scalar(0.0)?.where_cond(&x, &zero)?;
    /// assert_eq!(relu.to_vec::<f32>()?, vec![0.0, 2.0, 0.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn where_cond(&self, input: &Tensor, other: &Tensor) -> Result<Tensor> {
        let name = "where";
        if self.dtype() != DType::Bool {
            return Err(Error::invalid(
                name,
                format!(
                    "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                    self.dtype().scalar_type_name()
                ),
            ));
        }
        broadcast3(name, self.shape(), input.shape(), other.shape())?;
        let dtype = result_type(input, other);
        run(
            &Where { name },
            &[self, &input.to_dtype(dtype)?, &other.to_dtype(dtype)?],
        )
    }

    /// This tensor with `value` (cast to its dtype) where `mask` is true, broadcasting the two (PyTorch's
    /// `masked_fill`); `mask` is a bool tensor. The gradient flows where the mask is false.
    ///
    /// ```
    /// use nn::Tensor;
    /// let scores = Tensor::from_vec(vec![0.5f32, 1.0, 2.0, 3.0], [2, 2])?;
    /// let future = Tensor::from_vec(vec![false, true], [2])?;
    /// let masked = scores.masked_fill(&future, f64::NEG_INFINITY)?;
    /// assert_eq!(masked.to_vec::<f32>()?, vec![0.5, f32::NEG_INFINITY, 2.0, f32::NEG_INFINITY]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn masked_fill(&self, mask: &Tensor, value: f64) -> Result<Tensor> {
        let name = "masked_fill";
        check_mask(name, mask)?;
        broadcast_shape(name, self.shape(), mask.shape())?;
        let value = Tensor::try_full(Shape::scalar(), value, self.dtype())?.to_device(self.device())?;
        run(&Where { name }, &[mask, &value, self])
    }

    /// [`masked_fill`](Self::masked_fill) in place: `mask` broadcasts to this tensor's shape.
    pub fn masked_fill_(&self, mask: &Tensor, value: f64) -> Result<()> {
        let name = "masked_fill_";
        check_mask(name, mask)?;
        let shape = broadcast_shape(name, self.shape(), mask.shape())?;
        if &shape != self.shape() {
            return Err(Error::invalid(
                name,
                format!(
                    "output with shape {:?} doesn't match the broadcast shape {:?}",
                    self.shape().dims(),
                    shape.dims()
                ),
            ));
        }
        if self.is_recorded_write() {
            return super::in_place_recorded(name, self, |original| original.masked_fill(mask, value));
        }
        let filled = {
            let _plain = no_grad();
            self.masked_fill(mask, value)?
        };
        self.copy_(&filled)
    }
}

/// Refuses a mask that is not bool, with PyTorch's sentence.
fn check_mask(op: &'static str, mask: &Tensor) -> Result<()> {
    if mask.dtype() == DType::Bool {
        return Ok(());
    }
    Err(Error::invalid(
        op,
        format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype().cpp_name()
        ),
    ))
}
