//! PyTorch's `repr` of modules, byte for byte: `Module.__repr__`, `ModuleList.__repr__` (which folds equal
//! consecutive children into `(0-1): 2 x Block(`), `_addindent`, and Python's `repr` of floats.

use super::{Child, Module, Visitor};

/// The `repr` of a module (what `Display` prints).
pub fn repr_of(module: &dyn Module) -> String {
    module.repr()
}

/// Each direct child's name and `repr`, in order, a shared module at every place it sits (as PyTorch prints).
pub(crate) fn child_reprs(module: &(impl Module + ?Sized)) -> Vec<(String, String)> {
    struct Collect(Vec<(String, String)>);
    impl Visitor<'_> for Collect {
        fn child(&mut self, name: &str, child: Child<'_>) {
            let repr = match child {
                Child::Owned(m) => m.repr(),
                Child::Shared(s) => {
                    let mut r = String::new();
                    s.with_ref(&mut |m| r = m.repr());
                    r
                }
            };
            self.0.push((name.to_owned(), repr));
        }
    }
    let mut collect = Collect(Vec::new());
    module.visit(&mut collect);
    collect.0
}

/// `Module.__repr__`: `Name(extra)` on one line, or the extra lines and `(name): child` lines indented.
pub fn default_repr(type_name: &str, extra_repr: &str, children: &[(String, String)]) -> String {
    let extra_lines: Vec<&str> = if extra_repr.is_empty() {
        Vec::new()
    } else {
        extra_repr.split('\n').collect()
    };
    let child_lines: Vec<String> = children
        .iter()
        .map(|(name, repr)| format!("({name}): {}", add_indent(repr, 2)))
        .collect();
    let mut out = format!("{type_name}(");
    if extra_lines.len() == 1 && child_lines.is_empty() {
        out.push_str(extra_lines[0]);
    } else if !extra_lines.is_empty() || !child_lines.is_empty() {
        let lines: Vec<&str> = extra_lines
            .iter()
            .copied()
            .chain(child_lines.iter().map(String::as_str))
            .collect();
        out.push_str("\n  ");
        out.push_str(&lines.join("\n  "));
        out.push('\n');
    }
    out.push(')');
    out
}

/// `ModuleList.__repr__`: consecutive children with equal `repr`s fold into `(first-last): n x Child(`.
pub fn list_repr(type_name: &str, children: &[(String, String)]) -> String {
    if children.is_empty() {
        return format!("{type_name}()");
    }
    let mut groups: Vec<(usize, usize, &str)> = Vec::new();
    for (i, (_, repr)) in children.iter().enumerate() {
        match groups.last_mut() {
            Some((_, end, last)) if *last == repr.as_str() => *end = i,
            _ => groups.push((i, i, repr.as_str())),
        }
    }
    let lines: Vec<String> = groups
        .iter()
        .map(|&(start, end, repr)| {
            let line = if start == end {
                format!("({start}): {repr}")
            } else {
                format!("({start}-{end}): {} x {repr}", end - start + 1)
            };
            add_indent(&line, 2)
        })
        .collect();
    format!("{type_name}(\n  {}\n)", lines.join("\n  "))
}

/// Python's `_addindent`: every line but the first indented by `spaces`.
///
/// ```
/// assert_eq!(nn::module::add_indent("A(\n  x\n)", 2), "A(\n    x\n  )");
/// ```
pub fn add_indent(s: &str, spaces: usize) -> String {
    let mut lines = s.split('\n');
    let first = lines.next().unwrap_or("");
    let rest: Vec<String> = lines.map(|l| format!("{}{l}", " ".repeat(spaces))).collect();
    if rest.is_empty() {
        s.to_owned()
    } else {
        format!("{first}\n{}", rest.join("\n"))
    }
}

/// Python's `repr(bool)`.
pub fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}
