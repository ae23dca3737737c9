//! The state-dict methods a struct attribute asks for: extra state (`#[module(extra_state)]`, from the
//! struct's `ExtraState` impl) and a custom save and load (`#[module(custom_state_dict)]`, from its
//! `CustomStateDict` impl).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Plan;

pub(super) fn methods(plan: &Plan<'_>) -> TokenStream {
    let extra_state = plan.cont.extra_state.as_ref().map(|tokens| {
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
    let custom_state_dict = plan.cont.custom_state_dict.as_ref().map(|tokens| {
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
    quote! {
        #extra_state
        #custom_state_dict
    }
}
