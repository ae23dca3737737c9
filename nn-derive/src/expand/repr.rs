//! What a module prints: `extra_repr` (from the struct's `ExtraRepr` impl, or its run-time members'), a
//! container's `repr`, and the `Display` impl that prints PyTorch's `repr`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Plan;

pub(super) fn methods(plan: &Plan<'_>) -> TokenStream {
    let members_repr = plan.runtime_members.map(|m| {
        quote! {
            fn repr(&self) -> ::nn::__private::std::string::String {
                ::nn::__private::Members::repr(&self.#m, self)
            }
        }
    });
    let extra_repr_call = match (&plan.cont.extra_repr, plan.runtime_members) {
        (Some(tokens), _) => {
            Some(quote_spanned! {tokens.span()=> <Self as ::nn::module::ExtraRepr>::extra_repr(self) })
        }
        (None, Some(m)) => Some(quote!(::nn::__private::Members::extra_repr(&self.#m))),
        (None, None) => None,
    };
    let extra_repr = extra_repr_call.map(|call| {
        quote! {
            fn extra_repr(&self) -> ::nn::__private::std::string::String {
                #call
            }
        }
    });
    quote! {
        #extra_repr
        #members_repr
    }
}

pub(super) fn display_impl(plan: &Plan<'_>) -> TokenStream {
    let ident = plan.cont.ident;
    let (impl_generics, ty_generics, where_clause) = plan.cont.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics ::core::fmt::Display for #ident #ty_generics #where_clause {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __f.write_str(&::nn::__private::Module::repr(self))
            }
        }
    }
}
