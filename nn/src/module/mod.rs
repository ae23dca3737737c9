//! The [`Module`] trait, its visitors, and everything PyTorch's `nn.Module` does on top of them.
//!
//! A module exposes its own members through [`Module::visit`] and [`Module::visit_mut`]: its parameters, then
//! its buffers, then its children, each in declaration order (PyTorch's order). Every other operation —
//! `named_parameters`, `state_dict`, `load_state_dict`, `half`, `train`, `Display` — is written once on top of
//! these two methods, in [`ModuleExt`].

pub(crate) mod access;
mod ext;
mod field;
mod list;
mod load;
mod members;
pub(crate) mod mode;
mod module_ref;
mod path;
mod repr;
mod state;
pub(crate) mod tensor_module;
mod transform;
mod walk;

use std::any::Any;
use std::fmt;

pub use crate::error::py_float;
pub use crate::error::{LoadError, PathError, PathErrorKind, ShapeMismatch};
pub use ext::AsDynModule;
pub use ext::ModuleExt;
pub use field::FromReplacement;
pub use field::{BufferField, ModuleField, ParamField, Replaced, Replacement, SharedSlots};
pub use list::parse_index;
pub(crate) use list::{for_each_indexed, set_index};
pub use load::{IncompatibleKeys, LoadOptions};
pub(crate) use members::check_name;
pub use members::{Member, Members};
pub use module_ref::{ModuleMut, ModuleRef};
pub use path::ModulePath;
pub use repr::{add_indent, default_repr, list_repr, py_bool, repr_of};
pub use state::StateDictOptions;
pub use tensor_module::{AnyForward, Layer, TensorModule};
pub use walk::{WalkOptions, Walker, WalkerMut};

/// Each direct child's name and `repr`, in order (a shared module at every place it sits).
pub fn child_reprs_of(module: &dyn Module) -> Vec<(String, String)> {
    repr::child_reprs(module)
}
pub use crate::io::StateDict;

use crate::shared::SharedModule;
use crate::{Error, Param, Result, Tensor};

/// One child slot of a module, as a visitor sees it.
#[derive(Clone, Copy)]
pub enum Child<'a> {
    /// A child the module owns.
    Owned(&'a dyn Module),
    /// A [`Shared`](crate::Shared) module, which may sit in several places.
    Shared(&'a dyn SharedModule),
}

/// One child slot of a module, seen through a mutable visitor.
pub enum ChildMut<'a> {
    /// A child the module owns.
    Owned(&'a mut dyn Module),
    /// A [`Shared`](crate::Shared) module, which may sit in several places.
    Shared(&'a dyn SharedModule),
}

/// Receives a module's own members, in PyTorch's order: parameters, buffers, children.
///
/// Every method has an empty default, so a visitor implements only what it needs.
pub trait Visitor<'a> {
    /// A parameter named `name`.
    fn param(&mut self, name: &str, param: &'a Param) {
        let _ = (name, param);
    }
    /// A buffer named `name`; `persistent` buffers belong in the state dict.
    fn buffer(&mut self, name: &str, buffer: &'a Tensor, persistent: bool) {
        let _ = (name, buffer, persistent);
    }
    /// A child module named `name`.
    fn child(&mut self, name: &str, child: Child<'a>) {
        let _ = (name, child);
    }
    /// An owned child module named `name` whose type is known at compile time, reported by
    /// [`Module::visit_static`]. The default is [`child`](Self::child) with [`Child::Owned`]; a traversal
    /// overrides it to go on down with static dispatch.
    #[inline(always)]
    fn child_static<M: Module>(&mut self, name: &str, child: &'a M)
    where
        Self: Sized,
    {
        self.child(name, Child::Owned(child))
    }
}

/// Receives a module's own members for change, in PyTorch's order: parameters, buffers, children.
pub trait VisitorMut<'a> {
    /// A parameter named `name`.
    fn param(&mut self, name: &str, param: &'a mut Param) {
        let _ = (name, param);
    }
    /// A buffer named `name`; `persistent` buffers belong in the state dict.
    fn buffer(&mut self, name: &str, buffer: &'a mut Tensor, persistent: bool) {
        let _ = (name, buffer, persistent);
    }
    /// A child module named `name`.
    fn child(&mut self, name: &str, child: ChildMut<'a>) {
        let _ = (name, child);
    }
    /// An owned child module named `name` whose type is known at compile time, reported by
    /// [`Module::visit_mut_static`]. The default is [`child`](Self::child) with [`ChildMut::Owned`]; a traversal
    /// overrides it to go on down with static dispatch.
    #[inline(always)]
    fn child_static<M: Module>(&mut self, name: &str, child: &'a mut M)
    where
        Self: Sized,
    {
        self.child(name, ChildMut::Owned(child))
    }
}

/// A neural-network module: a tree of parameters, buffers and child modules with PyTorch's `nn.Module` API.
///
/// Derive it with `#[derive(Module)]`; write it by hand only for containers with dynamic members. The few
/// required methods expose the module's own members; [`ModuleExt`] builds PyTorch's whole API on them.
///
/// ```
/// use nn::prelude::*;
///
/// #[derive(Module)]
/// struct Net {
///     fc: Linear,
///     act: ReLU,
/// }
///
/// let net = Net { fc: Linear::new(2, 3, true), act: ReLU::new(false) };
/// let keys: Vec<String> = net.state_dict().keys().cloned().collect();
/// assert_eq!(keys, ["fc.weight", "fc.bias"]);
/// assert_eq!(
///     net.to_string(),
///     "Net(\n  (fc): Linear(in_features=2, out_features=3, bias=True)\n  (act): ReLU()\n)"
/// );
/// ```
pub trait Module: Any + Send + Sync {
    /// The name `Display` prints: PyTorch's class name (`Linear`, `ModuleList`).
    fn type_name(&self) -> &'static str;

    /// Calls `visitor` for each own parameter, buffer and child, in that order.
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>);

    /// [`visit`](Self::visit) with the visitor's type known: the same members in the same order, with owned
    /// children of known type reported through [`Visitor::child_static`], so that a walk over a derived model
    /// compiles to straight-line code. `#[derive(Module)]` writes it; the default calls `visit`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::module::Visitor;
    ///
    /// struct Names(Vec<String>);
    /// impl<'a> Visitor<'a> for Names {
    ///     fn param(&mut self, name: &str, _: &'a Param) {
    ///         self.0.push(name.to_string());
    ///     }
    /// }
    /// let mut names = Names(Vec::new());
    /// Linear::new(2, 2, true).visit_static(&mut names);
    /// assert_eq!(names.0, ["weight", "bias"]);
    /// ```
    #[inline(always)]
    fn visit_static<'a, V: Visitor<'a>>(&'a self, visitor: &mut V)
    where
        Self: Sized,
    {
        self.visit(visitor)
    }

    /// Calls `visitor` for each own parameter, buffer and child, for change.
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>);

    /// [`visit_mut`](Self::visit_mut) with the visitor's type known, as [`visit_static`](Self::visit_static)
    /// is to `visit`. `#[derive(Module)]` writes it; the default calls `visit_mut`.
    #[inline(always)]
    fn visit_mut_static<'a, V: VisitorMut<'a>>(&'a mut self, visitor: &mut V)
    where
        Self: Sized,
    {
        self.visit_mut(visitor)
    }

    /// The direct child named `name`.
    fn child(&self, name: &str) -> Option<Child<'_>> {
        let mut find = Find { name, found: None };
        self.visit(&mut find);
        find.found
    }

    /// The direct child named `name`, for change.
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        let mut find = Find { name, found: None };
        self.visit_mut(&mut find);
        find.found
    }

    /// Replaces the direct child `name` (PyTorch's `setattr(module, name, child)`); gives the value back with
    /// the reason when the slot does not exist or holds another type.
    fn set_child(&mut self, name: &str, value: Replacement) -> Replaced {
        let _ = name;
        Err((value, format!("{} has no replaceable child slots", self.type_name())))
    }

    /// Extra information printed inside the parentheses (PyTorch's `extra_repr`).
    fn extra_repr(&self) -> String {
        String::new()
    }

    /// PyTorch's `repr` of this module; `Display` prints it.
    fn repr(&self) -> String {
        repr::default_repr(self.type_name(), &self.extra_repr(), &repr::child_reprs(self))
    }

    /// Whether this module is in training mode (PyTorch's `module.training`): the mode last set on it or on an
    /// ancestor (`train` / `eval` set it and recurse, `set_training` sets it alone), as in PyTorch.
    ///
    /// A module with a `training: bool` field (every built-in layer, a derived struct that declares one) keeps
    /// the mode there. One without keeps it on the parameter, buffer and [`Hooks`](crate::Hooks) handles of its
    /// subtree, so it moves with the struct as a field would; a module with no such handle below it (only
    /// parameter-free layers, or nothing) reports whether all its children are training: declare
    /// `training: bool` on it if its forward reads its mode.
    ///
    /// ```
    /// use nn::prelude::*;
    ///
    /// #[derive(Module)]
    /// struct Scale {
    ///     weight: Param,
    /// }
    ///
    /// #[derive(Module)]
    /// struct Net {
    ///     fc: Linear,
    ///     scale: Scale,
    /// }
    ///
    /// let mut net = Net {
    ///     fc: Linear::new(2, 2, true),
    ///     scale: Scale { weight: Param::new(Tensor::ones([2], DType::F32)) },
    /// };
    /// net.eval();
    /// assert!(!net.scale.is_training());
    /// net.train(true);
    /// assert!(net.scale.is_training());
    /// // As PyTorch's `net.scale.eval()`: the model itself stays in training mode.
    /// net.scale.eval();
    /// assert!(net.is_training() && !net.scale.is_training());
    /// ```
    fn is_training(&self) -> bool {
        if let Some(training) = mode::kept(self) {
            return training;
        }
        struct All(bool);
        impl Visitor<'_> for All {
            fn child(&mut self, _: &str, child: Child<'_>) {
                if self.0 {
                    self.0 = match child {
                        Child::Owned(m) => m.is_training(),
                        Child::Shared(s) => {
                            let mut t = true;
                            s.with_ref(&mut |m| t = m.is_training());
                            t
                        }
                    };
                }
            }
        }
        let mut all = All(true);
        self.visit(&mut all);
        all.0
    }

    /// Sets this module's own training flag (`train` recurses through the tree): its `training` field, or
    /// else its mark on the handles of its subtree (see [`is_training`](Self::is_training)).
    fn set_training(&mut self, training: bool) {
        mode::mark(self, training);
    }

    /// Whether calling this module calls another module that runs the hooks itself (a `Box` of one): its
    /// `call` then runs `forward` alone, so that no hook, local or global, runs twice.
    fn calls_through(&self) -> bool {
        false
    }

    /// The module's hooks, if it keeps any (a [`Hooks`](crate::Hooks) field).
    fn hooks(&self) -> Option<&crate::Hooks> {
        None
    }

    /// The module's hooks, to register in, if it keeps any.
    fn hooks_mut(&mut self) -> Option<&mut crate::Hooks> {
        None
    }

    /// Whether this module carries non-tensor state saved under `_extra_state` (PyTorch: overrides
    /// `set_extra_state`).
    fn has_extra_state(&self) -> bool {
        false
    }

    /// The module's extra state (PyTorch's `get_extra_state`), carried as a tensor so that it round-trips
    /// through safetensors; encode other data as a `u8` tensor.
    fn get_extra_state(&self) -> Option<Tensor> {
        None
    }

    /// Restores extra state produced by [`get_extra_state`](Self::get_extra_state).
    fn set_extra_state(&mut self, state: Tensor) -> Result<()> {
        let _ = state;
        Err(Error::invalid(
            "set_extra_state",
            format!("{} has no extra state", self.type_name()),
        ))
    }

    /// The version of this module's state-dict layout, recorded under its path in the state dict's versions
    /// (PyTorch's `_version`, in `_metadata`): 1 unless a [`CustomStateDict`] says otherwise.
    fn state_dict_version(&self) -> u32 {
        1
    }

    /// Called by `state_dict` after this module's own entries (PyTorch's `_save_to_state_dict` override);
    /// see [`CustomStateDict::save_to_state_dict`].
    fn save_to_state_dict(&self, state: &mut StateDict, prefix: &str) {
        let _ = (state, prefix);
    }

    /// Called by `load_state_dict` before this module reads its own entries (PyTorch's `_load_from_state_dict`
    /// override); see [`CustomStateDict::load_from_state_dict`].
    fn load_from_state_dict(&self, state: &mut StateDict, prefix: &str, version: Option<u32>) -> Result<()> {
        let _ = (state, prefix, version);
        Ok(())
    }
}

/// The first child named `name` a visit reports (what the default [`Module::child`] and
/// [`Module::child_mut`] look for).
struct Find<'n, C> {
    name: &'n str,
    found: Option<C>,
}

impl<C> Find<'_, C> {
    fn offer(&mut self, name: &str, child: C) {
        if self.found.is_none() && name == self.name {
            self.found = Some(child);
        }
    }
}

impl<'a> Visitor<'a> for Find<'_, Child<'a>> {
    fn child(&mut self, name: &str, child: Child<'a>) {
        self.offer(name, child)
    }
}

impl<'a> VisitorMut<'a> for Find<'_, ChildMut<'a>> {
    fn child(&mut self, name: &str, child: ChildMut<'a>) {
        self.offer(name, child)
    }
}

impl dyn Module {
    /// The module as `T`, if it is one.
    pub fn downcast_ref<T: Module>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref::<T>()
    }

    /// The module as `T` for change, if it is one.
    pub fn downcast_mut<T: Module>(&mut self) -> Option<&mut T> {
        (self as &mut dyn Any).downcast_mut::<T>()
    }

    /// Whether the module is a `T`.
    pub fn is<T: Module>(&self) -> bool {
        (self as &dyn Any).is::<T>()
    }
}

impl fmt::Display for dyn Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl fmt::Debug for dyn Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

/// A module's own member names, known at compile time: generated by `#[derive(Module)]`.
///
/// ```
/// use nn::prelude::*;
/// #[derive(Module)]
/// struct Block {
///     scale: Tensor,
///     fc: Linear,
///     #[module(skip)]
///     width: usize,
/// }
/// const KEYS: &[&str] = Block::KEYS;
/// assert_eq!(KEYS, ["scale", "fc"]);
/// ```
pub trait StaticKeys {
    /// Every compile-time member's key in PyTorch's order: parameters, buffers, children (the members of a
    /// `#[members]` field, known at run time, are not listed).
    const KEYS: &'static [&'static str];
    /// Every compile-time member's key with its kind.
    const MEMBERS: &'static [(&'static str, MemberKind)];
}

/// What kind of member a key names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberKind {
    /// A parameter (`Param` or `Option<Param>`).
    Param,
    /// A buffer; persistent buffers are saved in the state dict.
    Buffer {
        /// Whether the buffer is saved in the state dict.
        persistent: bool,
    },
    /// A child module.
    Child,
}

/// The text a module prints inside its parentheses; implement it and mark the struct
/// `#[module(extra_repr)]` for the derive to use it.
///
/// ```
/// use nn::prelude::*;
/// use nn::module::ExtraRepr;
///
/// #[derive(Module)]
/// #[module(extra_repr)]
/// struct Scale {
///     weight: Param,
///     #[module(skip)]
///     features: usize,
/// }
///
/// impl ExtraRepr for Scale {
///     fn extra_repr(&self) -> String {
///         format!("features={}", self.features)
///     }
/// }
///
/// let s = Scale { weight: Param::new(Tensor::ones([3], DType::F32)), features: 3 };
/// assert_eq!(s.to_string(), "Scale(features=3)");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is marked `#[module(extra_repr)]` but does not implement `nn::module::ExtraRepr`",
    label = "`extra_repr` asks for an `ExtraRepr` impl",
    note = "implement it (`impl nn::module::ExtraRepr for {Self} {{ fn extra_repr(&self) -> String {{ ... }} }}`), or remove `extra_repr`"
)]
pub trait ExtraRepr {
    /// PyTorch's `extra_repr()`.
    fn extra_repr(&self) -> String;
}

/// Non-tensor state saved in the state dict under `_extra_state`; implement it and mark the struct
/// `#[module(extra_state)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is marked `#[module(extra_state)]` but does not implement `nn::module::ExtraState`",
    label = "`extra_state` asks for an `ExtraState` impl",
    note = "implement `get_extra_state` and `set_extra_state` in `impl nn::module::ExtraState for {Self}`, or remove `extra_state`"
)]
pub trait ExtraState {
    /// PyTorch's `get_extra_state()`, as a tensor (a `u8` tensor for arbitrary bytes).
    fn get_extra_state(&self) -> Tensor;
    /// PyTorch's `set_extra_state(state)`; an error refuses the load, which is then rolled back.
    fn set_extra_state(&mut self, state: Tensor) -> Result<()>;
}

/// How a module saves and loads its own entries, beyond its parameters and buffers: PyTorch's `_version`,
/// `_save_to_state_dict` and `_load_from_state_dict` overrides. Implement it and mark the struct
/// `#[module(custom_state_dict)]`.
///
/// A layout that changed keeps old checkpoints loading: bump `VERSION`, and in `load_from_state_dict` bring
/// entries saved with an older version (or none: a dict from a file) to the new layout, as
/// [`BatchNorm2d`](crate::layers::BatchNorm2d) fills a missing `num_batches_tracked`.
///
/// ```
/// use nn::module::CustomStateDict;
/// use nn::prelude::*;
///
/// #[derive(Module)]
/// #[module(custom_state_dict)]
/// struct Scale {
///     weight: Param,
/// }
///
/// impl CustomStateDict for Scale {
///     const VERSION: u32 = 2;
///     // Version 1 called the weight `scale`.
///     fn load_from_state_dict(&self, state: &mut StateDict, prefix: &str, version: Option<u32>) -> nn::Result<()> {
///         if version.unwrap_or(1) < 2 {
///             if let Some(t) = state.shift_remove(&format!("{prefix}scale")) {
///                 state.insert(format!("{prefix}weight"), t);
///             }
///         }
///         Ok(())
///     }
/// }
///
/// let mut s = Scale { weight: Param::new(Tensor::zeros([2], DType::F32)) };
/// let old: StateDict = [("scale".to_string(), Tensor::ones([2], DType::F32))].into_iter().collect();
/// s.load_state_dict(&old, true, false)?;
/// assert_eq!(s.weight.data().to_vec::<f32>()?, [1.0, 1.0]);
/// assert_eq!(s.state_dict().version(""), Some(2));
/// # Ok::<(), nn::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is marked `#[module(custom_state_dict)]` but does not implement `nn::module::CustomStateDict`",
    label = "`custom_state_dict` asks for a `CustomStateDict` impl",
    note = "implement it (`impl nn::module::CustomStateDict for {Self} {{}}` with what differs), or remove `custom_state_dict`"
)]
pub trait CustomStateDict {
    /// The layout's version, recorded in the state dict (PyTorch's `_version`).
    const VERSION: u32 = 1;

    /// After the module's own entries (parameters, persistent buffers, extra state) are written under
    /// `prefix` into `state`: may add, change or remove entries under `prefix`.
    fn save_to_state_dict(&self, state: &mut StateDict, prefix: &str) {
        let _ = (state, prefix);
    }

    /// Before the module reads its own entries: `state` is the module's view of the dict being loaded (its
    /// keys under `prefix`, after its load pre-hooks; entries that modules loaded before it have read are
    /// there as empty markers), `version` the version it was saved with (`None` when the dict records none).
    /// May add, rename or remove entries under `prefix`; an error stops the load and leaves the module
    /// unchanged.
    fn load_from_state_dict(&self, state: &mut StateDict, prefix: &str, version: Option<u32>) -> Result<()> {
        let _ = (state, prefix, version);
        Ok(())
    }
}
