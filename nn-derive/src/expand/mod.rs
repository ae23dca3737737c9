//! Code generation for a validated struct, one file per generated item: the `Module` impl's methods
//! ([`visit`], [`lookup`], [`mode`], [`repr`], [`state`]), the `HasHooks` impl ([`mode`]), `StaticKeys`
//! ([`keys`]) and `Display` ([`repr`]), and the trait each child field gets ([`child_trait`]).
//!
//! Everything is generated inside one `const _: () = { ... };` block, so the helper traits it defines stay
//! private and the code works inside any module or function. Paths are absolute (`::nn::...`).

mod child_trait;
mod keys;
mod lookup;
mod mode;
mod repr;
mod state;
mod visit;

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

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

/// The members of a struct, sorted by kind, that the generators read.
struct Plan<'a> {
    cont: &'a Container<'a>,
    params: Vec<&'a Field<'a>>,
    buffers: Vec<&'a Field<'a>>,
    /// The child fields with the name of the trait each gets.
    children: Vec<(&'a Field<'a>, syn::Ident)>,
    /// The `#[members]` field: members known at run time, reported after the struct's own, looked up and
    /// replaced when no own child has the name, and printed as the container prints them.
    runtime_members: Option<&'a syn::Member>,
}

impl<'a> Plan<'a> {
    fn field(&self, kind: FieldKind) -> Option<&'a Field<'a>> {
        self.cont.fields.iter().find(|f| f.kind == kind)
    }
}

fn expand(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let name = &cont.name;

    let child_fields: Vec<&Field<'_>> = cont.fields.iter().filter(|f| f.kind == FieldKind::Child).collect();
    let traits: Vec<(syn::Ident, TokenStream)> = child_fields
        .iter()
        .enumerate()
        .map(|(i, f)| child_trait::child_trait(cont, i, f))
        .collect();
    let trait_defs = traits.iter().map(|(_, t)| t);
    let plan = Plan {
        cont,
        params: cont.fields.iter().filter(|f| f.kind == FieldKind::Param).collect(),
        buffers: cont
            .fields
            .iter()
            .filter(|f| matches!(f.kind, FieldKind::Buffer { .. }))
            .collect(),
        children: child_fields
            .iter()
            .copied()
            .zip(traits.iter().map(|(t, _)| t.clone()))
            .collect(),
        runtime_members: cont
            .fields
            .iter()
            .find(|f| f.kind == FieldKind::Members)
            .map(|f| &f.member),
    };

    let visit = visit::methods(&plan);
    let lookup = lookup::methods(&plan);
    let mode = mode::methods(&plan);
    let repr = repr::methods(&plan);
    let state = state::methods(&plan);
    let has_hooks = mode::has_hooks_impl(&plan);
    let static_keys = keys::static_keys_impl(&plan);
    let display = repr::display_impl(&plan);

    quote! {
        const _: () = {
            #(#trait_defs)*

            #[automatically_derived]
            impl #impl_generics ::nn::__private::Module for #ident #ty_generics #where_clause {
                fn type_name(&self) -> &'static str {
                    #name
                }

                #visit
                #lookup
                #mode
                #repr
                #state
            }

            #has_hooks
            #static_keys
            #display
        };
    }
}
