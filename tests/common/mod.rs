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

/// Neovim for the editor tests (`RETRYLINT_NVIM`, else `nvim`). `None` when it is missing: the
/// test says so and skips, except under CI, where `.ci/run` installs it and a missing one fails.
pub fn nvim() -> Option<String> {
    let nvim = std::env::var("RETRYLINT_NVIM").unwrap_or_else(|_| "nvim".into());
    let found = Command::new(&nvim)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if found {
        return Some(nvim);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "Neovim (`{nvim}`) is missing: .ci/run installs the Debian package `neovim`"
    );
    eprintln!("skipped: Neovim (`{nvim}`) is not installed (apt-get install neovim)");
    None
}

/// Runs headless Neovim (`--clean`, no swap, no shada) on `scripts` in turn, with `envs` and its
/// state kept in `dir`; waits up to 60 s. Its exit status and standard error.
pub fn run_nvim(
    nvim: &str,
    dir: &Path,
    scripts: &[&Path],
    envs: &[(&str, &std::ffi::OsStr)],
) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let mut command = Command::new(nvim);
    command.args(["--headless", "--clean", "-n", "-i", "NONE"]);
    for script in scripts {
        command.arg("-c").arg(format!("luafile {}", script.display()));
    }
    let mut child = command
        .envs(envs.iter().copied())
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("nvim starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("Neovim did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    (status, stderr)
}
