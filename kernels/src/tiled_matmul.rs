//! Matrix products through `cubek-matmul`'s tiled kernels, the maintained ones for cubecl 0.11: each workgroup
//! stages tiles of both operands and each unit accumulates a small tile of the output in registers (the
//! `SimpleUnit` routine, which needs no tensor-core instructions, so `f32` stays `f32` as PyTorch's default
//! `allow_tf32 = False` keeps it). [`crate::linear`] routes products big enough to gain to them and keeps its
//! direct kernels (one unit per output) for the rest and for `f64`.

use cubecl::prelude::*;
use cubecl::zspace::{Shape, Strides};
use cubek_matmul::definition::{MatmulElems, MatmulGlobalElems};
use cubek_matmul::multi_level::routines::batch::launch::launch_ref;
use cubek_matmul::multi_level::routines::batch::simple_unit::SimpleUnitAlgorithm;
use cubek_matmul::routine::BlueprintStrategy;
use cubek_std::InputBinding;

use crate::{FloatType, GpuBuffer, KernelError, Result};

/// A batch of matrices in a buffer: `batches × rows × cols` read row-major, or, when `transposed`, the
/// transpose of a row-major `batches × cols × rows` (a linear layer's weight read as `wᵀ`).
#[derive(Clone, Copy)]
pub(crate) struct Matrices<'a> {
    buffer: &'a GpuBuffer,
    batches: usize,
    rows: usize,
    cols: usize,
    transposed: bool,
}

impl<'a> Matrices<'a> {
    /// `batches` row-major `rows × cols` matrices.
    pub fn row_major(buffer: &'a GpuBuffer, batches: usize, rows: usize, cols: usize) -> Self {
        let transposed = false;
        Matrices {
            buffer,
            batches,
            rows,
            cols,
            transposed,
        }
    }

    /// The `rows × cols` transposes of `batches` row-major `cols × rows` matrices.
    pub fn transposed(buffer: &'a GpuBuffer, batches: usize, rows: usize, cols: usize) -> Self {
        let transposed = true;
        Matrices {
            buffer,
            batches,
            rows,
            cols,
            transposed,
        }
    }

    fn binding(&self) -> TensorBinding {
        let (rows, cols) = (self.rows, self.cols);
        let strides = if self.transposed {
            [rows * cols, 1, rows]
        } else {
            [rows * cols, cols, 1]
        };
        // SAFETY: the buffer holds `batches · rows · cols` elements (every caller checks it through
        // `check_operands`), and these strides address each of them once, below that count.
        unsafe {
            TensorBinding::from_raw_parts(
                self.buffer.handle().clone(),
                Strides::new(&strides),
                Shape::new([self.batches, rows, cols]),
            )
        }
    }
}

/// cubecl's element type for `dtype`, for the types the tiled path takes (`f64` stays on the direct kernels).
fn elem_type(dtype: FloatType) -> Option<cubecl::ir::ElemType> {
    match dtype {
        FloatType::F32 => Some(f32::elem_type_native()),
        FloatType::F16 => Some(half::f16::elem_type_native()),
        FloatType::BF16 => Some(half::bf16::elem_type_native()),
        FloatType::F64 => None,
    }
}

/// `a @ b` for each batch into a new `batches × a.rows × b.cols` buffer through the tiled kernel, accumulated in
/// `f32` (for the half types too, as PyTorch's opmath); [`KernelError::Unsupported`] when the routine does not
/// take the problem (`f64`, or a shape or device it has no configuration for), for the caller to fall back on
/// its direct kernel. The operands' sizes are the caller's to have checked.
pub(crate) fn product(op: &'static str, dtype: FloatType, a: Matrices<'_>, b: Matrices<'_>) -> Result<GpuBuffer> {
    let device = a.buffer.device();
    let unsupported = |reason: String| KernelError::Unsupported {
        op,
        dtype,
        device: device.to_string(),
        reason,
    };
    let elem = elem_type(dtype).ok_or_else(|| unsupported("the tiled kernel runs f32, f16 and bf16".into()))?;
    let (batches, n, m) = (a.batches, a.rows, b.cols);
    let out = GpuBuffer::uninit(device, batches * n * m * dtype.size_in_bytes());
    let out_matrices = Matrices::row_major(&out, batches, n, m);
    let mut dtypes = MatmulElems::from_globals(&MatmulGlobalElems {
        lhs: elem,
        rhs: elem,
        out: elem,
    });
    launch_ref::<SimpleUnitAlgorithm>(
        device.client(),
        InputBinding::Normal(a.binding(), elem),
        InputBinding::Normal(b.binding(), elem),
        out_matrices.binding(),
        &BlueprintStrategy::default(),
        &mut dtypes,
    )
    .map_err(|e| unsupported(format!("cubek-matmul: {e:?}")))?;
    Ok(out)
}
