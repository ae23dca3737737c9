//! Code generation for a validated struct: the `Module`, `StaticKeys`, `Display` (and `HasHooks`) impls.
//!
//! Everything is generated inside one `const _: () = { ... };` block, so the helper traits it defines stay
//! private and the code works inside any module or function. Paths are absolute (`::nn::...`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use crate::internals::ast::{Container, Field, FieldKind};
use crate::internals::{Ctxt, check};

/// The generated impls for `input`, or every error found in it.
pub fn derive(input: &DeriveInput) -> Result<TokenStream, Vec<syn::Error>> {
    let cx = Ctxt::new();
    let Some(cont) = Container::from_ast(&cx, input) else {
        cx.check()?;
        return Ok(TokenStream::new());
    };
    check::check(&cx, &cont);
    cx.check()?;
    Ok(expand(&cont))
}

/// Each child field gets a trait of its own, implemented for every module slot: its methods are what the
/// generated code calls, so a field whose type is no module fails with a message that names the field.
fn child_trait(cont: &Container<'_>, index: usize, field: &Field<'_>) -> (syn::Ident, TokenStream) {
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

fn expand(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let name = &cont.name;

    let params: Vec<&Field<'_>> = cont.fields.iter().filter(|f| f.kind == FieldKind::Param).collect();
    let buffers: Vec<&Field<'_>> = cont
        .fields
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Buffer { .. }))
        .collect();
    let children: Vec<&Field<'_>> = cont.fields.iter().filter(|f| f.kind == FieldKind::Child).collect();
    let traits: Vec<(syn::Ident, TokenStream)> = children
        .iter()
        .enumerate()
        .map(|(i, f)| child_trait(cont, i, f))
        .collect();
    let trait_defs = traits.iter().map(|(_, t)| t);

    let visit_params = params
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
    let visit_params_mut = params.iter().map(|f| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__p) = ::nn::__private::ParamField::as_param_mut(&mut self.#member) {
                __visitor.param(#key, __p);
            }
        }
    }).collect::<Vec<_>>();

    let persistent = |f: &Field<'_>| matches!(f.kind, FieldKind::Buffer { persistent: true });
    let visit_buffers = buffers
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
    let visit_buffers_mut = buffers.iter().map(|f| {
        let (member, key, p) = (&f.member, &f.key, persistent(f));
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__b) = ::nn::__private::BufferField::as_buffer_mut(&mut self.#member) {
                __visitor.buffer(#key, __b, #p);
            }
        }
    }).collect::<Vec<_>>();

    let visit_children = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__c) = #t::__as_child(&self.#member) {
                __visitor.child(#key, __c);
            }
        }
    });
    let visit_children_static = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            #t::__visit_slot(&self.#member, #key, __visitor);
        }
    });
    let visit_children_mut_static = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            #t::__visit_slot_mut(&mut self.#member, #key, __visitor);
        }
    });
    let visit_children_mut = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=>
            if let ::core::option::Option::Some(__c) = #t::__as_child_mut(&mut self.#member) {
                __visitor.child(#key, __c);
            }
        }
    });
    let child_arms = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=> #key => #t::__as_child(&self.#member), }
    });
    let child_mut_arms = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=> #key => #t::__as_child_mut(&mut self.#member), }
    });
    let set_arms = children.iter().zip(&traits).map(|(f, (t, _))| {
        let (member, key) = (&f.member, &f.key);
        quote_spanned! {f.ty.span()=> #key => #t::__replace(&mut self.#member, __value), }
    });

    // Members known at run time: reported after the struct's own, looked up and replaced when no own child
    // has the name, and printed as the container prints them.
    let runtime_members = cont
        .fields
        .iter()
        .find(|f| f.kind == FieldKind::Members)
        .map(|f| &f.member);
    let visit_members = runtime_members.map(|m| quote!(::nn::__private::Members::visit(&self.#m, __visitor);));
    let visit_members_mut =
        runtime_members.map(|m| quote!(::nn::__private::Members::visit_mut(&mut self.#m, __visitor);));
    let child_fallback = match runtime_members {
        Some(m) => quote!(::nn::__private::Members::child(&self.#m, __name)),
        None => quote!(::core::option::Option::None),
    };
    let child_mut_fallback = match runtime_members {
        Some(m) => quote!(::nn::__private::Members::child_mut(&mut self.#m, __name)),
        None => quote!(::core::option::Option::None),
    };
    let set_fallback = match runtime_members {
        Some(m) => quote!(::nn::__private::Members::set_child(&mut self.#m, #name, __name, __value)),
        None => quote! {
            ::core::result::Result::Err((
                __value,
                ::nn::__private::std::format!("{} has no child slot `{}`", #name, __name),
            ))
        },
    };
    let members_repr = runtime_members.map(|m| {
        quote! {
            fn repr(&self) -> ::nn::__private::std::string::String {
                ::nn::__private::Members::repr(&self.#m, self)
            }
        }
    });

    let training = cont.fields.iter().find(|f| f.kind == FieldKind::Training).map(|f| {
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
    let hooks_field = cont.fields.iter().find(|f| f.kind == FieldKind::Hooks);
    let hooks = hooks_field.map(|f| {
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
    let has_hooks = hooks_field.map(|f| {
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
    });
    let extra_repr_call = match (&cont.extra_repr, runtime_members) {
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
    let extra_state = cont.extra_state.as_ref().map(|tokens| {
        let get = quote_spanned! {tokens.span()=> <Self as ::nn::module::ExtraState>::get_extra_state(self) };
        let set = quote_spanned! {tokens.span()=> <Self as ::nn::module::ExtraState>::set_extra_state(self, __state) };
        quote! {
            fn has_extra_state(&self) -> bool {
                true
            }
            fn get_extra_state(&self) -> ::core::option::Option<::nn::Tensor> {
                ::core::option::Option::Some(#get)
            }
            fn set_extra_state(&mut self, __state: ::nn::Tensor) -> ::nn::Result<()> {
                #set
            }
        }
    });
    let custom_state_dict = cont.custom_state_dict.as_ref().map(|tokens| {
        let version = quote_spanned! {tokens.span()=> <Self as ::nn::module::CustomStateDict>::VERSION };
        let save = quote_spanned! {tokens.span()=>
            <Self as ::nn::module::CustomStateDict>::save_to_state_dict(self, __state, __prefix)
        };
        let load = quote_spanned! {tokens.span()=>
            <Self as ::nn::module::CustomStateDict>::load_from_state_dict(self, __state, __prefix, __version)
        };
        quote! {
            fn state_dict_version(&self) -> u32 {
                #version
            }
            fn save_to_state_dict(&self, __state: &mut ::nn::StateDict, __prefix: &str) {
                #save
            }
            fn load_from_state_dict(
                &self,
                __state: &mut ::nn::StateDict,
                __prefix: &str,
                __version: ::core::option::Option<u32>,
            ) -> ::nn::Result<()> {
                #load
            }
        }
    });

    let keys: Vec<&str> = params
        .iter()
        .chain(&buffers)
        .chain(&children)
        .map(|f| f.key.as_str())
        .collect();
    let members = params.iter().chain(&buffers).chain(&children).map(|f| {
        let key = &f.key;
        let kind = match f.kind {
            FieldKind::Param => quote!(::nn::__private::MemberKind::Param),
            FieldKind::Buffer { persistent } => quote!(::nn::__private::MemberKind::Buffer { persistent: #persistent }),
            _ => quote!(::nn::__private::MemberKind::Child),
        };
        quote!((#key, #kind))
    });
    let unused_visitor = (keys.is_empty() && runtime_members.is_none()).then(|| quote!(let _ = __visitor;));
    let unused_name = (children.is_empty() && runtime_members.is_none()).then(|| quote!(let _ = __name;));

    quote! {
        const _: () = {
            #(#trait_defs)*

            #[automatically_derived]
            impl #impl_generics ::nn::__private::Module for #ident #ty_generics #where_clause {
                fn type_name(&self) -> &'static str {
                    #name
                }

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

                #training
                #hooks
                #extra_repr
                #members_repr
                #extra_state
                #custom_state_dict
            }

            #has_hooks

            #[automatically_derived]
            impl #impl_generics ::nn::__private::StaticKeys for #ident #ty_generics #where_clause {
                const KEYS: &'static [&'static str] = &[#(#keys),*];
                const MEMBERS: &'static [(&'static str, ::nn::__private::MemberKind)] = &[#(#members),*];
            }

            #[automatically_derived]
            impl #impl_generics ::core::fmt::Display for #ident #ty_generics #where_clause {
                fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    __f.write_str(&::nn::__private::Module::repr(self))
                }
            }
        };
    }
}
