//! [`Forward`]: what a module computes.

use crate::Result;

/// The computation of a module: PyTorch's `forward`, with typed input and output.
///
/// Layers take and return [`Tensor`](crate::Tensor)s; a model may take tuples (an LSTM takes the sequence and
/// its state) and return several tensors. Errors (shape, dtype, device mismatches) are returned, not panics.
///
/// ```
/// use nn::prelude::*;
///
/// #[derive(Module)]
/// struct Mlp {
///     fc1: Linear,
///     act: ReLU,
///     fc2: Linear,
/// }
///
/// impl Forward for Mlp {
///     type Input = Tensor;
///     type Output = Tensor;
///     fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
///         self.fc2.forward(self.act.forward(self.fc1.forward(x)?)?)
///     }
/// }
///
/// let mlp = Mlp { fc1: Linear::new(4, 8, true), act: ReLU::new(false), fc2: Linear::new(8, 2, true) };
/// let y = mlp.forward(Tensor::zeros([3, 4], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &[3, 2]);
/// ```
pub trait Forward {
    /// What the module takes.
    type Input;
    /// What the module returns.
    type Output;
    /// Computes the output. Calling it directly skips the module's hooks, as in PyTorch.
    fn forward(&self, input: Self::Input) -> Result<Self::Output>;

    /// [`forward`](Self::forward) on a borrowed input, for a caller that keeps the input: a module call with
    /// forward hooks shows them the input after `forward`. The default clones the input (for tensors, a
    /// handle: no data is copied); the built-in layers, which only read their input, override it to skip
    /// that clone.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let fc = Linear::new(4, 2, true);
    /// let x = Tensor::zeros([3, 4], DType::F32);
    /// assert_eq!(fc.forward_ref(&x).unwrap().shape(), &[3, 2]);
    /// ```
    fn forward_ref(&self, input: &Self::Input) -> Result<Self::Output>
    where
        Self::Input: Clone,
    {
        self.forward(input.clone())
    }
}
