//! The `StaticKeys` impl: the struct's member keys and kinds, known at compile time.

use proc_macro2::TokenStream;
use quote::quote;

use super::Plan;
use crate::internals::ast::FieldKind;

pub(super) fn static_keys_impl(plan: &Plan<'_>) -> TokenStream {
    let ident = plan.cont.ident;
    let (impl_generics, ty_generics, where_clause) = plan.cont.generics.split_for_impl();
    let members: Vec<_> = plan
        .params
        .iter()
        .chain(&plan.buffers)
        .copied()
        .chain(plan.children.iter().map(|(f, _)| *f))
        .collect();
    let keys = members.iter().map(|f| f.key.as_str());
    let kinds = members.iter().map(|f| {
        let key = &f.key;
        let kind = match f.kind {
            FieldKind::Param => quote!(::nn::__private::MemberKind::Param),
            FieldKind::Buffer { persistent } => quote!(::nn::__private::MemberKind::Buffer { persistent: #persistent }),
            _ => quote!(::nn::__private::MemberKind::Child),
        };
        quote!((#key, #kind))
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics ::nn::__private::StaticKeys for #ident #ty_generics #where_clause {
            const KEYS: &'static [&'static str] = &[#(#keys),*];
            const MEMBERS: &'static [(&'static str, ::nn::__private::MemberKind)] = &[#(#kinds),*];
        }
    }
}
