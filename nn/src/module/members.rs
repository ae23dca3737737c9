//! [`Members`]: members known at run time, as a container holds them — what a `#[members]` field of a derived
//! struct is. Lists are keyed `0`, `1`, …; dicts by name, in insertion order.
//!
//! ```
//! use nn::prelude::*;
//! use indexmap::IndexMap;
//!
//! /// A dict of parameters with a mode flag and hooks: everything else comes from the derive.
//! #[derive(Module)]
//! #[module(name = "Bank")]
//! struct Bank {
//!     #[members]
//!     slots: IndexMap<String, Param>,
//!     training: bool,
//!     hooks: nn::Hooks,
//! }
//!
//! let mut bank = Bank { slots: IndexMap::new(), training: true, hooks: nn::Hooks::new() };
//! bank.slots.insert("alpha".into(), Param::new(Tensor::zeros([2], DType::F32)));
//! assert_eq!(bank.state_dict().keys().collect::<Vec<_>>(), ["alpha"]);
//! ```

use indexmap::IndexMap;

use super::repr::{child_reprs, default_repr, list_repr};
use super::{
    Child, ChildMut, Layer, Module, ModuleField, Replaced, Replacement, Visitor, VisitorMut, for_each_indexed,
    parse_index, set_index,
};
use crate::{Device, Error, Param, Result};

/// Members a module holds at run time (a container's items); `#[derive(Module)]` reports them after the
/// struct's own members through these methods.
pub trait Members: Send + Sync + 'static {
    /// Calls `visitor` for each member, in order.
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>);
    /// Calls `visitor` for each member, for change.
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>);
    /// The child member named `name`.
    fn child(&self, name: &str) -> Option<Child<'_>>;
    /// The child member named `name`, for change.
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>>;
    /// Puts `value` under `name` (PyTorch's `setattr`), or gives it back with the reason; `container` is the
    /// module's printed name.
    fn set_child(&mut self, container: &'static str, name: &str, value: Replacement) -> Replaced;
    /// The container's `repr`: PyTorch's `Module.__repr__` unless the container prints its own.
    fn repr(&self, module: &dyn Module) -> String {
        default_repr(module.type_name(), &module.extra_repr(), &child_reprs(module))
    }
    /// Text the container prints inside its parentheses (a parameter container's lines).
    fn extra_repr(&self) -> String {
        String::new()
    }
}

/// One item of a [`Members`] collection: a parameter, or a module slot.
pub trait Member: Send + Sync + Sized + 'static {
    /// Whether the items are modules (a list of them prints as PyTorch's `ModuleList`, folding repeats).
    const MODULE: bool;
    /// Whether `set_submodule` may add an item under a new name (`ModuleDict`), or only replace one.
    const NEW_NAMES: bool;
    /// Reports the item to `visitor` under `name`.
    fn report<'a>(&'a self, name: &str, visitor: &mut dyn Visitor<'a>);
    /// Reports the item to `visitor` under `name`, for change.
    fn report_mut<'a>(&'a mut self, name: &str, visitor: &mut dyn VisitorMut<'a>);
    /// The item as a child module, if it is one.
    fn as_child(&self) -> Option<Child<'_>>;
    /// The item as a child module for change, if it is one.
    fn as_child_mut(&mut self) -> Option<ChildMut<'_>>;
    /// The item `value` makes, for `set_submodule` on `container`, or `value` back with the reason.
    fn from_replacement(
        container: &'static str,
        value: Replacement,
    ) -> std::result::Result<Self, (Replacement, String)>;
    /// The item's line in its container's `extra_repr`: a parameter's (`in_list`: in a `ParameterList`).
    fn repr_line(&self, key: &str, in_list: bool) -> Option<String>;
}

impl Member for Param {
    const MODULE: bool = false;
    const NEW_NAMES: bool = false;
    fn report<'a>(&'a self, name: &str, visitor: &mut dyn Visitor<'a>) {
        visitor.param(name, self);
    }
    fn report_mut<'a>(&'a mut self, name: &str, visitor: &mut dyn VisitorMut<'a>) {
        visitor.param(name, self);
    }
    fn as_child(&self) -> Option<Child<'_>> {
        None
    }
    fn as_child_mut(&mut self) -> Option<ChildMut<'_>> {
        None
    }
    fn from_replacement(
        container: &'static str,
        value: Replacement,
    ) -> std::result::Result<Self, (Replacement, String)> {
        Err((value, format!("{container} has no replaceable child slots")))
    }
    fn repr_line(&self, key: &str, in_list: bool) -> Option<String> {
        let label = if in_list {
            format!("torch.{}", self.dtype())
        } else {
            crate::tensor::torch_typename(self.dtype(), self.device())
        };
        let device = match self.device() {
            Device::Cpu => String::new(),
            d => format!(" ({d})"),
        };
        Some(format!(
            "  ({key}): Parameter containing: [{label} of size {}{device}]",
            self.shape().x_joined()
        ))
    }
}

/// Module items: a boxed slot of any module type (`ModuleList`, `ModuleDict`), or a layer (`Sequential`).
macro_rules! module_member {
    ($item:ty, $new_names:expr, |$slot:ident| $as_slot:expr, |$slot_mut:ident| $as_slot_mut:expr, |$value:ident| $from:expr) => {
        impl Member for $item {
            const MODULE: bool = true;
            const NEW_NAMES: bool = $new_names;
            fn report<'a>(&'a self, name: &str, visitor: &mut dyn Visitor<'a>) {
                if let Some(child) = self.as_child() {
                    visitor.child(name, child);
                }
            }
            fn report_mut<'a>(&'a mut self, name: &str, visitor: &mut dyn VisitorMut<'a>) {
                if let Some(child) = self.as_child_mut() {
                    visitor.child(name, child);
                }
            }
            fn as_child(&self) -> Option<Child<'_>> {
                let $slot = self;
                ModuleField::as_child($as_slot)
            }
            fn as_child_mut(&mut self) -> Option<ChildMut<'_>> {
                let $slot_mut = self;
                ModuleField::as_child_mut($as_slot_mut)
            }
            fn from_replacement(
                _: &'static str,
                $value: Replacement,
            ) -> std::result::Result<Self, (Replacement, String)> {
                $from
            }
            fn repr_line(&self, _: &str, _: bool) -> Option<String> {
                None
            }
        }
    };
}

module_member!(Box<dyn ModuleField>, true, |b| &**b, |b| &mut **b, |value| Ok(
    value.into_field()
));
module_member!(Layer, false, |l| l.slot(), |l| l.slot_mut(), |value| value.into_layer());

/// A list: items keyed by their index.
impl<T: Member> Members for Vec<T> {
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        for_each_indexed(self.iter(), |key, item| item.report(key, visitor));
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        for_each_indexed(self.iter_mut(), |key, item| item.report_mut(key, visitor));
    }
    fn child(&self, name: &str) -> Option<Child<'_>> {
        self.get(parse_index(name)?)?.as_child()
    }
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        self.get_mut(parse_index(name)?)?.as_child_mut()
    }
    fn set_child(&mut self, container: &'static str, name: &str, value: Replacement) -> Replaced {
        set_index(self, name, value, |item, value| {
            *item = T::from_replacement(container, value)?;
            Ok(())
        })
    }
    fn repr(&self, module: &dyn Module) -> String {
        if T::MODULE {
            list_repr(module.type_name(), &child_reprs(module))
        } else {
            default_repr(module.type_name(), &module.extra_repr(), &child_reprs(module))
        }
    }
    fn extra_repr(&self) -> String {
        let lines: Vec<String> = self
            .iter()
            .enumerate()
            .filter_map(|(i, item)| item.repr_line(&i.to_string(), true))
            .collect();
        lines.join("\n")
    }
}

/// A dict: items keyed by name, in insertion order.
impl<T: Member> Members for IndexMap<String, T> {
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        for (name, item) in self {
            item.report(name, visitor);
        }
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        for (name, item) in self.iter_mut() {
            item.report_mut(name, visitor);
        }
    }
    fn child(&self, name: &str) -> Option<Child<'_>> {
        self.get(name)?.as_child()
    }
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        self.get_mut(name)?.as_child_mut()
    }
    fn set_child(&mut self, container: &'static str, name: &str, value: Replacement) -> Replaced {
        if T::NEW_NAMES && check_name("set_child", name).is_err() {
            return Err((value, format!("{name:?} is not a valid key")));
        }
        if !T::NEW_NAMES && T::MODULE && !self.contains_key(name) {
            return Err((value, format!("{container} has no item `{name}`")));
        }
        let item = T::from_replacement(container, value)?;
        self.insert(name.to_owned(), item);
        Ok(())
    }
    fn extra_repr(&self) -> String {
        let lines: Vec<String> = self
            .iter()
            .filter_map(|(key, item)| item.repr_line(key, false))
            .collect();
        lines.join("\n")
    }
}

/// A member name must be non-empty and free of `.` (PyTorch's rule for `add_module`).
pub(crate) fn check_name(op: &'static str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('.') {
        return Err(Error::invalid(
            op,
            format!("member name {name:?} must be non-empty and contain no \".\""),
        ));
    }
    Ok(())
}
