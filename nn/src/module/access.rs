//! Reaching members by dotted path: `get_submodule`, `get_submodule_mut`, `get_parameter`, `get_buffer`,
//! `set_submodule`, with errors naming the path component that failed.

use super::reference::{ModuleMut, ModuleRef};
use super::{Child, Module, Replacement, Visitor};
use crate::error::{PathError, PathErrorKind};
use crate::{Param, Tensor};

/// What kind of own member `name` is in `module`, if any.
fn member_kind(module: &dyn Module, name: &str) -> Option<&'static str> {
    struct Find<'n> {
        name: &'n str,
        kind: Option<&'static str>,
    }
    impl Visitor<'_> for Find<'_> {
        fn param(&mut self, name: &str, _: &Param) {
            if name == self.name {
                self.kind.get_or_insert("a parameter");
            }
        }
        fn buffer(&mut self, name: &str, _: &Tensor, _: bool) {
            if name == self.name {
                self.kind.get_or_insert("a buffer");
            }
        }
        fn child(&mut self, name: &str, _: Child<'_>) {
            if name == self.name {
                self.kind.get_or_insert("a module");
            }
        }
    }
    let mut find = Find { name, kind: None };
    module.visit(&mut find);
    find.kind
}

fn error(
    op: &'static str,
    path: &str,
    parent: &str,
    module: &dyn Module,
    component: &str,
    kind: PathErrorKind,
) -> crate::Error {
    crate::Error::from(PathError {
        op,
        path: path.to_owned(),
        parent: parent.to_owned(),
        parent_type: module.type_name(),
        component: component.to_owned(),
        kind,
    })
}

fn no_child(op: &'static str, path: &str, parent: &str, module: &dyn Module, component: &str) -> crate::Error {
    let kind = match member_kind(module, component) {
        Some(found) => PathErrorKind::WrongKind {
            wanted: "a module",
            found,
        },
        None => PathErrorKind::NoChild,
    };
    error(op, path, parent, module, component, kind)
}

/// The module at `path` ("" is the root).
pub(crate) fn get_submodule<'a>(
    op: &'static str,
    root: &'a dyn Module,
    path: &str,
    module_path: &str,
) -> crate::Result<ModuleRef<'a>> {
    let mut current = ModuleRef::borrowed(root);
    if module_path.is_empty() {
        return Ok(current);
    }
    let mut consumed = 0;
    for component in module_path.split('.') {
        let parent = &module_path[..consumed.max(1) - 1];
        match current.child(component) {
            Some(next) => current = next,
            None => return Err(no_child(op, path, parent, &*current, component)),
        }
        consumed += component.len() + 1;
    }
    Ok(current)
}

/// The module at `path` ("" is the root), for change.
pub(crate) fn get_submodule_mut<'a>(
    op: &'static str,
    root: &'a mut dyn Module,
    path: &str,
    module_path: &str,
) -> crate::Result<ModuleMut<'a>> {
    let mut current = ModuleMut::borrowed(root);
    if module_path.is_empty() {
        return Ok(current);
    }
    let mut consumed = 0;
    for component in module_path.split('.') {
        let parent = &module_path[..consumed.max(1) - 1];
        current = match current.into_child(component) {
            Ok(next) => next,
            Err(stuck) => return Err(no_child(op, path, parent, &*stuck, component)),
        };
        consumed += component.len() + 1;
    }
    Ok(current)
}

/// Splits `a.b.c` into (`a.b`, `c`).
fn split_last(path: &str) -> (&str, &str) {
    match path.rsplit_once('.') {
        Some((head, last)) => (head, last),
        None => ("", path),
    }
}

/// The parameter at `path`.
pub(crate) fn get_parameter(root: &dyn Module, path: &str) -> crate::Result<Param> {
    let op = "get_parameter";
    let (module_path, name) = split_last(path);
    let module = get_submodule(op, root, path, module_path)?;
    struct Find<'n>(&'n str, Option<Param>);
    impl Visitor<'_> for Find<'_> {
        fn param(&mut self, name: &str, p: &Param) {
            if name == self.0 && self.1.is_none() {
                self.1 = Some(p.clone());
            }
        }
    }
    let mut find = Find(name, None);
    module.visit(&mut find);
    find.1.ok_or_else(|| {
        let kind = match member_kind(&*module, name) {
            Some(found) => PathErrorKind::WrongKind {
                wanted: "a parameter",
                found,
            },
            None if name.is_empty() => PathErrorKind::Empty,
            None => PathErrorKind::NoParameter,
        };
        error(op, path, module_path, &*module, name, kind)
    })
}

/// The buffer at `path`.
pub(crate) fn get_buffer(root: &dyn Module, path: &str) -> crate::Result<Tensor> {
    let op = "get_buffer";
    let (module_path, name) = split_last(path);
    let module = get_submodule(op, root, path, module_path)?;
    struct Find<'n>(&'n str, Option<Tensor>);
    impl Visitor<'_> for Find<'_> {
        fn buffer(&mut self, name: &str, t: &Tensor, _: bool) {
            if name == self.0 && self.1.is_none() {
                self.1 = Some(t.clone());
            }
        }
    }
    let mut find = Find(name, None);
    module.visit(&mut find);
    find.1.ok_or_else(|| {
        let kind = match member_kind(&*module, name) {
            Some(found) => PathErrorKind::WrongKind {
                wanted: "a buffer",
                found,
            },
            None if name.is_empty() => PathErrorKind::Empty,
            None => PathErrorKind::NoBuffer,
        };
        error(op, path, module_path, &*module, name, kind)
    })
}

/// Puts `value` in the child slot at `path`.
pub(crate) fn set_submodule(root: &mut dyn Module, path: &str, value: Replacement) -> crate::Result<()> {
    let op = "set_submodule";
    if path.is_empty() {
        return Err(error(op, path, "", root, "", PathErrorKind::Empty));
    }
    let (module_path, name) = split_last(path);
    let mut parent = get_submodule_mut(op, root, path, module_path)?;
    if parent.child(name).is_none() {
        let kind = match member_kind(&*parent, name) {
            Some(found) => PathErrorKind::WrongKind {
                wanted: "a module",
                found,
            },
            None => PathErrorKind::NoChild,
        };
        // A slot that exists but is empty (`Option` set to `None`) is not visited; let the module decide.
        if matches!(kind, PathErrorKind::WrongKind { .. }) {
            return Err(error(op, path, module_path, &*parent, name, kind));
        }
    }
    match parent.set_child(name, value) {
        Ok(()) => Ok(()),
        Err((_, why)) => {
            let kind = if parent.child(name).is_some() {
                PathErrorKind::Refused(why)
            } else {
                PathErrorKind::NoChild
            };
            Err(error(op, path, module_path, &*parent, name, kind))
        }
    }
}
