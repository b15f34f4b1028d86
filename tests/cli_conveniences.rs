//! What users of ruff and oxlint expect from a linter's command line, on the real binary:
//! `--quiet`, `--exit-zero`, `--output-file`, `--statistics`, `--stdin-filename`,
//! `--show-settings`, the "fixable" line, colour in the short format, the `gitlab` and `junit`
//! formats, and `retrylint init` (its file read back by `check`).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{check, check_json, findings, project};

const RETRY_MODULE: &str = r#"import { Schedule } from "effect"

export const contention = Schedule.max([
  Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]),
  Schedule.recurs(3),
]).pipe(Schedule.jittered)

export const isContention = (error: unknown): boolean => error instanceof Error
"#;

const BARREL: &str = "export * as Retry from \"./retry.js\"\n";

/// An inline copy of `contention` (a safe fix), an unjittered inline policy (an unsafe fix)
/// and a policy without predicate.
const FEATURE: &str = r#"import { Effect, Schedule } from "effect"
import { Retry } from "../infra/index.js"

export const a = Effect.succeed(1).pipe(
  Effect.retry({
    schedule: Schedule.max([Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]), Schedule.recurs(3)]).pipe(Schedule.jittered),
    while: Retry.isContention,
  }),
)
export const b = Effect.succeed(2).pipe(Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 2 }))
"#;

/// Names the retry module's policy: clean, but only if `Retry.contention` resolves.
const CLEAN_FEATURE: &str = r#"import { Effect } from "effect"
import { Retry } from "../infra/index.js"

export const c = Effect.succeed(3).pipe(Effect.retry({ schedule: Retry.contention, while: Retry.isContention }))
"#;

fn app() -> tempfile::TempDir {
    project(&[
        ("src/infra/retry.ts", RETRY_MODULE),
        ("src/infra/index.ts", BARREL),
        ("src/features/a.ts", FEATURE),
        ("src/features/c.ts", CLEAN_FEATURE),
    ])
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn masked(text: &str) -> String {
    regex_lite::Regex::new(r#"\(\d+ ms\)|time="[0-9.]+""#)
        .unwrap()
        .replace_all(text, "<elapsed>")
        .into_owned()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    common::bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn run_with_stdin(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = common::bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // A usage error exits before reading its input: the pipe may be closed by then.
    match child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    child.wait_with_output().unwrap()
}

#[test]
fn the_fixable_line_counts_safe_and_unsafe_fixes() {
    let dir = app();
    let (_, report) = check_json(dir.path(), &["."]);
    let fixes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["fix"]["applicability"].as_str())
        .collect();
    let safe = fixes.iter().filter(|a| **a == "safe").count();
    let unsafe_ = fixes.len() - safe;
    assert!(safe > 0 && unsafe_ > 0, "{fixes:?}");
    let expected = format!("{safe} fixable with --fix ({unsafe_} more with --unsafe-fixes)");
    for format in ["human", "short"] {
        let output = check(dir.path(), &[".", "--format", format]);
        let stdout = text(&output.stdout);
        let last = stdout.lines().last().unwrap();
        assert_eq!(last, expected, "{format}:\n{stdout}");
    }
    // Only unsafe fixes left: they need both flags.
    let output = check(dir.path(), &[".", "--format", "short", "--ignore", "inline-schedule"]);
    let stdout = text(&output.stdout);
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .ends_with(" fixable with --fix --unsafe-fixes"),
        "{stdout}"
    );
    // No fix at all: no line.
    let output = check(dir.path(), &["src/features/c.ts", "--format", "short"]);
    assert!(!text(&output.stdout).contains("fixable"));
}

#[test]
fn quiet_prints_findings_only() {
    let dir = app();
    std::fs::write(dir.path().join("retrylint.toml"), "max-file-size = 2000\n").unwrap();
    std::fs::write(dir.path().join("src/big.ts"), format!("// {}\n", "x".repeat(3000))).unwrap();
    let loud = check(dir.path(), &[".", "--format", "short"]);
    assert!(
        text(&loud.stderr).contains("note: "),
        "a note to drop: {}",
        text(&loud.stderr)
    );
    let quiet = check(dir.path(), &[".", "--format", "short", "--quiet"]);
    assert_eq!(quiet.status.code(), Some(1), "--quiet keeps the exit code");
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
    let lines: Vec<String> = text(&quiet.stdout).lines().map(String::from).collect();
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| l.starts_with("src/features/a.ts:")), "{lines:#?}");
    let loud_findings: Vec<String> = text(&loud.stdout)
        .lines()
        .filter(|l| l.starts_with("src/"))
        .map(String::from)
        .collect();
    assert_eq!(lines, loud_findings);
    let human = check(dir.path(), &[".", "-q"]);
    let stdout = text(&human.stdout);
    assert!(stdout.contains("error[inline-schedule]"), "{stdout}");
    assert!(!stdout.contains("found ") && !stdout.contains("fixable"), "{stdout}");
}

#[test]
fn exit_zero_keeps_findings_but_not_usage_errors() {
    let dir = app();
    let output = check(dir.path(), &[".", "--exit-zero", "--format", "short"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stdout).contains("error[inline-schedule]"));
    let output = check(dir.path(), &[".", "--exit-zero", "--deny-warnings"]);
    assert_eq!(output.status.code(), Some(0));
    let output = check(dir.path(), &[".", "--exit-zero", "--select", "no-such-rule"]);
    assert_eq!(output.status.code(), Some(2));
    let output = check(dir.path(), &[".", "--exit-zero", "--diff"]);
    assert_eq!(output.status.code(), Some(0), "a diff to show is not a failure either");
}

#[test]
fn output_file_receives_the_report() {
    let dir = app();
    let output = check(
        dir.path(),
        &[".", "--format", "json", "--output-file", "reports/retrylint.json"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    let written = std::fs::read(dir.path().join("reports/retrylint.json")).unwrap();
    let (_, on_stdout) = check_json(dir.path(), &["."]);
    let report: serde_json::Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(findings(&report), findings(&on_stdout));

    // Never coloured, even when asked.
    let output = check(
        dir.path(),
        &[".", "--format", "short", "--color", "always", "-o", "short.txt"],
    );
    assert!(output.stdout.is_empty());
    let short = std::fs::read_to_string(dir.path().join("short.txt")).unwrap();
    assert!(!short.contains('\x1b'), "{short}");
    assert!(short.contains("error[inline-schedule]"));

    let output = check(dir.path(), &[".", "-o", "src/features/a.ts/report.txt"]);
    assert_eq!(output.status.code(), Some(2), "an unwritable path is an I/O error");
}

#[test]
fn short_format_is_coloured_on_request() {
    let dir = app();
    let coloured = text(&check(dir.path(), &[".", "--format", "short", "--color", "always"]).stdout);
    assert!(
        coloured.contains("\x1b[1m\x1b[31merror[inline-schedule]\x1b[0m"),
        "{coloured:?}"
    );
    assert!(coloured.contains("\x1b[1msrc/features/a.ts:"), "{coloured:?}");
    let plain = text(&check(dir.path(), &[".", "--format", "short", "--color", "never"]).stdout);
    assert!(!plain.contains('\x1b'));
    let strip = regex_lite::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    assert_eq!(masked(&strip.replace_all(&coloured, "")), masked(&plain));
    // Not a terminal, no flag: plain.
    let auto = text(&check(dir.path(), &[".", "--format", "short"]).stdout);
    assert!(!auto.contains('\x1b'));
}

/// `FORCE_COLOR` and `CLICOLOR_FORCE` colour output that is not a terminal (a CI log) as
/// `--color always` does; `NO_COLOR`, `--color never`, `0`/`false`/empty and `--output-file`
/// keep it plain.
#[test]
fn force_color_and_clicolor_force_colour_a_pipe() {
    let dir = app();
    let run_env = |envs: &[(&str, &str)], args: &[&str]| {
        let mut command = common::bin();
        command
            .env_remove("NO_COLOR")
            .env_remove("FORCE_COLOR")
            .env_remove("CLICOLOR_FORCE");
        let output = command
            .current_dir(dir.path())
            .args(["check", ".", "--format", "short"].iter().chain(args))
            .envs(envs.iter().copied())
            .output()
            .unwrap();
        text(&output.stdout)
    };
    let always = run_env(&[], &["--color", "always"]);
    assert!(always.contains('\x1b'));
    for forced in [
        [("FORCE_COLOR", "1")],
        [("FORCE_COLOR", "true")],
        [("CLICOLOR_FORCE", "1")],
    ] {
        assert_eq!(masked(&run_env(&forced, &[])), masked(&always), "{forced:?}");
    }
    let plain = run_env(&[], &[]);
    assert!(!plain.contains('\x1b'), "{plain:?}");
    for (envs, args) in [
        (vec![("FORCE_COLOR", "0")], vec![]),
        (vec![("FORCE_COLOR", "false")], vec![]),
        (vec![("FORCE_COLOR", "")], vec![]),
        (vec![("CLICOLOR_FORCE", "0")], vec![]),
        (vec![("FORCE_COLOR", "1"), ("NO_COLOR", "1")], vec![]),
        (vec![("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], vec![]),
        (vec![("FORCE_COLOR", "1")], vec!["--color", "never"]),
    ] {
        assert_eq!(masked(&run_env(&envs, &args)), masked(&plain), "{envs:?} {args:?}");
    }
    run_env(&[("FORCE_COLOR", "1")], &["-o", "forced.txt"]);
    let written = std::fs::read_to_string(dir.path().join("forced.txt")).unwrap();
    assert!(
        written.contains("error[inline-schedule]") && !written.contains('\x1b'),
        "{written:?}"
    );
}

/// `--statistics` with a format it does not print names that format as the user gave it (or
/// as GitHub Actions chose it), not as the program spells it.
#[test]
fn statistics_with_another_format_names_it() {
    let dir = app();
    // The message as one line: miette wraps it at the terminal width.
    let text = |bytes: &[u8]| -> String {
        let text = String::from_utf8_lossy(bytes);
        text.split_whitespace()
            .filter(|w| *w != "│")
            .collect::<Vec<_>>()
            .join(" ")
    };
    for format in ["github", "sarif", "gitlab", "junit"] {
        let output = run(dir.path(), &["check", ".", "--statistics", "--format", format]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(&format!("in the human, short or json format, not `--format {format}`")),
            "{stderr}"
        );
        assert!(
            stderr.contains("pass --format human, short or json with --statistics"),
            "{stderr}"
        );
    }
    let output = common::bin()
        .current_dir(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .args(["check", ".", "--statistics"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("not `github`, the default format under GitHub Actions (GITHUB_ACTIONS=true)"),
        "{stderr}"
    );
}

#[test]
fn statistics_count_findings_per_rule() {
    let fixture = common::fixture("effect-app");
    let output = check(&fixture, &[".", "--statistics"]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(masked(&text(&output.stdout)));

    let output = check(&fixture, &[".", "--statistics", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let (_, report) = check_json(&fixture, &["."]);
    let all = findings(&report);
    let rows = rows.as_array().unwrap();
    let total: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(total as usize, all.len());
    for row in rows {
        let rule = row["rule"].as_str().unwrap();
        let count = all.iter().filter(|f| f.2 == rule).count();
        assert_eq!(row["count"].as_u64().unwrap() as usize, count, "{rule}");
    }
    let output = check(&fixture, &[".", "--statistics", "--format", "sarif"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--statistics"));
}

#[test]
fn stdin_filename_checks_stdin_as_that_file_in_its_project() {
    let dir = app();
    // Stdin names the retry module's policy through the barrel: clean only if the project
    // around the file is there to resolve it.
    let output = run_with_stdin(
        dir.path(),
        &["check", "--stdin-filename", "src/features/a.ts", "--format", "json"],
        CLEAN_FEATURE,
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(findings(&report), Vec::<(String, u64, String)>::new());
    assert_eq!(report["summary"]["files"], 1);

    // The text on disk of c.ts is clean; stdin's is not. Only c.ts is reported.
    let output = run_with_stdin(
        dir.path(),
        &["check", "--stdin-filename", "src/features/c.ts", "--color", "never"],
        FEATURE,
    );
    assert_eq!(output.status.code(), Some(1));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("┌─ src/features/c.ts:6:15"), "{stdout}");
    assert!(
        stdout.contains("Schedule.max([Schedule.min("),
        "the snippet is stdin's text: {stdout}"
    );
    assert!(!stdout.contains("src/features/a.ts"), "{stdout}");
    assert!(stdout.contains("in 1 file "), "{stdout}");

    // From another directory, with an absolute path: the file's config and project apply.
    std::fs::write(
        dir.path().join("retrylint.toml"),
        "[rules]\nretry-without-predicate = \"off\"\n",
    )
    .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let absolute = dir.path().join("src/features/c.ts");
    let output = run_with_stdin(
        elsewhere.path(),
        &["check", "--stdin-filename", absolute.to_str().unwrap(), "--format", "json"],
        "import { Effect, Schedule } from \"effect\"\nimport { Retry } from \"../infra/index.js\"\nexport const d = Effect.succeed(1).pipe(Effect.retry(Retry.contention), Effect.retry(Schedule.recurs(1)))\n",
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rules: Vec<String> = findings(&report).into_iter().map(|f| f.2).collect();
    assert!(rules.contains(&"inline-schedule".to_string()), "{rules:?}");
    assert!(!rules.contains(&"retry-without-predicate".to_string()), "{rules:?}");

    // `--fix` prints the fixed source (see `stdin_fix_prints_the_fixed_source`); a report
    // format with it is an error.
    let output = run_with_stdin(
        dir.path(),
        &[
            "check",
            "--stdin-filename",
            "src/features/c.ts",
            "--fix",
            "--format",
            "json",
        ],
        "",
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "--fix prints the source, not a JSON report"
    );
    assert!(text(&output.stderr).contains("prints the fixed source, not a report"));
}

/// 26.9: `check - --stdin-filename NAME` for a buffer not saved yet: the language comes from the
/// name, the config is that of its directory, the project around it resolves its imports, and
/// the name never leads out of the project.
#[test]
fn dash_checks_stdin_as_a_file_that_does_not_exist_yet() {
    let dir = app();
    std::fs::write(dir.path().join("retrylint.toml"), "").unwrap();
    std::fs::write(
        dir.path().join("src/features/retrylint.toml"),
        "extend = \"../../retrylint.toml\"\n[rules]\nretry-without-predicate = \"off\"\n",
    )
    .unwrap();
    let source = "import { Effect, Schedule } from \"effect\"\nimport { Retry } from \"../../infra/index.js\"\nexport const d = Effect.succeed(1).pipe(Effect.retry(Retry.contention), Effect.retry(Schedule.recurs(1)))\n";
    let output = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "src/features/new/d.ts",
            "--format",
            "json",
        ],
        source,
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let found = findings(&report);
    assert!(
        found.iter().all(|f| f.0 == "src/features/new/d.ts"),
        "only the new file is reported: {found:?}"
    );
    let rules: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
    // `Retry.contention` resolved through the barrel (no finding for it); the package config
    // of src/features turns retry-without-predicate off.
    assert_eq!(rules, ["inline-schedule"], "{report:#}");
    assert!(!dir.path().join("src/features/new").exists(), "nothing is written");

    // The language comes from the name: the same text as Rust holds no Effect retry.
    let output = run_with_stdin(
        dir.path(),
        &["check", "-", "--stdin-filename", "src/new.rs", "--format", "json"],
        source,
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(findings(&report), Vec::<(String, u64, String)>::new(), "{report:#}");

    // A name that leads out of the project, or `..` through a missing directory: exit 2.
    let inner = dir.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    std::fs::write(inner.join("retrylint.toml"), "").unwrap();
    for name in ["../outside.ts", "nope/../../outside.ts", "/nonexistent-dir/x.ts"] {
        let output = run_with_stdin(&inner, &["check", "-", "--stdin-filename", name], source);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", text(&output.stdout));
        assert!(
            text(&output.stderr).contains(&format!("cannot check {name} from stdin")),
            "{name}: {}",
            text(&output.stderr)
        );
    }
    // A kind of file retrylint does not read, and `-` without a name: exit 2, said.
    let output = run_with_stdin(dir.path(), &["check", "-", "--stdin-filename", "src/notes.txt"], source);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("not a kind of file retrylint reads"));
    let output = run_with_stdin(dir.path(), &["check", "-"], source);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("needs --stdin-filename"),
        "{}",
        text(&output.stderr)
    );

    // Control characters in the name are escaped in every output.
    let name = "src/features/new/\u{1b}[31mred\u{7}.ts";
    let output = run_with_stdin(
        dir.path(),
        &["check", "-", "--stdin-filename", name, "--color", "never"],
        source,
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(
        stdout.contains("src/features/new/\\u{1b}[31mred\\u{7}.ts:3:"),
        "{stdout}"
    );
    assert!(
        !stdout.contains('\x1b') && !stderr.contains('\x1b') && !stdout.contains('\x07'),
        "{stdout}{stderr}"
    );
}

/// 26.9: `--fix` with stdin prints the fixed source, as ruff and biome do, and writes nothing;
/// the exit code says whether findings that fail the run remain.
#[test]
fn stdin_fix_prints_the_fixed_source() {
    let dir = app();
    // The project root (else a lone file's directory is its project, without the retry module).
    std::fs::write(dir.path().join("retrylint.toml"), "").unwrap();
    let before = common::snapshot(dir.path());
    let output = run_with_stdin(
        dir.path(),
        &["check", "-", "--stdin-filename", "src/features/a.ts", "--fix"],
        FEATURE,
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "the findings of `b` remain: {}",
        text(&output.stderr)
    );
    let fixed = text(&output.stdout);
    // The inline copy of `contention` is replaced by the name (the safe fix); nothing but the
    // source is printed.
    assert!(fixed.contains("schedule: Retry.contention,"), "{fixed}");
    assert!(!fixed.contains("Schedule.max(["), "{fixed}");
    assert!(
        fixed.starts_with("import { Effect, Schedule } from \"effect\"\n"),
        "{fixed}"
    );
    assert!(!fixed.contains("error[") && !fixed.contains("findings"), "{fixed}");
    assert_eq!(common::snapshot(dir.path()), before, "no file is written");

    // The fixed text, checked again as it is, has only what the fix left.
    let again = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "src/features/a.ts",
            "--format",
            "json",
        ],
        &fixed,
    );
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let b_line = fixed.lines().position(|l| l.starts_with("export const b")).unwrap() as u64 + 1;
    let left = findings(&report);
    assert!(
        !left.is_empty() && left.iter().all(|f| f.1 == b_line),
        "only `b` is left: {left:?}"
    );

    // Nothing to fix: stdin's text comes back as it was; a new file is fixed too; clean: exit 0.
    let output = run_with_stdin(
        dir.path(),
        &["check", "-", "--stdin-filename", "src/features/new.ts", "--fix"],
        CLEAN_FEATURE,
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), CLEAN_FEATURE);
    assert!(!dir.path().join("src/features/new.ts").exists());
}

#[test]
fn show_settings_prints_the_settings_in_force_for_a_file() {
    let dir = project(&[
        (
            "retrylint.toml",
            "retry-modules = [\"src/platform/policies.ts\"]\nexclude = [\"**/generated/**\"]\nbudget = \"3 seconds\"\n[rules]\ninline-schedule = \"warn\"\n",
        ),
        ("src/platform/policies.ts", RETRY_MODULE),
        ("src/repositories/Orders.ts", CLEAN_FEATURE),
        ("src/generated/a.ts", FEATURE),
    ]);
    let show = |file: &str| {
        let output = run(dir.path(), &["check", "--show-settings", file]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let module = show("src/platform/policies.ts");
    let canonical = std::fs::canonicalize(dir.path()).unwrap();
    for line in [
        format!("# config: {}", canonical.join("retrylint.toml").display()),
        "# retry module: yes".to_string(),
        "# repository by path: no".to_string(),
        "retry-modules = [\"src/platform/policies.ts\"]".to_string(),
        "exclude = [\"**/generated/**\"]".to_string(),
        "budget = \"3000 millis\"".to_string(),
        "inline-schedule = \"warn\"".to_string(),
        "retry-in-repository = \"error\"".to_string(),
    ] {
        assert!(module.contains(&line), "`{line}` in\n{module}");
    }
    assert!(show("src/repositories/Orders.ts").contains("# repository by path: yes"));
    assert!(show("src/generated/a.ts").contains("# checked: no: matched by `exclude`"));

    // The settings are a config: read back, they decide the same.
    std::fs::write(dir.path().join("shown.toml"), &module).unwrap();
    let (_, original) = check_json(dir.path(), &["."]);
    let (_, shown) = check_json(dir.path(), &[".", "--config", "shown.toml"]);
    assert_eq!(findings(&original), findings(&shown));

    let output = run(dir.path(), &["check", "--show-settings", "src/missing.ts"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn gitlab_format_is_a_code_quality_report() {
    let fixture = common::fixture("effect-app");
    let output = check(&fixture, &["src/features/billing", "--format", "gitlab"]);
    assert_eq!(output.status.code(), Some(1));
    let issues: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let issues = issues.as_array().unwrap();
    let (_, report) = check_json(&fixture, &["src/features/billing"]);
    let expected = findings(&report);
    assert_eq!(issues.len(), expected.len());
    for (issue, (path, line, rule)) in issues.iter().zip(&expected) {
        assert_eq!(issue["type"], "issue");
        assert_eq!(issue["check_name"], rule.as_str());
        assert_eq!(issue["location"]["path"], path.as_str());
        assert_eq!(issue["location"]["lines"]["begin"].as_u64().unwrap(), *line);
        assert!(issue["location"]["lines"]["end"].as_u64().unwrap() >= *line);
        assert!(["major", "minor"].contains(&issue["severity"].as_str().unwrap()));
        assert!(!issue["description"].as_str().unwrap().is_empty());
    }
    // The fingerprints are SARIF's (and the baseline's).
    let sarif = check(&fixture, &["src/features/billing", "--format", "sarif"]);
    let sarif: serde_json::Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let from_sarif: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["partialFingerprints"]["retrylint/v1"].as_str().unwrap())
        .collect();
    let from_gitlab: Vec<&str> = issues.iter().map(|i| i["fingerprint"].as_str().unwrap()).collect();
    assert_eq!(from_gitlab, from_sarif);
    let mut unique = from_gitlab.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), from_gitlab.len(), "fingerprints are unique");

    // On a runner, paths are relative to CI_PROJECT_DIR.
    let output = common::bin()
        .current_dir(fixture.join("src/features"))
        .args(["check", "billing", "--format", "gitlab"])
        .env("CI_PROJECT_DIR", &fixture)
        .output()
        .unwrap();
    let issues: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(issues[0]["location"]["path"], "src/features/billing/ChargeCustomer.ts");

    let clean = project(&[("src/a.ts", CLEAN_FEATURE)]);
    let output = check(clean.path(), &[".", "--format", "gitlab"]);
    assert_eq!(text(&output.stdout).trim(), "[]");
}

/// Parses JUnit XML with Python's xml.etree and returns (suites, cases, failures), or fails.
fn junit_counts(xml: &str) -> (usize, usize, usize) {
    let script = r#"
import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.buffer.read())
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
cases = root.findall("testsuite/testcase")
failures = root.findall("testsuite/testcase/failure")
assert int(root.get("failures")) == len(failures)
for suite in suites:
    assert int(suite.get("tests")) == len(suite.findall("testcase"))
    assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
print(len(suites), len(cases), len(failures))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(xml.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "not well-formed JUnit:\n{}\n{xml}",
        text(&output.stderr)
    );
    let numbers: Vec<usize> = text(&output.stdout)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

#[test]
fn junit_format_is_well_formed_xml() {
    let fixture = common::fixture("effect-app");
    let output = check(&fixture, &[".", "--format", "junit"]);
    assert_eq!(output.status.code(), Some(1));
    let xml = text(&output.stdout);
    let (_, report) = check_json(&fixture, &["."]);
    let all = findings(&report);
    let mut files: Vec<&str> = all.iter().map(|f| f.0.as_str()).collect();
    files.dedup();
    assert_eq!(junit_counts(&xml), (files.len(), all.len(), all.len()));

    // Markup in paths and messages is escaped.
    let dir = project(&[("src/a&<b>\"'.ts", FEATURE), ("src/infra/retry.ts", RETRY_MODULE)]);
    let output = check(dir.path(), &[".", "--format", "junit"]);
    let xml = text(&output.stdout);
    let (suites, cases, failures) = junit_counts(&xml);
    assert_eq!((suites, cases), (1, failures));
    assert!(xml.contains(r#"name="src/a&amp;&lt;b&gt;&quot;&apos;.ts""#), "{xml}");
    insta::assert_snapshot!(masked(&xml));

    // A clean run is one passing test case.
    let clean = project(&[("src/a.ts", "export const a = 1\n")]);
    let output = check(clean.path(), &[".", "--format", "junit"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(junit_counts(&text(&output.stdout)), (1, 1, 0));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn init_writes_what_it_infers_and_check_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("effect-app");
    copy_dir(&common::fixture("effect-app"), &app);
    // The fixture's own (empty) retrylint.toml only marks its project root.
    std::fs::remove_file(app.join("retrylint.toml")).unwrap();
    let output = run(&app, &["init"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("wrote ./retrylint.toml: 1 retry module (src/infra/retry.ts)"));
    let written = std::fs::read_to_string(app.join("retrylint.toml")).unwrap();
    assert!(
        written.contains("\nretry-modules = [\"src/infra/retry.ts\"]\n"),
        "{written}"
    );
    assert!(written.contains("\nlease-tables = [\"jobs_leases\"]\n"), "{written}");
    assert!(
        written.contains("#   jobs_leases: migrations/0004_jobs_leases.sql:2\n"),
        "{written}"
    );
    assert!(
        written.contains("#   subscribe: src/infra/outbox-relay.ts:"),
        "{written}"
    );
    assert!(written.contains("\n# inline-schedule = \"error\"\n"), "{written}");

    // `check` reads it, and it decides what the defaults decided.
    let (code, with_config) = check_json(&app, &["."]);
    let (default_code, defaults) = check_json(&app, &[".", "--no-config"]);
    assert_eq!(code, default_code);
    assert_eq!(findings(&with_config), findings(&defaults));
    let output = check(&app, &["--show-settings", "src/infra/retry.ts"]);
    assert!(text(&output.stdout).contains("# retry module: yes"));

    // It never replaces a config silently.
    std::fs::write(app.join("retrylint.toml"), "# mine\n").unwrap();
    let output = run(&app, &["init"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("already exists"),
        "{}",
        text(&output.stderr)
    );
    assert!(text(&output.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(app.join("retrylint.toml")).unwrap(), "# mine\n");
    let output = run(&app, &["init", "--force"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(std::fs::read_to_string(app.join("retrylint.toml"))
        .unwrap()
        .contains("retry-modules"));
}

#[test]
fn init_finds_a_retry_module_and_lease_table_the_defaults_miss() {
    let dir = project(&[
        ("src/platform/retries.ts", RETRY_MODULE),
        (
            "src/features/a.ts",
            "import { Effect } from \"effect\"\nimport { contention, isContention } from \"../platform/retries.js\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: contention, while: isContention }))\n",
        ),
        (
            "db/schema.sql",
            "CREATE TABLE job_locks (name TEXT PRIMARY KEY, last_slot BIGINT, lease_until BIGINT);\n",
        ),
        (
            "src/handlers/orders.ts",
            "import { Effect } from \"effect\"\nexport const h = bus.onMessage(\"x\", () => Effect.succeed(1))\n",
        ),
    ]);
    // Without a config, the policies in src/platform/retries.ts are "outside the retry module".
    let (_, before) = check_json(dir.path(), &[".", "--select", "inline-schedule"]);
    assert!(!findings(&before).is_empty());
    let output = run(dir.path(), &["init", "."]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = std::fs::read_to_string(dir.path().join("retrylint.toml")).unwrap();
    assert!(
        written.contains("\nretry-modules = [\"src/platform/retries.ts\"]\n"),
        "{written}"
    );
    assert!(written.contains("\nlease-tables = [\"job_locks\"]\n"), "{written}");
    let (code, after) = check_json(dir.path(), &[".", "--select", "inline-schedule"]);
    assert_eq!(findings(&after), Vec::<(String, u64, String)>::new(), "{written}");
    assert_eq!(code, 0);
}

#[test]
fn project_reports_the_given_files_with_the_project_around_them() {
    let dir = project(&[
        ("src/infra/retry.ts", RETRY_MODULE),
        (
            "src/policies.ts",
            "import { Schedule } from \"effect\"\nexport const slow = Schedule.spaced(\"1 second\")\n",
        ),
        (
            "src/features/a.ts",
            "import { Effect } from \"effect\"\nimport { slow } from \"../policies.js\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: slow, while: (e) => e === 1 }))\n",
        ),
        ("src/features/b.ts", FEATURE),
    ]);
    // The findings that touch `path`: located there, or pointing there (a policy built in
    // src/policies.ts is reported where it is built, with a.ts's use as a label).
    let rules_of = |report: &serde_json::Value, path: &str| -> Vec<String> {
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["path"] == path || d["related"].as_array().unwrap().iter().any(|r| r["path"] == path))
            .map(|d| d["rule"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, whole) = check_json(dir.path(), &["."]);
    let expected = rules_of(&whole, "src/features/a.ts");
    assert!(expected.contains(&"inline-schedule".to_string()), "{expected:?}");

    // The file alone does not know where `slow` comes from.
    let (_, alone) = check_json(dir.path(), &["src/features/a.ts"]);
    assert_ne!(rules_of(&alone, "src/features/a.ts"), expected);

    // With --project, it does; only a.ts is reported, given relative or absolute (lint-staged).
    let absolute = dir.path().join("src/features/a.ts");
    for path in ["src/features/a.ts", absolute.to_str().unwrap()] {
        let (code, report) = check_json(dir.path(), &["--project", ".", path]);
        assert_eq!(code, 1);
        assert_eq!(rules_of(&report, "src/features/a.ts"), expected, "{path}");
        assert_eq!(findings(&report).len(), expected.len(), "only a.ts: {report}");
        assert_eq!(report["summary"]["files"], 1);
    }
    // A directory reports what is inside it, and the policy its files use.
    let (_, report) = check_json(dir.path(), &["--project", ".", "src/features"]);
    let paths: std::collections::BTreeSet<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(
        paths.into_iter().collect::<Vec<_>>(),
        ["src/features/b.ts", "src/policies.ts"]
    );
    let output = check(dir.path(), &["--project", "nope", "src/features/a.ts"]);
    assert_eq!(output.status.code(), Some(2));
}

/// An inline policy: an `inline-schedule` finding at error severity in production code.
const INLINE: &str = "import { Effect, Schedule } from \"effect\"\n\
                      export const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(3), while: (e) => e === 1 }))\n";

const RUST_INLINE: &str = "use backon::{ExponentialBuilder, Retryable};\n\
                           pub async fn run() { let _ = (|| async { Ok::<(), ()>(()) }).retry(ExponentialBuilder::default().with_max_times(3).with_jitter()).when(|_| true).await; }\n";

#[test]
fn code_that_is_not_production_is_checked_at_low_severity_by_default() {
    let not_production = [
        "src/checkout.integration.ts",
        "integration/harness.ts",
        "vendor/lib/client.ts",
        "repos/other/src/a.ts",
        "examples/demo.ts",
        "scripts/backfill.ts",
        "packages/copied/src/a.ts",
        // Command-line entry points a person runs once.
        "packages/tool/bin/seed.ts",
        "packages/cli/src/commands/import.ts",
        "src/cli.ts",
    ];
    let rust = [
        "crate/examples/demo.rs",
        "crate/benches/load.rs",
        "crate/src/bin/once.rs",
    ];
    let mut files: Vec<(&str, &str)> = vec![
        ("retrylint.toml", "# the defaults\n"),
        ("src/features/a.ts", INLINE),
        ("crate/src/lib.rs", RUST_INLINE),
        // Look-alikes of command-line entry points that are production code.
        ("src/client.ts", INLINE),
        ("src/binary/encode.ts", INLINE),
    ];
    files.extend(not_production.iter().map(|path| (*path, INLINE)));
    files.extend(rust.iter().map(|path| (*path, RUST_INLINE)));
    files.push((
        "crate/Cargo.toml",
        "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nbackon = \"1\"\n",
    ));
    let dir = project(&files);
    // A vendored copy of a package that has its own `.git`.
    std::fs::create_dir_all(dir.path().join("packages/copied/.git")).unwrap();
    let severities = |args: &[&str]| {
        let (_, report) = check_json(dir.path(), args);
        let mut out: Vec<(String, String)> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["rule"] == "inline-schedule")
            .map(|d| {
                (
                    d["path"].as_str().unwrap().to_string(),
                    d["severity"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        out.sort();
        out.dedup();
        out
    };
    let found = severities(&["."]);
    let severity_of = |found: &[(String, String)], path: &str| {
        found
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("a finding in {path}: {found:?}"))
    };
    assert_eq!(severity_of(&found, "src/features/a.ts"), "error", "{found:?}");
    assert_eq!(severity_of(&found, "crate/src/lib.rs"), "error", "{found:?}");
    for path in ["src/client.ts", "src/binary/encode.ts"] {
        assert_eq!(severity_of(&found, path), "error", "{path}: {found:?}");
    }
    for path in not_production.iter().chain(&rust) {
        assert_eq!(severity_of(&found, path), "warning", "{path}: {found:?}");
    }

    // Listed by --show-settings, with what a file is.
    let output = run(dir.path(), &["check", "--show-settings", "scripts/backfill.ts"]);
    let shown = text(&output.stdout);
    assert!(
        shown.contains("# production code: no: matched by `not-production`"),
        "{shown}"
    );
    for glob in [
        "**/*.integration.*",
        "**/vendor/**",
        "**/.repos/**",
        "**/benches/**",
        "**/src/bin/**",
        "**/bin/**/*.{ts,mts,cts,js,mjs,cjs}",
        "**/cli.{ts,mts,cts,js,mjs,cjs}",
    ] {
        assert!(shown.contains(&format!("\"{glob}\"")), "{glob} in {shown}");
    }
    assert!(shown.contains("nested-checkouts = \"low\""), "{shown}");
    let output = run(dir.path(), &["check", "--show-settings", "packages/copied/src/a.ts"]);
    assert!(text(&output.stdout).contains("# production code: no: inside the nested checkout"));
    let output = run(dir.path(), &["check", "--show-settings", "src/features/a.ts"]);
    assert!(text(&output.stdout).contains("# production code: yes"));

    // Turned off, every one is held to the production policy.
    std::fs::write(
        dir.path().join("retrylint.toml"),
        "not-production = []\nnested-checkouts = \"check\"\n",
    )
    .unwrap();
    let found = severities(&["."]);
    for path in not_production.iter().chain(&rust) {
        assert_eq!(severity_of(&found, path), "error", "{path}: {found:?}");
    }
    std::fs::write(dir.path().join("retrylint.toml"), "nested-checkouts = \"sometimes\"\n").unwrap();
    let output = check(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("nested-checkouts"));
}
