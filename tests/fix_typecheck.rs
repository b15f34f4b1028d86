//! Fixes that type-check (issue 26.4): every TypeScript fixture project is type-checked with
//! `tsc --noEmit` against the real `effect` it declares (3.22.4, 4.0.0-beta.66 or 4.1.0, the
//! packages pinned in `tests/oracle/package.json`) before and after
//! `retrylint check --fix --unsafe-fixes` (which applies the safe fixes too), and the fixes may
//! add no diagnostic.
//!
//! The fixtures are real-looking, not complete: their other dependencies (`@effect/sql`, a
//! workspace's own packages) are not installed, so tsc reports errors before any fix. What is
//! compared is the multiset of (file, code, message) with positions left out (a fix moves
//! lines): any diagnostic the fixed project has and the original has not fails the test, with
//! the fix's diff. A fix that adds `import … from "../retry"` to a NodeNext project (TS2835),
//! joins two arguments on one line wrongly (TS1005) or passes options where a schedule goes
//! (TS2353) is caught here. The rule-doc examples a fix changes are checked the same way.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn oracle_modules() -> PathBuf {
    common::repo_root().join("tests/oracle/node_modules")
}

fn ensure_node_packages() {
    let dir = common::repo_root().join("tests/oracle");
    if dir.join("node_modules/typescript/package.json").is_file() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .status()
        .expect("npm is needed for the type-check of fixes (.ci/run installs it)");
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

/// The `effect` versions a project's package.json files declare.
fn declared_effect(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "node_modules" {
            declared_effect(&path, out);
        } else if name == "pnpm-workspace.yaml" {
            // A catalog entry, `  effect: 3.19.0` (what `"effect": "catalog:"` stands for).
            let text = std::fs::read_to_string(&path).unwrap();
            out.extend(text.lines().filter_map(|line| {
                let value = line.trim().strip_prefix("effect:")?;
                Some(value.trim().trim_matches(['"', '\'']).to_string())
            }));
        } else if name == "package.json" {
            let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            for section in ["dependencies", "devDependencies", "peerDependencies"] {
                if let Some(version) = json[section]["effect"].as_str() {
                    out.push(version.to_string());
                }
            }
        }
    }
}

/// The oracle's `effect` package matching what the project declares: 3.x, a 4.0 beta, or 4.1
/// (also for a project that names no version it can be read from).
fn effect_package(dir: &Path) -> &'static str {
    let mut versions = Vec::new();
    declared_effect(dir, &mut versions);
    let major3 = |v: &str| v.trim_start_matches(['^', '~', '=']).starts_with('3');
    if versions.iter().any(|v| major3(v)) {
        "effect-v3"
    } else if versions.iter().any(|v| v.contains("beta")) {
        "effect-v4-beta"
    } else {
        "effect"
    }
}

fn has_typescript(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            entry.file_name() != "node_modules" && has_typescript(&path)
        } else {
            path.extension().is_some_and(|e| e == "ts" || e == "tsx")
        }
    })
}

/// A copy of `fixture` with `effect` installed (a link to the oracle's package), and the
/// tsconfig files to check it with: the fixture's own (the projects a solution-style one
/// references), or one for a bundler project (extending a `tsconfig.base.json`) when it has
/// none.
fn project(fixture: &str) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture(fixture), dir.path());
    let modules = dir.path().join("node_modules");
    std::fs::create_dir_all(&modules).unwrap();
    let package = effect_package(dir.path());
    std::os::unix::fs::symlink(oracle_modules().join(package), modules.join("effect")).unwrap();
    let tsconfig = dir.path().join("tsconfig.json");
    if let Ok(text) = std::fs::read_to_string(&tsconfig) {
        // JSON with comments: the references' paths are read as text.
        let references: Vec<String> = text
            .split("\"path\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').nth(1).map(str::to_string))
            .collect();
        return match references.is_empty() {
            true => (dir, vec!["tsconfig.json".into()]),
            false => (dir, references),
        };
    }
    let extends = match dir.path().join("tsconfig.base.json").exists() {
        true => "\"extends\": \"./tsconfig.base.json\",",
        false => "",
    };
    std::fs::write(&tsconfig, bundler_tsconfig(extends)).unwrap();
    (dir, vec!["tsconfig.json".into()])
}

/// A tsconfig.json for a bundler project that checks every TypeScript file below it, after
/// `extends` (an `"extends": …,` line, or nothing).
fn bundler_tsconfig(extends: &str) -> String {
    format!(
        r#"{{
  {extends}
  "compilerOptions": {{
    "strict": true, "module": "preserve", "moduleResolution": "bundler", "target": "ES2022",
    "jsx": "preserve", "noEmit": true, "skipLibCheck": true, "allowImportingTsExtensions": true
  }},
  "include": ["**/*.ts", "**/*.tsx"],
  "exclude": ["node_modules"]
}}
"#
    )
}

/// `tsc --noEmit` on `dir` with each of `configs`: each diagnostic as "file: error TSnnnn:
/// message", counted.
fn diagnostics(dir: &Path, configs: &[String]) -> BTreeMap<String, usize> {
    let tsc = oracle_modules().join("typescript/bin/tsc");
    let mut text = String::new();
    for config in configs {
        let output = Command::new("node")
            .arg(&tsc)
            .args(["--noEmit", "--skipLibCheck", "--pretty", "false", "-p", config])
            .current_dir(dir)
            .output()
            .expect("node runs");
        text.push_str(&String::from_utf8_lossy(&output.stdout));
    }
    let mut out = BTreeMap::new();
    let mut last: Option<String> = None;
    for line in text.lines() {
        // `src/a.ts(12,3): error TS2353: …`; continuation lines are indented.
        if let Some((file, rest)) = line.split_once('(').filter(|_| !line.starts_with(' ')) {
            if let Some((_, message)) = rest.split_once("): ") {
                let key = format!("{file}: {message}");
                *out.entry(key.clone()).or_insert(0) += 1;
                last = Some(key);
                continue;
            }
        }
        if let (Some(key), true) = (&last, line.starts_with(' ')) {
            // Part of the previous message: kept with it (it says which types differ).
            let count = out.remove(key).unwrap_or(1);
            let longer = format!("{key} {}", line.trim());
            *out.entry(longer.clone()).or_insert(0) += count;
            last = Some(longer);
        }
    }
    // TS5xxx and TS6xxx: the options or the project are wrong, and nothing was checked.
    assert!(
        !out.keys().any(|k| k.contains("error TS5") || k.contains("error TS6")),
        "tsc rejected its options in {}:\n{text}",
        dir.display()
    );
    out
}

fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(common::repo_root().join("fixtures"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir() && has_typescript(&e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[ignore = "needs Node.js, npm and the typescript and effect packages of tests/oracle (npm ci); .ci/run runs it"]
fn fixes_add_no_type_error_to_any_fixture() {
    ensure_node_packages();
    let names = fixtures();
    assert!(names.len() >= 8, "TypeScript fixtures found: {names:?}");
    let mut failures = Vec::new();
    let mut fixed_files = 0;
    for name in &names {
        let (dir, configs) = project(name);
        let run = |mode: &[&str]| {
            let output = common::bin()
                .args(["check", ".", "--unsafe-fixes", "--no-cache"])
                .args(mode)
                .current_dir(dir.path())
                .output()
                .expect("the binary runs");
            assert!(
                matches!(output.status.code(), Some(0 | 1)),
                "{name}: --fix failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout).into_owned()
        };
        // What the fixes change (printed, nothing written), then the fixes written.
        let diff = run(&["--diff"]);
        let files = diff.lines().filter(|l| l.starts_with("+++ ")).count();
        if files == 0 {
            eprintln!("{name}: no fix to check");
            continue;
        }
        fixed_files += files;
        let before = diagnostics(dir.path(), &configs);
        run(&["--fix", "--format", "json"]);
        let after = diagnostics(dir.path(), &configs);
        let added: Vec<String> = after
            .iter()
            .filter(|(key, count)| before.get(*key).copied().unwrap_or(0) < **count)
            .map(|(key, _)| key.clone())
            .collect();
        eprintln!(
            "{name} ({}): {} diagnostics before the fixes, {} after",
            effect_package(dir.path()),
            before.values().sum::<usize>(),
            after.values().sum::<usize>()
        );
        if !added.is_empty() {
            failures.push(format!("{name}: the fixes added\n  {}\n{diff}", added.join("\n  ")));
        }
    }
    assert!(
        fixed_files >= 5,
        "the fixes changed only {fixed_files} files: the test would prove nothing"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The oracle's `effect` packages a rule-doc block is checked against: the version its
/// `effect=` names, or (a block for any version) both 3.x and 4.1.
fn doc_packages(effect: Option<&str>) -> Vec<&'static str> {
    match effect {
        Some(v) if v.trim_start_matches(['^', '~', '=']).starts_with('3') => vec!["effect-v3"],
        Some(v) if v.contains("beta") => vec!["effect-v4-beta"],
        Some(_) => vec!["effect"],
        None => vec!["effect-v3", "effect"],
    }
}

#[test]
#[ignore = "needs Node.js, npm and the typescript and effect packages of tests/oracle (npm ci); .ci/run runs it"]
fn fixes_add_no_type_error_to_any_rule_doc_example() {
    use common::docs::{blocks, project_of, Block};
    ensure_node_packages();
    let output = common::bin().args(["rules", "--format", "json"]).output().unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // Every fixed example, before and after, in one tree per `effect` package: one tsc run each.
    let tree = tempfile::tempdir().unwrap();
    let mut fixed = 0;
    for rule in listing.as_array().unwrap() {
        let name = rule["name"].as_str().unwrap();
        let doc = std::fs::read_to_string(common::repo_root().join("rules").join(format!("{name}.md"))).unwrap();
        let all = blocks(&doc);
        let context: Vec<&Block> = all.iter().filter(|b| b.context).collect();
        let typescript = |b: &&Block| b.path.ends_with(".ts") || b.path.ends_with(".tsx");
        for (at, block) in all.iter().filter(|b| !b.context && b.after.is_none()).enumerate() {
            if !typescript(&block) {
                continue;
            }
            let dir = project_of(&context, block);
            let before = tempfile::tempdir().unwrap();
            common::copy_dir(dir.path(), before.path());
            let output = common::bin()
                .args(["check", ".", "--no-config", "--fix", "--unsafe-fixes"])
                .current_dir(dir.path())
                .output()
                .expect("the binary runs");
            assert_ne!(
                output.status.code(),
                Some(2),
                "{name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            if std::fs::read_to_string(dir.path().join(&block.path)).unwrap() == block.code {
                continue;
            }
            fixed += 1;
            for package in doc_packages(block.effect.as_deref()) {
                let example = tree.path().join(package).join(format!("{name}-{}", at + 1));
                common::copy_dir(before.path(), &example.join("before"));
                common::copy_dir(dir.path(), &example.join("after"));
            }
        }
    }
    assert!(fixed >= 10, "only {fixed} rule-doc examples were changed by a fix");
    let mut failures = Vec::new();
    for package in ["effect-v3", "effect-v4-beta", "effect"] {
        let group = tree.path().join(package);
        if !group.exists() {
            continue;
        }
        std::fs::create_dir_all(group.join("node_modules")).unwrap();
        std::os::unix::fs::symlink(oracle_modules().join(package), group.join("node_modules/effect")).unwrap();
        std::fs::write(group.join("tsconfig.json"), bundler_tsconfig("")).unwrap();
        // `rule-n/before/src/a.ts: error …` and `rule-n/after/src/a.ts: error …` compared.
        let mut before: BTreeMap<String, usize> = BTreeMap::new();
        let mut after: BTreeMap<String, usize> = BTreeMap::new();
        let found = diagnostics(&group, &["tsconfig.json".to_string()]);
        for (key, count) in found {
            if let Some((example, rest)) = key.split_once("/before/") {
                *before.entry(format!("{example}/{rest}")).or_insert(0) += count;
            } else if let Some((example, rest)) = key.split_once("/after/") {
                *after.entry(format!("{example}/{rest}")).or_insert(0) += count;
            }
        }
        eprintln!(
            "rule docs against {package}: {} diagnostics before the fixes, {} after",
            before.values().sum::<usize>(),
            after.values().sum::<usize>()
        );
        for (key, count) in &after {
            if before.get(key).copied().unwrap_or(0) < *count {
                failures.push(format!("{package}: the fix added {key}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
