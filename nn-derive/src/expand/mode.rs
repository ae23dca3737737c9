//! `is_training` / `set_training` from a `training: bool` field, and `hooks` / `hooks_mut` and the `HasHooks`
//! impl from a `Hooks` field.

use proc_macro2::TokenStream;
use quote::quote;

use super::Plan;
use crate::internals::ast::FieldKind;

pub(super) fn methods(plan: &Plan<'_>) -> TokenStream {
    let training = plan.field(FieldKind::Training).map(|f| {
        let member = &f.member;
        quote! {
            fn is_training(&self) -> bool {
                self.#member
            }
            fn set_training(&mut self, __mode: bool) {
                self.#member = __mode;
            }
        }
    });
    let hooks = plan.field(FieldKind::Hooks).map(|f| {
        let member = &f.member;
        quote! {
            fn hooks(&self) -> ::core::option::Option<&::nn::__private::Hooks> {
                ::core::option::Option::Some(&self.#member)
            }
            fn hooks_mut(&mut self) -> ::core::option::Option<&mut ::nn::__private::Hooks> {
                ::core::option::Option::Some(&mut self.#member)
            }
        }
    });
    quote! {
        #training
        #hooks
    }
}

pub(super) fn has_hooks_impl(plan: &Plan<'_>) -> Option<TokenStream> {
    let ident = plan.cont.ident;
    let (impl_generics, ty_generics, where_clause) = plan.cont.generics.split_for_impl();
    plan.field(FieldKind::Hooks).map(|f| {
        let member = &f.member;
        quote! {
            #[automatically_derived]
            impl #impl_generics ::nn::__private::HasHooks for #ident #ty_generics #where_clause {
                fn hook_storage(&self) -> &::nn::__private::Hooks {
                    &self.#member
                }
                fn hook_storage_mut(&mut self) -> &mut ::nn::__private::Hooks {
                    &mut self.#member
                }
            }
        }
    })
}
