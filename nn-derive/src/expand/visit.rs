//! `visit`, `visit_static`, `visit_mut` and `visit_mut_static`: each member shown to a visitor, parameters
//! first, then buffers, children and the members known at run time.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Plan;
use crate::internals::ast::{Field, FieldKind};

pub(super) fn methods(plan: &Plan<'_>) -> TokenStream {
    let visit_params = plan
        .params
        .iter()
        .map(|f| {
            let (member, key) = (&f.member, &f.key);
            quote_spanned! {f.ty.span()=>
                if let ::core::option::Option::Some(__p) = ::nn::__private::ParamField::as_param(&self.#member) {
                    __visitor.param(#key, __p);
                }
            }
        })
        .collect::<Vec<_>>();
    let visit_params_mut = plan.params.iter().map(|f| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__p) = ::nn::__private::ParamField::as_param_mut(&mut self.#member) {
                __visitor.param(#key, __p);
            }
        }
    }).collect::<Vec<_>>();

    let persistent = |f: &Field<'_>| matches!(f.kind, FieldKind::Buffer { persistent: true });
    let visit_buffers = plan
        .buffers
        .iter()
        .map(|f| {
            let (member, key, p) = (&f.member, &f.key, persistent(f));
            quote_spanned! {f.ty.span()=>
                if let ::core::option::Option::Some(__b) = ::nn::__private::BufferField::as_buffer(&self.#member) {
                    __visitor.buffer(#key, __b, #p);
                }
            }
        })
        .collect::<Vec<_>>();
    let visit_buffers_mut = plan.buffers.iter().map(|f| {
        let (member, key, p) = (&f.member, &f.key, persistent(f));
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__b) = ::nn::__private::BufferField::as_buffer_mut(&mut self.#member) {
                __visitor.buffer(#key, __b, #p);
            }
        }
    }).collect::<Vec<_>>();

    let visit_children = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__c) = #t::__as_child(&self.#member) {
                __visitor.child(#key, __c);
            }
        }
    });
    let visit_children_static = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            #t::__visit_slot(&self.#member, #key, __visitor);
        }
    });
    let visit_children_mut_static = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            #t::__visit_slot_mut(&mut self.#member, #key, __visitor);
        }
    });
    let visit_children_mut = plan.children.iter().map(|(f, t)| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__c) = #t::__as_child_mut(&mut self.#member) {
                __visitor.child(#key, __c);
            }
        }
    });

    let visit_members = plan
        .runtime_members
        .map(|m| quote!(::nn::__private::Members::visit(&self.#m, __visitor);));
    let visit_members_mut = plan
        .runtime_members
        .map(|m| quote!(::nn::__private::Members::visit_mut(&mut self.#m, __visitor);));
    let has_no_member =
        plan.params.is_empty() && plan.buffers.is_empty() && plan.children.is_empty() && plan.runtime_members.is_none();
    let unused_visitor = has_no_member.then(|| quote!(let _ = __visitor;));

    quote! {
        fn visit<'__a>(&'__a self, __visitor: &mut dyn ::nn::__private::Visitor<'__a>) {
            #unused_visitor
            #(#visit_params)*
            #(#visit_buffers)*
            #(#visit_children)*
            #visit_members
        }

        #[inline]
        fn visit_static<'__a, __V: ::nn::__private::Visitor<'__a>>(&'__a self, __visitor: &mut __V) {
            #unused_visitor
            #(#visit_params)*
            #(#visit_buffers)*
            #(#visit_children_static)*
            #visit_members
        }

        #[inline]
        fn visit_mut_static<'__a, __V: ::nn::__private::VisitorMut<'__a>>(&'__a mut self, __visitor: &mut __V) {
            #unused_visitor
            #(#visit_params_mut)*
            #(#visit_buffers_mut)*
            #(#visit_children_mut_static)*
            #visit_members_mut
        }

        fn visit_mut<'__a>(&'__a mut self, __visitor: &mut dyn ::nn::__private::VisitorMut<'__a>) {
            #unused_visitor
            #(#visit_params_mut)*
            #(#visit_buffers_mut)*
            #(#visit_children_mut)*
            #visit_members_mut
        }
    }
}
