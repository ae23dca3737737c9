//! `child`, `child_mut` and `set_child`: a child slot found or replaced by its key, the members known at run
//! time asked when no own child has it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Plan;

pub(super) fn methods(plan: &Plan<'_>) -> TokenStream {
    let name = &plan.cont.name;
    let child_arms = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=> #key => #t::__as_child(&self.#member), }
    });
    let child_mut_arms = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=> #key => #t::__as_child_mut(&mut self.#member), }
    });
    let set_arms = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=> #key => #t::__replace(&mut self.#member, __value), }
    });

    let child_fallback = match plan.runtime_members {
        Some(m) => quote!(::nn::__private::Members::child(&self.#m, __name)),
        None => quote!(::core::option::Option::None),
    };
    let child_mut_fallback = match plan.runtime_members {
        Some(m) => quote!(::nn::__private::Members::child_mut(&mut self.#m, __name)),
        None => quote!(::core::option::Option::None),
    };
    let set_fallback = match plan.runtime_members {
        Some(m) => quote!(::nn::__private::Members::set_child(&mut self.#m, #name, __name, __value)),
        None => quote! {
            ::core::result::Result::Err((
                __value,
                ::nn::__private::std::format!("{} has no child slot `{}`", #name, __name),
            ))
        },
    };
    let unused_name = (plan.children.is_empty() && plan.runtime_members.is_none()).then(|| quote!(let _ = __name;));

    quote! {
        fn child(&self, __name: &str) -> ::core::option::Option<::nn::__private::Child<'_>> {
            #unused_name
            match __name {
                #(#child_arms)*
                _ => #child_fallback,
            }
        }

        fn child_mut(&mut self, __name: &str) -> ::core::option::Option<::nn::__private::ChildMut<'_>> {
            #unused_name
            match __name {
                #(#child_mut_arms)*
                _ => #child_mut_fallback,
            }
        }

        fn set_child(
            &mut self,
            __name: &str,
            __value: ::nn::__private::Replacement,
        ) -> ::core::result::Result<(), (::nn::__private::Replacement, ::nn::__private::std::string::String)> {
            match __name {
                #(#set_arms)*
                _ => #set_fallback,
            }
        }
    }
}
