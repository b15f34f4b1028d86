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
                .push(std::fs::read_to_string(&path).unwrap());
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
            ][..],
        ),
        ("schedule", &["facts", "extract", "index", "analysis", "rules", "check"]),
        ("facts", &["extract", "index", "analysis", "rules", "check", "config"]),
        ("extract", &["index", "analysis", "rules", "check", "discover"]),
        ("index", &["extract", "analysis", "rules", "check"]),
        ("analysis", &["rules", "check", "render", "fix", "lsp"]),
        ("rules", &["check", "render", "fix", "lsp", "baseline"]),
        ("check", &["render", "fix", "lsp"]),
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

#[test]
fn rules_only_read() {
    // Resolution, parsing and the file system belong to the stages before rules.
    let dir = common::repo_root().join("src/rules");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for forbidden in [
            "std::fs",
            ".resolve_",
            "extract_file",
            "parse_recovering",
            "Command::new",
        ] {
            assert!(
                !text.contains(forbidden),
                "{} uses `{forbidden}`: rules read the index and the analysis only",
                Path::new(&path).display()
            );
        }
    }
}
