//! The pipeline flows one way, and so do the modules: read the `use crate::` graph of the
//! top-level modules under `src/` and fail on a cycle, or on a stage that reaches a later one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod common;

/// Top-level module → the top-level modules its files name with `crate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = common::repo_root().join("src");
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap();
            let first = relative.components().next().unwrap().as_os_str().to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "main" || module == "lib" {
                continue;
            }
            files
                .entry(module)
                .or_default()
                .push(non_test_code(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    let path = regex_lite::Regex::new(r"\bcrate::([a-z_][a-z0-9_]*)").unwrap();
    let group = regex_lite::Regex::new(r"\bcrate::\{([^}]*)\}").unwrap();
    let name = regex_lite::Regex::new(r"(?:^|,)\s*([a-z_][a-z0-9_]*)").unwrap();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(module, texts)| {
            let mut deps = BTreeSet::new();
            for text in texts {
                let code: String = text
                    .lines()
                    .map(|l| l.split("//").next().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join("\n");
                deps.extend(path.captures_iter(&code).map(|c| c[1].to_string()));
                for g in group.captures_iter(&code) {
                    deps.extend(name.captures_iter(&g[1]).map(|c| c[1].to_string()));
                }
            }
            deps.retain(|d| d != module && modules.contains(d));
            (module.clone(), deps)
        })
        .collect()
}

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(module) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}

#[test]
fn no_module_imports_itself_through_others() {
    let graph = graph();
    assert!(graph.len() >= 12, "{graph:?}");
    let cyclic: Vec<&String> = graph.keys().filter(|m| reaches(&graph, m, m)).collect();
    assert!(cyclic.is_empty(), "modules in an import cycle: {cyclic:?}\n{graph:#?}");
}

#[test]
fn stages_only_reach_earlier_stages() {
    let graph = graph();
    // Each stage, and the later ones it must not know.
    let order = [
        (
            "source",
            &[
                "diagnostic",
                "config",
                "facts",
                "extract",
                "index",
                "analysis",
                "rules",
                "check",
                "workspace",
            ][..],
        ),
        (
            "schedule",
            &["facts", "extract", "index", "analysis", "rules", "check", "workspace"],
        ),
        (
            "facts",
            &["extract", "index", "analysis", "rules", "check", "config", "workspace"],
        ),
        // Discovery walks and reports what it found: it loads no config's package configs
        // itself, knows no rule, and never reads a source file's contents.
        (
            "discover",
            &[
                "extract",
                "index",
                "analysis",
                "rules",
                "check",
                "workspace",
                "fix",
                "lsp",
                "render",
            ],
        ),
        (
            "extract",
            &["index", "analysis", "rules", "check", "discover", "workspace"],
        ),
        ("index", &["extract", "analysis", "rules", "check", "workspace"]),
        ("analysis", &["rules", "check", "render", "fix", "lsp", "workspace"]),
        ("rules", &["check", "render", "fix", "lsp", "baseline", "workspace"]),
        ("check", &["render", "fix", "lsp", "workspace", "discover"]),
        ("fix", &["workspace", "lsp"]),
    ];
    for (stage, later) in order {
        for module in later {
            assert!(
                !reaches(&graph, stage, module),
                "`{stage}` reaches `{module}`, a later stage\n{graph:#?}"
            );
        }
    }
}

/// A file's code outside its tests: its text up to any `#[cfg(test)]`, nothing of a file that
/// is test code as a whole (`#![cfg(test)]`, the rule tester). Unit tests may build what they
/// test however they like: the rule tester runs the whole pipeline.
fn non_test_code(text: &str) -> String {
    if text.contains("#![cfg(test)]") {
        return String::new();
    }
    text.split("#[cfg(test)]").next().unwrap_or("").to_string()
}

/// The `.rs` files under `dir`, recursively, with their code outside tests ([`non_test_code`]).
fn sources_under(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, non_test_code(&text)));
            }
        }
    }
    found.sort();
    found
}

/// A file's code without its `//` comments (doc comments name the stages freely).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn rules_only_read() {
    // Resolution, parsing and the file system belong to the stages before rules: a rule reads
    // the text extraction kept (`Context::text`), never the disk, whatever the path to it.
    let dir = common::repo_root().join("src/rules");
    let files = sources_under(&dir);
    assert!(files.len() >= 20, "{files:?}");
    let index_text = regex_lite::Regex::new(r"index\s*\.\s*text\s*\(").unwrap();
    for (path, text) in files {
        let code = without_comments(&text);
        for forbidden in [
            "std::fs",
            "std::io",
            "File::",
            "OpenOptions",
            "read_to_string",
            "read_dir",
            "canonicalize",
            "metadata(",
            "crate::files",
            "files::",
            "read_file",
            "reread",
            ".resolve_",
            "extract_file",
            "parse_recovering",
            "Command::new",
            "std::env",
        ] {
            assert!(
                !code.contains(forbidden),
                "{} uses `{forbidden}`: rules read the index and the analysis only",
                Path::new(&path).display()
            );
        }
        // `Index::text` reads a dropped text from the disk again: a rule reads `ctx.text()`.
        assert!(
            !index_text.is_match(&code),
            "{} reads a text through `Index::text`, which may read the disk: use `ctx.text()`",
            path.display()
        );
    }
}

#[test]
fn only_the_front_door_runs_the_stages() {
    // `workspace` assembles the pipeline: it finds the project, discovers, loads, and runs the
    // rules (through `check`). The command line, the language server, `--fix`, `init` and
    // `policies` come in through it; none of them runs a stage itself.
    let graph = graph();
    assert!(graph.contains_key("workspace"), "{graph:#?}");
    let discoverers: Vec<&String> = graph
        .iter()
        .filter(|(module, deps)| *module != "workspace" && deps.contains("discover"))
        .map(|(module, _)| module)
        .collect();
    assert!(
        discoverers.is_empty(),
        "only the front door (`workspace`) runs discovery: {discoverers:?}"
    );
    let src = common::repo_root().join("src");
    let stage = regex_lite::Regex::new(
        r"\b(?:discover::|run_files\s*\(|run_again\s*\(|load_for\s*\(|load_index\s*\(|Loader\s*\{|extract_file(?:_with)?\s*\(|Index::new\s*\(|project_root\s*\(|Config::discover\s*\()",
    )
    .unwrap();
    let mut checked = 0;
    for (path, text) in sources_under(&src) {
        let relative = path.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        // The front door, and the stages themselves (each may run its own parts).
        let inside = [
            "workspace.rs",
            "check/",
            "discover.rs",
            "extract/",
            "index/",
            "config.rs",
        ];
        if inside.iter().any(|p| relative.starts_with(p)) {
            continue;
        }
        checked += 1;
        let mut code = without_comments(&text);
        // The one evaluator outside a project: a standalone schedule expression, for the
        // differential test (`schedule-eval`), extracted and indexed alone.
        if relative == "analysis/effect.rs" {
            if let Some(start) = code.find("pub fn evaluate_text(") {
                let end = code[start..].find("\n}\n").map_or(code.len(), |e| start + e);
                code.replace_range(start..end, "");
            }
        }
        if let Some(found) = stage.find(&code) {
            panic!(
                "src/{relative} runs a stage itself (`{}`): go through the front door, `retrylint::workspace`",
                found.as_str()
            );
        }
    }
    // main.rs, cli/, lsp/, fix.rs, init.rs, render/, …
    assert!(checked >= 20, "{checked}");
}

#[test]
fn the_policy_evaluators_do_not_reach_back_into_the_collector() {
    // `policy` collects a file's policies by asking `effect`, `rust` and `rs2` to evaluate
    // them; they share the result types through `model`, which is data only. An evaluator that
    // called back into `policy` would close the circle the data module broke.
    let dir = common::repo_root().join("src/analysis");
    let uses = |file: &str| -> BTreeSet<String> {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let code = without_comments(&non_test_code(&text));
        let sibling = regex_lite::Regex::new(r"(?:super|crate::analysis)::(?:\{([^}]*)\}|([a-z_0-9]+))").unwrap();
        let mut found = BTreeSet::new();
        for captures in sibling.captures_iter(&code) {
            if let Some(list) = captures.get(1) {
                found.extend(
                    list.as_str()
                        .split(',')
                        .map(|m| m.trim().split("::").next().unwrap_or("").to_string()),
                );
            }
            if let Some(module) = captures.get(2) {
                found.insert(module.as_str().to_string());
            }
        }
        found
    };
    for evaluator in ["effect.rs", "rust.rs", "rs2.rs"] {
        let found = uses(evaluator);
        assert!(
            !found.contains("policy"),
            "analysis/{evaluator} reaches analysis::policy: {found:?}"
        );
    }
    let model = uses("model.rs");
    assert!(model.is_empty(), "analysis/model.rs is data only, yet uses {model:?}");
}
