//! Validation of a parsed struct: keys, and generic parameters used as modules.

use std::collections::HashMap;

use quote::ToTokens;

use super::ast::{Container, FieldKind};
use super::{Ctxt, types};

/// Reports every problem of `cont` to `cx`.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_keys(cx, cont);
    check_collections(cx, cont);
    check_single(
        cx,
        cont,
        FieldKind::Hooks,
        "`Hooks` field",
        "a module keeps its hooks in one `Hooks` field; remove the other",
    );
    check_single(
        cx,
        cont,
        FieldKind::Training,
        "`training: bool` field",
        "a module has one mode flag",
    );
    check_single(
        cx,
        cont,
        FieldKind::Members,
        "`#[members]` field",
        "a module keeps its run-time members in one field",
    );
    check_generic_children(cx, cont);
}

/// Renamed keys must be usable in dotted paths, and no two members may share a key.
fn check_keys(cx: &Ctxt, cont: &Container<'_>) {
    let mut seen: HashMap<&str, String> = HashMap::new();
    for field in &cont.fields {
        if let Some(rename) = &field.rename {
            let key = rename.value();
            if key.is_empty() {
                cx.error_spanned_by(
                    rename,
                    "a key must not be empty\nhelp: give a name, e.g. `rename = \"weight\"`",
                );
            } else if key.contains('.') {
                cx.error_spanned_by(
                    rename,
                    format!(
                        "key \"{key}\" contains `.`, which separates path components (`a.b.weight`)\nhelp: use another character, e.g. \"{}\"",
                        key.replace('.', "_")
                    ),
                );
            }
        }
        if !field.kind.is_member() || field.key.is_empty() {
            continue;
        }
        let label = match &field.member {
            syn::Member::Named(i) => format!("field `{i}`"),
            syn::Member::Unnamed(i) => format!("field {}", i.index),
        };
        match seen.get(field.key.as_str()) {
            Some(first) => cx.error_spanned_by(
                &field.key_tokens,
                format!(
                    "key \"{}\" is used twice: by {first} and by {label}\nhelp: keys name members in paths and state dicts, so each must be unique; `rename` one of them",
                    field.key
                ),
            ),
            None => {
                seen.insert(field.key.as_str(), label);
            }
        }
    }
}

/// A type parameter used as a child module must be bounded, else the compiler's error would point at the
/// generated code.
fn check_generic_children(cx: &Ctxt, cont: &Container<'_>) {
    for param in cont.generics.type_params() {
        let bounded_here = !param.bounds.is_empty();
        let bounded_in_where = cont.generics.where_clause.as_ref().is_some_and(|w| {
            w.predicates.iter().any(|p| match p {
                syn::WherePredicate::Type(t) => {
                    param.ident == t.bounded_ty.to_token_stream().to_string() && !t.bounds.is_empty()
                }
                _ => false,
            })
        });
        if bounded_here || bounded_in_where {
            continue;
        }
        for field in cont.fields.iter().filter(|f| f.kind == FieldKind::Child) {
            if types::is_type_param(field.ty, &param.ident) {
                let p = &param.ident;
                cx.error_spanned_by(
                    field.ty,
                    format!(
                        "type parameter `{p}` is used as a child module, but `{p}` has no `Module` bound\n\
                         help: declare it as `{p}: nn::Module` (or add `where {p}: nn::Module`); if this field \
                         holds configuration, mark it `#[module(skip)]`"
                    ),
                );
            }
        }
    }
}

/// At most one field of `kind`.
fn check_single(cx: &Ctxt, cont: &Container<'_>, kind: FieldKind, what: &str, help: &str) {
    for field in cont.fields.iter().filter(|f| f.kind == kind).skip(1) {
        cx.error_spanned_by(field.ty, format!("a second {what}\nhelp: {help}"));
    }
}

/// `Vec<Param>`, `[Tensor; 2]` and the like are not modules: say what to write instead.
fn check_collections(cx: &Ctxt, cont: &Container<'_>) {
    for field in cont.fields.iter().filter(|f| f.kind == FieldKind::Child) {
        match types::collection_of_tensors(field.ty) {
            Some("Param") => cx.error_spanned_by(
                field.ty,
                "a list of parameters is not a module field\nhelp: declare it as `nn::ParameterList` (PyTorch's `nn.ParameterList`), keyed `0`, `1`, ...",
            ),
            Some(_) => cx.error_spanned_by(
                field.ty,
                "a list of tensors is not a module field (PyTorch has no buffer list)\nhelp: declare each buffer as its own `Tensor` field, or mark the field `#[module(skip)]` if it is not state",
            ),
            None => {}
        }
    }
}
