//! GitHub: `--format github` (workflow commands and the job summary), its selection by
//! `GITHUB_ACTIONS=true`, and the composite action in `action.yml`, whose check step is run here
//! with bash as a runner would run it — on a pull request checked out shallowly, as
//! actions/checkout does — with the freshly built binary on PATH instead of `cargo install`;
//! its download step, against a fake release served on loopback (python3 -m http.server),
//! checksum verification included; and the fallback to building from source.

mod common;
#[path = "support/git.rs"]
mod git;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{check_json, findings};
use git::{Repo, BASE, RETRY};

// ---------------------------------------------------------------------------------------------
// action.yml, read the way the runner reads the parts the test needs.

struct Step {
    id: Option<String>,
    uses: Option<String>,
    condition: Option<String>,
    env: Vec<(String, String)>,
    run: Option<String>,
}

fn action_yml() -> String {
    std::fs::read_to_string(common::repo_root().join("action.yml")).expect("action.yml at the repository root")
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    if v.len() >= 2 && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\''))) {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

/// `inputs.<name>.default` of every input.
fn input_defaults(action: &str) -> HashMap<String, String> {
    let mut defaults = HashMap::new();
    let mut in_inputs = false;
    let mut current = None;
    for line in action.lines() {
        if indent(line) == 0 && !line.trim().is_empty() {
            in_inputs = line.trim_end() == "inputs:";
            continue;
        }
        if !in_inputs {
            continue;
        }
        if indent(line) == 2 && line.trim_end().ends_with(':') {
            current = Some(line.trim().trim_end_matches(':').to_string());
        } else if let (4, Some(name)) = (indent(line), &current) {
            if let Some(value) = line.trim().strip_prefix("default:") {
                defaults.insert(name.clone(), unquote(value));
            }
        }
    }
    defaults
}

/// The steps of `runs.steps`: their id, `uses`, `env` and `run` block.
fn steps(action: &str) -> Vec<Step> {
    let lines: Vec<&str> = action.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_end() == "  steps:")
        .expect("runs.steps");
    let mut steps: Vec<Step> = Vec::new();
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i];
        if !line.trim().is_empty() && indent(line) < 4 {
            break;
        }
        let trimmed = line.trim();
        if indent(line) == 4 && trimmed.starts_with("- ") {
            steps.push(Step {
                id: None,
                uses: None,
                condition: None,
                env: Vec::new(),
                run: None,
            });
        }
        let key_line = if indent(line) == 4 {
            trimmed.strip_prefix("- ").unwrap_or(trimmed)
        } else if indent(line) == 6 {
            trimmed
        } else {
            i += 1;
            continue;
        };
        let step = steps.last_mut().expect("a step");
        if let Some(id) = key_line.strip_prefix("id:") {
            step.id = Some(unquote(id));
        } else if let Some(uses) = key_line.strip_prefix("uses:") {
            step.uses = Some(unquote(uses));
        } else if let Some(condition) = key_line.strip_prefix("if:") {
            step.condition = Some(unquote(condition));
        } else if key_line == "env:" {
            while i + 1 < lines.len() && indent(lines[i + 1]) == 8 && !lines[i + 1].trim().is_empty() {
                i += 1;
                let (key, value) = lines[i].trim().split_once(':').expect("KEY: value");
                step.env.push((key.to_string(), unquote(value)));
            }
        } else if key_line == "run: |" {
            let mut script = String::new();
            while i + 1 < lines.len() && (lines[i + 1].trim().is_empty() || indent(lines[i + 1]) >= 8) {
                i += 1;
                script.push_str(lines[i].get(8..).unwrap_or(""));
                script.push('\n');
            }
            step.run = Some(script);
        }
        i += 1;
    }
    steps
}

/// Replaces every `${{ expr }}` with `values[expr]`; an expression the test does not know fails.
fn substitute(text: &str, values: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${{") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find("}}").expect("closed expression") + at;
        let expr = rest[at + 3..end].trim();
        let value = values
            .get(expr)
            .unwrap_or_else(|| panic!("the test does not know the expression `{expr}`"));
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------------------------
// A pull request, checked out the way actions/checkout does it.

/// The pull request changes line 4 and adds line 6; line 3 keeps its (old) finding.
const HEAD: &str = r#"import { Effect, Schedule } from "effect"
import { transient } from "../infra/retry.js"
export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
export const b = Effect.succeed(2).pipe(Effect.retry(Schedule.recurs(5)))
export const c = Effect.succeed(3).pipe(Effect.retry(transient))
export const d = Effect.succeed(4).pipe(Effect.retry(Schedule.spaced("1 second")))
"#;

struct PullRequest {
    /// The repository the runner clones from.
    _origin: Repo,
    /// The workspace: a depth-1 clone of the pull request's head.
    workspace: tempfile::TempDir,
    base: String,
    head: String,
}

fn pull_request(head_text: &str) -> PullRequest {
    let origin = Repo::new();
    origin.write("src/infra/retry.ts", RETRY);
    origin.write("src/features/a.ts", BASE);
    origin.write("src/features/old.ts", BASE);
    let base = origin.commit("base");
    origin.git(&["checkout", "--quiet", "-b", "feature"]);
    origin.write("src/features/a.ts", head_text);
    let head = origin.commit("pull request");
    let workspace = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    let status = Command::new("git")
        .args(["clone", "--quiet", "--depth=1", "--branch=feature", &url])
        .arg(workspace.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success());
    PullRequest {
        _origin: origin,
        workspace,
        base,
        head,
    }
}

struct Run {
    output: Output,
    summary: String,
    outputs: String,
    workspace: PathBuf,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn annotations(&self) -> Vec<String> {
        self.stdout()
            .lines()
            .filter(|l| l.starts_with("::"))
            .map(String::from)
            .collect()
    }

    /// `(file, line)` of every `::error`/`::warning` annotation.
    fn annotated(&self) -> Vec<(String, u64)> {
        self.annotations()
            .iter()
            .filter(|a| a.starts_with("::error file=") || a.starts_with("::warning file="))
            .map(|a| {
                let properties = a.split_once(' ').unwrap().1.split("::").next().unwrap();
                let get = |key: &str| {
                    properties
                        .split(',')
                        .find_map(|p| p.strip_prefix(&format!("{key}=")))
                        .unwrap()
                        .to_string()
                };
                (get("file"), get("line").parse().unwrap())
            })
            .collect()
    }

    fn code(&self) -> i32 {
        self.output.status.code().expect("exited")
    }
}

/// Runs the action's check step as the runner would: `bash --noprofile --norc -eo pipefail`,
/// in the workspace, with the step's env (expressions substituted) and the runner's variables.
fn run_check_step(pr: &PullRequest, event: &str, inputs: &[(&str, &str)]) -> Run {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_retrylint"))
        .parent()
        .unwrap()
        .to_path_buf();
    run_check_step_with(pr, event, inputs, &bin_dir)
}

/// [`run_check_step`] with `bin_dir` (where the install steps put retrylint) on PATH.
fn run_check_step_with(pr: &PullRequest, event: &str, inputs: &[(&str, &str)], bin_dir: &Path) -> Run {
    let action = action_yml();
    let check = steps(&action)
        .into_iter()
        .find(|s| s.id.as_deref() == Some("check"))
        .expect("a step with id: check");
    let mut values: HashMap<String, String> = input_defaults(&action)
        .into_iter()
        .map(|(name, default)| (format!("inputs.{name}"), default))
        .collect();
    for (name, value) in inputs {
        let key = format!("inputs.{name}");
        assert!(values.contains_key(&key), "action.yml has no input `{name}`");
        values.insert(key, value.to_string());
    }
    let is_pr = event.starts_with("pull_request");
    values.insert(
        "github.event.pull_request.base.sha".into(),
        if is_pr { pr.base.clone() } else { String::new() },
    );

    let runner = tempfile::tempdir().unwrap();
    let summary = runner.path().join("step_summary.md");
    let outputs = runner.path().join("github_output");
    let script = runner.path().join("check.sh");
    std::fs::write(&script, check.run.as_deref().expect("the check step runs a script")).unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());

    let mut command = Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(pr.workspace.path())
        .env_clear()
        .env("PATH", path)
        .env("HOME", runner.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("CI", "true")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", event)
        .env("GITHUB_WORKSPACE", pr.workspace.path())
        .env("GITHUB_ACTION_PATH", common::repo_root())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "acme/shop")
        .env("GITHUB_SHA", &pr.head)
        .env("RUNNER_TEMP", runner.path());
    if is_pr {
        command.env("GITHUB_BASE_REF", "main").env("GITHUB_HEAD_REF", "feature");
    }
    for (key, value) in &check.env {
        command.env(key, substitute(value, &values));
    }
    let output = command.output().expect("bash runs");
    Run {
        output,
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        outputs: std::fs::read_to_string(&outputs).unwrap_or_default(),
        workspace: pr.workspace.path().to_path_buf(),
    }
}

fn column_of(text: &str, line: usize, needle: &str) -> (usize, usize) {
    let l = text.lines().nth(line - 1).unwrap();
    let at = l.find(needle).unwrap();
    (at + 1, at + needle.len() + 1)
}

#[test]
fn pull_request_annotates_exactly_the_changed_lines() {
    let pr = pull_request(HEAD);
    let run = run_check_step(&pr, "pull_request", &[("args", "--select 'inline-schedule'")]);
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert_eq!(run.code(), 1, "errors fail the step\n{}\n{stderr}", run.stdout());

    let (c4, e4) = column_of(HEAD, 4, "Schedule.recurs(5)");
    let (c6, e6) = column_of(HEAD, 6, "Schedule.spaced(\"1 second\")");
    let prefixes = [
        format!("::error file=src/features/a.ts,line=4,endLine=4,col={c4},endColumn={e4},title=retrylint (inline-schedule)::"),
        format!("::error file=src/features/a.ts,line=6,endLine=6,col={c6},endColumn={e6},title=retrylint (inline-schedule)::"),
    ];
    let annotations = run.annotations();
    assert_eq!(annotations.len(), 2, "{annotations:#?}\n{stderr}");
    for (annotation, prefix) in annotations.iter().zip(&prefixes) {
        assert!(
            annotation.starts_with(prefix.as_str()),
            "{annotation}\nexpected {prefix}"
        );
        let message = &annotation[prefix.len()..];
        assert!(message.contains("%0Ahelp: "), "the help follows the message: {message}");
        assert!(!message.contains('\n'));
    }

    // The base commit was not in the depth-1 clone: the step fetched it.
    let fetched = Command::new("git")
        .current_dir(&run.workspace)
        .args(["cat-file", "-e", &format!("{}^{{commit}}", pr.base)])
        .status()
        .unwrap();
    assert!(fetched.success());

    // The job summary lists the same findings, linked to the commit's lines.
    assert!(run.summary.starts_with("## retrylint\n"), "{}", run.summary);
    assert!(run.summary.contains("Found 2 errors and 0 warnings"), "{}", run.summary);
    assert!(run
        .summary
        .contains(&format!("on lines changed since `{}`", &pr.base[..12])));
    for line in [4, 6] {
        let link = format!(
            "(https://github.com/acme/shop/blob/{}/src/features/a.ts#L{line})",
            pr.head
        );
        assert!(run.summary.contains(&link), "{link} in\n{}", run.summary);
    }
    assert!(!run.summary.contains("a.ts#L3)"), "line 3 did not change");
    assert!(run.outputs.is_empty(), "no SARIF asked for: {}", run.outputs);
}

#[test]
fn pull_request_with_every_rule_matches_the_full_report_on_changed_lines() {
    let pr = pull_request(HEAD);
    let run = run_check_step(&pr, "pull_request", &[]);
    let (_, full) = check_json(pr.workspace.path(), &["."]);
    let expected: Vec<(String, u64)> = findings(&full)
        .into_iter()
        .filter(|f| f.0 == "src/features/a.ts" && (f.1 == 4 || f.1 == 6))
        .map(|f| (f.0, f.1))
        .collect();
    assert!(
        findings(&full).iter().any(|f| f.1 == 3),
        "line 3 has a finding the PR did not add"
    );
    assert!(!expected.is_empty());
    assert_eq!(run.annotated(), expected, "{}", run.stdout());
}

#[test]
fn sarif_file_holds_every_finding() {
    let pr = pull_request(HEAD);
    let run = run_check_step(
        &pr,
        "pull_request",
        &[
            ("sarif-file", "reports/retrylint.sarif"),
            ("args", "--select inline-schedule"),
        ],
    );
    assert_eq!(run.code(), 1);
    assert_eq!(run.annotated().len(), 2, "annotations stay on changed lines");
    assert_eq!(run.outputs, "sarif-file=reports/retrylint.sarif\n");
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.workspace.join("reports/retrylint.sarif")).unwrap()).unwrap();
    let lines: Vec<(String, u64)> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let l = &r["locations"][0]["physicalLocation"];
            (
                l["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                l["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    let a = |n| ("src/features/a.ts".to_string(), n);
    let old = |n| ("src/features/old.ts".to_string(), n);
    assert_eq!(lines, [a(3), a(4), a(6), old(3), old(4)]);
}

#[test]
fn push_events_report_every_finding() {
    let pr = pull_request(HEAD);
    let run = run_check_step(&pr, "push", &[("args", "--select inline-schedule")]);
    assert_eq!(run.code(), 1);
    assert_eq!(run.annotated().len(), 5, "{}", run.stdout());
    assert!(!run.summary.contains("changed since"));

    // changed-only: true without a pull request says why it reports everything.
    let run = run_check_step(
        &pr,
        "push",
        &[("args", "--select inline-schedule"), ("changed-only", "true")],
    );
    assert!(run.annotations()[0].starts_with("::warning title=retrylint::changed-only needs"));
    assert_eq!(run.annotated().len(), 5);

    // changed-only: false on a pull request: everything too.
    let run = run_check_step(
        &pr,
        "pull_request",
        &[("args", "--select inline-schedule"), ("changed-only", "false")],
    );
    assert_eq!(run.annotated().len(), 5);
}

#[test]
fn a_clean_pull_request_passes() {
    let clean = BASE.replace("export const c", "// a comment the pull request adds\nexport const c");
    let pr = pull_request(&clean);
    let run = run_check_step(&pr, "pull_request", &[]);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert!(run.annotations().is_empty(), "{:?}", run.annotations());
    assert!(run.summary.contains("No findings in 3 files"), "{}", run.summary);
}

#[test]
fn bad_inputs_fail_the_step() {
    let pr = pull_request(HEAD);
    let run = run_check_step(&pr, "pull_request", &[("changed-only", "yes")]);
    assert_eq!(run.code(), 2);
    assert!(run
        .stdout()
        .contains("::error title=retrylint::changed-only is true, false or auto"));
    let run = run_check_step(&pr, "pull_request", &[("args", "--select no-such-rule")]);
    assert_eq!(run.code(), 2, "a usage error fails the step");
    let run = run_check_step(&pr, "pull_request", &[("path", "src/features 'does not exist'")]);
    assert_eq!(run.code(), 2);
    assert!(String::from_utf8_lossy(&run.output.stderr).contains("does not exist"));
}

#[test]
fn without_a_release_binary_the_action_builds_retrylint() {
    let action = action_yml();
    let all = steps(&action);
    let cache = all
        .iter()
        .find(|s| s.uses.as_deref().is_some_and(|u| u.starts_with("actions/cache@")))
        .expect("an actions/cache step");
    assert_eq!(cache.id.as_deref(), Some("cache"));
    let key = all
        .iter()
        .find(|s| s.id.as_deref() == Some("key"))
        .expect("the cache key step");
    assert!(key.run.as_deref().unwrap().contains("sha256sum Cargo.lock"));
    let install = all
        .iter()
        .find(|s| s.run.as_deref().is_some_and(|r| r.contains("cargo install")))
        .expect("an install step");
    let script = install.run.as_deref().unwrap();
    assert!(script.contains("cargo install --locked"), "{script}");
    assert!(script.contains("--path \"$GITHUB_ACTION_PATH\""), "{script}");
    assert!(script.contains(">> \"$GITHUB_PATH\""), "{script}");
    // The cache and the build run only when the download did not install retrylint.
    for step in [cache, key, install] {
        assert_eq!(
            step.condition.as_deref(),
            Some("steps.download.outputs.installed != 'true'"),
            "{:?}",
            step.id
        );
    }
    let download = all.iter().position(|s| s.id.as_deref() == Some("download")).unwrap();
    let check = all.iter().position(|s| s.id.as_deref() == Some("check")).unwrap();
    let build = all
        .iter()
        .position(|s| s.id.as_deref() == install.id.as_deref())
        .unwrap();
    assert!(download < build && build < check);
    assert_eq!(
        input_defaults(&action),
        HashMap::from([
            ("path".to_string(), ".".to_string()),
            ("args".to_string(), String::new()),
            ("changed-only".to_string(), "auto".to_string()),
            ("sarif-file".to_string(), String::new()),
            ("version".to_string(), String::new()),
            ("releases-url".to_string(), String::new()),
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// The download step, against a fake release on a loopback HTTP server.

/// `python3 -m http.server` on 127.0.0.1, on a port the kernel picks, serving `dir`.
struct Server {
    child: std::process::Child,
    url: String,
}

impl Server {
    fn serve(dir: &Path) -> Server {
        use std::io::BufRead;
        let mut child = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory"])
            .arg(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port 40231 (http://127.0.0.1:40231/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .unwrap_or_else(|| panic!("no port in {line:?}"))
            .to_string();
        Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const LINUX_X64: &str = "x86_64-unknown-linux-musl";

/// A release directory as the release workflow publishes it: `v<version>/` (and `latest/download/`)
/// holding `retrylint-<target>.tar.gz` for two targets and `sha256sums.txt`. The "binary" is a
/// script running the binary under test.
fn fake_release(root: &Path, version: &str) -> PathBuf {
    let release = root.join(format!("v{version}"));
    for target in [LINUX_X64, "aarch64-unknown-linux-musl"] {
        let name = format!("retrylint-{target}");
        let dir = root.join("build").join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let binary = dir.join("retrylint");
        std::fs::write(
            &binary,
            format!("#!/bin/sh\nexec '{}' \"$@\"\n", env!("CARGO_BIN_EXE_retrylint")),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(&release).unwrap();
        let status = Command::new("tar")
            .arg("-czf")
            .arg(release.join(format!("{name}.tar.gz")))
            .arg("-C")
            .arg(root.join("build"))
            .arg(&name)
            .status()
            .unwrap();
        assert!(status.success());
    }
    let sums = Command::new("sh")
        .args(["-c", "sha256sum ./*.tar.gz | sed 's# \\./# #' > sha256sums.txt"])
        .current_dir(&release)
        .status()
        .unwrap();
    assert!(sums.success());
    let latest = root.join("latest/download");
    std::fs::create_dir_all(&latest).unwrap();
    for entry in std::fs::read_dir(&release).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), latest.join(entry.file_name())).unwrap();
    }
    release
}

struct StepRun {
    output: Output,
    /// `$GITHUB_OUTPUT` as key → value.
    outputs: HashMap<String, String>,
    /// The lines appended to `$GITHUB_PATH`.
    path: Vec<PathBuf>,
    _runner: tempfile::TempDir,
}

impl StepRun {
    fn code(&self) -> i32 {
        self.output.status.code().expect("exited")
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

/// Runs the download step with bash as the runner would, for a runner of `os`/`arch`.
fn run_download_step(inputs: &[(&str, &str)], action_ref: &str, os: &str, arch: &str) -> StepRun {
    let action = action_yml();
    let download = steps(&action)
        .into_iter()
        .find(|s| s.id.as_deref() == Some("download"))
        .expect("a step with id: download");
    let mut values: HashMap<String, String> = input_defaults(&action)
        .into_iter()
        .map(|(name, default)| (format!("inputs.{name}"), default))
        .collect();
    for (name, value) in inputs {
        let key = format!("inputs.{name}");
        assert!(values.contains_key(&key), "action.yml has no input `{name}`");
        values.insert(key, value.to_string());
    }
    values.insert("github.action_ref".into(), action_ref.into());
    let runner = tempfile::tempdir().unwrap();
    let script = runner.path().join("download.sh");
    std::fs::write(&script, download.run.as_deref().unwrap()).unwrap();
    let outputs = runner.path().join("github_output");
    let github_path = runner.path().join("github_path");
    let temp = runner.path().join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let mut command = Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(runner.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", runner.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_ACTION_PATH", common::repo_root())
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_PATH", &github_path)
        .env("RUNNER_OS", os)
        .env("RUNNER_ARCH", arch)
        .env("RUNNER_TEMP", &temp);
    for (key, value) in &download.env {
        command.env(key, substitute(value, &values));
    }
    let output = command.output().expect("bash runs");
    let outputs = std::fs::read_to_string(&outputs)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let path = std::fs::read_to_string(&github_path)
        .unwrap_or_default()
        .lines()
        .map(PathBuf::from)
        .collect();
    StepRun {
        output,
        outputs,
        path,
        _runner: runner,
    }
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn the_action_downloads_its_own_release_and_verifies_it() {
    let releases = tempfile::tempdir().unwrap();
    fake_release(releases.path(), VERSION);
    let server = Server::serve(releases.path());
    let url = server.url.clone();

    // `uses: retrylint/retrylint@v<version>`: no version input, the action's tag decides.
    let run = run_download_step(&[("releases-url", &url)], &format!("v{VERSION}"), "Linux", "X64");
    assert_eq!(
        run.code(),
        0,
        "{}\n{}",
        run.stdout(),
        String::from_utf8_lossy(&run.output.stderr)
    );
    assert_eq!(
        run.outputs.get("installed").map(String::as_str),
        Some("true"),
        "{:?}",
        run.outputs
    );
    assert_eq!(run.outputs.get("version").map(String::as_str), Some(VERSION));
    assert_eq!(run.path.len(), 1, "{:?}", run.path);
    assert!(run.path[0].join("retrylint").is_file());
    assert!(run
        .stdout()
        .contains(&format!("retrylint {VERSION} (retrylint-{LINUX_X64}.tar.gz, sha256 ")));

    // The binary it installed is the one the check step then runs.
    let pr = pull_request(HEAD);
    let check = run_check_step_with(
        &pr,
        "pull_request",
        &[("args", "--select inline-schedule")],
        &run.path[0],
    );
    assert_eq!(check.code(), 1);
    assert_eq!(check.annotated().len(), 2, "{}", check.stdout());

    // The version input, with or without its `v`, and `latest`; an arm64 runner gets its asset.
    for version in [VERSION.to_string(), format!("v{VERSION}"), "latest".to_string()] {
        // `<releases-url>/v<version>/<asset>`; `latest` is GitHub's `…/latest/download/<asset>`.
        let releases_url = if version == "latest" {
            format!("{url}/download")
        } else {
            url.clone()
        };
        let run = run_download_step(
            &[("releases-url", &releases_url), ("version", &version)],
            "main",
            "Linux",
            "ARM64",
        );
        assert_eq!(run.code(), 0, "{version}: {}", run.stdout());
        assert_eq!(
            run.outputs.get("installed").map(String::as_str),
            Some("true"),
            "{version}"
        );
        assert!(run
            .stdout()
            .contains("(retrylint-aarch64-unknown-linux-musl.tar.gz, sha256 "));
    }
}

#[test]
fn a_checksum_mismatch_fails_the_download() {
    let releases = tempfile::tempdir().unwrap();
    let release = fake_release(releases.path(), VERSION);
    let server = Server::serve(releases.path());
    let sums = release.join("sha256sums.txt");
    let original = std::fs::read_to_string(&sums).unwrap();
    let download = || {
        run_download_step(
            &[("releases-url", &server.url), ("version", VERSION)],
            "main",
            "Linux",
            "X64",
        )
    };

    // A tampered archive: its checksum no longer matches.
    let tampered: String = original
        .lines()
        .map(|l| {
            if l.ends_with(&format!("retrylint-{LINUX_X64}.tar.gz")) {
                format!("{}{}", "0".repeat(64), &l[64..])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&sums, format!("{tampered}\n")).unwrap();
    let run = download();
    assert_eq!(run.code(), 1, "{}", run.stdout());
    assert!(
        run.stdout().contains(&format!(
            "::error title=retrylint::checksum mismatch for {}/v{VERSION}/retrylint-{LINUX_X64}.tar.gz: expected {}",
            server.url,
            "0".repeat(64)
        )),
        "{}",
        run.stdout()
    );
    assert!(run.path.is_empty(), "nothing is installed: {:?}", run.path);
    assert_eq!(run.outputs.get("installed"), None);

    // No checksum listed for the asset, or no checksum file: unverifiable, so a failure too.
    let other: String = original
        .lines()
        .filter(|l| !l.contains(LINUX_X64))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&sums, other).unwrap();
    let run = download();
    assert_eq!(run.code(), 1);
    assert!(run
        .stdout()
        .contains("lists no checksum for retrylint-x86_64-unknown-linux-musl.tar.gz"));
    std::fs::remove_file(&sums).unwrap();
    let run = download();
    assert_eq!(run.code(), 1);
    assert!(run.stdout().contains("cannot download"), "{}", run.stdout());
    assert!(run.path.is_empty());
}

#[test]
fn without_a_matching_release_the_download_step_asks_for_a_build() {
    let releases = tempfile::tempdir().unwrap();
    fake_release(releases.path(), VERSION);
    let server = Server::serve(releases.path());
    let outputs = |run: &StepRun| {
        (
            run.outputs.get("installed").cloned().unwrap_or_default(),
            run.outputs.get("from").cloned().unwrap_or_default(),
            run.outputs.get("crate-version").cloned().unwrap_or_default(),
        )
    };
    let owned = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());

    // A version with no release: the published crate of that version is built.
    let run = run_download_step(
        &[("releases-url", &server.url), ("version", "9.9.9")],
        "main",
        "Linux",
        "X64",
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_eq!(outputs(&run), owned("false", "crate", "9.9.9"));
    assert!(run.stdout().contains("::warning title=retrylint::no release binary at"));

    // The action at a branch or a commit: its own source is built, nothing is downloaded.
    let run = run_download_step(&[("releases-url", &server.url)], "main", "Linux", "X64");
    assert_eq!(outputs(&run), owned("false", "path", ""));
    assert!(run.stdout().contains("not a release tag"));

    // The action's own version on a runner with no release binary: its source is built.
    let run = run_download_step(
        &[("releases-url", &server.url)],
        &format!("v{VERSION}"),
        "Linux",
        "RISCV64",
    );
    assert_eq!(outputs(&run), owned("false", "path", VERSION));
    assert!(run.path.is_empty());
}

#[test]
#[ignore = "needs shellcheck (apt-get install shellcheck); .ci/run runs it"]
fn the_action_scripts_pass_shellcheck() {
    common::require("shellcheck", "shellcheck (Debian: apt-get install shellcheck)");
    let action = action_yml();
    for step in steps(&action) {
        let Some(script) = step.run else { continue };
        assert!(
            !script.contains("${{"),
            "inputs reach scripts through env, never inline: {script}"
        );
        let output = Command::new("shellcheck")
            .args(["--shell=bash", "--severity=style", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(script.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        assert!(
            output.status.success(),
            "shellcheck on step {:?}:\n{}",
            step.id,
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The binary on its own.

fn github_run(dir: &Path, args: &[&str], envs: &[(&str, &Path)]) -> (Output, String) {
    let runner = tempfile::tempdir().unwrap();
    let summary = runner.path().join("summary.md");
    let mut command = common::bin();
    command
        .current_dir(dir)
        .arg("check")
        .args(args)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "acme/shop")
        .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
        .env_remove("GITHUB_WORKSPACE");
    for (key, value) in envs {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    (output, std::fs::read_to_string(&summary).unwrap_or_default())
}

fn masked(text: &str) -> String {
    regex_lite::Regex::new(r"\(\d+ ms\)")
        .unwrap()
        .replace_all(text, "<elapsed>")
        .into_owned()
}

#[test]
fn github_format_snapshot() {
    // GITHUB_ACTIONS=true and no --format: annotations, and the summary is written.
    let (output, summary) = github_run(&common::fixture("effect-app"), &["src/features/billing"], &[]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(masked(&String::from_utf8_lossy(&output.stdout)));
    insta::assert_snapshot!("github_step_summary", summary);
}

#[test]
fn an_explicit_format_wins_and_writes_no_summary() {
    let (output, summary) = github_run(
        &common::fixture("effect-app"),
        &["src/features/billing", "--format", "json"],
        &[],
    );
    assert!(serde_json::from_slice::<serde_json::Value>(&output.stdout).is_ok());
    assert!(summary.is_empty(), "the summary goes with the github format");
    let (output, summary) = github_run(
        &common::fixture("effect-app"),
        &["src/features/billing", "--format", "github"],
        &[],
    );
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("::error file="));
    assert!(summary.starts_with("## retrylint"));
}

#[test]
fn multi_line_findings_drop_columns_and_paths_are_escaped() {
    let dir = common::project(&[(
        "src/retry, again.ts",
        "import { Effect, Schedule } from \"effect\"\n\
         export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.exponential(\n  \"100 millis\",\n)))\n",
    )]);
    let (output, summary) = github_run(dir.path(), &[".", "--select", "inline-schedule"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with("::error file=src/retry%2C again.ts,line=2,endLine=4,title=retrylint (inline-schedule)::"),
        "{first}"
    );
    assert!(
        summary.contains(
            "(https://github.com/acme/shop/blob/0123456789abcdef0123456789abcdef01234567/src/retry,%20again.ts#L2-L4)"
        ),
        "{summary}"
    );
}

#[test]
fn annotation_paths_are_relative_to_the_workspace() {
    let dir = common::project(&[(
        "services/api/src/a.ts",
        "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))\n",
    )]);
    let api = dir.path().join("services/api");
    let (output, _) = github_run(
        &api,
        &[".", "--select", "inline-schedule"],
        &[("GITHUB_WORKSPACE", dir.path())],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with("::error file=services/api/src/a.ts,line=2,"),
        "{stdout}"
    );
}
