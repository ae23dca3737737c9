//! The autograd state a tensor carries.
//!
//! A leaf tensor that wants gradients (every [`Param`](crate::Param)'s data) points to a [`GradMeta`]: whether
//! gradients are wanted and the slot they accumulate into. Reverse-mode autograd (a later addition) will extend
//! this: an operation whose input `requires_grad()` records a node onto the graph, and `backward` accumulates
//! into the leaves' `GradMeta`. Tensors that no gradient flows through carry `None` and pay nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use super::Tensor;

/// Whether a leaf tensor wants gradients, and its accumulated gradient (PyTorch's `.requires_grad`, `.grad`).
#[derive(Debug)]
pub struct GradMeta {
    requires_grad: AtomicBool,
    grad: Mutex<Option<Tensor>>,
}

impl GradMeta {
    /// A new state with no gradient yet.
    pub fn new(requires_grad: bool) -> GradMeta {
        GradMeta {
            requires_grad: AtomicBool::new(requires_grad),
            grad: Mutex::new(None),
        }
    }

    /// Whether gradients are wanted.
    pub fn requires_grad(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }

    /// Sets whether gradients are wanted.
    pub fn set_requires_grad(&self, on: bool) {
        self.requires_grad.store(on, Ordering::Relaxed)
    }

    /// The accumulated gradient (a handle sharing its data).
    pub fn grad(&self) -> Option<Tensor> {
        self.grad.lock().clone()
    }

    /// Replaces the gradient.
    pub fn set_grad(&self, grad: Option<Tensor>) {
        *self.grad.lock() = grad;
    }
}
