//! Reaching members by dotted path: `get_submodule`, `get_submodule_mut`, `get_parameter`, `get_buffer`,
//! `set_submodule`, with errors naming the path component that failed.

use std::ops::Deref;

use super::module_ref::{ModuleMut, ModuleRef};
use super::{Child, Module, Replacement, Visitor};
use crate::error::{PathError, PathErrorKind};
use crate::{Param, Tensor};

/// The own members of a module named `name`, as a visit reports them: the first parameter, the first buffer,
/// and what kind the first member of that name is.
struct Own<'n> {
    name: &'n str,
    param: Option<Param>,
    buffer: Option<Tensor>,
    kind: Option<&'static str>,
}

impl Own<'_> {
    fn of<'n>(module: &dyn Module, name: &'n str) -> Own<'n> {
        let mut own = Own {
            name,
            param: None,
            buffer: None,
            kind: None,
        };
        module.visit(&mut own);
        own
    }

    /// What is wrong when `wanted` was asked for: the member is of another kind, or `absent`.
    fn missing(&self, wanted: &'static str, absent: PathErrorKind) -> PathErrorKind {
        match self.kind {
            Some(found) => PathErrorKind::WrongKind { wanted, found },
            None => absent,
        }
    }
}

impl Visitor<'_> for Own<'_> {
    fn param(&mut self, name: &str, param: &Param) {
        if name == self.name {
            self.kind.get_or_insert("a parameter");
            self.param.get_or_insert_with(|| param.clone());
        }
    }
    fn buffer(&mut self, name: &str, buffer: &Tensor, _: bool) {
        if name == self.name {
            self.kind.get_or_insert("a buffer");
            self.buffer.get_or_insert_with(|| buffer.clone());
        }
    }
    fn child(&mut self, name: &str, _: Child<'_>) {
        if name == self.name {
            self.kind.get_or_insert("a module");
        }
    }
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
    let kind = Own::of(module, component).missing("a module", PathErrorKind::NoChild);
    error(op, path, parent, module, component, kind)
}

/// The module at `path` ("" is the root).
pub(crate) fn get_submodule<'a>(
    op: &'static str,
    root: &'a dyn Module,
    path: &str,
    module_path: &str,
) -> crate::Result<ModuleRef<'a>> {
    descend(op, path, module_path, ModuleRef::borrowed(root), |m, name| {
        m.child(name).ok_or(m)
    })
}

/// The module at `path` ("" is the root), for change.
pub(crate) fn get_submodule_mut<'a>(
    op: &'static str,
    root: &'a mut dyn Module,
    path: &str,
    module_path: &str,
) -> crate::Result<ModuleMut<'a>> {
    descend(op, path, module_path, ModuleMut::borrowed(root), ModuleMut::into_child)
}

/// Goes down `module_path` from `current`, one component at a time with `step` (the child, or the module
/// back when it has none); the error names `op`, the whole `path` and the component that was missing.
fn descend<R: Deref<Target = dyn Module>>(
    op: &'static str,
    path: &str,
    module_path: &str,
    mut current: R,
    step: impl Fn(R, &str) -> Result<R, R>,
) -> crate::Result<R> {
    if module_path.is_empty() {
        return Ok(current);
    }
    let mut consumed = 0;
    for component in module_path.split('.') {
        let parent = &module_path[..consumed.max(1) - 1];
        current = match step(current, component) {
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

/// The own member `name` of the module at `path` (split as `module_path.name`) that `pick` takes, or the error
/// for `op` saying it is `absent` or another kind than `wanted`.
fn get_member<T>(
    op: &'static str,
    root: &dyn Module,
    path: &str,
    (wanted, absent): (&'static str, PathErrorKind),
    pick: impl FnOnce(Own<'_>) -> Option<T>,
) -> crate::Result<T> {
    let (module_path, name) = split_last(path);
    let module = get_submodule(op, root, path, module_path)?;
    let own = Own::of(&*module, name);
    let kind = match own.kind {
        None if name.is_empty() => PathErrorKind::Empty,
        _ => own.missing(wanted, absent),
    };
    pick(own).ok_or_else(|| error(op, path, module_path, &*module, name, kind))
}

/// The parameter at `path`.
pub(crate) fn get_parameter(root: &dyn Module, path: &str) -> crate::Result<Param> {
    let wanted = ("a parameter", PathErrorKind::NoParameter);
    get_member("get_parameter", root, path, wanted, |own| own.param)
}

/// The buffer at `path`.
pub(crate) fn get_buffer(root: &dyn Module, path: &str) -> crate::Result<Tensor> {
    let wanted = ("a buffer", PathErrorKind::NoBuffer);
    get_member("get_buffer", root, path, wanted, |own| own.buffer)
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
        let kind = Own::of(&*parent, name).missing("a module", PathErrorKind::NoChild);
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
