//! Tensors from nested Rust arrays, as `torch.tensor(data)` makes them from nested lists: the
//! [`tensor!`](crate::tensor!) macro and [`Tensor::from_nested`].

use super::Tensor;
use crate::{DType, Element, Error, Result};

/// `torch.tensor(data)`: a tensor from nested arrays, vectors or slices of numbers or `bool`s, its shape read
/// from the nesting. As in PyTorch, floats give `float32`, integers `int64` and `bool`s `bool`, unless a dtype
/// follows the data. Returns a [`Result`]: nested vectors of unequal lengths give PyTorch's error.
///
/// ```
/// use nn::{DType, tensor};
/// let x = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
/// assert_eq!((x.shape().to_vec(), x.dtype()), (vec![2, 3], DType::F32));
/// assert_eq!(tensor!([1, 2, 3])?.dtype(), DType::I64);
/// assert_eq!(tensor!(2.5, DType::F64)?.to_string(), "tensor(2.5000, dtype=torch.float64)");
/// let ragged = tensor!(vec![vec![1.0, 2.0], vec![3.0]]).unwrap_err();
/// assert!(ragged.to_string().contains("expected sequence of length 2 at dim 1 (got 1)"));
/// # Ok::<(), nn::Error>(())
/// ```
#[macro_export]
macro_rules! tensor {
    ($data:expr $(,)?) => {
        $crate::Tensor::from_nested(&$data, None)
    };
    ($data:expr, $dtype:expr $(,)?) => {
        $crate::Tensor::from_nested(&$data, Some($dtype))
    };
}

/// A number or `bool` at the bottom of a [`Nested`] literal, and the dtype PyTorch gives it by default.
pub trait LiteralElement: Element {
    /// `torch.tensor`'s dtype for this kind of Python value: `float32` for floats, `int64` for integers.
    const DEFAULT_DTYPE: DType;
}

macro_rules! literal_element {
    ($($t:ty => $d:ident),*) => {
        $(impl LiteralElement for $t {
            const DEFAULT_DTYPE: DType = DType::$d;
        })*
    };
}

literal_element!(f64 => F32, f32 => F32, i64 => I64, i32 => I64, u8 => U8, bool => Bool);

/// Data [`Tensor::from_nested`] reads: a [`LiteralElement`], or an array, vector or slice of `Nested`.
pub trait Nested {
    /// The element at the bottom of the nesting.
    type Element: LiteralElement;
    /// Appends the sizes of this level and those below it, read from the first element of each level.
    fn dims(&self, out: &mut Vec<usize>);
    /// Appends the elements in row-major order, checking each level's length against `dims[level]`.
    fn elements(&self, dims: &[usize], level: usize, out: &mut Vec<Self::Element>) -> Result<()>;
}

impl<T: LiteralElement> Nested for T {
    type Element = T;
    fn dims(&self, _: &mut Vec<usize>) {}
    fn elements(&self, _: &[usize], _: usize, out: &mut Vec<T>) -> Result<()> {
        out.push(*self);
        Ok(())
    }
}

/// A sequence's sizes: its length, then its first element's.
fn sequence_dims<T: Nested>(items: &[T], out: &mut Vec<usize>) {
    out.push(items.len());
    if let Some(first) = items.first() {
        first.dims(out);
    }
}

/// A sequence's elements, its length checked against the first sequence of its level (PyTorch's message).
fn sequence_elements<T: Nested>(items: &[T], dims: &[usize], level: usize, out: &mut Vec<T::Element>) -> Result<()> {
    let expected = dims.get(level).copied().unwrap_or(0);
    if items.len() != expected {
        return Err(Error::invalid(
            "tensor",
            format!(
                "expected sequence of length {expected} at dim {level} (got {})",
                items.len()
            ),
        ));
    }
    items.iter().try_for_each(|item| item.elements(dims, level + 1, out))
}

macro_rules! nested_sequence {
    ($([$($generics:tt)*] $t:ty),*) => {
        $(impl<$($generics)*> Nested for $t {
            type Element = T::Element;
            fn dims(&self, out: &mut Vec<usize>) {
                sequence_dims(&self[..], out)
            }
            fn elements(&self, dims: &[usize], level: usize, out: &mut Vec<T::Element>) -> Result<()> {
                sequence_elements(&self[..], dims, level, out)
            }
        })*
    };
}

nested_sequence!([T: Nested, const N: usize] [T; N], [T: Nested] [T], [T: Nested] Vec<T>);

impl Tensor {
    /// A tensor from nested arrays, vectors or slices (`torch.tensor(data, dtype=dtype)`); the
    /// [`tensor!`](crate::tensor!) macro calls it. `dtype` `None` is PyTorch's choice: `float32` for floats,
    /// `int64` for integers.
    ///
    /// ```
    /// use nn::{DType, Tensor};
    /// let x = Tensor::from_nested(&[[1, 2], [3, 4]], Some(DType::F64))?;
    /// assert_eq!(x.to_vec::<f64>()?, vec![1.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn from_nested<N: Nested + ?Sized>(data: &N, dtype: Option<DType>) -> Result<Tensor> {
        let mut dims = Vec::new();
        data.dims(&mut dims);
        let mut values = Vec::with_capacity(dims.iter().product());
        data.elements(&dims, 0, &mut values)?;
        let dtype = dtype.unwrap_or(N::Element::DEFAULT_DTYPE);
        Tensor::from_vec(values, dims)?.to_dtype(dtype)
    }
}
