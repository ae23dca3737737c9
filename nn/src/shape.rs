//! Tensor shapes.

use std::fmt;
use std::ops::Deref;

use smallvec::SmallVec;

/// The sizes of a tensor's dimensions, stored inline for up to four dimensions.
///
/// ```
/// use nn::Shape;
/// let s = Shape::from([2, 3, 4]);
/// assert_eq!(s.numel(), 24);
/// assert_eq!(s.to_string(), "[2, 3, 4]");
/// assert_eq!(Shape::scalar().numel(), 1);
/// ```
#[derive(PartialEq, Eq, Hash, Default)]
pub struct Shape(SmallVec<[usize; 4]>);

impl Clone for Shape {
    /// A copy of the sizes: one block copy (smallvec's own `clone` goes element by element).
    #[inline]
    fn clone(&self) -> Shape {
        Shape(SmallVec::from_slice(&self.0))
    }
}

impl Shape {
    /// The shape of a 0-dimensional tensor (one element).
    pub fn scalar() -> Shape {
        Shape(SmallVec::new())
    }

    /// Number of elements: the product of the sizes (1 for a scalar).
    ///
    /// A product that does not fit in `usize` is `usize::MAX` (no buffer holds that many elements, so a shape
    /// whose size overflows matches no tensor instead of wrapping round to a small count).
    ///
    /// ```
    /// use nn::Shape;
    /// assert_eq!(Shape::from([2, 3]).numel(), 6);
    /// assert_eq!(Shape::from([usize::MAX / 2 + 4, 2]).numel(), usize::MAX);
    /// assert_eq!(Shape::from([usize::MAX, 2, 0]).numel(), 0);
    /// ```
    pub fn numel(&self) -> usize {
        numel(self.0.iter().copied())
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Row-major strides, in elements.
    pub fn strides(&self) -> SmallVec<[usize; 4]> {
        let mut strides: SmallVec<[usize; 4]> = SmallVec::from_elem(0, self.0.len());
        let mut acc = 1;
        for (stride, &size) in strides.iter_mut().zip(self.0.iter()).rev() {
            *stride = acc;
            acc *= size;
        }
        strides
    }

    /// The sizes as a slice.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The sizes joined by `x`, as PyTorch prints parameter sizes (`2x2`; empty for a scalar).
    pub fn x_joined(&self) -> String {
        self.0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
    }

    pub(crate) fn push(&mut self, d: usize) {
        self.0.push(d);
    }
}

impl Deref for Shape {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<&[usize]> for Shape {
    fn from(s: &[usize]) -> Shape {
        Shape(SmallVec::from_slice(s))
    }
}

impl From<Vec<usize>> for Shape {
    fn from(s: Vec<usize>) -> Shape {
        Shape(SmallVec::from_vec(s))
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(s: [usize; N]) -> Shape {
        Shape(SmallVec::from_slice(&s))
    }
}

impl<const N: usize> From<&[usize; N]> for Shape {
    fn from(s: &[usize; N]) -> Shape {
        Shape(SmallVec::from_slice(s))
    }
}

impl From<&Shape> for Shape {
    fn from(s: &Shape) -> Shape {
        s.clone()
    }
}

impl FromIterator<usize> for Shape {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Shape {
        Shape(iter.into_iter().collect())
    }
}

impl PartialEq<[usize]> for Shape {
    fn eq(&self, other: &[usize]) -> bool {
        self.0.as_slice() == other
    }
}

impl<const N: usize> PartialEq<[usize; N]> for Shape {
    fn eq(&self, other: &[usize; N]) -> bool {
        self.0.as_slice() == other.as_slice()
    }
}

/// The product of `sizes`, `usize::MAX` when it overflows (see [`Shape::numel`]).
pub(crate) fn numel(sizes: impl IntoIterator<Item = usize>) -> usize {
    sizes.into_iter().fold(1, usize::saturating_mul)
}
