//! Shared helpers: run the real binary, read its JSON.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retrylint"));
    command.env_remove("GITHUB_ACTIONS").env("NO_COLOR", "1");
    command
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
