//! Shared helpers: run the real binary, read its JSON.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary, with the facts cache off: tests must not write `.retrylint_cache/` into the
/// fixtures (tests/cache.rs turns it on, in temporary directories).
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retrylint"));
    command
        .env_remove("GITHUB_ACTIONS")
        .env_remove("RETRYLINT_CACHE_DIR")
        .env("NO_COLOR", "1")
        .env("RETRYLINT_NO_CACHE", "1");
    command
}

/// Copies a directory tree (a fixture, into a temporary directory).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("fixtures").join(name)
}

/// Runs `retrylint check <args>` in `dir` and returns the output.
pub fn check(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("check")
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs `retrylint check --format json <args>` in `dir`, returning the exit code and the report.
pub fn check_json(dir: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let output = check(dir, &all);
    let code = output.status.code().expect("exited normally");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (code, report)
}

/// `(path, line, rule)` of every diagnostic in a JSON report.
pub fn findings(report: &serde_json::Value) -> Vec<(String, u64, String)> {
    report["diagnostics"]
        .as_array()
        .expect("diagnostics array")
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Writes `files` (path, text) under a fresh temporary directory.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    dir
}
