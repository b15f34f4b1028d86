//! Shared helpers: run the real binary, read its JSON.
#![allow(dead_code)]

pub mod docs;

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

/// Neovim for the editor tests (`RETRYLINT_NVIM`, else `nvim`). Those tests are
/// `#[ignore]`d (`.ci/run` installs Neovim and runs them): run without it, they fail saying
/// what to install, never pass unrun.
pub fn nvim() -> String {
    let nvim = std::env::var("RETRYLINT_NVIM").unwrap_or_else(|_| "nvim".into());
    require(&nvim, "Neovim 0.7 or later (Debian: apt-get install neovim)");
    nvim
}

/// Panics unless `tool --version` runs: a test that needs a tool fails without it, saying what
/// to install (`install`). Such tests are `#[ignore = "needs …"]`; `.ci/run` runs them.
pub fn require(tool: &str, install: &str) {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{tool}` is not installed: this test needs {install} (.ci/run installs it)"
    );
}

/// The Python of the test tools' virtual environment (tests/tools/requirements.txt, pinned,
/// from PyPI), `target/tmp/python-tools`: made by tests/tools/make_venv.py the first time, and
/// again when the requirements change; never installed into the Python on PATH.
pub fn python_tools() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-tools");
            let output = Command::new("python3")
                .arg(repo_root().join("tests/tools/make_venv.py"))
                .arg(&dir)
                .stderr(std::process::Stdio::inherit())
                .output()
                .expect("python3 runs (the test tools' virtual environment needs Python 3.9+)");
            assert!(
                output.status.success(),
                "tests/tools/make_venv.py {} failed (it needs Python's venv module and PyPI)",
                dir.display()
            );
            PathBuf::from(String::from_utf8(output.stdout).unwrap().trim_end())
        })
        .clone()
}

/// Whether retrylint reads a file named `name`, as the binary itself says
/// (`check --show-settings FILE`: its `# language:` line), asked in a scratch directory.
pub fn reads(name: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "").unwrap();
    let output = bin()
        .current_dir(dir.path())
        .args(["check", "--no-config", "--show-settings"])
        .arg(name)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "--show-settings {name}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let language = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# language: "))
        .unwrap_or_else(|| panic!("--show-settings {name} names the language:\n{stdout}"));
    !language.starts_with("none")
}

/// File names to ask [`reads`] about: every extension the README's "Files:" paragraph names,
/// `extra` (what a hook or an editor lists), extensions a linter could plausibly grow to read,
/// and the names that are not what their extension says (declaration files, hidden files,
/// upper case).
pub fn candidate_names(extra: &[String]) -> Vec<String> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = readme.find("\nFiles: ").expect("the README's Files: paragraph");
    let paragraph = &readme[start..start + readme[start + 1..].find("\n\n").unwrap()];
    let dotted = regex_lite::Regex::new(r"`?\.([a-z0-9]+)").unwrap();
    let mut extensions: std::collections::BTreeSet<String> =
        dotted.captures_iter(paragraph).map(|c| c[1].to_string()).collect();
    extensions.extend(extra.iter().cloned());
    extensions.extend(
        [
            "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "vue", "svelte", "astro", "mdx", "md", "html", "htm",
            "rs", "sql", "psql", "pgsql", "json", "jsonc", "json5", "yaml", "yml", "toml", "ini", "xml", "graphql",
            "gql", "prisma", "py", "go", "java", "kt", "rb", "php", "cs", "sh", "txt", "lock", "coffee", "ls", "res",
            "elm", "d", "map", "env",
        ]
        .map(String::from),
    );
    let mut names: Vec<String> = extensions.iter().map(|e| format!("src/a.{e}")).collect();
    names.extend(
        [
            "src/a.d.ts",
            "src/a.d.mts",
            "src/a.d.cts",
            "src/d.ts",
            "src/a.b.ts",
            "src/.ts",
            "src/.d.ts",
            "src/a.TS",
            "src/a.Json",
            "src/a.ts.bak",
            "src/ts",
            "src/a.test.ts",
            "package.json",
        ]
        .map(String::from),
    );
    names
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

/// Every file under `dir` (the cache's excepted), for comparing a project before and after a run.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                if entry.file_name() != ".retrylint_cache" {
                    stack.push(path);
                }
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    out
}

/// The fix harness's invariants, for `--fix` and for `--fix --unsafe-fixes`, each on a fresh
/// copy of the project (`copy` makes one), checked with `args` (e.g. `--no-config`):
/// - a project with findings whose fixes apply is changed by the first run, and the fixed
///   files parse (no note says otherwise);
/// - the fixes clear their findings: afterwards no finding of a rule in a file is left for
///   each one that had a fix, and no finding left offers a fix the run would apply;
/// - a second run changes nothing and fixes nothing.
///
/// `label` names the project in failures. Returns how many fixes the first runs applied.
pub fn assert_fixes_converge(label: &str, copy: &dyn Fn() -> tempfile::TempDir, args: &[&str]) -> usize {
    use std::collections::BTreeMap;
    let mut fixed = 0;
    for unsafe_fixes in [false, true] {
        let applies = |d: &serde_json::Value| match d["fix"]["applicability"].as_str() {
            Some("safe") => true,
            Some("unsafe") => unsafe_fixes,
            _ => false,
        };
        let mode = if unsafe_fixes { "--fix --unsafe-fixes" } else { "--fix" };
        let dir = copy();
        let mut check_args = vec!["."];
        check_args.extend_from_slice(args);
        let (_, before) = check_json(dir.path(), &check_args);
        let diagnostics = before["diagnostics"].as_array().unwrap();
        let fixable: Vec<&serde_json::Value> = diagnostics.iter().filter(|d| applies(d)).collect();
        if fixable.is_empty() {
            continue;
        }
        let key = |d: &serde_json::Value| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["rule"].as_str().unwrap().to_string(),
            )
        };
        let mut allowed: BTreeMap<(String, String), i64> = BTreeMap::new();
        for d in diagnostics {
            *allowed.entry(key(d)).or_default() += 1;
        }
        for d in &fixable {
            *allowed.entry(key(d)).or_default() -= 1;
        }
        let mut fix_args = check_args.clone();
        fix_args.push("--fix");
        if unsafe_fixes {
            fix_args.push("--unsafe-fixes");
        }
        let original = snapshot(dir.path());
        let first = check(dir.path(), &fix_args);
        let stderr = String::from_utf8_lossy(&first.stderr).to_string();
        assert_ne!(first.status.code(), Some(2), "{label} {mode}: {stderr}");
        assert!(
            !stderr.contains("not fixed"),
            "{label} {mode}: a fix offered was not written:\n{stderr}"
        );
        let after_first = snapshot(dir.path());
        assert_ne!(
            after_first,
            original,
            "{label} {mode}: {} fix(es) offered, none applied:\n{fixable:#?}\n{stderr}",
            fixable.len()
        );
        fixed += fixable.len();
        let (_, after) = check_json(dir.path(), &check_args);
        let left: Vec<&serde_json::Value> = after["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| applies(d))
            .collect();
        assert!(
            left.is_empty(),
            "{label} {mode}: findings still offer a fix after the run:\n{left:#?}\n{stderr}"
        );
        let mut counts: BTreeMap<(String, String), i64> = BTreeMap::new();
        for d in after["diagnostics"].as_array().unwrap() {
            *counts.entry(key(d)).or_default() += 1;
        }
        // Where a fix applied, what is left of its rule is at most what had no fix.
        for d in &fixable {
            let place = key(d);
            let count = counts.get(&place).copied().unwrap_or(0);
            let most = allowed[&place];
            assert!(
                count <= most,
                "{label} {mode}: {count} finding(s) of {} in {} after fixing, at most {most} expected (a fix did not clear its finding):\n{:#}",
                place.1,
                place.0,
                after["diagnostics"]
            );
        }
        let second = check(dir.path(), &fix_args);
        let again = String::from_utf8_lossy(&second.stderr).to_string();
        let after_second = snapshot(dir.path());
        for (path, text) in &after_second {
            assert_eq!(
                Some(text),
                after_first.get(path),
                "{label} {mode}: a second run changed {}:\nfirst:\n{}\nsecond:\n{}",
                path.display(),
                String::from_utf8_lossy(after_first.get(path).map_or(&[][..], |t| t)),
                String::from_utf8_lossy(text)
            );
        }
        assert!(
            !again.lines().any(|l| l.starts_with("fixed ")),
            "{label} {mode}: a second run fixed more: {again}"
        );
    }
    fixed
}
