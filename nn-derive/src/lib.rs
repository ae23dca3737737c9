//! `#[derive(Module)]`: generates the `nn::Module` implementation of a struct at compile time.
//!
//! The input is parsed into an intermediate form ([`internals::ast`]), its attributes read
//! ([`internals::attr`]) and validated ([`internals::check`]), every error collected ([`internals::ctxt`]);
//! only a valid container reaches code generation ([`expand`]).

mod expand;
mod internals;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `nn::Module` (and `Display`, and `nn::module::StaticKeys`) for a struct.
///
/// Field attributes: `#[module(skip)]`, `#[module(rename = "key")]`, `#[buffer]`,
/// `#[buffer(persistent = false)]`, `#[members]` (members known at run time: a container's items). Struct attributes: `#[module(name = "GELU")]`, `#[module(extra_repr)]`,
/// `#[module(extra_state)]`. See the `nn` crate's documentation.
#[proc_macro_derive(Module, attributes(module, buffer, members))]
pub fn derive_module(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).unwrap_or_else(to_compile_errors).into()
}

fn to_compile_errors(errors: Vec<syn::Error>) -> proc_macro2::TokenStream {
    let compile_errors = errors.iter().map(syn::Error::to_compile_error);
    quote::quote!(#(#compile_errors)*)
}
