//! Reading a field's type by its spelling: the derive sorts fields into parameters, buffers, children and
//! configuration without knowing the types (a proc macro sees tokens only).

use syn::{GenericArgument, PathArguments, Type, TypePath};

/// The last path segment's name and its single generic type argument, if any: `std::option::Option<T>` →
/// (`Option`, `Some(T)`).
fn last_segment(ty: &Type) -> Option<(String, Option<&Type>)> {
    let Type::Path(TypePath { qself: None, path }) = ty else {
        return None;
    };
    let seg = path.segments.last()?;
    let arg = match &seg.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(GenericArgument::Type(t)) => Some(t),
            _ => None,
        },
        PathArguments::None => None,
        _ => return Some((seg.ident.to_string(), None)),
    };
    Some((seg.ident.to_string(), arg))
}

fn is_named(ty: &Type, name: &str) -> bool {
    matches!(last_segment(ty), Some((n, None)) if n == name)
}

/// `Some(optional)` if the type is spelled `Param` or `Option<Param>`.
pub fn param(ty: &Type) -> Option<bool> {
    optional_of(ty, "Param")
}

/// `Some(optional)` if the type is spelled `Tensor` or `Option<Tensor>`.
pub fn tensor(ty: &Type) -> Option<bool> {
    optional_of(ty, "Tensor")
}

fn optional_of(ty: &Type, name: &str) -> Option<bool> {
    if is_named(ty, name) {
        return Some(false);
    }
    match last_segment(ty) {
        Some((o, Some(inner))) if o == "Option" && is_named(inner, name) => Some(true),
        _ => None,
    }
}

/// Whether the type is spelled `Hooks` (the module's hook storage).
pub fn is_hooks(ty: &Type) -> bool {
    is_named(ty, "Hooks")
}

/// Whether the type is spelled `bool`.
pub fn is_bool(ty: &Type) -> bool {
    is_named(ty, "bool")
}

/// Whether the type is a configuration value the derive recognises without `#[module(skip)]`: a primitive
/// number, `bool`, `char`, `String`, `&str`, `PhantomData<_>`, `DType`, `Device`, or an `Option`, `Vec`,
/// `Box`, array, slice, reference or tuple of those.
pub fn is_config(ty: &Type) -> bool {
    const PRIMITIVES: &[&str] = &[
        "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
        "f64", "String", "str", "DType", "Device",
    ];
    match ty {
        Type::Paren(p) => is_config(&p.elem),
        Type::Group(g) => is_config(&g.elem),
        Type::Reference(r) => is_config(&r.elem),
        Type::Array(a) => is_config(&a.elem),
        Type::Slice(s) => is_config(&s.elem),
        Type::Tuple(t) => !t.elems.is_empty() && t.elems.iter().all(is_config),
        Type::Path(_) => match last_segment(ty) {
            Some((name, None)) => PRIMITIVES.contains(&name.as_str()),
            Some((name, Some(_))) if name == "PhantomData" => true,
            Some((name, Some(inner))) if ["Option", "Vec", "Box"].contains(&name.as_str()) => is_config(inner),
            _ => false,
        },
        _ => false,
    }
}

/// Whether `ty` is exactly the type parameter `param` (possibly inside `Option`, `Vec`, `Box`, an array).
pub fn is_type_param(ty: &Type, param: &syn::Ident) -> bool {
    match ty {
        Type::Paren(p) => is_type_param(&p.elem, param),
        Type::Group(g) => is_type_param(&g.elem, param),
        Type::Array(a) => is_type_param(&a.elem, param),
        Type::Path(TypePath { qself: None, path }) => {
            if path.is_ident(param) {
                return true;
            }
            match last_segment(ty) {
                Some((name, Some(inner))) if ["Option", "Vec", "Box", "Shared"].contains(&name.as_str()) => {
                    is_type_param(inner, param)
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// `Some("Param")` or `Some("Tensor")` when the type is a collection (`Vec`, array, `Option<Vec<_>>`, `Box`,
/// slice) whose elements are spelled `Param` or `Tensor`: such a field is not a module.
pub fn collection_of_tensors(ty: &Type) -> Option<&'static str> {
    fn element(ty: &Type) -> Option<&Type> {
        match ty {
            Type::Array(a) => Some(&a.elem),
            Type::Slice(s) => Some(&s.elem),
            Type::Paren(p) => element(&p.elem),
            Type::Group(g) => element(&g.elem),
            Type::Path(_) => match last_segment(ty) {
                Some((name, Some(inner))) if name == "Vec" || name == "Box" => Some(inner),
                Some((name, Some(inner))) if name == "Option" => element(inner),
                _ => None,
            },
            _ => None,
        }
    }
    let elem = element(ty)?;
    if is_named(elem, "Param") || param(elem).is_some() {
        Some("Param")
    } else if is_named(elem, "Tensor") || tensor(elem).is_some() {
        Some("Tensor")
    } else {
        collection_of_tensors(elem)
    }
}
