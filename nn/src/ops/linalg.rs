//! `linear` (`x·Wᵀ + b`) and `matmul`, on the CPU and on devices.

use kernels::GpuDevice;

use super::elementwise::broadcast_shape;
use super::float::{Float, with_float_type};
use super::gemm::{Gemm, Mat, PARALLEL_GEMM};
use super::{Op, probe_tensor, run, same_dtype, with_optional};
use crate::tensor::autograd::{Backward, Formula, Saved, is_grad_enabled};
use crate::{DType, Error, Result, Shape, Tensor, threads};

/// `x·Wᵀ + b` over the last dimension of `x`; inputs `[x, weight]` and `bias` when there is one.
struct Linear;

/// `(rows, in, out)` of a linear layer on `x` with `weight`, and the output shape `(*, out)`.
fn linear_sizes(x: &Tensor, weight: &Tensor) -> (usize, usize, usize, Shape) {
    let (out_f, in_f) = (weight.shape()[0], weight.shape()[1]);
    let rows = x.shape()[..x.rank() - 1].iter().product();
    let mut out_shape: Shape = x.shape()[..x.rank() - 1].iter().copied().collect();
    out_shape.push(out_f);
    (rows, in_f, out_f, out_shape)
}

impl Op for Linear {
    type Output = Tensor;
    const NAME: &'static str = "linear";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, w, b) = (inputs[0], inputs[1], inputs.get(2).copied());
        let (rows, in_f, out_f, out_shape) = linear_sizes(x, w);
        fn run<T: Float>(x: &[T], w: &[T], b: Option<&[T]>, rows: usize, in_f: usize, out_f: usize) -> Vec<T> {
            let mut out = vec![T::default(); rows * out_f];
            let beta = match b {
                Some(b) => {
                    for row in out.chunks_mut(out_f.max(1)) {
                        row.copy_from_slice(b);
                    }
                    T::ONE
                }
                None => T::default(),
            };
            T::gemm(
                T::ONE,
                Mat::row_major(x, rows, in_f),
                Mat::row_major(w, out_f, in_f).t(),
                beta,
                &mut out,
            );
            out
        }
        with_float_type!(x.dtype(), T => {
            let xs = x.float_ref::<T>("linear")?;
            let ws = w.float_ref::<T>("linear")?;
            let bs = b.map(|b| b.float_ref::<T>("linear")).transpose()?;
            let out = run::<T>(&xs, &ws, bs.as_deref(), rows, in_f, out_f);
            Tensor::from_computed(out, out_shape, x.dtype())
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, w, b) = (inputs[0], inputs[1], inputs.get(2).copied());
        let (rows, in_f, out_f, out_shape) = linear_sizes(x, w);
        let (w, bias) = (w.gpu_buffer(Self::NAME)?, Tensor::gpu_buffer_of(b, Self::NAME)?);
        x.gpu_op(Self::NAME, out_shape, |dtype, x| {
            kernels::linear::linear(dtype, x, &w, bias.as_ref(), rows, in_f, out_f)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let (x, w) = (probe_tensor(&[3, 5], 0.0, dtype)?, probe_tensor(&[4, 5], 1.0, dtype)?);
        let b = probe_tensor(&[4], 2.0, dtype)?;
        Ok(vec![(Linear, vec![x.clone(), w.clone(), b]), (Linear, vec![x, w])])
    }
    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (rows, in_f, out_f, _) = linear_sizes(inputs[0], inputs[1]);
        // dx reads only the weight, dw only the input: each is saved only when the other needs a gradient.
        let w = inputs[0].requires_grad().then(|| Saved::new(inputs[1]));
        let x = inputs[1].requires_grad().then(|| Saved::new(inputs[0]));
        let x_shape = inputs[0].shape().clone();
        let formula = Formula::new(move |g: &[Tensor], needs: &[bool]| {
            // As matrices: g [rows, out], x [rows, in], w [out, in]. Recording (a pass with `create_graph`), as
            // recorded products, so the gradients differentiate again; else each in one unrecorded product.
            let recording = is_grad_enabled();
            let g2 = g[0].reshape([rows, out_f])?;
            let dx = match (needs[0], &w) {
                (true, Some(w)) => {
                    let w = w.get("linear")?;
                    let dx = if recording {
                        g2.matmul(w)?
                    } else {
                        run(&LinearGrad::Input, &[&g2, w])?
                    };
                    Some(dx.reshape(x_shape.clone())?)
                }
                _ => None,
            };
            let dw = match (needs[1], &x) {
                (true, Some(x)) => {
                    let x = x.get("linear")?.reshape([rows, in_f])?;
                    Some(if recording {
                        g2.transpose(0, 1)?.matmul(&x)?
                    } else {
                        run(&LinearGrad::Weight, &[&g2, &x])?
                    })
                }
                _ => None,
            };
            let mut grads = vec![dx, dw];
            if needs.len() > 2 {
                grads.push(needs[2].then(|| g2.sum_dims(&[0], false)).transpose()?);
            }
            Ok(grads)
        });
        Some(formula.differentiable().boxed())
    }
}

/// A gradient of `linear` from the output's gradient `g` (`[rows, out]`): the input's, `g @ w` (`[rows, in]`),
/// from inputs `[g, w]`; the weight's, `gᵀ @ x` (`[out, in]`), from `[g, x]`. On the CPU one product that reads
/// the transposed operand in place; on a device the same products as `linear`s of transposed copies.
#[derive(Clone, Copy)]
enum LinearGrad {
    Input,
    Weight,
}

impl Op for LinearGrad {
    type Output = Tensor;
    const NAME: &'static str = "linear_backward";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (g, other) = (inputs[0], inputs[1]);
        let (rows, out_f, in_f) = (g.shape()[0], g.shape()[1], other.shape()[1]);
        let dtype = g.dtype();
        fn product<T: Float>(of: LinearGrad, g: &[T], other: &[T], rows: usize, out_f: usize, in_f: usize) -> Vec<T> {
            let g = Mat::row_major(g, rows, out_f);
            match of {
                LinearGrad::Input => {
                    let mut dx = vec![T::default(); rows * in_f];
                    T::gemm(T::ONE, g, Mat::row_major(other, out_f, in_f), T::default(), &mut dx);
                    dx
                }
                LinearGrad::Weight => {
                    let mut dw = vec![T::default(); out_f * in_f];
                    T::gemm(T::ONE, g.t(), Mat::row_major(other, rows, in_f), T::default(), &mut dw);
                    dw
                }
            }
        }
        let shape = match self {
            LinearGrad::Input => Shape::from([rows, in_f]),
            LinearGrad::Weight => Shape::from([out_f, in_f]),
        };
        with_float_type!(dtype, T => {
            let gs = g.float_ref::<T>(Self::NAME)?;
            let os = other.float_ref::<T>(Self::NAME)?;
            Tensor::from_computed(product::<T>(*self, &gs, &os, rows, out_f, in_f), shape, dtype)
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (g, other) = (inputs[0], inputs[1]);
        match self {
            LinearGrad::Input => g.linear(&other.transpose(0, 1)?, None),
            LinearGrad::Weight => g.transpose(0, 1)?.linear(&other.transpose(0, 1)?, None),
        }
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let g = probe_tensor(&[3, 4], 0.0, dtype)?;
        let (w, x) = (probe_tensor(&[4, 5], 1.0, dtype)?, probe_tensor(&[3, 5], 2.0, dtype)?);
        Ok(vec![
            (LinearGrad::Input, vec![g.clone(), w]),
            (LinearGrad::Weight, vec![g, x]),
        ])
    }
}

/// `(.., n, k) @ (.., k, m)`; inputs `[a, b]`.
struct Matmul;

/// `(batches, n, k, m)` of `a @ b`, whether `b` (of rank 2) is shared by every batch, and the output shape.
fn matmul_sizes(a: &Tensor, b: &Tensor) -> ([usize; 4], bool, Shape) {
    let (n, k) = (a.shape()[a.rank() - 2], a.shape()[a.rank() - 1]);
    let m = b.shape()[b.rank() - 1];
    let batch_a = &a.shape()[..a.rank() - 2];
    let mut out_shape: Shape = batch_a.iter().copied().collect();
    out_shape.push(n);
    out_shape.push(m);
    ([batch_a.iter().product(), n, k, m], b.rank() == 2, out_shape)
}

impl Op for Matmul {
    type Output = Tensor;
    const NAME: &'static str = "matmul";

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (a, b) = (inputs[0], inputs[1]);
        let ([batches, n, k, m], shared, out_shape) = matmul_sizes(a, b);
        fn run<T: Gemm>(a: &[T], b: &[T], batches: usize, shared_b: bool, n: usize, k: usize, m: usize) -> Vec<T> {
            let mut out = vec![T::default(); batches * n * m];
            let product = |i: usize, c: &mut [T]| {
                let bb = if shared_b { b } else { &b[i * k * m..(i + 1) * k * m] };
                T::gemm(
                    T::ONE,
                    Mat::row_major(&a[i * n * k..(i + 1) * n * k], n, k),
                    Mat::row_major(bb, k, m),
                    T::default(),
                    c,
                );
            };
            if n * m == 0 {
                return out;
            }
            // Batches of products too small to split their rows (attention's heads) split over the pool instead.
            let parts = threads::parts_for(batches * n * k * m, PARALLEL_GEMM).min(batches);
            threads::for_each_piece(&mut out, n * m, parts, |at, piece| {
                for (j, c) in piece.chunks_mut(n * m).enumerate() {
                    product(at / (n * m) + j, c);
                }
            });
            out
        }
        with_float_type!(a.dtype(), T => {
            let av = a.float_ref::<T>("matmul")?;
            let bv = b.float_ref::<T>("matmul")?;
            let out = run::<T>(&av, &bv, batches, shared, n, k, m);
            Tensor::from_computed(out, out_shape, a.dtype())
        })
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (a, b) = (inputs[0], inputs[1]);
        let (sizes, shared, out_shape) = matmul_sizes(a, b);
        let b = b.gpu_buffer(Self::NAME)?;
        a.gpu_op(Self::NAME, out_shape, |dtype, a| {
            kernels::linear::matmul(dtype, a, &b, sizes, shared)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let a = probe_tensor(&[2, 3, 5], 0.0, dtype)?;
        let (b, shared) = (
            probe_tensor(&[2, 5, 4], 1.0, dtype)?,
            probe_tensor(&[5, 4], 2.0, dtype)?,
        );
        Ok(vec![(Matmul, vec![a.clone(), b]), (Matmul, vec![a, shared])])
    }
    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn Backward>> {
        let (a, b) = (Saved::new(inputs[0]), Saved::new(inputs[1]));
        // Recorded products, transposes and reshapes only: differentiable.
        let formula = Formula::new(move |g: &[Tensor], needs: &[bool]| {
            let (a, b, g) = (a.get("matmul")?, b.get("matmul")?, &g[0]);
            let last_two = |t: &Tensor| t.transpose(-2, -1);
            let da = needs[0].then(|| g.matmul(&last_two(b)?)).transpose()?;
            let db = match (needs[1], b.rank()) {
                (false, _) => None,
                // A right side shared by every batch: its gradient sums over them.
                (true, 2) => {
                    // Rows from the leading dimensions, not numel / k: k or m may be 0.
                    let matrix = |t: &Tensor| {
                        let (rows, last) = t.shape().split_at(t.rank() - 1);
                        t.reshape([rows.iter().product(), last[0]])
                    };
                    let (a2, g2) = (matrix(a)?, matrix(g)?);
                    Some(a2.transpose(0, 1)?.matmul(&g2)?)
                }
                (true, _) => Some(last_two(a)?.matmul(g)?),
            };
            Ok(vec![da, db])
        });
        Some(formula.differentiable().boxed())
    }
}

impl Tensor {
    /// `x @ weight^T + bias` over the last dimension of `x` (PyTorch's `F.linear`).
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], [1, 2]).unwrap();
    /// let w = Tensor::from_vec(vec![1.0f32, 1.0, 0.0, 2.0], [2, 2]).unwrap();
    /// let b = Tensor::from_vec(vec![0.5f32, 0.0], [2]).unwrap();
    /// assert_eq!(x.linear(&w, Some(&b)).unwrap().to_vec::<f32>().unwrap(), vec![3.5, 4.0]);
    /// ```
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        let op = "linear";
        Error::check_rank(op, weight.shape(), 2, "the weight must be 2-dimensional (out, in)")?;
        let (out_f, in_f) = (weight.shape()[0], weight.shape()[1]);
        if self.rank() == 0 || self.shape()[self.rank() - 1] != in_f {
            return Err(Error::shapes(
                op,
                self.shape(),
                weight.shape(),
                "input (*, in_features) and weight (out_features, in_features)",
            ));
        }
        if let Some(b) = bias
            && (b.rank() != 1 || b.shape()[0] != out_f)
        {
            return Err(Error::shapes(
                op,
                b.shape(),
                weight.shape(),
                "bias (out_features) for weight (out_features, in_features)",
            ));
        }
        Error::check_float(op, self.dtype())?;
        same_dtype(op, self, &[Some(weight), bias])?;
        run(&Linear, &with_optional(&[self, weight], &[bias]))
    }

    /// PyTorch's `matmul` (`@`): the dot product of two vectors (a 0-d result), a matrix times a vector, a
    /// vector times a matrix, and products of the last two dimensions `(.., n, k) @ (.., k, m)` whose batch
    /// dimensions broadcast (a vector operand gets a dimension of 1 that the result drops).
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    /// let i = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], [2, 2]).unwrap();
    /// assert_eq!(a.matmul(&i).unwrap().to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    /// let v = Tensor::from_vec(vec![1.0f64, 1.0], [2]).unwrap();
    /// assert_eq!(a.matmul(&v).unwrap().to_vec::<f64>().unwrap(), vec![3.0, 7.0]);
    /// assert_eq!(v.matmul(&v).unwrap().shape().rank(), 0);
    /// let batch = Tensor::zeros([4, 1, 3, 2], nn::DType::F64);
    /// assert_eq!(batch.matmul(&a.unsqueeze(0).unwrap()).unwrap().shape().to_vec(), vec![4, 1, 3, 2]);
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let op = "matmul";
        match (self.rank(), other.rank()) {
            (0, _) | (_, 0) => Err(Error::invalid(
                op,
                format!(
                    "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
                    self.rank(),
                    other.rank()
                ),
            )),
            (1, 1) => {
                if self.numel() != other.numel() {
                    return Err(Error::invalid(
                        "dot",
                        format!(
                            "inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number \
                             of elements, but got {n} and {m} elements respectively",
                            n = self.numel(),
                            m = other.numel()
                        ),
                    ));
                }
                self.unsqueeze(0)?
                    .matmul(&other.unsqueeze(1)?)?
                    .reshape(Shape::from(Vec::new()))
            }
            (1, _) => self.unsqueeze(0)?.matmul(other)?.squeeze(-2),
            (_, 1) => self.matmul(&other.unsqueeze(1)?)?.squeeze(-1),
            _ => self.batched_matmul(other),
        }
    }

    /// `(.., n, k) @ (.., k, m)` with broadcast batch dimensions; both operands of rank 2 or more.
    fn batched_matmul(&self, other: &Tensor) -> Result<Tensor> {
        let op = "matmul";
        same_dtype(op, self, &[Some(other)])?;
        Error::check_float(op, self.dtype())?;
        let (ra, rb) = (self.rank(), other.rank());
        let (n, k) = (self.shape()[ra - 2], self.shape()[ra - 1]);
        let (k2, m) = (other.shape()[rb - 2], other.shape()[rb - 1]);
        if k != k2 {
            return Err(Error::invalid(
                op,
                format!("mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})"),
            ));
        }
        let batch_a = Shape::from(self.shape()[..ra - 2].to_vec());
        let batch_b = Shape::from(other.shape()[..rb - 2].to_vec());
        // A matrix on the right is shared by every batch of the left, as the kernels take it.
        if rb == 2 {
            return run(&Matmul, &[self, other]);
        }
        let batch = broadcast_shape(op, &batch_a, &batch_b)?;
        let expanded = |t: &Tensor, rows: usize, cols: usize| -> Result<Tensor> {
            let sizes: Vec<isize> = batch.iter().chain(&[rows, cols]).map(|&s| s as isize).collect();
            if t.shape()[..t.rank() - 2] == batch[..] {
                Ok(t.clone())
            } else {
                t.expand(&sizes)
            }
        };
        run(&Matmul, &[&expanded(self, n, k)?, &expanded(other, k, m)?])
    }

    /// The batched matrix product of two 3-d tensors of equal batch size, `(b, n, k) @ (b, k, m)` (PyTorch's
    /// `bmm`).
    pub fn bmm(&self, other: &Tensor) -> Result<Tensor> {
        let op = "bmm";
        for (name, t) in [("batch1", self), ("batch2", other)] {
            if t.rank() != 3 {
                return Err(Error::invalid(op, format!("{name} must be a 3D tensor")));
            }
        }
        let (b, k) = (self.shape()[0], self.shape()[2]);
        if other.shape()[0] != b || other.shape()[1] != k {
            return Err(Error::invalid(
                op,
                format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{}, {}].",
                    other.shape()[0],
                    other.shape()[1]
                ),
            ));
        }
        self.batched_matmul(other)
    }

    /// The outer product of two vectors, `out[i][j] = a[i]·b[j]` (PyTorch's `outer`).
    pub fn outer(&self, other: &Tensor) -> Result<Tensor> {
        for (name, t) in [("self", self), ("vec2", other)] {
            if t.rank() != 1 {
                return Err(Error::invalid(
                    "outer",
                    format!("Expected 1-D argument {name}, but got {}-D", t.rank()),
                ));
            }
        }
        self.unsqueeze(1)?.mul(&other.unsqueeze(0)?)
    }
}
