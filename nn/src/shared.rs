//! [`Shared`]: one module instance that sits in several places of a model.

use std::fmt;
use std::sync::Arc;

use parking_lot::lock_api::{ArcRwLockReadGuard, ArcRwLockWriteGuard};
use parking_lot::{RawRwLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::module::Module;

/// A handle to one module that several fields or containers hold, as a Python object referenced from several
/// attributes. Clones are the same module: a cast, a load or `train()` through one is seen through all.
///
/// Traversals list a shared module once (PyTorch's `remove_duplicate=True`), under the first path that reaches
/// it; `state_dict` and `Display` show it at every place, as PyTorch does.
///
/// ```
/// use nn::prelude::*;
///
/// #[derive(Module)]
/// struct Net {
///     a: Shared<PReLU>,
///     b: Shared<PReLU>,
/// }
///
/// let act = Shared::new(PReLU::new(1, 0.25));
/// let net = Net { a: act.clone(), b: act };
/// assert_eq!(net.named_parameters().len(), 1);
/// assert_eq!(net.state_dict().len(), 2);
/// ```
pub struct Shared<M> {
    inner: Arc<RwLock<M>>,
}

impl<M> Clone for Shared<M> {
    fn clone(&self) -> Self {
        Shared {
            inner: self.inner.clone(),
        }
    }
}

impl<M: Module> Shared<M> {
    /// Wraps `module` so that it can be placed in several fields.
    pub fn new(module: M) -> Shared<M> {
        Shared {
            inner: Arc::new(RwLock::new(module)),
        }
    }

    /// Reads the module (several readers may hold it at once, on any thread).
    pub fn read(&self) -> RwLockReadGuard<'_, M> {
        self.inner.read_recursive()
    }

    /// Changes the module; waits for readers to finish.
    pub fn write(&self) -> RwLockWriteGuard<'_, M> {
        self.inner.write()
    }

    /// Whether `self` and `other` are the same module.
    pub fn ptr_eq(&self, other: &Shared<M>) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Calls the module (with its hooks), under a read lock.
    pub fn call(&self, input: M::Input) -> crate::Result<M::Output>
    where
        M: crate::Forward,
        M::Input: Clone,
    {
        crate::hooks::Call::call(&*self.read(), input)
    }

    /// How many handles to the module exist.
    pub fn handle_count(&self) -> usize {
        Arc::strong_count(&self.inner)
    }
}

/// A read lock on a shared module that owns a handle to it, so it outlives the borrow it was taken through.
pub struct SharedReadGuard(Box<dyn ErasedRead>);
/// A write lock on a shared module that owns a handle to it.
pub struct SharedWriteGuard(Box<dyn ErasedWrite>);

trait ErasedRead {
    fn module(&self) -> &dyn Module;
}
trait ErasedWrite {
    fn module(&mut self) -> &mut dyn Module;
}
impl<M: Module> ErasedRead for ArcRwLockReadGuard<RawRwLock, M> {
    fn module(&self) -> &dyn Module {
        &**self
    }
}
impl<M: Module> ErasedWrite for ArcRwLockWriteGuard<RawRwLock, M> {
    fn module(&mut self) -> &mut dyn Module {
        &mut **self
    }
}

impl SharedReadGuard {
    /// The locked module.
    pub fn module(&self) -> &dyn Module {
        self.0.module()
    }
}

impl SharedWriteGuard {
    /// The locked module.
    pub fn module(&mut self) -> &mut dyn Module {
        self.0.module()
    }
}

/// A shared module seen without its type: what traversals use to reach it and to recognise it when it comes
/// back under another path.
pub trait SharedModule: Send + Sync {
    /// An address identifying the module (equal for every handle).
    fn id(&self) -> usize;
    /// Whether more than one handle exists (so a traversal may reach it twice).
    fn is_aliased(&self) -> bool;
    /// Runs `f` on the module under a read lock.
    fn with_ref(&self, f: &mut dyn FnMut(&dyn Module));
    /// Runs `f` on the module under a write lock.
    fn with_mut(&self, f: &mut dyn FnMut(&mut dyn Module));
    /// A read lock that owns a handle to the module.
    fn read_owned(&self) -> SharedReadGuard;
    /// A write lock that owns a handle to the module.
    fn write_owned(&self) -> SharedWriteGuard;
}

impl<M: Module> SharedModule for Shared<M> {
    fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as *const () as usize
    }
    fn is_aliased(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }
    fn with_ref(&self, f: &mut dyn FnMut(&dyn Module)) {
        f(&*self.inner.read_recursive())
    }
    fn with_mut(&self, f: &mut dyn FnMut(&mut dyn Module)) {
        f(&mut *self.inner.write())
    }
    fn read_owned(&self) -> SharedReadGuard {
        SharedReadGuard(Box::new(self.inner.read_arc_recursive()))
    }
    fn write_owned(&self) -> SharedWriteGuard {
        SharedWriteGuard(Box::new(self.inner.write_arc()))
    }
}

impl<M: Module> fmt::Display for Shared<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.read().repr())
    }
}

impl<M: Module> fmt::Debug for Shared<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Shared({})", self.read().repr())
    }
}

/// A shared module's forward is a call of the module it holds: that module's hooks run.
impl<M: Module + crate::Forward> crate::Forward for Shared<M>
where
    M::Input: Clone,
{
    type Input = M::Input;
    type Output = M::Output;
    fn forward(&self, input: M::Input) -> crate::Result<M::Output> {
        crate::hooks::Call::call(&*self.read(), input)
    }
}

impl<M: Module + Default> Default for Shared<M> {
    fn default() -> Self {
        Shared::new(M::default())
    }
}
