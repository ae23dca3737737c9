//! Reading `#[module(...)]` and `#[buffer(...)]` attributes, on the struct and on its fields.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitBool, LitStr};

use super::Ctxt;

/// An attribute value with the tokens it was read from, for error spans.
pub struct Attr<T> {
    pub value: T,
    pub tokens: TokenStream,
}

/// One attribute slot that may be set at most once.
struct Once<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    value: Option<Attr<T>>,
}

impl<'c, T> Once<'c, T> {
    fn new(cx: &'c Ctxt, name: &'static str) -> Self {
        Once { cx, name, value: None }
    }

    fn set(&mut self, tokens: impl ToTokens, value: T) {
        let tokens = tokens.into_token_stream();
        if self.value.is_some() {
            self.cx
                .error_spanned_by(tokens, format!("duplicate `{}` attribute; give it once", self.name));
        } else {
            self.value = Some(Attr { value, tokens });
        }
    }

    fn get(self) -> Option<Attr<T>> {
        self.value
    }
}

/// Attributes of the struct: `#[module(name = "...", extra_repr, extra_state, custom_state_dict)]`.
pub struct Container {
    pub name: Option<Attr<String>>,
    /// `extra_repr`, with the tokens it was written as (errors about the missing impl point there).
    pub extra_repr: Option<TokenStream>,
    /// `extra_state`, likewise.
    pub extra_state: Option<TokenStream>,
    /// `custom_state_dict`, likewise.
    pub custom_state_dict: Option<TokenStream>,
}

const CONTAINER_KEYS: &str = "`name = \"...\"`, `extra_repr`, `extra_state`, `custom_state_dict`";
const FIELD_KEYS: &str = "`skip`, `rename = \"...\"`";

/// `; did you mean `x`?` when `key` is a small typo of one of `known`.
fn did_you_mean(key: &str, known: &[&str]) -> String {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, &cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    known
        .iter()
        .filter(|k| distance(key, k) <= 2 || (key.len() >= 3 && k.starts_with(key)))
        .min_by_key(|k| distance(key, k))
        .map(|k| format!("\nhelp: did you mean `{k}`?"))
        .unwrap_or_default()
}

impl Container {
    pub fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Container {
        let mut name = Once::new(cx, "name");
        let mut extra_repr = Once::new(cx, "extra_repr");
        let mut extra_state = Once::new(cx, "extra_state");
        let mut custom_state_dict = Once::new(cx, "custom_state_dict");
        for attr in attrs {
            if attr.path().is_ident("buffer") {
                cx.error_spanned_by(attr, "`#[buffer]` goes on a tensor field, not on the struct");
                continue;
            }
            if attr.path().is_ident("members") {
                cx.error_spanned_by(
                    attr,
                    "`#[members]` goes on the field that holds a container's items, not on the struct",
                );
                continue;
            }
            if !attr.path().is_ident("module") {
                continue;
            }
            if let syn::Meta::Path(path) = &attr.meta {
                cx.error_spanned_by(path, format!("`#[module]` needs arguments: one of {CONTAINER_KEYS}"));
                continue;
            }
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    if let Some(s) = string_value(cx, &meta, "name", "#[module(name = \"GELU\")]")? {
                        if s.value().is_empty() {
                            cx.error_spanned_by(&s, "the printed name must not be empty\nhelp: give PyTorch's class name, e.g. `#[module(name = \"GELU\")]`");
                        }
                        name.set(&meta.path, s.value());
                    }
                } else if meta.path.is_ident("extra_repr") {
                    no_value(cx, &meta, "extra_repr")?;
                    extra_repr.set(&meta.path, ());
                } else if meta.path.is_ident("extra_state") {
                    no_value(cx, &meta, "extra_state")?;
                    extra_state.set(&meta.path, ());
                } else if meta.path.is_ident("custom_state_dict") {
                    no_value(cx, &meta, "custom_state_dict")?;
                    custom_state_dict.set(&meta.path, ());
                } else if meta.path.is_ident("skip") || meta.path.is_ident("rename") {
                    let key = meta.path.to_token_stream().to_string();
                    cx.error_spanned_by(
                        &meta.path,
                        format!("`{key}` applies to fields; put it on the field's attribute"),
                    );
                    skip_value(&meta)?;
                } else {
                    unknown_key(cx, &meta, CONTAINER_KEYS, &["name", "extra_repr", "extra_state", "custom_state_dict"])?;
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        Container {
            name: name.get(),
            extra_repr: extra_repr.get().map(|a| a.tokens),
            extra_state: extra_state.get().map(|a| a.tokens),
            custom_state_dict: custom_state_dict.get().map(|a| a.tokens),
        }
    }
}

/// Attributes of a field: `#[module(skip)]`, `#[module(rename = "key")]`, `#[buffer]`,
/// `#[buffer(persistent = bool)]`, `#[members]`.
pub struct Field {
    pub skip: Option<Attr<()>>,
    pub rename: Option<Attr<LitStr>>,
    /// `#[buffer]`, with its `persistent` value.
    pub buffer: Option<Attr<bool>>,
    /// `#[members]`: the field holds members known at run time.
    pub members: Option<Attr<()>>,
}

impl Field {
    pub fn from_ast(cx: &Ctxt, field: &syn::Field) -> Field {
        let mut skip = Once::new(cx, "skip");
        let mut rename = Once::new(cx, "rename");
        let mut buffer = Once::new(cx, "buffer");
        let mut members = Once::new(cx, "members");
        for attr in &field.attrs {
            if attr.path().is_ident("members") {
                if !matches!(attr.meta, syn::Meta::Path(_)) {
                    cx.error_spanned_by(attr, "`#[members]` takes no arguments; write `#[members]` alone");
                }
                members.set(attr, ());
                continue;
            }
            if attr.path().is_ident("module") {
                if let syn::Meta::Path(path) = &attr.meta {
                    cx.error_spanned_by(path, format!("`#[module]` needs arguments: one of {FIELD_KEYS}"));
                    continue;
                }
                let result = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("skip") {
                        no_value(cx, &meta, "skip")?;
                        skip.set(&meta.path, ());
                    } else if meta.path.is_ident("rename") {
                        if let Some(s) = string_value(cx, &meta, "rename", "#[module(rename = \"key\")]")? {
                            rename.set(&s, s.clone());
                        }
                    } else if meta.path.is_ident("name")
                        || meta.path.is_ident("extra_repr")
                        || meta.path.is_ident("extra_state")
                        || meta.path.is_ident("custom_state_dict")
                    {
                        let key = meta.path.to_token_stream().to_string();
                        let hint = if key == "name" {
                            "; to change a field's key, use `rename = \"...\"`"
                        } else {
                            ""
                        };
                        cx.error_spanned_by(
                            &meta.path,
                            format!("`{key}` applies to the struct, not to a field{hint}"),
                        );
                        skip_value(&meta)?;
                    } else {
                        unknown_key(cx, &meta, FIELD_KEYS, &["skip", "rename"])?;
                    }
                    Ok(())
                });
                if let Err(e) = result {
                    cx.syn_error(e);
                }
            } else if attr.path().is_ident("buffer") {
                let mut persistent = Once::new(cx, "persistent");
                if let syn::Meta::List(_) = &attr.meta {
                    let result = attr.parse_nested_meta(|meta| {
                        if meta.path.is_ident("persistent") {
                            if let Some(b) = bool_value(cx, &meta)? {
                                persistent.set(&meta.path, b.value);
                            }
                        } else {
                            let key = meta.path.to_token_stream().to_string().replace(' ', "");
                            let hint = did_you_mean(&key, &["persistent"]);
                            cx.error_spanned_by(&meta.path, format!("unknown buffer attribute `{key}`; expected `persistent = true` or `persistent = false`{hint}"));
                            skip_value(&meta)?;
                        }
                        Ok(())
                    });
                    if let Err(e) = result {
                        cx.syn_error(e);
                    }
                } else if let syn::Meta::NameValue(nv) = &attr.meta {
                    cx.error_spanned_by(nv, "write `#[buffer]` or `#[buffer(persistent = false)]`");
                }
                buffer.set(attr, persistent.get().map(|p| p.value).unwrap_or(true));
            }
        }
        Field {
            skip: skip.get(),
            rename: rename.get(),
            buffer: buffer.get(),
            members: members.get(),
        }
    }
}

/// `key = "string"`: the literal, or an error at the value when it is not a string.
fn string_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str, example: &str) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(syn::Token![=]) {
        cx.error_spanned_by(&meta.path, format!("`{key}` needs a string value: {example}"));
        return Ok(None);
    }
    let expr: Expr = meta.value()?.parse()?;
    match ungroup(&expr) {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(Some(s.clone())),
        other => {
            cx.error_spanned_by(other, format!("`{key}` takes a string literal, e.g. {example}"));
            Ok(None)
        }
    }
}

/// `key = true|false`: the literal, or an error at the value when it is not a bool.
fn bool_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<LitBool>> {
    if !meta.input.peek(syn::Token![=]) {
        cx.error_spanned_by(&meta.path, "`persistent` needs a value: `persistent = false`");
        return Ok(None);
    }
    let expr: Expr = meta.value()?.parse()?;
    match ungroup(&expr) {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Ok(Some(b.clone())),
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value() == "true" || s.value() == "false" => {
            cx.error_spanned_by(
                s,
                format!(
                    "`persistent` takes a bool, not a string: write `persistent = {}`",
                    s.value()
                ),
            );
            Ok(None)
        }
        other => {
            cx.error_spanned_by(other, "`persistent` takes `true` or `false`");
            Ok(None)
        }
    }
}

/// A flag written with a value (`skip = true`) is an error at the value.
fn no_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let expr: Expr = meta.value()?.parse()?;
        cx.error_spanned_by(&expr, format!("`{key}` takes no value; write `{key}` alone"));
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let rest: TokenStream = content.parse()?;
        cx.error_spanned_by(&meta.path, format!("`{key}` takes no arguments; write `{key}` alone"));
        let _ = rest.span();
    }
    Ok(())
}

/// Reports an unknown key of a `#[module(...)]` attribute (`expected`: the keys it takes, for the message;
/// `known`: their names, for a "did you mean") and skips its value, so parsing goes on to the next key.
fn unknown_key(cx: &Ctxt, meta: &ParseNestedMeta<'_>, expected: &str, known: &[&str]) -> syn::Result<()> {
    let key = meta.path.to_token_stream().to_string().replace(' ', "");
    let hint = did_you_mean(&key, known);
    cx.error_spanned_by(
        &meta.path,
        format!("unknown module attribute `{key}`; expected one of {expected}{hint}"),
    );
    skip_value(meta)
}

/// Consumes whatever value follows an unknown key so parsing can go on and report later errors too.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}

/// The expression inside invisible groups (a `macro_rules!` fragment such as `$name:literal` arrives wrapped).
fn ungroup(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(g) => ungroup(&g.expr),
        other => other,
    }
}
