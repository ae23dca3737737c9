//! The docs hold together: every relative link in the Markdown files resolves, every page of `docs/` is linked
//! from README.md and compiled as doctests (its Rust blocks, through `tests/src/doc_pages.rs`), and every code
//! block names its language, so that none is compiled as Rust by mistake or skipped as something else.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Markdown files of the docs: the top-level ones and `docs/`.
fn markdown_files() -> Vec<PathBuf> {
    let top = [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "BENCHMARKS.md",
        "CHANGELOG.md",
        "RELIABILITY.md",
    ];
    let mut files: Vec<PathBuf> = top.iter().map(|name| root().join(name)).collect();
    files.extend(doc_pages());
    files
}

/// The pages of `docs/`, in name order.
fn doc_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The targets of the inline links `[text](target)` of `markdown`, outside code blocks and code spans.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Code spans hold text such as `a[i](x)` that is not a link.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].trim().to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// A target that names a file in this repository: not a URL, not an anchor of the same page.
fn is_relative(target: &str) -> bool {
    !(target.is_empty() || target.starts_with('#') || target.contains("://") || target.starts_with("mailto:"))
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        for target in link_targets(&read(&file)) {
            if !is_relative(&target) {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if !file.parent().unwrap().join(path).exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links that lead nowhere:\n{}", broken.join("\n"));
}

#[test]
fn every_doc_page_is_linked_from_the_readme_and_compiled() {
    let readme = link_targets(&read(&root().join("README.md")));
    let compiled = read(&root().join("tests/src/doc_pages.rs"));
    for page in doc_pages() {
        let name = format!("docs/{}", page.file_name().unwrap().to_str().unwrap());
        assert!(
            readme.iter().any(|target| target.trim_start_matches("./") == name),
            "README.md does not link {name}"
        );
        assert!(
            compiled.contains(&format!("include_str!(\"../../{name}\")")),
            "tests/src/doc_pages.rs does not include {name}: its Rust blocks would go uncompiled"
        );
    }
    assert!(
        compiled.contains("include_str!(\"../../README.md\")"),
        "README.md's Rust blocks go uncompiled"
    );
}

/// The languages a fenced block may name: Rust blocks (compiled by the doctests, `no_run` where they need a
/// device or a file; never `ignore`) and the others, which rustdoc leaves alone.
fn known_language(info: &str) -> bool {
    let mut words = info.split(',').map(str::trim);
    match words.next().unwrap_or("") {
        "rust" => words.all(|w| matches!(w, "no_run" | "should_panic" | "compile_fail")),
        lang => ["text", "sh", "console", "toml", "python", "json", "diff"].contains(&lang),
    }
}

#[test]
fn every_code_block_names_its_language() {
    let mut unnamed = Vec::new();
    for file in std::iter::once(root().join("README.md")).chain(doc_pages()) {
        let mut in_block = false;
        for (n, line) in read(&file).lines().enumerate() {
            let Some(info) = line.trim_start().strip_prefix("```") else {
                continue;
            };
            if !in_block && !known_language(info.trim()) {
                unnamed.push(format!("{}:{}: ```{info}", file.display(), n + 1));
            }
            in_block = !in_block;
        }
        assert!(!in_block, "{}: a code block is not closed", file.display());
    }
    assert!(
        unnamed.is_empty(),
        "code blocks without a known language (rustdoc compiles an unnamed block as Rust):\n{}",
        unnamed.join("\n")
    );
}

#[test]
fn links_are_found_outside_code() {
    let markdown = "See [the map](ARCHITECTURE.md) and [a page](docs/io.md#load).\n`a[i](x)` [web](https://x.y)\n```text\n[no](nowhere.md)\n```\n";
    assert_eq!(
        link_targets(markdown),
        ["ARCHITECTURE.md", "docs/io.md#load", "https://x.y"]
    );
    assert!(is_relative("docs/io.md") && !is_relative("#top") && !is_relative("https://x.y"));
    assert!(known_language("rust,no_run") && !known_language("rust,ignore") && !known_language(""));
}

/// The layer types nn exports: the names of `nn/src/layers/mod.rs`'s `pub use` lists (options and enums left
/// out), the activation table's modules and the activation layers written out (`GELU`, `GLU`).
fn exported_layers() -> Vec<String> {
    let mut names = Vec::new();
    let layers = read(&root().join("nn/src/layers/mod.rs"));
    let mut rest = layers.as_str();
    while let Some(at) = rest.find("\npub use ") {
        rest = &rest[at + "\npub use ".len()..];
        let statement = &rest[..rest.find(';').unwrap()];
        let items = statement
            .rsplit("::")
            .next()
            .unwrap()
            .trim_matches(['{', '}', ' ', '\n']);
        for item in items
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty() && *item != "*")
        {
            names.push(item.to_owned());
        }
    }
    names.retain(|name| !name.ends_with("Options") && !["Nonlinearity", "DistanceFn"].contains(&name.as_str()));
    let table = read(&root().join("nn/src/ops/activation/table.rs"));
    for line in table.lines().map(str::trim) {
        let first = line.split_whitespace().next().unwrap_or("");
        if line.contains(" => ") && first.starts_with(|c: char| c.is_ascii_uppercase()) {
            names.push(first.to_owned());
        }
    }
    let activation = read(&root().join("nn/src/layers/activation.rs"));
    for line in activation.lines().filter_map(|l| l.trim().strip_prefix("pub struct ")) {
        let name: String = line.chars().take_while(|c| c.is_alphanumeric()).collect();
        if !name.is_empty() {
            names.push(name);
        }
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_readme_table_lists_every_layer() {
    let readme = read(&root().join("README.md"));
    let start = readme
        .find("## What works next to PyTorch")
        .expect("README's table of what works");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    // The "what there is" column of each row (not "not yet").
    let table: String = section
        .lines()
        .filter(|line| line.starts_with("| "))
        .filter_map(|line| line.split(" | ").nth(1))
        .collect::<Vec<_>>()
        .join("\n");
    let names = exported_layers();
    assert!(names.len() > 60, "found only {} layers: {names:?}", names.len());
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| !table.contains(&format!("`{name}`")))
        .collect();
    assert!(missing.is_empty(), "README's table of what works lacks {missing:?}");
}
