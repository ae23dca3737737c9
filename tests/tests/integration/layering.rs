//! The layering of ARCHITECTURE.md, checked on the sources: each part of `nn/src` imports only the parts
//! below it, and `kernels` knows nothing of `nn`.
//!
//! A part is a top-level module of `nn/src` (a folder or a file). Every `crate::…` and `nn::…` path outside
//! comments counts, items of `use crate::{…}` groups included, and a name the crate root re-exports
//! (`crate::Tensor`) counts as the part that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The parts every part above the tensor may import: the tensor and what it stands on.
const BASE: &[&str] = &[
    "dtype", "shape", "device", "threads", "cpu", "error", "random", "tensor",
];
/// The module system: its parts use each other.
const MODULE_SYSTEM: &[&str] = &["forward", "module", "hooks", "shared"];

/// Each part and the parts it may import, bottom first (ARCHITECTURE.md's table).
fn rules() -> Vec<(&'static str, Vec<&'static str>)> {
    let with = |groups: &[&[&'static str]]| groups.concat();
    let mut rules = vec![
        ("dtype", vec![]),
        ("shape", vec![]),
        ("device", vec![]),
        ("threads", vec![]),
        ("cpu", vec![]),
        ("error", vec!["dtype", "shape", "device"]),
        ("random", vec!["error"]),
        ("tensor", with(&[&BASE[..7]])),
        ("param", BASE.to_vec()),
        ("io", BASE.to_vec()),
        ("ops", BASE.to_vec()),
        ("functional", with(&[BASE, &["ops"]])),
        ("autograd", with(&[BASE, &["ops"]])),
        ("init", with(&[BASE, &["param", "ops"]])),
        ("testing", with(&[BASE, &["ops"]])),
        ("optim", with(&[BASE, &["param", "io", "ops"]])),
    ];
    for part in MODULE_SYSTEM {
        rules.push((part, with(&[BASE, &["param", "io"], MODULE_SYSTEM])));
    }
    for part in ["layers", "containers"] {
        let above = ["param", "io", "ops", "functional", "init", "layers"];
        rules.push((part, with(&[BASE, &above, MODULE_SYSTEM])));
    }
    // Above the layers and containers: `utils::fusion` folds a batch norm into the layer before it, and
    // `fuse_modules` replaces layers in a model's slots (a `Sequential`'s among them).
    let above = ["param", "io", "ops", "functional", "init", "layers", "containers"];
    rules.push(("utils", with(&[BASE, &above, MODULE_SYSTEM])));
    rules
}

fn nn_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The part a file of `nn/src` belongs to (`None` for the crate root).
fn part_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(nn_src()).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let part = first.strip_suffix(".rs").unwrap_or(first);
    (part != "lib").then(|| part.to_owned())
}

/// The source without comments (line comments, doc comments and block comments) and without the contents of
/// string literals (a doc link built with `concat!` is not an import).
fn strip_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            if c == '\\' {
                chars.next();
            } else if c == '"' {
                out.push(c);
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for c in chars.by_ref() {
                    if previous == '*' && c == '/' {
                        break;
                    }
                    previous = c;
                }
            }
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first segments after `crate::` or `nn::` in `code`: `crate::ops::run` gives `ops`, and
/// `crate::{Result, ops::{run, Op}}` gives `Result` and `ops`.
fn imported_names(code: &str) -> BTreeSet<String> {
    let mut names = first_segments(code, "crate::");
    names.extend(first_segments(code, "nn::"));
    names
}

/// The first segments of the paths that start with `prefix` (at a word boundary) in `code`.
fn first_segments(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let preceded_by_ident = rest[..at].chars().next_back().is_some_and(|c| is_ident(c) || c == ':');
            rest = &rest[at + prefix.len()..];
            if preceded_by_ident {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // The items at depth 1 of the group.
                let mut depth = 1;
                let mut item_start = true;
                let mut current = String::new();
                for c in group.chars() {
                    if depth == 1 && item_start {
                        if is_ident(c) {
                            current.push(c);
                            continue;
                        }
                        if !current.is_empty() {
                            names.insert(std::mem::take(&mut current));
                            item_start = false;
                        }
                    }
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 1 => item_start = true,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                }
                if !current.is_empty() {
                    names.insert(current);
                }
            } else {
                let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        }
    }
    names
}

/// The root's re-exports: `Tensor` → `tensor`, from `pub use tensor::Tensor;` and `pub use dtype::{DType, …};`
/// in `lib.rs` (outside its modules).
fn root_reexports() -> BTreeMap<String, String> {
    let lib = strip_comments(&fs::read_to_string(nn_src().join("lib.rs")).unwrap());
    let mut map = BTreeMap::new();
    for line in lib.lines().filter(|l| l.starts_with("pub use ")) {
        let path = line.trim_start_matches("pub use ").trim_end_matches(';');
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.rsplit("::").next().unwrap().trim();
            // The first re-export of a name wins: `Module` the trait (`module`), not the derive (`nn_derive`).
            if !name.is_empty() && !map.contains_key(name) {
                map.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    map
}

#[test]
fn every_part_imports_only_the_parts_below_it() {
    let rules: BTreeMap<&str, BTreeSet<&str>> =
        rules().into_iter().map(|(p, a)| (p, a.into_iter().collect())).collect();
    let reexports = root_reexports();
    let mut files = Vec::new();
    rust_files(&nn_src(), &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let Some(part) = part_of(file) else { continue };
        let Some(allowed) = rules.get(part.as_str()) else {
            problems.push(format!("{}: part `{part}` has no row in rules()", file.display()));
            continue;
        };
        let code = strip_comments(&fs::read_to_string(file).unwrap());
        for name in imported_names(&code) {
            let target = if rules.contains_key(name.as_str()) {
                name.clone()
            } else if let Some(module) = reexports.get(&name) {
                module.clone()
            } else {
                // `crate::__private`, macros exported at the root, `nn::prelude` in examples: not a part.
                continue;
            };
            if target != part && !allowed.contains(target.as_str()) {
                problems.push(format!(
                    "{}: `{part}` imports `{target}` (through `{name}`)",
                    file.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "forbidden imports:\n{}", problems.join("\n"));
}

#[test]
fn the_rules_table_names_every_part_once() {
    let mut parts: Vec<String> = fs::read_dir(nn_src())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let part = name.strip_suffix(".rs").unwrap_or(&name).to_owned();
            (part != "lib").then_some(part)
        })
        .collect();
    parts.sort();
    let mut listed: Vec<String> = rules().iter().map(|(p, _)| p.to_string()).collect();
    listed.sort();
    assert_eq!(parts, listed);
}

#[test]
fn kernels_do_not_depend_on_nn() {
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap_or("");
    assert!(
        !deps.lines().any(|l| l.trim_start().starts_with("nn")),
        "kernels/Cargo.toml names nn"
    );
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/src"),
        &mut files,
    );
    for file in files {
        let code = strip_comments(&fs::read_to_string(&file).unwrap());
        let named = first_segments(&code, "nn::");
        assert!(named.is_empty(), "{} names nn::{named:?}", file.display());
    }
}

/// nn and kernels compile the same code whatever runtime features are on: no `#[cfg]` on a feature (only
/// `cfg!`, which compiles both branches) and no path into one runtime of cubecl's. So the build with wgpu,
/// which the tests compile and clippy lints, type-checks the code of every build, and CI checks the builds
/// without wgpu only for what differs in them: cubecl's runtime crates.
#[test]
fn no_code_of_nn_or_kernels_depends_on_a_runtime_feature() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root.join("nn/src"), &mut files);
    rust_files(&root.join("kernels/src"), &mut files);
    assert!(files.len() > 100, "the sources were found");
    for file in files {
        let code = strip_comments(&fs::read_to_string(&file).unwrap());
        let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        for gate in [
            "#[cfg(feature",
            "#[cfg(not(feature",
            "#[cfg(any(feature",
            "#[cfg(all(feature",
            "#![cfg(feature",
        ] {
            assert!(
                !compact.contains(gate),
                "{} gates code on a feature ({gate})",
                file.display()
            );
        }
        for runtime in ["cubecl::wgpu", "cubecl::cuda", "cubecl_wgpu", "cubecl_cuda"] {
            assert!(!code.contains(runtime), "{} names {runtime}", file.display());
        }
    }
}

/// The ui tests' nn is the workspace's entry, without default features: trybuild's build of it for the
/// compile-fail cases is the check of the build without a GPU runtime that `.ci/run` relies on.
#[test]
fn the_ui_tests_build_nn_without_a_gpu_runtime() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        workspace
            .lines()
            .any(|l| l.trim() == r#"nn = { path = "nn", default-features = false }"#),
        "the workspace's nn keeps its default features"
    );
    let ui = fs::read_to_string(root.join("ui-tests/Cargo.toml")).unwrap();
    assert!(
        ui.lines().any(|l| l.trim() == "nn = { workspace = true }"),
        "ui-tests/Cargo.toml names nn with features of its own"
    );
}

#[test]
fn the_import_scan_sees_groups_paths_and_reexports() {
    let names =
        imported_names("use crate::{Result, ops::{run, Op}};\nlet t = crate::tensor::Tensor::x(); a::crate::no");
    assert_eq!(
        names,
        ["Result", "ops", "tensor"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        strip_comments("a // crate::layers\nb /* crate::module */ \"//crate::io\\\"\" c"),
        "a \nb  \"\" c"
    );
    assert_eq!(root_reexports().get("Tensor").map(String::as_str), Some("tensor"));
}
