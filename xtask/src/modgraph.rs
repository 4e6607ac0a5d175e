//! `cargo xtask modgraph [--check]`: the workspace's crate table, read from the
//! manifests, and each library crate's module graph, read from its sources, with its import circles and, where a crate declares layers, the imports
//! that point up a layer; written into `docs/architecture.md` between the
//! `modgraph` markers (or, with `--check`, compared with what is there, and the
//! rules below enforced).
//!
//! What counts as an import: a path starting `crate::`, `super::` or `self::`
//! anywhere in the code (in `use` items, brace groups expanded, and in expressions and
//! types), outside comments, string literals and the `#[cfg(test)] mod tests` at a
//! file's end. A path names the longest module prefix it has; an import between a
//! module and one of its ancestors does not count (a folder's `mod.rs` is the shared
//! part of its files), nor does one of a module to itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::Result;

/// A crate the tool reads, its largest allowed circle (modules; 1: none), and its layers from
/// the top (top-level modules; a module may import only its own layer's or lower
/// ones').
struct CrateRule {
    dir: &'static str,
    max_circle: usize,
    layers: &'static [&'static [&'static str]],
}

const CRATES: &[CrateRule] = &[
    CrateRule {
        dir: "crates/amd-packets",
        max_circle: 1,
        layers: &[],
    },
    CrateRule {
        dir: "crates/amd-regs",
        max_circle: 1,
        layers: &[],
    },
    CrateRule {
        dir: "crates/amd-isa",
        // The RDNA3 interpreter's families call each other through `exec` (16 modules
        // today): a limit, not a goal; it may only shrink.
        max_circle: 16,
        layers: &[],
    },
    CrateRule {
        dir: "crates/amd-kfd",
        max_circle: 1,
        layers: &[],
    },
    CrateRule {
        dir: "crates/amd-am",
        max_circle: 1,
        layers: &[],
    },
    CrateRule {
        dir: "crates/amd-hcq",
        max_circle: 1,
        layers: &[],
    },
    CrateRule {
        dir: "crates/amd-mockgpu",
        max_circle: 1,
        layers: &[&["os"], &["driver"], &["pci"], &["engine"], &["mem"]],
    },
    CrateRule {
        dir: "crates/amd-interpose",
        max_circle: 1,
        layers: &[],
    },
];

const BEGIN: &str = "<!-- modgraph:begin (cargo xtask modgraph writes this) -->";
const END: &str = "<!-- modgraph:end -->";
const CRATES_BEGIN: &str = "<!-- crategraph:begin (cargo xtask modgraph writes this) -->";
const CRATES_END: &str = "<!-- crategraph:end -->";

/// Every workspace member whose manifest the crate table reads, in the table's order.
const MEMBERS: &[&str] = &[
    "crates/amd-packets",
    "crates/amd-regs",
    "crates/amd-isa",
    "crates/amd-kfd",
    "crates/amd-am",
    "crates/amd-mockgpu",
    "crates/amd-hcq",
    "crates/amd-interpose",
    "crates/hcq-cli",
    "tests",
    "xtask",
];

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "modgraph")?;
    let root = crate::workspace_root();
    let (text, problems) = report(&root)?;
    let crates = crate_table(&root)?;
    let doc_path = root.join("docs/architecture.md");
    let doc = std::fs::read_to_string(&doc_path)?;
    let sections = [(CRATES_BEGIN, CRATES_END, &crates), (BEGIN, END, &text)];
    if check {
        let mut errs = problems;
        for (b, e, want) in sections {
            if section(&doc, b, e)? != want.as_str() {
                errs.push(format!(
                    "{}: the generated section after {b} differs from the code (run cargo xtask modgraph)",
                    doc_path.display()
                ));
            }
        }
        if errs.is_empty() {
            println!("crate and module graphs: current, no circle or layer violation");
            return Ok(());
        }
        return Err(errs.join("\n").into());
    }
    let mut doc = doc;
    for (b, e, want) in sections {
        let old = section(&doc, b, e)?.to_string();
        doc = doc.replacen(&format!("{b}{old}{e}"), &format!("{b}{want}{e}"), 1);
    }
    std::fs::write(&doc_path, doc)?;
    println!("wrote {}", doc_path.display());
    for p in &problems {
        println!("problem: {p}");
    }
    Ok(())
}

/// The text between markers `b` and `e` of `doc`.
fn section<'a>(doc: &'a str, b: &str, e: &str) -> Result<&'a str> {
    let start = doc
        .find(b)
        .ok_or_else(|| format!("docs/architecture.md has no marker {b}"))?
        + b.len();
    let end = doc[start..]
        .find(e)
        .ok_or_else(|| format!("docs/architecture.md has no marker {e}"))?;
    Ok(&doc[start..start + end])
}

/// The workspace crates each member's manifest depends on: `[dependencies]` (optional
/// ones marked) and, apart, `[dev-dependencies]`.
pub fn crate_table(root: &Path) -> Result<String> {
    let names: Vec<String> = MEMBERS
        .iter()
        .map(|m| package_name(&root.join(m).join("Cargo.toml")))
        .collect::<Result<_>>()?;
    let mut out = String::from("\n| crate | uses | its tests also use |\n| --- | --- | --- |\n");
    for (m, name) in MEMBERS.iter().zip(&names) {
        let manifest = std::fs::read_to_string(root.join(m).join("Cargo.toml"))?;
        let deps = workspace_deps(&manifest, "[dependencies]", &names, name);
        let dev = workspace_deps(&manifest, "[dev-dependencies]", &names, name);
        let dev: Vec<&String> = dev.iter().filter(|d| !deps.contains(d)).collect();
        let list = |v: Vec<&String>| {
            if v.is_empty() {
                "—".to_string()
            } else {
                v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            }
        };
        let label = if *m == "tests" || *m == "xtask" {
            format!("`{m}/`")
        } else {
            format!("`{name}`")
        };
        out.push_str(&format!(
            "| {label} | {} | {} |\n",
            list(deps.iter().collect()),
            list(dev)
        ));
    }
    Ok(out)
}

fn package_name(manifest: &Path) -> Result<String> {
    let text = std::fs::read_to_string(manifest)?;
    text.lines()
        .skip_while(|l| l.trim() != "[package]")
        .find_map(|l| {
            l.trim()
                .strip_prefix("name = ")
                .map(|v| v.trim_matches('"').to_string())
        })
        .ok_or_else(|| format!("{}: no package name", manifest.display()).into())
}

/// The workspace crates named in `table` of `manifest` (other than `me`), sorted;
/// optional ones end with " (optional)".
fn workspace_deps(manifest: &str, table: &str, names: &[String], me: &str) -> Vec<String> {
    let mut out: Vec<String> = manifest
        .lines()
        .skip_while(|l| l.trim() != table)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter_map(|l| {
            let key = l.split(['=', '.', ' ']).next()?.trim();
            let known = names.iter().any(|n| n == key) && key != me;
            known.then(|| {
                if l.contains("optional = true") {
                    format!("{key} (optional)")
                } else {
                    key.to_string()
                }
            })
        })
        .collect();
    out.sort();
    out
}

/// The Markdown the docs hold, and the rule violations.
pub fn report(root: &Path) -> Result<(String, Vec<String>)> {
    let mut out = String::from("\n");
    let mut problems = Vec::new();
    for rule in CRATES {
        let g = Graph::read(&root.join(rule.dir))?;
        let name = rule.dir.rsplit('/').next().unwrap_or(rule.dir);
        out.push_str(&format!("\n### `{name}`\n\n```text\n"));
        let edges = g.top_level_edges();
        let width = edges.keys().map(String::len).max().unwrap_or(0);
        for (m, deps) in edges {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            let deps = if deps.is_empty() {
                "—".to_string()
            } else {
                deps.join(", ")
            };
            out.push_str(&format!("{m:<width$} -> {deps}\n"));
        }
        out.push_str("```\n");
        let circles: Vec<Vec<String>> = g.circles().into_iter().filter(|c| c.len() > 1).collect();
        if circles.is_empty() {
            out.push_str("\nNo import circle.\n");
        }
        for c in &circles {
            out.push_str(&format!("\nCircle of {} modules: {}.\n", c.len(), c.join(", ")));
            if c.len() > rule.max_circle {
                problems.push(format!(
                    "{name}: an import circle of {} modules (at most {} allowed): {}",
                    c.len(),
                    rule.max_circle,
                    c.join(", ")
                ));
            }
        }
        for (from, to) in g.upward(rule.layers) {
            problems.push(format!("{name}: {from} imports {to}, a layer above it"));
        }
    }
    Ok((out, problems))
}

/// A crate's modules and the imports between them.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    fn read(crate_dir: &Path) -> Result<Graph> {
        let src = crate_dir.join("src");
        let mut files = Vec::new();
        collect(&src, &mut files)?;
        let mut modules = BTreeMap::new();
        for f in &files {
            modules.insert(module_of(&src, f), f.clone());
        }
        let names: BTreeSet<String> = modules.keys().cloned().collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (m, f) in &modules {
            let text = code_of(&std::fs::read_to_string(f)?);
            let set = edges.entry(m.clone()).or_default();
            for path in paths_in(&text) {
                let Some(full) = absolute(m, &path) else { continue };
                let target = longest_module(&names, &full);
                if target != *m && !is_ancestor(&target, m) && !is_ancestor(m, &target) {
                    set.insert(target);
                }
            }
        }
        Ok(Graph { edges })
    }

    /// Edges between top-level modules (a module's imports count for its top-level
    /// ancestor), the crate root left out.
    fn top_level_edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let top = |m: &str| m.split("::").next().unwrap_or("").to_string();
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (m, deps) in &self.edges {
            if m.is_empty() {
                continue;
            }
            let set = out.entry(top(m)).or_default();
            for d in deps {
                if !d.is_empty() && top(d) != top(m) {
                    set.insert(top(d));
                }
            }
        }
        out
    }

    /// Imports from a layer to one above it.
    fn upward(&self, layers: &[&[&str]]) -> Vec<(String, String)> {
        let layer_of = |m: &str| {
            let top = m.split("::").next().unwrap_or("");
            layers.iter().position(|l| l.contains(&top))
        };
        let mut out = Vec::new();
        for (m, deps) in &self.edges {
            for d in deps {
                if let (Some(a), Some(b)) = (layer_of(m), layer_of(d))
                    && b < a
                {
                    out.push((m.clone(), d.clone()));
                }
            }
        }
        out
    }

    /// Strongly connected components (Tarjan), each sorted, largest first.
    fn circles(&self) -> Vec<Vec<String>> {
        struct State<'a> {
            g: &'a BTreeMap<String, BTreeSet<String>>,
            index: BTreeMap<&'a str, usize>,
            low: BTreeMap<&'a str, usize>,
            stack: Vec<&'a str>,
            on: BTreeSet<&'a str>,
            out: Vec<Vec<String>>,
        }
        fn visit<'a>(s: &mut State<'a>, v: &'a str) {
            let i = s.index.len();
            s.index.insert(v, i);
            s.low.insert(v, i);
            s.stack.push(v);
            s.on.insert(v);
            if let Some(ws) = s.g.get(v) {
                for w in ws {
                    let w = w.as_str();
                    if !s.index.contains_key(w) {
                        visit(s, w);
                        let l = s.low[w].min(s.low[v]);
                        s.low.insert(v, l);
                    } else if s.on.contains(w) {
                        let l = s.index[w].min(s.low[v]);
                        s.low.insert(v, l);
                    }
                }
            }
            if s.low[v] == s.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                comp.sort();
                s.out.push(comp);
            }
        }
        let mut s = State {
            g: &self.edges,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on: BTreeSet::new(),
            out: Vec::new(),
        };
        for v in self.edges.keys() {
            if !s.index.contains_key(v.as_str()) {
                visit(&mut s, v);
            }
        }
        s.out.sort_by_key(|c| std::cmp::Reverse(c.len()));
        s.out
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `src/lib.rs` is the root, "".
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib" || l == "main") {
        parts.pop();
    }
    parts.join("::")
}

fn is_ancestor(a: &str, m: &str) -> bool {
    a.is_empty() || m.starts_with(&format!("{a}::"))
}

fn longest_module(names: &BTreeSet<String>, path: &str) -> String {
    let parts: Vec<&str> = path.split("::").collect();
    (0..=parts.len())
        .rev()
        .map(|i| parts[..i].join("::"))
        .find(|m| names.contains(m))
        .unwrap_or_default()
}

/// `path` (starting `crate`, `super` or `self`) from module `m` as a path from the
/// crate root; `None` if it climbs above the root.
fn absolute(m: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = if m.is_empty() {
        Vec::new()
    } else {
        m.split("::").collect()
    };
    match parts.first().copied() {
        Some("crate") => {
            base.clear();
            parts.remove(0);
        }
        Some("self") => {
            parts.remove(0);
        }
        Some("super") => {
            while parts.first() == Some(&"super") {
                parts.remove(0);
                base.pop()?;
            }
        }
        _ => return None,
    }
    base.extend(parts);
    Some(base.join("::"))
}

/// Every `crate::…`, `super::…` and `self::…` path in `code`, brace groups expanded.
fn paths_in(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':');
        if at_word {
            for kw in ["crate::", "super::", "self::"] {
                if code[i..].starts_with(kw) {
                    let (paths, end) = path_at(code, i);
                    out.extend(paths);
                    i = end;
                    break;
                }
            }
        }
        i += 1;
    }
    out
}

/// The path(s) starting at `i`: `a::b::c`, or `a::{b, c::{d}}` expanded; and where it ends.
fn path_at(code: &str, i: usize) -> (Vec<String>, usize) {
    let b = code.as_bytes();
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b':') {
        j += 1;
    }
    let prefix = code[i..j].trim_end_matches(':').to_string();
    if j < b.len() && b[j] == b'{' && code[i..j].ends_with("::") {
        // Find the matching brace.
        let mut depth = 0;
        let mut k = j;
        while k < b.len() {
            match b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        let inner = &code[j + 1..k.min(code.len())];
        let mut out = Vec::new();
        for item in split_top(inner) {
            let item = item.trim();
            let item = item.split(" as ").next().unwrap_or("").trim();
            if item.is_empty() || item == "self" || item == "*" {
                out.push(prefix.clone());
                continue;
            }
            let (sub, _) = path_at(item, 0);
            for s in sub {
                out.push(format!("{prefix}::{s}"));
            }
        }
        return (out, k);
    }
    (vec![prefix], j)
}

/// `inner` split at commas outside braces.
fn split_top(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

/// `text` without comments, string and char literals, and the trailing
/// `#[cfg(test)] mod tests`.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
        } else if text[i..].starts_with("r#\"") || text[i..].starts_with("r\"") {
            let hashes = text[i + 1..].bytes().take_while(|&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let start = i + 2 + hashes;
            i = text[start..].find(&close).map_or(b.len(), |e| start + e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('x', '\n', '\''); lifetimes ('a) have no closing quote.
            let end = text[i + 2..].find('\'').map_or(b.len(), |e| i + 2 + e + 1);
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_expand_brace_groups_and_skip_comments_and_strings() {
        let code =
            code_of("use crate::{a::{b, c::D}, e};\n// crate::x\nlet s = \"crate::y\";\nlet t = super::f::g();\n");
        let p = paths_in(&code);
        assert_eq!(p, ["crate::a::b", "crate::a::c::D", "crate::e", "super::f::g"]);
        assert_eq!(absolute("x::y", "super::f::g").as_deref(), Some("x::f::g"));
        assert_eq!(absolute("", "super::f"), None);
    }

    #[test]
    fn crate_and_module_graphs_in_the_docs_match_the_code() {
        let root = crate::workspace_root();
        let (text, problems) = report(&root).unwrap();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
        assert!(
            section(&doc, BEGIN, END).unwrap() == text,
            "docs/architecture.md's module graphs are stale: run cargo xtask modgraph"
        );
        assert!(
            section(&doc, CRATES_BEGIN, CRATES_END).unwrap() == crate_table(&root).unwrap(),
            "docs/architecture.md's crate table is stale: run cargo xtask modgraph"
        );
    }
}
