//! Matrix products on the host: `matrixmultiply`'s blocked GEMM, and plain loops for small products.

use crate::threads;
use kernels::Real;

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
                // Bands of rows of `c` (and `a`) on the crate's one thread pool; `matrixmultiply` itself runs
                // single-threaded, so no second pool competes for the cores. A band does not split again.
                let parts = threads::parts_for(m * n * k, PARALLEL_GEMM).min(m);
                if parts > 1 {
                    threads::for_each_piece(&mut c[..m * n], n, parts, |at, c| {
                        let a = Mat {
                            data: &a.data[at / n * a.row_stride..],
                            rows: c.len() / n,
                            ..a
                        };
                        Self::gemm(alpha, a, b, beta, c);
                    });
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
/// Products of at least this many multiply-adds (about a millisecond on one core) split their rows over the
/// thread pool. Measured on the DynamicsNetwork (2 cores): splitting its 5M-multiply-add convolution products
/// made a training step 25 % slower (6.0 vs 4.75 ms), the pool's hand-offs costing more than the second core
/// saved; so smaller products run on the calling thread.
pub(crate) const PARALLEL_GEMM: usize = 1 << 24;

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
