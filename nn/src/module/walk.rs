//! Recursive traversals with dotted paths: the engine under every `named_*`, `state_dict`, cast and load.
//!
//! A walk goes down the tree in PyTorch's order (a module, its parameters, its buffers, then each child in
//! turn) and hands every member to a [`Walker`] with its full path. It allocates nothing unless it meets a
//! member that may be reached twice (a `Shared` module, a tied `Param`) while removing duplicates.

use std::collections::HashSet;

use super::path::ModulePath;
use super::{Child, ChildMut, Module, Visitor, VisitorMut};
use crate::shared::SharedModule;
use crate::{Param, Shape, Tensor};

/// Receives the members of a module tree with their dotted paths. Every method has an empty default.
///
/// ```
/// use nn::prelude::*;
/// use nn::module::{Walker, WalkOptions};
///
/// struct Count(usize);
/// impl Walker for Count {
///     fn param(&mut self, _path: &str, param: &Param) {
///         self.0 += param.numel();
///     }
/// }
/// let model = Sequential::new().append(Linear::new(3, 4, true)).append(ReLU::new(false));
/// let mut count = Count(0);
/// model.walk(&mut count, WalkOptions::default());
/// assert_eq!(count.0, 16);
/// ```
pub trait Walker {
    /// A module at `path` (the root's path is the prefix, usually empty); called before its members.
    fn module(&mut self, path: &str, module: &dyn Module) {
        let _ = (path, module);
    }
    /// A parameter at `path`.
    fn param(&mut self, path: &str, param: &Param) {
        let _ = (path, param);
    }
    /// A buffer at `path`.
    fn buffer(&mut self, path: &str, buffer: &Tensor, persistent: bool) {
        let _ = (path, buffer, persistent);
    }
    /// The module at `path` again, after its own parameters and buffers and before its children (where
    /// PyTorch puts a module's extra state).
    fn after_own(&mut self, path: &str, module: &dyn Module) {
        let _ = (path, module);
    }
    /// The module at `path` once more, after all its children (post-order).
    fn module_end(&mut self, path: &str, module: &dyn Module) {
        let _ = (path, module);
    }
}

/// Receives the members of a module tree with their dotted paths, for change.
pub trait WalkerMut {
    /// A module at `path`; called before its members.
    fn module(&mut self, path: &str, module: &mut dyn Module) {
        let _ = (path, module);
    }
    /// A parameter at `path`.
    fn param(&mut self, path: &str, param: &mut Param) {
        let _ = (path, param);
    }
    /// A buffer at `path`.
    fn buffer(&mut self, path: &str, buffer: &mut Tensor, persistent: bool) {
        let _ = (path, buffer, persistent);
    }
}

/// How a walk goes: PyTorch's `prefix`, `recurse` and `remove_duplicate` arguments.
#[derive(Clone, Copy, Debug)]
pub struct WalkOptions<'p> {
    /// Prepended to every path (joined with a `.`).
    pub prefix: &'p str,
    /// Whether to go into children (false: the root's own members only).
    pub recurse: bool,
    /// Whether a module, parameter or buffer reached twice is reported once.
    pub remove_duplicate: bool,
}

impl Default for WalkOptions<'_> {
    /// The whole tree, duplicates removed, no prefix: PyTorch's defaults.
    fn default() -> Self {
        WalkOptions {
            prefix: "",
            recurse: true,
            remove_duplicate: true,
        }
    }
}

impl<'p> WalkOptions<'p> {
    /// PyTorch's `prefix`, `recurse` and `remove_duplicate`, in that order.
    pub fn new(prefix: &'p str, recurse: bool, remove_duplicate: bool) -> WalkOptions<'p> {
        WalkOptions {
            prefix,
            recurse,
            remove_duplicate,
        }
    }

    /// Every occurrence of every member, as `state_dict` and `load_state_dict` see them.
    pub fn all() -> WalkOptions<'static> {
        WalkOptions {
            prefix: "",
            recurse: true,
            remove_duplicate: false,
        }
    }
}

/// A member that may sit in several places of a tree: a parameter or a shared module.
trait Identity {
    /// Whether it is reached from more than one place.
    fn is_aliased(&self) -> bool;
    /// Its identity.
    fn id(&self) -> usize;
}

impl Identity for Param {
    #[inline(always)]
    fn is_aliased(&self) -> bool {
        Param::is_aliased(self)
    }
    #[inline(always)]
    fn id(&self) -> usize {
        Param::id(self)
    }
}

impl Identity for &dyn SharedModule {
    #[inline(always)]
    fn is_aliased(&self) -> bool {
        SharedModule::is_aliased(*self)
    }
    #[inline(always)]
    fn id(&self) -> usize {
        SharedModule::id(*self)
    }
}

/// Which members a walk reports: every occurrence, or (`remove_duplicate`) the first of each, remembered in
/// identity sets allocated on the first member that may repeat.
#[derive(Default)]
struct Seen {
    remove_duplicate: bool,
    objects: Option<HashSet<usize>>,
    buffers: Option<HashSet<(usize, Shape)>>,
}

impl Seen {
    fn new(remove_duplicate: bool) -> Seen {
        Seen {
            remove_duplicate,
            ..Seen::default()
        }
    }

    /// Whether the module or parameter `member` is reported here (and records it when it may be reached
    /// elsewhere too). Its identity is read only when duplicates are removed: every-occurrence walks pay nothing.
    #[inline(always)]
    fn report(&mut self, member: &impl Identity) -> bool {
        !(self.remove_duplicate && member.is_aliased())
            || self.objects.get_or_insert_with(HashSet::new).insert(member.id())
    }

    /// Whether the buffer is reported here: a buffer is the same as another when it shares its storage and its
    /// shape (a reshaped view is another tensor).
    #[inline(always)]
    fn report_buffer(&mut self, t: &Tensor) -> bool {
        !(self.remove_duplicate && t.storage_is_shared())
            || self
                .buffers
                .get_or_insert_with(HashSet::new)
                .insert((t.storage_id(), t.shape().clone()))
    }
}

struct State<'w, W: Walker + ?Sized> {
    path: ModulePath,
    recurse: bool,
    seen: Seen,
    walker: &'w mut W,
}

impl<W: Walker + ?Sized> State<'_, W> {
    /// Reports `module` and everything under it, its own members listed by `visit`.
    #[inline(always)]
    fn module(&mut self, module: &dyn Module) {
        self.enter(module, |members| module.visit(members))
    }

    /// [`module`](Self::module) with the module's type known: its members are listed by `visit_static`, so the
    /// walk down a derived model is dispatched statically.
    #[inline]
    fn module_static<M: Module>(&mut self, module: &M) {
        self.enter(module, |members| module.visit_static(members))
    }

    #[inline(always)]
    fn enter(&mut self, module: &dyn Module, visit: impl FnOnce(&mut Members<'_, '_, '_, W>)) {
        self.walker.module(self.path.as_str(), module);
        let mut members = Members {
            state: self,
            module,
            own_done: false,
        };
        visit(&mut members);
        if !members.own_done {
            self.walker.after_own(self.path.as_str(), module);
        }
        self.walker.module_end(self.path.as_str(), module);
    }
}

struct Members<'s, 'w, 'm, W: Walker + ?Sized> {
    state: &'s mut State<'w, W>,
    module: &'m dyn Module,
    own_done: bool,
}

impl<W: Walker + ?Sized> Members<'_, '_, '_, W> {
    /// Before the first child: tells the walker the module's own members are done. Returns the path mark to
    /// come back to after the child `name`, or `None` when the walk does not go into children.
    #[inline(always)]
    fn enter_child(&mut self, name: &str) -> Option<usize> {
        let s = &mut *self.state;
        if !self.own_done {
            self.own_done = true;
            s.walker.after_own(s.path.as_str(), self.module);
        }
        s.recurse.then(|| s.path.push(name))
    }
}

impl<'a, W: Walker + ?Sized> Visitor<'a> for Members<'_, '_, '_, W> {
    #[inline(always)]
    fn param(&mut self, name: &str, param: &'a Param) {
        let s = &mut *self.state;
        if s.seen.report(param) {
            s.path.at(name, |path| s.walker.param(path, param));
        }
    }

    #[inline]
    fn buffer(&mut self, name: &str, buffer: &'a Tensor, persistent: bool) {
        let s = &mut *self.state;
        if s.seen.report_buffer(buffer) {
            s.path.at(name, |path| s.walker.buffer(path, buffer, persistent));
        }
    }

    fn child(&mut self, name: &str, child: Child<'a>) {
        let Some(mark) = self.enter_child(name) else {
            return;
        };
        let s = &mut *self.state;
        match child {
            Child::Owned(m) => s.module(m),
            Child::Shared(shared) => {
                if s.seen.report(&shared) {
                    shared.with_ref(&mut |m| s.module(m));
                }
            }
        }
        s.path.truncate(mark);
    }

    #[inline(always)]
    fn child_static<M: Module>(&mut self, name: &str, child: &'a M) {
        if let Some(mark) = self.enter_child(name) {
            self.state.module_static(child);
            self.state.path.truncate(mark);
        }
    }
}

/// Walks `root` with `options`, reporting to `walker`.
pub fn walk(root: &dyn Module, walker: &mut dyn Walker, options: WalkOptions<'_>) {
    walk_with(root, walker, options)
}

/// [`walk`] with the walker's type known, so that its methods are inlined into the traversal.
pub(crate) fn walk_with<W: Walker + ?Sized>(root: &dyn Module, walker: &mut W, options: WalkOptions<'_>) {
    State::new(walker, options).module(root);
}

/// [`walk_with`] with the root's type known too: the walk down every child of known type is dispatched
/// statically (children behind `Box<dyn Module>`, `Sequential` or `Shared` go through `visit`).
pub(crate) fn walk_static<M: Module, W: Walker + ?Sized>(root: &M, walker: &mut W, options: WalkOptions<'_>) {
    State::new(walker, options).module_static(root);
}

impl<'w, W: Walker + ?Sized> State<'w, W> {
    fn new(walker: &'w mut W, options: WalkOptions<'_>) -> Self {
        State {
            path: ModulePath::new(options.prefix),
            recurse: options.recurse,
            seen: Seen::new(options.remove_duplicate),
            walker,
        }
    }
}

struct StateMut<'w, W: WalkerMut + ?Sized> {
    path: ModulePath,
    seen: Seen,
    walker: &'w mut W,
}

impl<W: WalkerMut + ?Sized> StateMut<'_, W> {
    fn module(&mut self, module: &mut dyn Module) {
        self.walker.module(self.path.as_str(), module);
        module.visit_mut(&mut MembersMut { state: self });
    }

    /// [`module`](Self::module) with the module's type known: its members are listed by `visit_mut_static`.
    #[inline]
    fn module_static<M: Module>(&mut self, module: &mut M) {
        self.walker.module(self.path.as_str(), module);
        module.visit_mut_static(&mut MembersMut { state: self });
    }
}

struct MembersMut<'s, 'w, W: WalkerMut + ?Sized> {
    state: &'s mut StateMut<'w, W>,
}

impl<'a, W: WalkerMut + ?Sized> VisitorMut<'a> for MembersMut<'_, '_, W> {
    fn param(&mut self, name: &str, param: &'a mut Param) {
        let s = &mut *self.state;
        if s.seen.report(param) {
            s.path.at(name, |path| s.walker.param(path, param));
        }
    }

    fn buffer(&mut self, name: &str, buffer: &'a mut Tensor, persistent: bool) {
        let s = &mut *self.state;
        if s.seen.report_buffer(buffer) {
            s.path.at(name, |path| s.walker.buffer(path, buffer, persistent));
        }
    }

    fn child(&mut self, name: &str, child: ChildMut<'a>) {
        let s = &mut *self.state;
        let mark = s.path.push(name);
        match child {
            ChildMut::Owned(m) => s.module(m),
            ChildMut::Shared(shared) => {
                if s.seen.report(&shared) {
                    shared.with_mut(&mut |m| s.module(m));
                }
            }
        }
        s.path.truncate(mark);
    }

    #[inline(always)]
    fn child_static<M: Module>(&mut self, name: &str, child: &'a mut M) {
        let s = &mut *self.state;
        let mark = s.path.push(name);
        s.module_static(child);
        s.path.truncate(mark);
    }
}

/// Walks `root` for change: every module, parameter and buffer, with its path. With `remove_duplicate`, a
/// shared module or tied parameter is reached once.
pub fn walk_mut(root: &mut dyn Module, walker: &mut dyn WalkerMut, prefix: &str, remove_duplicate: bool) {
    walk_mut_with(root, walker, prefix, remove_duplicate)
}

/// [`walk_mut`] with the walker's type known, so that its methods are inlined into the traversal.
pub(crate) fn walk_mut_with<W: WalkerMut + ?Sized>(
    root: &mut dyn Module,
    walker: &mut W,
    prefix: &str,
    remove_duplicate: bool,
) {
    StateMut::new(walker, prefix, remove_duplicate).module(root);
}

/// [`walk_mut_with`] with the root's type known too: the walk down every child of known type is dispatched
/// statically.
pub(crate) fn walk_mut_static<M: Module, W: WalkerMut + ?Sized>(
    root: &mut M,
    walker: &mut W,
    prefix: &str,
    remove_duplicate: bool,
) {
    StateMut::new(walker, prefix, remove_duplicate).module_static(root);
}

impl<'w, W: WalkerMut + ?Sized> StateMut<'w, W> {
    fn new(walker: &'w mut W, prefix: &str, remove_duplicate: bool) -> Self {
        StateMut {
            path: ModulePath::new(prefix),
            seen: Seen::new(remove_duplicate),
            walker,
        }
    }
}
