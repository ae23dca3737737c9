//! The intermediate form of a derived struct: its printed name and its fields, each sorted into a kind.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Data, DeriveInput};

use super::{Ctxt, attr, types};

/// A struct the derive accepted, ready for validation and code generation.
pub struct Container<'a> {
    pub ident: &'a syn::Ident,
    pub generics: &'a syn::Generics,
    /// The name `Display` prints (`#[module(name = "...")]`, else the struct's name).
    pub name: String,
    pub fields: Vec<Field<'a>>,
    /// `#[module(extra_repr)]` (its tokens): `extra_repr` comes from the struct's `nn::module::ExtraRepr` impl.
    pub extra_repr: Option<TokenStream>,
    /// `#[module(extra_state)]` (its tokens): extra state comes from the struct's `nn::module::ExtraState` impl.
    pub extra_state: Option<TokenStream>,
    /// `#[module(custom_state_dict)]` (its tokens): the version and the save and load steps come from the
    /// struct's `nn::module::CustomStateDict` impl.
    pub custom_state_dict: Option<TokenStream>,
}

/// What a field is to the module.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FieldKind {
    /// `Param` or `Option<Param>`.
    Param,
    /// `Tensor` or `Option<Tensor>` (or `#[buffer]`).
    Buffer { persistent: bool },
    /// Any other type: must be a module slot.
    Child,
    /// `training: bool`: the module's own mode flag.
    Training,
    /// A field of type `Hooks`: the module's hook storage.
    Hooks,
    /// A recognised configuration value (a number, `String`, …): not a member.
    Config,
    /// `#[module(skip)]`: not a member.
    Skip,
    /// `#[members]`: members known at run time (a container's items), reported by the field's
    /// `nn::module::Members` impl after the struct's own members.
    Members,
}

impl FieldKind {
    /// Whether the field is a parameter, buffer or child (has a key).
    pub fn is_member(self) -> bool {
        matches!(self, FieldKind::Param | FieldKind::Buffer { .. } | FieldKind::Child)
    }
}

/// One field of the struct.
pub struct Field<'a> {
    /// How the generated code names it: `self.fc` or `self.0`.
    pub member: syn::Member,
    /// The key in paths and state dicts.
    pub key: String,
    /// The tokens the key came from (the `rename` literal, else the field), for error spans.
    pub key_tokens: TokenStream,
    /// The `rename` literal, when given.
    pub rename: Option<syn::LitStr>,
    pub ty: &'a syn::Type,
    pub kind: FieldKind,
}

impl<'a> Container<'a> {
    /// Reads the struct, reporting problems to `cx`; `None` when it is not a struct at all.
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Option<Container<'a>> {
        let attrs = attr::Container::from_ast(cx, &input.attrs);
        let fields = match &input.data {
            Data::Struct(s) => &s.fields,
            Data::Enum(e) => {
                cx.error_spanned_by(
                    e.enum_token,
                    "#[derive(Module)] works on structs only\n\
                     help: a module is a struct of parameters, buffers and child modules; to choose a layer at run \
                     time, hold it in a struct field as `Box<dyn Module>`, an `Option<_>` per choice, or a `Sequential`",
                );
                return None;
            }
            Data::Union(u) => {
                cx.error_spanned_by(
                    u.union_token,
                    "#[derive(Module)] works on structs only\nhelp: declare the module as a `struct`",
                );
                return None;
            }
        };
        // Named, unnamed or none (a unit struct): `Fields::iter` walks each kind.
        let fields = fields
            .iter()
            .enumerate()
            .map(|(i, f)| Field::from_ast(cx, i, f))
            .collect();
        Some(Container {
            ident: &input.ident,
            generics: &input.generics,
            name: attrs.name.map(|n| n.value).unwrap_or_else(|| unraw(&input.ident)),
            fields,
            extra_repr: attrs.extra_repr,
            extra_state: attrs.extra_state,
            custom_state_dict: attrs.custom_state_dict,
        })
    }
}

/// `r#type` → `type`.
fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

impl<'a> Field<'a> {
    fn from_ast(cx: &Ctxt, index: usize, field: &'a syn::Field) -> Field<'a> {
        let attrs = attr::Field::from_ast(cx, field);
        let ty = &field.ty;
        let member = match &field.ident {
            Some(ident) => syn::Member::Named(ident.clone()),
            None => syn::Member::Unnamed(syn::Index::from(index)),
        };
        let natural_key = match &field.ident {
            Some(ident) => unraw(ident),
            None => index.to_string(),
        };
        let field_label = match &field.ident {
            Some(ident) => format!("field `{}`", unraw(ident)),
            None => format!("field {index}"),
        };

        let kind = if let Some(members) = &attrs.members {
            for (conflict, tokens) in [
                ("#[module(skip)]", attrs.skip.as_ref().map(|a| &a.tokens)),
                ("#[buffer]", attrs.buffer.as_ref().map(|a| &a.tokens)),
                ("rename", attrs.rename.as_ref().map(|a| &a.tokens)),
            ] {
                if let Some(tokens) = tokens {
                    cx.error_spanned_by(
                        tokens,
                        format!(
                            "{field_label} is `#[members]`: its items carry their own keys, so it takes no `{conflict}`"
                        ),
                    );
                }
            }
            let _ = &members.tokens;
            FieldKind::Members
        } else if let Some(skip) = &attrs.skip {
            if let Some(buffer) = &attrs.buffer {
                cx.error_spanned_by(
                    &buffer.tokens,
                    format!("{field_label} is both `#[module(skip)]` and `#[buffer]`; a skipped field is no buffer: remove one of them"),
                );
            }
            if let Some(rename) = &attrs.rename {
                cx.error_spanned_by(
                    &rename.tokens,
                    format!("{field_label} is skipped, so it has no key to rename: remove `rename`"),
                );
            }
            let _ = &skip.tokens;
            FieldKind::Skip
        } else if let Some(buffer) = &attrs.buffer {
            if types::tensor(ty).is_none() {
                cx.error_spanned_by(
                    &buffer.tokens,
                    format!(
                        "`#[buffer]` needs a field of type `Tensor` or `Option<Tensor>`, but {field_label} is `{}`\n\
                         help: a parameter is declared as `Param`, a child module needs no attribute, and a \
                         configuration value takes `#[module(skip)]`",
                        ty.to_token_stream().to_string().replace(' ', "")
                    ),
                );
            }
            FieldKind::Buffer {
                persistent: buffer.value,
            }
        } else if types::param(ty).is_some() {
            FieldKind::Param
        } else if types::tensor(ty).is_some() {
            FieldKind::Buffer { persistent: true }
        } else if types::is_hooks(ty) {
            if let Some(rename) = &attrs.rename {
                cx.error_spanned_by(
                    &rename.tokens,
                    "a `Hooks` field holds the module's hooks, not a member: it has no key to rename",
                );
            }
            FieldKind::Hooks
        } else if natural_key == "training" && types::is_bool(ty) {
            if let Some(rename) = &attrs.rename {
                cx.error_spanned_by(
                    &rename.tokens,
                    "`training: bool` is the module's mode flag, not a member: it has no key to rename",
                );
            }
            FieldKind::Training
        } else if types::is_config(ty) {
            if let Some(rename) = &attrs.rename {
                cx.error_spanned_by(
                    &rename.tokens,
                    format!(
                        "{field_label} holds configuration, not a member, so it has no key to rename: remove `rename`"
                    ),
                );
            }
            FieldKind::Config
        } else {
            FieldKind::Child
        };

        let (key, key_tokens) = match &attrs.rename {
            Some(r) => (r.value.value(), r.value.to_token_stream()),
            None => (
                natural_key,
                field
                    .ident
                    .as_ref()
                    .map(|i| quote!(#i))
                    .unwrap_or_else(|| ty.to_token_stream()),
            ),
        };
        Field {
            member,
            key,
            key_tokens,
            rename: attrs.rename.map(|r| r.value),
            ty,
            kind,
        }
    }
}
