//! The trait each child field gets, implemented for every module slot: what the generated methods call.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::internals::ast::{Container, Field};

/// Each child field gets a trait of its own, implemented for every module slot: its methods are what the
/// generated code calls, so a field whose type is no module fails with a message that names the field.
pub(super) fn child_trait(cont: &Container<'_>, index: usize, field: &Field<'_>) -> (syn::Ident, TokenStream) {
    let name = format_ident!("__NnChildField{}", index);
    let label = match &field.member {
        syn::Member::Named(i) => format!("field `{}`", i.to_string().trim_start_matches("r#")),
        syn::Member::Unnamed(i) => format!("field {}", i.index),
    };
    let message = format!(
        "{label} of `{}` is not a module: `{{Self}}` is neither a `Module`, a `Param` nor a `Tensor`",
        cont.name
    );
    let skip = format!("if {label} holds configuration rather than a module, mark it `#[module(skip)]`");
    let tokens = quote! {
        #[diagnostic::on_unimplemented(
            message = #message,
            label = "not a module",
            note = "a child field must implement `nn::Module` (derive it), or be a `Shared`, `Option`, `Vec`, array or `Box` of modules",
            note = #skip
        )]
        trait #name {
            fn __as_child(&self) -> ::core::option::Option<::nn::__private::Child<'_>>;
            fn __as_child_mut(&mut self) -> ::core::option::Option<::nn::__private::ChildMut<'_>>;
            fn __replace(
                &mut self,
                value: ::nn::__private::Replacement,
            ) -> ::core::result::Result<(), (::nn::__private::Replacement, ::nn::__private::std::string::String)>;
            fn __visit_slot<'__a, __V: ::nn::__private::Visitor<'__a>>(&'__a self, name: &str, visitor: &mut __V)
            where
                Self: ::core::marker::Sized;
            fn __visit_slot_mut<'__a, __V: ::nn::__private::VisitorMut<'__a>>(
                &'__a mut self,
                name: &str,
                visitor: &mut __V,
            ) where
                Self: ::core::marker::Sized;
        }
        impl<T: ?::core::marker::Sized + ::nn::__private::ModuleField> #name for T {
            #[inline(always)]
            fn __as_child(&self) -> ::core::option::Option<::nn::__private::Child<'_>> {
                ::nn::__private::ModuleField::as_child(self)
            }
            #[inline(always)]
            fn __as_child_mut(&mut self) -> ::core::option::Option<::nn::__private::ChildMut<'_>> {
                ::nn::__private::ModuleField::as_child_mut(self)
            }
            #[inline(always)]
            fn __replace(
                &mut self,
                value: ::nn::__private::Replacement,
            ) -> ::core::result::Result<(), (::nn::__private::Replacement, ::nn::__private::std::string::String)> {
                ::nn::__private::ModuleField::replace(self, value)
            }
            #[inline(always)]
            fn __visit_slot<'__a, __V: ::nn::__private::Visitor<'__a>>(&'__a self, name: &str, visitor: &mut __V)
            where
                Self: ::core::marker::Sized,
            {
                ::nn::__private::ModuleField::visit_slot(self, name, visitor)
            }
            #[inline(always)]
            fn __visit_slot_mut<'__a, __V: ::nn::__private::VisitorMut<'__a>>(
                &'__a mut self,
                name: &str,
                visitor: &mut __V,
            ) where
                Self: ::core::marker::Sized,
            {
                ::nn::__private::ModuleField::visit_slot_mut(self, name, visitor)
            }
        }
    };
    (name, tokens)
}
