//! The Rust fixtures and the rule docs' Rust examples type-check against the crates they claim
//! (issue 25.10), so every shape the linter is taught exists. `tests/rust-check` is a Cargo
//! workspace of its own, with its own lock file: `fixtures/rust-service` (by path), `rule-docs`
//! (every ```rust block of `rules/*.md` in a module of its own, its build script writes them;
//! the names a snippet takes from the rest of a service are the stubs of its `prelude.rs`) and
//! `tokio-retry2-shapes` (tokio-retry2's main API). The real backon, tokio-retry,
//! tokio-retry2, backoff, reqwest-retry, sqlx, axum, apalis, lapin and lambda_runtime are its
//! dependencies; `sqlx::query!` reads the statements' descriptions from
//! `tests/rust-check/.sqlx` (no database). It is checked with `cargo check --offline --locked`
//! into `target/rust-check`, away from the main build's cache.
//!
//! The crates come from the registry, so the test is `#[ignore]`d: `.ci/run` fetches them
//! (`cargo fetch --locked`) and runs it (`cargo test -- --include-ignored`). Run by hand, it
//! fetches them itself when they are missing, and fails — never skips — when it cannot.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    common::repo_root().join("tests/rust-check")
}

fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("rust-check")
}

fn cargo(args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args(args)
        .arg("--manifest-path")
        .arg(workspace().join("Cargo.toml"))
        .env("CARGO_TERM_COLOR", "never")
        // The query macros read `.sqlx`, never a database a developer's shell points at.
        .env("SQLX_OFFLINE", "true")
        .env_remove("DATABASE_URL")
        .output()
        .expect("cargo runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The lock file's crates on this machine, fetched from the registry if they are not.
fn fetch_crates() {
    if cargo(&["fetch", "--locked", "--offline"]).status.success() {
        return;
    }
    let fetch = cargo(&["fetch", "--locked"]);
    assert!(
        fetch.status.success(),
        "the crates of tests/rust-check are not on this machine and `cargo fetch --locked` there \
         failed (it needs the crates.io registry):\n{}",
        text(&fetch.stderr)
    );
}

/// The ```rust blocks of the rule docs, as the build script names their files:
/// `<doc>.md.<line of the block's first line>.rs`.
fn rule_doc_blocks() -> Vec<String> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(common::repo_root().join("rules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut blocks = Vec::new();
    for doc in docs {
        let name = doc.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut lines = text.lines().enumerate();
        while let Some((_, line)) = lines.next() {
            let Some(info) = line.strip_prefix("```") else { continue };
            let rust = info.split_whitespace().next() == Some("rust");
            let mut first = None;
            for (at, line) in lines.by_ref() {
                if line.starts_with("```") {
                    break;
                }
                first.get_or_insert(at + 1);
            }
            if let (true, Some(first)) = (rust, first) {
                blocks.push(format!("{name}.{first}.rs"));
            }
        }
    }
    blocks
}

/// Compiler messages name a rule-doc block's file (`…/blocks/stacked-retry.md.42.rs:5:9`):
/// said as the doc's own line (`rules/stacked-retry.md:46:9`).
fn in_doc_lines(messages: &str) -> String {
    let file = regex_lite::Regex::new(r"\S*/blocks/([a-z0-9-]+\.md)\.(\d+)\.rs:(\d+)").unwrap();
    file.replace_all(messages, |c: &regex_lite::Captures| {
        let first: usize = c[2].parse().unwrap();
        let line: usize = c[3].parse().unwrap();
        format!("rules/{}:{}", &c[1], first + line - 1)
    })
    .into_owned()
}

#[test]
#[ignore = "needs the crates of tests/rust-check (cargo fetch --locked there, from the crates.io registry); .ci/run runs it"]
fn fixtures_and_rule_docs_type_check_against_the_real_crates() {
    fetch_crates();
    let target = target_dir();
    let check = cargo(&[
        "check",
        "--offline",
        "--locked",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    assert!(
        check.status.success(),
        "tests/rust-check does not type-check against the real crates:\n{}",
        in_doc_lines(&text(&check.stderr))
    );

    // Every block of the docs was in the crate checked: the newest output of its build script
    // has a file for each.
    let build = target.join("debug/build");
    let written = std::fs::read_dir(&build)
        .unwrap()
        .map(|e| e.unwrap().path().join("out/blocks.rs"))
        .filter(|p| p.is_file() && p.to_string_lossy().contains("/rule-docs-"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .expect("the rule-docs build script ran");
    let declared = std::fs::read_to_string(&written).unwrap();
    let blocks = rule_doc_blocks();
    assert!(blocks.len() >= 40, "the rule docs have their Rust examples: {blocks:?}");
    for block in &blocks {
        assert!(
            declared.contains(&format!("/{block}\"]")),
            "{block} is not among the modules checked ({})",
            written.display()
        );
    }
    assert_eq!(declared.matches("\nmod ").count(), blocks.len(), "{declared}");
}
