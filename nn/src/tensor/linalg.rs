//! Matrix products, on `matrixmultiply`'s blocked GEMM (`f16`/`bf16` compute in `f32`).

use super::Tensor;
use super::real::Real;
use super::storage::CpuData;
use crate::{DType, Error, Result, Shape};

/// A strided matrix view: `data[r * row_stride + c * col_stride]` for `r < rows`, `c < cols`.
#[derive(Clone, Copy)]
pub(crate) struct Mat<'a, T> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a, T> Mat<'a, T> {
    /// A row-major `rows x cols` matrix.
    pub fn row_major(data: &'a [T], rows: usize, cols: usize) -> Mat<'a, T> {
        Mat {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The transpose, as a view.
    pub fn t(self) -> Mat<'a, T> {
        Mat {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }

    fn fits(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride < self.data.len()
    }
}

/// A float type `matrixmultiply` multiplies.
pub(crate) trait Gemm: Real + Default {
    /// `c = alpha * a @ b + beta * c`, with `c` row-major `a.rows x b.cols`.
    fn gemm(alpha: Self, a: Mat<'_, Self>, b: Mat<'_, Self>, beta: Self, c: &mut [Self]);
}

macro_rules! gemm_impl {
    ($t:ty, $f:path) => {
        impl Gemm for $t {
            fn gemm(alpha: $t, a: Mat<'_, $t>, b: Mat<'_, $t>, beta: $t, c: &mut [$t]) {
                let (m, k, n) = (a.rows, a.cols, b.cols);
                assert!(
                    b.rows == k && a.fits() && b.fits() && c.len() >= m * n,
                    "gemm: operands do not fit"
                );
                if m == 0 || n == 0 {
                    return;
                }
                if m * n * k <= SMALL_GEMM {
                    small_gemm(alpha, a, b, beta, c);
                    return;
                }
                // SAFETY: the assertion above proves that every index the routine reads, `r * row_stride +
                // c * col_stride` for r < rows and c < cols, lies inside `a.data` and `b.data`, and every index it
                // writes, `i * n + j` for i < m and j < n, inside `c`; `c` is borrowed mutably, so it aliases
                // neither input. Strides fit in isize because they index existing slices.
                unsafe {
                    $f(
                        m,
                        k,
                        n,
                        alpha,
                        a.data.as_ptr(),
                        a.row_stride as isize,
                        a.col_stride as isize,
                        b.data.as_ptr(),
                        b.row_stride as isize,
                        b.col_stride as isize,
                        beta,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    )
                }
            }
        }
    };
}
/// Products of at most this many multiply-adds skip `matrixmultiply`, whose packing costs about a
/// microsecond per call (a `Linear(4, 4)` on one row took 1.6 µs through it).
const SMALL_GEMM: usize = 4096;

/// `c = alpha * a @ b + beta * c` by plain loops, for small products (`beta = 0` overwrites `c`, as BLAS does).
fn small_gemm<T: Real + Default>(alpha: T, a: Mat<'_, T>, b: Mat<'_, T>, beta: T, c: &mut [T]) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    for i in 0..m {
        for j in 0..n {
            let mut acc = T::default();
            for p in 0..k {
                acc = acc + a.data[i * a.row_stride + p * a.col_stride] * b.data[p * b.row_stride + j * b.col_stride];
            }
            let out = &mut c[i * n + j];
            *out = if beta == T::default() {
                alpha * acc
            } else {
                alpha * acc + beta * *out
            };
        }
    }
}

gemm_impl!(f32, matrixmultiply::sgemm);
gemm_impl!(f64, matrixmultiply::dgemm);

/// Runs `f32`/`f64` code on the data of float tensors: `f64` stays `f64`, every other float dtype goes
/// through `f32` (the result is converted back by the caller).
pub(crate) enum FloatVec {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Tensor {
    /// The data as `f32` (for `f32`, `f16`, `bf16`) or `f64` vectors.
    pub(crate) fn float_vec(&self, op: &'static str) -> Result<FloatVec> {
        self.read_cpu(op, |d| match d {
            CpuData::F32(v) => Ok(FloatVec::F32(v.clone())),
            CpuData::F64(v) => Ok(FloatVec::F64(v.clone())),
            CpuData::F16(v) => Ok(FloatVec::F32(v.iter().map(|x| x.to_f32()).collect())),
            CpuData::BF16(v) => Ok(FloatVec::F32(v.iter().map(|x| x.to_f32()).collect())),
            other => Err(Error::float_only(op, other.dtype())),
        })?
    }

    /// A tensor of `dtype` from a [`FloatVec`] result.
    pub(crate) fn from_float_vec(v: FloatVec, shape: Shape, dtype: DType) -> Result<Tensor> {
        let t = match v {
            FloatVec::F32(v) => Tensor::from_vec(v, shape)?,
            FloatVec::F64(v) => Tensor::from_vec(v, shape)?,
        };
        t.to_dtype(dtype)
    }

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
        if weight.rank() != 2 {
            return Err(Error::invalid(
                op,
                format!("the weight must be 2-dimensional (out, in); got shape {}", weight.shape),
            ));
        }
        let (out_f, in_f) = (weight.shape[0], weight.shape[1]);
        if self.rank() == 0 || self.shape[self.rank() - 1] != in_f {
            return Err(Error::shapes(
                op,
                &self.shape,
                &weight.shape,
                "input (*, in_features) and weight (out_features, in_features)",
            ));
        }
        if let Some(b) = bias
            && (b.rank() != 1 || b.shape[0] != out_f)
        {
            return Err(Error::shapes(
                op,
                &b.shape,
                &weight.shape,
                "bias (out_features) for weight (out_features, in_features)",
            ));
        }
        for t in [Some(weight), bias].into_iter().flatten() {
            if t.dtype() != self.dtype() {
                return Err(Error::DTypeMismatch {
                    op,
                    expected: self.dtype(),
                    got: t.dtype(),
                });
            }
            if t.device() != self.device() {
                return Err(Error::DeviceMismatch {
                    op,
                    lhs: self.device(),
                    rhs: t.device(),
                });
            }
        }
        let rows = self.numel() / in_f;
        let mut out_shape: Shape = self.shape[..self.rank() - 1].iter().copied().collect();
        out_shape.push(out_f);
        if !self.device().is_cpu() {
            return crate::gpu::linear(self, weight, bias, out_shape);
        }
        let x = self.float_vec(op)?;
        let w = weight.float_vec(op)?;
        let b = bias.map(|b| b.float_vec(op)).transpose()?;
        fn run<T: Gemm>(x: &[T], w: &[T], b: Option<&[T]>, rows: usize, in_f: usize, out_f: usize) -> Vec<T> {
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
        let out = match (x, w, b) {
            (FloatVec::F32(x), FloatVec::F32(w), b) => {
                FloatVec::F32(run(&x, &w, b.as_ref().map(as_f32), rows, in_f, out_f))
            }
            (FloatVec::F64(x), FloatVec::F64(w), b) => {
                FloatVec::F64(run(&x, &w, b.as_ref().map(as_f64), rows, in_f, out_f))
            }
            _ => unreachable!("dtypes were checked equal"),
        };
        Tensor::from_float_vec(out, out_shape, self.dtype())
    }

    /// Matrix product of the last two dimensions, `(.., n, k) @ (.., k, m)`; a 2-dimensional right side is
    /// shared by every batch of the left side.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    /// let i = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], [2, 2]).unwrap();
    /// assert_eq!(a.matmul(&i).unwrap().to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let op = "matmul";
        if self.rank() < 2 || other.rank() < 2 {
            return Err(Error::shapes(
                op,
                &self.shape,
                &other.shape,
                "two tensors of rank 2 or more",
            ));
        }
        if self.dtype() != other.dtype() {
            return Err(Error::DTypeMismatch {
                op,
                expected: self.dtype(),
                got: other.dtype(),
            });
        }
        let (n, k) = (self.shape[self.rank() - 2], self.shape[self.rank() - 1]);
        let (k2, m) = (other.shape[other.rank() - 2], other.shape[other.rank() - 1]);
        let batch_a = &self.shape[..self.rank() - 2];
        let batch_b = &other.shape[..other.rank() - 2];
        if k != k2 || !(batch_b.is_empty() || batch_a == batch_b) {
            return Err(Error::shapes(
                op,
                &self.shape,
                &other.shape,
                "(.., n, k) and (k, m) or (.., k, m) with equal batch sizes",
            ));
        }
        let batches: usize = batch_a.iter().product();
        let mut out_shape: Shape = batch_a.iter().copied().collect();
        out_shape.push(n);
        out_shape.push(m);
        fn run<T: Gemm>(a: &[T], b: &[T], batches: usize, shared_b: bool, n: usize, k: usize, m: usize) -> Vec<T> {
            let mut out = vec![T::default(); batches * n * m];
            for i in 0..batches {
                let bb = if shared_b { b } else { &b[i * k * m..(i + 1) * k * m] };
                T::gemm(
                    T::ONE,
                    Mat::row_major(&a[i * n * k..(i + 1) * n * k], n, k),
                    Mat::row_major(bb, k, m),
                    T::default(),
                    &mut out[i * n * m..(i + 1) * n * m],
                );
            }
            out
        }
        let shared = batch_b.is_empty();
        let out = match (self.float_vec(op)?, other.float_vec(op)?) {
            (FloatVec::F32(a), FloatVec::F32(b)) => FloatVec::F32(run(&a, &b, batches, shared, n, k, m)),
            (FloatVec::F64(a), FloatVec::F64(b)) => FloatVec::F64(run(&a, &b, batches, shared, n, k, m)),
            _ => unreachable!("dtypes were checked equal"),
        };
        Tensor::from_float_vec(out, out_shape, self.dtype())
    }
}

fn as_f32(v: &FloatVec) -> &[f32] {
    match v {
        FloatVec::F32(v) => v,
        FloatVec::F64(_) => unreachable!("dtypes were checked equal"),
    }
}

fn as_f64(v: &FloatVec) -> &[f64] {
    match v {
        FloatVec::F64(v) => v,
        FloatVec::F32(_) => unreachable!("dtypes were checked equal"),
    }
}
