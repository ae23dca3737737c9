//! What a derived struct's fields can be: [`ParamField`], [`BufferField`], [`ModuleField`].
//!
//! `#[derive(Module)]` sorts fields by their type's spelling (`Param`, `Option<Param>` → parameter;
//! `Tensor`, `Option<Tensor>` → buffer; anything else → child) and calls these traits, so the compiler checks
//! that a child field really is a module.

use std::any::Any;

use super::{Child, ChildMut, Layer, Module, Visitor, VisitorMut};
use crate::{Param, Shared, Tensor};

/// A parameter slot: `Param` or `Option<Param>` (absent parameters are skipped, as PyTorch's `None`).
pub trait ParamField: Send + Sync + 'static {
    /// The parameter, when present.
    fn as_param(&self) -> Option<&Param>;
    /// The parameter for change, when present.
    fn as_param_mut(&mut self) -> Option<&mut Param>;
}

/// A buffer slot: `Tensor` or `Option<Tensor>` (absent buffers are skipped).
pub trait BufferField: Send + Sync + 'static {
    /// The buffer, when present.
    fn as_buffer(&self) -> Option<&Tensor>;
    /// The buffer for change, when present.
    fn as_buffer_mut(&mut self) -> Option<&mut Tensor>;
}

/// A slot trait for a member type and for its `Option`.
macro_rules! member_slot {
    ($slot:ident, $member:ty, $get:ident, $get_mut:ident) => {
        impl $slot for $member {
            fn $get(&self) -> Option<&$member> {
                Some(self)
            }
            fn $get_mut(&mut self) -> Option<&mut $member> {
                Some(self)
            }
        }

        impl $slot for Option<$member> {
            fn $get(&self) -> Option<&$member> {
                self.as_ref()
            }
            fn $get_mut(&mut self) -> Option<&mut $member> {
                self.as_mut()
            }
        }
    };
}

member_slot!(ParamField, Param, as_param, as_param_mut);
member_slot!(BufferField, Tensor, as_buffer, as_buffer_mut);

/// A child slot: any [`Module`], a [`Shared`] module, or an `Option` of either (absent children are skipped).
///
/// `Vec<T>`, `[T; N]` and `Box<M>` are modules themselves (the first two behave as PyTorch's `ModuleList`),
/// so they are child slots too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a module, so it cannot be a child field of a `#[derive(Module)]` struct",
    label = "not a `Module`, `Param` or `Tensor`",
    note = "child fields must implement `nn::Module` (derive it), or be `Shared<M>`, `Option<_>`, `Vec<_>`, `[_; N]` or `Box<_>` of modules",
    note = "a field that holds configuration rather than a module needs `#[module(skip)]`"
)]
pub trait ModuleField: Any + Send + Sync {
    /// The child, when present.
    fn as_child(&self) -> Option<Child<'_>>;
    /// The child for change, when present.
    fn as_child_mut(&mut self) -> Option<ChildMut<'_>>;
    /// Puts `value` in this slot, or gives it back with the reason when its type does not fit.
    fn replace(&mut self, value: Replacement) -> Replaced;
    /// Whether [`share`](Self::share) succeeds: a module or a shared module (not an `Option` slot).
    fn can_share(&self) -> bool {
        true
    }
    /// This slot as two slots holding one module (PyTorch's list slices hold the same modules): an owned
    /// module becomes [`Shared`]; a shared one gives a second handle; an `Option` slot is given back.
    fn share(self: Box<Self>) -> SharedSlots;
    /// Reports the slot to `visitor` as the child `name` (nothing when empty); an owned module goes through
    /// [`Visitor::child_static`] with its type known.
    #[inline(always)]
    fn visit_slot<'a, V: Visitor<'a>>(&'a self, name: &str, visitor: &mut V)
    where
        Self: Sized,
    {
        if let Some(child) = self.as_child() {
            visitor.child(name, child)
        }
    }
    /// [`visit_slot`](Self::visit_slot) for change.
    #[inline(always)]
    fn visit_slot_mut<'a, V: VisitorMut<'a>>(&'a mut self, name: &str, visitor: &mut V)
    where
        Self: Sized,
    {
        if let Some(child) = self.as_child_mut() {
            visitor.child(name, child)
        }
    }
}

/// A slot and a second slot holding the same module, or the slot back when it cannot be shared.
pub type SharedSlots = Result<(Box<dyn ModuleField>, Box<dyn ModuleField>), Box<dyn ModuleField>>;

impl<M: Module> ModuleField for M {
    fn share(self: Box<Self>) -> SharedSlots {
        let shared = Shared::new(*self);
        Ok((Box::new(shared.clone()), Box::new(shared)))
    }
    fn as_child(&self) -> Option<Child<'_>> {
        Some(Child::Owned(self))
    }
    fn as_child_mut(&mut self) -> Option<ChildMut<'_>> {
        Some(ChildMut::Owned(self))
    }
    fn replace(&mut self, value: Replacement) -> Replaced {
        *self = value.take::<M>()?;
        Ok(())
    }
    #[inline(always)]
    fn visit_slot<'a, V: Visitor<'a>>(&'a self, name: &str, visitor: &mut V) {
        visitor.child_static(name, self)
    }
    #[inline(always)]
    fn visit_slot_mut<'a, V: VisitorMut<'a>>(&'a mut self, name: &str, visitor: &mut V) {
        visitor.child_static(name, self)
    }
}

impl<M: Module> ModuleField for Shared<M> {
    fn share(self: Box<Self>) -> SharedSlots {
        let other = Box::new((*self).clone());
        Ok((self, other))
    }
    fn as_child(&self) -> Option<Child<'_>> {
        Some(Child::Shared(self))
    }
    fn as_child_mut(&mut self) -> Option<ChildMut<'_>> {
        Some(ChildMut::Shared(self))
    }
    fn replace(&mut self, value: Replacement) -> Replaced {
        *self = value.take_shared::<M>()?;
        Ok(())
    }
}

impl<T: ModuleField + FromReplacement> ModuleField for Option<T> {
    fn can_share(&self) -> bool {
        false
    }
    fn share(self: Box<Self>) -> SharedSlots {
        Err(self)
    }
    fn as_child(&self) -> Option<Child<'_>> {
        self.as_ref().and_then(|t| t.as_child())
    }
    fn as_child_mut(&mut self) -> Option<ChildMut<'_>> {
        self.as_mut().and_then(|t| t.as_child_mut())
    }
    fn replace(&mut self, value: Replacement) -> Replaced {
        *self = Some(T::from_replacement(value)?);
        Ok(())
    }
    #[inline(always)]
    fn visit_slot<'a, V: Visitor<'a>>(&'a self, name: &str, visitor: &mut V) {
        if let Some(slot) = self {
            slot.visit_slot(name, visitor)
        }
    }
    #[inline(always)]
    fn visit_slot_mut<'a, V: VisitorMut<'a>>(&'a mut self, name: &str, visitor: &mut V) {
        if let Some(slot) = self {
            slot.visit_slot_mut(name, visitor)
        }
    }
}

/// What putting a [`Replacement`] into a slot gives: the value back, with the reason, when the slot refuses it.
pub type Replaced = Result<(), (Replacement, String)>;

/// A child slot type that can be built from a [`Replacement`] (to fill an empty `Option` slot).
pub trait FromReplacement: Sized {
    /// The slot's value made from `value`, or `value` back with the reason.
    fn from_replacement(value: Replacement) -> Result<Self, (Replacement, String)>;
}

impl<M: Module> FromReplacement for M {
    fn from_replacement(value: Replacement) -> Result<Self, (Replacement, String)> {
        value.take::<M>()
    }
}

impl<M: Module> FromReplacement for Shared<M> {
    fn from_replacement(value: Replacement) -> Result<Self, (Replacement, String)> {
        value.take_shared::<M>()
    }
}

/// A module (or shared module) on its way into a child slot, for `set_submodule`.
///
/// A typed slot takes a value of its own type (a `Shared<M>` slot also takes an `M`, which then lives in that
/// slot alone, as a Python `setattr` would); a `Sequential` takes only values made by
/// [`Replacement::layer`], which carry their tensor forward.
pub struct Replacement {
    value: Box<dyn Any + Send + Sync>,
    type_name: &'static str,
    into_field: fn(AnyBox) -> Box<dyn ModuleField>,
    into_layer: Option<fn(AnyBox) -> Layer>,
}

/// A value of any type, on its way to a slot.
type AnyBox = Box<dyn Any + Send + Sync>;

impl Replacement {
    /// A module, shared module or `Option` of them.
    pub fn module<M: ModuleField>(value: M) -> Replacement {
        Replacement {
            value: Box::new(value),
            type_name: std::any::type_name::<M>(),
            into_field: |b| match b.downcast::<M>() {
                Ok(m) => m as Box<dyn ModuleField>,
                Err(_) => unreachable!("the box holds the type it was made with"),
            },
            into_layer: None,
        }
    }

    /// A layer that maps a tensor to a tensor, fit for a `Sequential` as well as for a typed slot.
    pub fn layer<M: ModuleField + Into<Layer>>(value: M) -> Replacement {
        Replacement {
            into_layer: Some(|b| match b.downcast::<M>() {
                Ok(m) => (*m).into(),
                Err(_) => unreachable!("the box holds the type it was made with"),
            }),
            ..Replacement::module(value)
        }
    }

    /// The Rust type of the value, without module paths.
    pub fn type_name(&self) -> String {
        short_type_name(self.type_name)
    }

    /// The value as `T`, or itself back with a message naming both types.
    pub fn take<T: 'static>(self) -> Result<T, (Replacement, String)> {
        if self.value.is::<T>() {
            match self.value.downcast::<T>() {
                Ok(v) => Ok(*v),
                Err(_) => unreachable!("checked with is::<T>()"),
            }
        } else {
            let message = format!(
                "the slot holds `{}`, the replacement is `{}`",
                short_type_name(std::any::type_name::<T>()),
                self.type_name()
            );
            Err((self, message))
        }
    }

    /// The value as `Shared<M>`, wrapping a plain `M` in a new handle.
    fn take_shared<M: Module>(self) -> Result<Shared<M>, (Replacement, String)> {
        if self.value.is::<M>() {
            return self.take::<M>().map(Shared::new);
        }
        self.take::<Shared<M>>()
    }

    /// The value boxed as a child slot of any type.
    pub fn into_field(self) -> Box<dyn ModuleField> {
        (self.into_field)(self.value)
    }

    /// The value boxed as a layer, or itself back when it was not made with [`Replacement::layer`].
    pub fn into_layer(self) -> Result<Layer, (Replacement, String)> {
        match self.into_layer {
            Some(f) => Ok(f(self.value)),
            None => {
                let message = format!(
                    "a Sequential item must map a Tensor to a Tensor; pass `{}` with Replacement::layer (or set_layer)",
                    self.type_name()
                );
                Err((self, message))
            }
        }
    }
}

/// `nn::layers::linear::Linear` → `Linear`, also inside generics (`Vec<a::B>` → `Vec<B>`).
pub(crate) fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut word = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
        } else {
            out.push_str(word.rsplit("::").next().unwrap_or(&word));
            word.clear();
            out.push(c);
        }
    }
    out.push_str(word.rsplit("::").next().unwrap_or(&word));
    out
}
