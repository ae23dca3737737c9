//! `Vec<T>` and `[T; N]` of child slots are modules that behave as PyTorch's `nn.ModuleList` (keys `0`, `1`,
//! …, folded `repr`), and `Box<M>` is its module.

use super::repr::{child_reprs, list_repr};
use super::{Child, ChildMut, Module, ModuleField, Replaced, Replacement, Visitor, VisitorMut};
use crate::Tensor;

/// The index `name` stands for, if it is written as PyTorch writes indices (`0`, `17`; not `01` or `+1`).
pub fn parse_index(name: &str) -> Option<usize> {
    if name.is_empty() || (name.len() > 1 && name.starts_with('0')) || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

/// `put`s `value` into the item `name` indexes, or gives it back when `name` is no index below the length.
pub(crate) fn set_index<T>(
    items: &mut [T],
    name: &str,
    value: Replacement,
    put: impl FnOnce(&mut T, Replacement) -> Replaced,
) -> Replaced {
    let len = items.len();
    match parse_index(name).and_then(|i| items.get_mut(i)) {
        Some(item) => put(item, value),
        None => Err((value, format!("`{name}` is not an index below {len}"))),
    }
}

/// Runs `f` on each item with its index written as a key (`0`, `1`, …), with no allocation per item.
#[inline(always)]
pub(crate) fn for_each_indexed<T>(items: impl IntoIterator<Item = T>, mut f: impl FnMut(&str, T)) {
    let mut index = itoa::Buffer::new();
    for (i, item) in items.into_iter().enumerate() {
        f(index.format(i), item);
    }
}

macro_rules! module_list {
    ($($impl_head:tt)*) => {
        $($impl_head)* {
            fn type_name(&self) -> &'static str {
                "ModuleList"
            }

            fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
                for_each_indexed(self.iter(), |key, item| {
                    if let Some(child) = item.as_child() {
                        visitor.child(key, child);
                    }
                });
            }

            #[inline]
            fn visit_static<'a, V: Visitor<'a>>(&'a self, visitor: &mut V) {
                for_each_indexed(self.iter(), |key, item| item.visit_slot(key, visitor));
            }

            #[inline]
            fn visit_mut_static<'a, V: VisitorMut<'a>>(&'a mut self, visitor: &mut V) {
                for_each_indexed(self.iter_mut(), |key, item| item.visit_slot_mut(key, visitor));
            }

            fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
                for_each_indexed(self.iter_mut(), |key, item| {
                    if let Some(child) = item.as_child_mut() {
                        visitor.child(key, child);
                    }
                });
            }

            fn child(&self, name: &str) -> Option<Child<'_>> {
                self.get(parse_index(name)?)?.as_child()
            }

            fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
                self.get_mut(parse_index(name)?)?.as_child_mut()
            }

            fn set_child(&mut self, name: &str, value: Replacement) -> Replaced {
                set_index(self, name, value, |item, value| item.replace(value))
            }

            fn repr(&self) -> String {
                list_repr("ModuleList", &child_reprs(self))
            }
        }
    };
}

module_list!(impl<T: ModuleField> Module for Vec<T>);
module_list!(impl<T: ModuleField, const N: usize> Module for [T; N]);

impl<M: Module + ?Sized> Module for Box<M> {
    fn type_name(&self) -> &'static str {
        (**self).type_name()
    }
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        (**self).visit(visitor)
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        (**self).visit_mut(visitor)
    }
    fn child(&self, name: &str) -> Option<Child<'_>> {
        (**self).child(name)
    }
    fn child_mut(&mut self, name: &str) -> Option<ChildMut<'_>> {
        (**self).child_mut(name)
    }
    fn set_child(&mut self, name: &str, value: Replacement) -> Replaced {
        (**self).set_child(name, value)
    }
    fn extra_repr(&self) -> String {
        (**self).extra_repr()
    }
    fn repr(&self) -> String {
        (**self).repr()
    }
    fn is_training(&self) -> bool {
        (**self).is_training()
    }
    fn set_training(&mut self, mode: bool) {
        (**self).set_training(mode)
    }
    /// A box's call is its module's call (`Box<dyn TensorModule>`'s forward calls the module with its hooks).
    fn calls_through(&self) -> bool {
        true
    }
    fn hooks(&self) -> Option<&crate::Hooks> {
        (**self).hooks()
    }
    fn hooks_mut(&mut self) -> Option<&mut crate::Hooks> {
        (**self).hooks_mut()
    }
    fn has_extra_state(&self) -> bool {
        (**self).has_extra_state()
    }
    fn get_extra_state(&self) -> Option<Tensor> {
        (**self).get_extra_state()
    }
    fn set_extra_state(&mut self, state: Tensor) -> crate::Result<()> {
        (**self).set_extra_state(state)
    }
    fn state_dict_version(&self) -> u32 {
        (**self).state_dict_version()
    }
    fn save_to_state_dict(&self, state: &mut crate::StateDict, prefix: &str) {
        (**self).save_to_state_dict(state, prefix)
    }
    fn load_from_state_dict(
        &self,
        state: &mut crate::StateDict,
        prefix: &str,
        version: Option<u32>,
    ) -> crate::Result<()> {
        (**self).load_from_state_dict(state, prefix, version)
    }
}
