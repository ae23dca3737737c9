//! [`ModuleRef`] and [`ModuleMut`]: references to a module inside a tree, which may lie inside a
//! [`Shared`](crate::Shared) module and then keep it locked.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::rc::Rc;

use super::path::ModulePath;
use super::{Child, Module, Visitor};
use crate::shared::{SharedReadGuard, SharedWriteGuard};

/// A shared reference to a module of a tree (what `get_submodule`, `named_modules` and `named_children`
/// return). When the module lies inside a `Shared` module, the reference holds a read lock on it.
///
/// ```
/// use nn::prelude::*;
/// let seq = Sequential::new().append(Linear::new(2, 2, true));
/// let fc = seq.get_submodule("0").unwrap();
/// assert_eq!(fc.type_name(), "Linear");
/// assert!(fc.downcast_ref::<Linear>().is_some());
/// ```
pub struct ModuleRef<'a> {
    ptr: NonNull<dyn Module>,
    guard: Option<Rc<SharedReadGuard>>,
    _borrow: PhantomData<&'a dyn Module>,
}

impl<'a> ModuleRef<'a> {
    pub(crate) fn borrowed(module: &'a dyn Module) -> ModuleRef<'a> {
        ModuleRef {
            ptr: NonNull::from(module),
            guard: None,
            _borrow: PhantomData,
        }
    }

    /// A reference to `child`, a module reached from `parent`'s module: it keeps `parent`'s lock.
    fn child_of(parent: &ModuleRef<'a>, child: Child<'_>) -> ModuleRef<'a> {
        match child {
            Child::Owned(m) => ModuleRef {
                ptr: NonNull::from(m),
                guard: parent.guard.clone(),
                _borrow: PhantomData,
            },
            Child::Shared(s) => {
                let guard = Rc::new(s.read_owned());
                ModuleRef {
                    ptr: NonNull::from(guard.module()),
                    guard: Some(guard),
                    _borrow: PhantomData,
                }
            }
        }
    }

    /// The direct child `name`, or `None`.
    pub(crate) fn child(&self, name: &str) -> Option<ModuleRef<'a>> {
        let child = (**self).child(name)?;
        Some(ModuleRef::child_of(self, child))
    }
}

impl Clone for ModuleRef<'_> {
    fn clone(&self) -> Self {
        ModuleRef {
            ptr: self.ptr,
            guard: self.guard.clone(),
            _borrow: PhantomData,
        }
    }
}

impl Deref for ModuleRef<'_> {
    type Target = dyn Module;
    fn deref(&self) -> &dyn Module {
        // SAFETY: `ptr` was made from a `&dyn Module` that is either (a) borrowed from the tree for `'a`, along
        // a path of owned children — the tree cannot change or move while that borrow lives — or (b) inside a
        // `Shared` module whose data a lock in `guard` keeps alive (the guard owns an `Arc` of it) and
        // unchanged (it is a read lock); every module below that one is reached through it, so it is covered
        // by the same guard, which this reference holds (it is cloned into child references).
        unsafe { self.ptr.as_ref() }
    }
}

impl std::fmt::Debug for ModuleRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&(**self).repr())
    }
}

impl std::fmt::Display for ModuleRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&(**self).repr())
    }
}

/// A mutable reference to a module of a tree (what `get_submodule_mut` returns). When the module lies inside
/// a `Shared` module, the reference holds a write lock on it: drop it before reaching that module another way.
pub struct ModuleMut<'a> {
    ptr: NonNull<dyn Module>,
    guard: Option<SharedWriteGuard>,
    _borrow: PhantomData<&'a mut dyn Module>,
}

impl<'a> ModuleMut<'a> {
    pub(crate) fn borrowed(module: &'a mut dyn Module) -> ModuleMut<'a> {
        ModuleMut {
            ptr: NonNull::from(module),
            guard: None,
            _borrow: PhantomData,
        }
    }

    /// Moves to the direct child `name`, or returns `None` (and leaves `self` unchanged).
    pub(crate) fn into_child(mut self, name: &str) -> Result<ModuleMut<'a>, ModuleMut<'a>> {
        let ptr = match (*self).child_mut(name) {
            None => return Err(self),
            Some(super::ChildMut::Owned(m)) => NonNull::from(m),
            Some(super::ChildMut::Shared(s)) => {
                let mut guard = s.write_owned();
                let ptr = NonNull::from(guard.module());
                // The new guard owns its module's `Arc`, so the outer lock (in `self`, dropped on return) may
                // go once it is taken.
                return Ok(ModuleMut {
                    ptr,
                    guard: Some(guard),
                    _borrow: PhantomData,
                });
            }
        };
        Ok(ModuleMut {
            ptr,
            guard: self.guard.take(),
            _borrow: PhantomData,
        })
    }
}

impl Deref for ModuleMut<'_> {
    type Target = dyn Module;
    fn deref(&self) -> &dyn Module {
        // SAFETY: as for `ModuleRef`, with exclusive access: `ptr` comes from a `&mut dyn Module` that is either
        // borrowed mutably from the tree for `'a` along owned children, or lies inside the `Shared` module that
        // the write lock in `guard` keeps alive and exclusively ours. Only one `ModuleMut` exists per borrow.
        unsafe { self.ptr.as_ref() }
    }
}

impl DerefMut for ModuleMut<'_> {
    fn deref_mut(&mut self) -> &mut dyn Module {
        // SAFETY: see `Deref`; `&mut self` makes this the only access through this reference.
        unsafe { self.ptr.as_mut() }
    }
}

/// `named_children`: the direct children, each module once.
pub(crate) fn named_children<'a>(root: &'a dyn Module) -> Vec<(String, ModuleRef<'a>)> {
    let root = ModuleRef::borrowed(root);
    let mut out = Vec::new();
    let mut seen = Vec::new();
    struct Collect<'r, 'a> {
        parent: &'r ModuleRef<'a>,
        out: &'r mut Vec<(String, ModuleRef<'a>)>,
        seen: &'r mut Vec<usize>,
    }
    impl Visitor<'_> for Collect<'_, '_> {
        fn child(&mut self, name: &str, child: Child<'_>) {
            if let Child::Shared(s) = child {
                if self.seen.contains(&s.id()) {
                    return;
                }
                self.seen.push(s.id());
            }
            self.out
                .push((name.to_owned(), ModuleRef::child_of(self.parent, child)));
        }
    }
    root.visit(&mut Collect {
        parent: &root,
        out: &mut out,
        seen: &mut seen,
    });
    out
}

/// `named_modules`: the tree in pre-order, each shared module once unless `remove_duplicate` is false.
pub(crate) fn named_modules<'a>(
    root: &'a dyn Module,
    prefix: &str,
    remove_duplicate: bool,
) -> Vec<(String, ModuleRef<'a>)> {
    struct State<'a> {
        out: Vec<(String, ModuleRef<'a>)>,
        path: ModulePath,
        seen: Vec<usize>,
        remove_duplicate: bool,
    }
    fn go<'a>(state: &mut State<'a>, module: ModuleRef<'a>) {
        state.out.push((state.path.as_str().to_owned(), module.clone()));
        struct Children<'s, 'a> {
            state: &'s mut State<'a>,
            parent: &'s ModuleRef<'a>,
        }
        impl Visitor<'_> for Children<'_, '_> {
            fn child(&mut self, name: &str, child: Child<'_>) {
                if let Child::Shared(s) = child
                    && self.state.remove_duplicate
                {
                    if self.state.seen.contains(&s.id()) {
                        return;
                    }
                    self.state.seen.push(s.id());
                }
                let mark = self.state.path.push(name);
                go(self.state, ModuleRef::child_of(self.parent, child));
                self.state.path.truncate(mark);
            }
        }
        let parent = module.clone();
        parent.visit(&mut Children { state, parent: &module });
    }
    let mut state = State {
        out: Vec::new(),
        path: ModulePath::new(prefix),
        seen: Vec::new(),
        remove_duplicate,
    };
    go(&mut state, ModuleRef::borrowed(root));
    state.out
}
