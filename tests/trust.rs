//! Issue 15, "the same answer however it is run": the project root and its context (15.2),
//! package configs with `extend` (15.3), baselines that do not depend on the working
//! directory and never reach the terminal raw (15.5), and globs whose `*` stays in one
//! directory (15.6). The real binary, on projects written to temporary directories.

mod common;
#[path = "support/git.rs"]
mod git;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{bin, check, check_json, project};

const INLINE: &str = r#"import { Effect, Schedule } from "effect"
export const run = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(3), while: (e) => e === "busy" }))
"#;

/// A policy outside the retry module: its finding is reported where it is built, with each
/// use as a related location.
const LOCAL: &str = r#"import { Schedule } from "effect"
export const local = Schedule.spaced("1 second")
"#;

const USES_LOCAL: &str = r#"import { Effect, Schedule } from "effect"
import { local } from "./local.js"
export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
export const d = Effect.succeed(4).pipe(Effect.retry({ schedule: local, while: (e) => e === "busy" }))
"#;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).to_string()
}

/// Every finding of a JSON report as (absolute path, line, rule, related absolute paths),
/// whatever directory the run started in.
fn located(cwd: &Path, report: &serde_json::Value) -> BTreeSet<(PathBuf, u64, String, Vec<PathBuf>)> {
    let absolute = |p: &serde_json::Value| std::fs::canonicalize(cwd.join(p.as_str().unwrap())).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let related = d["related"]
                .as_array()
                .map(|r| r.iter().map(|l| absolute(&l["path"])).collect())
                .unwrap_or_default();
            (
                absolute(&d["path"]),
                d["line"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_string(),
                related,
            )
        })
        .collect()
}

/// What `check .` at the root reports for `file`: its findings and those that name it.
fn for_file(
    all: &BTreeSet<(PathBuf, u64, String, Vec<PathBuf>)>,
    file: &Path,
) -> BTreeSet<(PathBuf, u64, String, Vec<PathBuf>)> {
    all.iter()
        .filter(|(path, _, _, related)| path == file || related.iter().any(|r| r == file))
        .cloned()
        .collect()
}

#[test]
fn a_file_checked_alone_reports_what_the_whole_project_reports_for_it_15_2() {
    // A git work tree without a retrylint.toml: the git root is the project root.
    let repo = git::Repo::new();
    repo.write("src/features/a.ts", USES_LOCAL);
    repo.write("src/features/local.ts", LOCAL);
    repo.write("src/other/b.ts", INLINE);
    let root = repo.path();
    let file = root.join("src/features/a.ts");
    let (_, whole) = check_json(&root, &["."]);
    let expected = for_file(&located(&root, &whole), &file);
    assert!(
        expected.iter().any(|(path, ..)| path.ends_with("local.ts")),
        "the policy a.ts uses is reported at its definition: {whole:#}"
    );
    assert!(expected.len() > 2, "{whole:#}");
    let elsewhere = tempfile::tempdir().unwrap();
    for (cwd, arg) in [
        (root.clone(), "src/features/a.ts".to_string()),
        (root.join("src/features"), "a.ts".to_string()),
        (root.join("src/other"), "../features/a.ts".to_string()),
        (elsewhere.path().to_path_buf(), file.to_string_lossy().into_owned()),
    ] {
        let (code, report) = check_json(&cwd, &[&arg]);
        assert_eq!(located(&cwd, &report), expected, "check {arg} from {}", cwd.display());
        assert_eq!(code, 1);
        assert_eq!(
            report["summary"]["files"], 1,
            "only the file is reported on: {report:#}"
        );
    }
    // A directory below the root: its files, with the rest of the project as context.
    let (_, report) = check_json(&root.join("src/features"), &["."]);
    let features: BTreeSet<_> = located(&root, &whole)
        .into_iter()
        .filter(|(path, ..)| path.starts_with(root.join("src/features")))
        .collect();
    assert_eq!(located(&root.join("src/features"), &report), features);
}

#[test]
fn the_nearest_retrylint_toml_marks_the_project_root_inside_a_git_work_tree_15_2() {
    // Two projects in one repository (as the fixtures are): each file is judged in its own.
    // `one` has a retry module the other must not see as its own.
    let repo = git::Repo::new();
    repo.write("one/retrylint.toml", "retry-modules = [\"src/policies.ts\"]\n");
    repo.write("two/retrylint.toml", "");
    for project in ["one", "two"] {
        repo.write(&format!("{project}/src/policies.ts"), LOCAL);
        repo.write(
            &format!("{project}/src/use.ts"),
            &USES_LOCAL.replace("./local.js", "./policies.js"),
        );
    }
    let root = repo.path();
    // From the git root, each file takes the config of its own project.
    let (_, report) = check_json(&root, &[".", "--select", "inline-schedule"]);
    let policies: Vec<String> = common::findings(&report)
        .into_iter()
        .map(|f| f.0)
        .filter(|p| p.ends_with("policies.ts"))
        .collect();
    assert_eq!(policies, ["two/src/policies.ts"], "{report:#}");
    // In `one`, policies.ts is the retry module: a named policy there is not inline-schedule.
    let (_, report) = check_json(&root.join("one"), &[".", "--select", "inline-schedule"]);
    let paths: Vec<String> = common::findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, ["src/use.ts"], "use.ts:3 builds its own: {report:#}");
    let (_, report) = check_json(&root, &["one/src/policies.ts", "--select", "inline-schedule"]);
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 0, "{report:#}");
    // `two` has no such setting: the same file is a policy built outside a retry module.
    let (_, report) = check_json(&root, &["two/src/policies.ts", "--select", "inline-schedule"]);
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 1, "{report:#}");
    // Both files in one command (lint-staged names every staged file): each in its own
    // project's settings, whichever comes first.
    for args in [
        ["one/src/policies.ts", "two/src/policies.ts"],
        ["two/src/policies.ts", "one/src/policies.ts"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--select", "inline-schedule"]);
        let (_, report) = check_json(&root, &all);
        let policies: Vec<String> = common::findings(&report)
            .into_iter()
            .map(|f| f.0)
            .filter(|p| p.ends_with("policies.ts"))
            .collect();
        assert_eq!(policies, ["two/src/policies.ts"], "{args:?}: {report:#}");
    }
    // --show-settings names the root the rule found.
    let output = bin()
        .current_dir(root.join("one/src"))
        .args(["check", "--show-settings", "policies.ts"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        shown.contains(&format!("# root: {}\n", root.join("one").display())),
        "{shown}"
    );
}

#[test]
fn project_flag_takes_dir_as_the_root_15_2() {
    let dir = project(&[("src/features/a.ts", USES_LOCAL), ("src/features/local.ts", LOCAL)]);
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (_, whole) = check_json(&root, &["."]);
    let file = root.join("src/features/a.ts");
    let (_, report) = check_json(&root, &["--project", ".", "src/features/a.ts"]);
    assert_eq!(located(&root, &report), for_file(&located(&root, &whole), &file));
}

/// A monorepo: the root config, a package that extends it, a package that does not have one.
fn monorepo(package_config: &str) -> tempfile::TempDir {
    project(&[
        (
            "retrylint.toml",
            "exclude = [\"packages/a/src/generated/**\"]\n[rules]\nretry-without-predicate = \"off\"\n",
        ),
        ("packages/a/retrylint.toml", package_config),
        ("packages/a/src/x.ts", INLINE),
        (
            "packages/a/src/y.ts",
            "import { Effect } from \"effect\"\nexport const y = Effect.succeed(1).pipe(Effect.retry({ times: 1 }))\n",
        ),
        ("packages/a/src/generated/z.ts", INLINE),
        ("packages/b/src/x.ts", INLINE),
        (
            "packages/b/src/y.ts",
            "import { Effect } from \"effect\"\nexport const y = Effect.succeed(1).pipe(Effect.retry({ times: 1 }))\n",
        ),
    ])
}

fn rules_by_file(report: &serde_json::Value) -> BTreeSet<(String, String)> {
    common::findings(report)
        .into_iter()
        .map(|(path, _, rule)| (path, rule))
        .collect()
}

#[test]
fn each_file_takes_its_nearest_config_which_may_extend_the_root_one_15_3() {
    let dir = monorepo("extend = \"../../retrylint.toml\"\n[rules]\ninline-schedule = \"off\"\n");
    let (code, report) = check_json(dir.path(), &["."]);
    assert_eq!(code, 1, "{report:#}");
    let found = rules_by_file(&report);
    let pair = |p: &str, r: &str| (p.to_string(), r.to_string());
    // Package a: inline-schedule off (its own), retry-without-predicate off (inherited), and
    // the root's exclude (relative to the root's directory) still leaves out generated/.
    // Package b: the root's config alone.
    assert_eq!(
        found,
        BTreeSet::from([
            pair("packages/b/src/x.ts", "inline-schedule"),
            pair("packages/b/src/y.ts", "inline-schedule"),
        ]),
        "{report:#}"
    );
    // The package's file checked alone: the project root is the monorepo's (the package
    // config extends it), and the answer is the same.
    let (code, report) = check_json(&dir.path().join("packages/a"), &["src/x.ts"]);
    assert_eq!((code, common::findings(&report).len()), (0, 0), "{report:#}");
    let output = bin()
        .current_dir(dir.path().join("packages/a"))
        .args(["check", "--show-settings", "src/x.ts"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(shown.contains("# extends: "), "{shown}");
    assert!(shown.contains("inline-schedule = \"off\""), "{shown}");
    assert!(shown.contains("retry-without-predicate = \"off\""), "{shown}");
}

#[test]
fn a_package_config_without_extend_starts_from_the_defaults_15_3() {
    let dir = monorepo("[rules]\ninline-schedule = \"warn\"\n");
    let (_, report) = check_json(dir.path(), &["."]);
    let found = rules_by_file(&report);
    assert!(
        found.contains(&("packages/a/src/x.ts".into(), "retry-without-predicate".into()))
            || found.contains(&("packages/a/src/y.ts".into(), "retry-without-predicate".into())),
        "the root's `off` is not inherited without extend: {found:?}"
    );
    let severities: BTreeSet<(String, String)> = report["diagnostics"]
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
    assert!(
        severities.contains(&("packages/a/src/x.ts".into(), "warning".into())),
        "{severities:?}"
    );
    assert!(
        severities.contains(&("packages/b/src/x.ts".into(), "error".into())),
        "{severities:?}"
    );
}

#[test]
fn a_malformed_config_anywhere_in_scope_exits_2_with_its_location_15_3() {
    for (config, needle, at) in [
        (
            "extend = \"../../retrylint.toml\"\nbogus-key = 1\n",
            "bogus-key",
            "retrylint.toml:2:1]",
        ),
        (
            "extend = \"../../nope.toml\"\n",
            "cannot read the config `../../nope.toml` extends",
            "retrylint.toml:1:10]",
        ),
        (
            "extend = \"../../retrylint.toml\"\nbudget = \"soon\"\n",
            "invalid budget `soon`",
            "retrylint.toml:2:10]",
        ),
    ] {
        let dir = monorepo(config);
        for args in [&["."][..], &["packages/a/src/x.ts"], &["packages/b"]] {
            let output = check(dir.path(), args);
            let err = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{args:?} {config}: {err}");
            assert!(err.contains("packages/a/retrylint.toml"), "names the file: {err}");
            assert!(err.contains(needle), "{err}");
            assert!(err.contains(at), "points at the line: {err}");
        }
    }
    // An extend cycle ends with an error, not a hang.
    let dir = project(&[
        ("retrylint.toml", "extend = \"a/retrylint.toml\"\n"),
        ("a/retrylint.toml", "extend = \"../retrylint.toml\"\n"),
        ("a/x.ts", INLINE),
    ]);
    let output = check(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`extend` chain deeper than"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_baseline_written_from_one_directory_matches_from_another_15_5() {
    let dir = project(&[
        ("app/retrylint.toml", ""),
        ("app/src/a.ts", INLINE),
        ("app/src/deep/b.ts", INLINE),
    ]);
    // Written from above the project (CI checks `app`) ...
    let output = check(dir.path(), &["app", "--write-baseline", "app/baseline.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let written = std::fs::read_to_string(dir.path().join("app/baseline.json")).unwrap();
    assert!(
        written.contains("\"path\": \"src/a.ts\""),
        "root-relative paths: {written}"
    );
    // ... and read from inside it, and from a directory below it.
    for (cwd, args) in [
        ("app", &[".", "--baseline", "baseline.json"][..]),
        ("app/src/deep", &["../..", "--baseline", "../../baseline.json"]),
        (".", &["app/src/deep/b.ts", "--baseline", "app/baseline.json"]),
    ] {
        let output = check(&dir.path().join(cwd), args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "from {cwd}: {err}");
        assert!(!err.contains("no longer matches"), "no stale entry from {cwd}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn write_baseline_writes_only_regular_files_15_5() {
    let dir = project(&[("src/a.ts", INLINE), ("target.json", "keep me\n")]);
    std::os::unix::fs::symlink(dir.path().join("target.json"), dir.path().join("link.json")).unwrap();
    std::fs::create_dir(dir.path().join("a-dir")).unwrap();
    for (name, what) in [("link.json", "a symbolic link"), ("a-dir", "a directory")] {
        let output = check(dir.path(), &[".", "--write-baseline", name]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("cannot write baseline {name}: it is {what}")),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("target.json")).unwrap(),
        "keep me\n"
    );
    assert!(std::fs::symlink_metadata(dir.path().join("link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(dir.path().join("a-dir").is_dir());
    // A regular file is replaced, a new one created.
    for name in ["target.json", "new.json"] {
        let output = check(dir.path(), &[".", "--write-baseline", name]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(std::fs::read_to_string(dir.path().join(name))
            .unwrap()
            .contains("inline-schedule"));
    }
}

#[test]
fn baseline_text_reaches_the_terminal_escaped_15_5() {
    let dir = project(&[("src/a.ts", INLINE)]);
    let hostile = r#"{"version": 1, "findings": [{"rule": "inline-schedule\u001b]0;owned\u0007", "path": "src/a.ts\u001b[2J\r", "fingerprint": "0"}]}"#;
    std::fs::write(dir.path().join("baseline.json"), hostile).unwrap();
    let output = check(dir.path(), &[".", "--baseline", "baseline.json"]);
    let err = stderr(&output);
    assert!(err.contains("no longer matches"), "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{7}') && !err.contains('\r'),
        "{err:?}"
    );
    assert!(err.contains("src/a.ts\\u{1b}[2J\\u{d}"), "{err}");
    // serde quotes the bad value in its error: escaped too.
    std::fs::write(dir.path().join("baseline.json"), "{\"version\": \"\u{1b}[31mred\"}").unwrap();
    let output = check(dir.path(), &[".", "--baseline", "baseline.json"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a retrylint baseline"), "{err}");
    assert!(!err.contains("\u{1b}[31mred"), "{err:?}");
}

#[test]
fn a_star_in_a_glob_stays_within_one_directory_15_6() {
    let dir = project(&[
        ("retrylint.toml", "exclude = [\"src/*.ts\"]\n"),
        ("src/a.ts", INLINE),
        ("src/deep/b.ts", INLINE),
    ]);
    let (_, report) = check_json(dir.path(), &["."]);
    let paths: BTreeSet<String> = common::findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, BTreeSet::from(["src/deep/b.ts".to_string()]), "{report:#}");
    let output = bin()
        .current_dir(dir.path())
        .args(["check", "--show-settings", "src/deep/b.ts"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("# checked: yes"));
}

#[test]
fn a_package_config_decides_whether_its_generated_files_are_checked_15_3() {
    let generated = format!("// @generated by protoc, DO NOT EDIT\n{INLINE}");
    let dir = project(&[
        ("retrylint.toml", ""),
        (
            "packages/a/retrylint.toml",
            "extend = \"../../retrylint.toml\"\ngenerated = \"check\"\n",
        ),
        ("packages/a/src/client.ts", &generated),
        ("packages/b/src/client.ts", &generated),
    ]);
    for args in [&["."][..], &[".", "--no-prefilter"]] {
        let (_, report) = check_json(dir.path(), args);
        let paths: BTreeSet<String> = common::findings(&report).into_iter().map(|f| f.0).collect();
        assert_eq!(
            paths,
            BTreeSet::from(["packages/a/src/client.ts".to_string()]),
            "{report:#}"
        );
        let notes = report["notes"].to_string();
        assert!(
            notes.contains("skipped 1 generated file") && notes.contains("packages/b/src/client.ts"),
            "{notes}"
        );
    }
}

#[test]
fn an_editor_buffer_on_stdin_takes_its_package_config_15_3() {
    use std::io::Write;
    let dir = monorepo("extend = \"../../retrylint.toml\"\n[rules]\ninline-schedule = \"off\"\n");
    for (file, expected) in [("packages/a/src/x.ts", 0), ("packages/b/src/x.ts", 1)] {
        let mut child = bin()
            .current_dir(dir.path().join("packages"))
            .args([
                "check",
                "--format",
                "json",
                "--stdin-filename",
                &file["packages/".len()..],
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(INLINE.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.code().is_some_and(|c| c < 2), "{}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let inline = common::findings(&report)
            .into_iter()
            .filter(|f| f.2 == "inline-schedule")
            .count();
        assert_eq!(inline, expected, "{file}: {report:#}");
    }
}

#[test]
fn a_suppression_of_a_rule_its_package_turns_off_is_not_unused_15_3() {
    let suppressed = "import { Effect } from \"effect\"\n// retrylint-ignore retry-without-predicate -- the fake fails on purpose\nexport const y = Effect.succeed(1).pipe(Effect.retry({ times: 1 }))\n";
    let dir = project(&[
        ("retrylint.toml", "[rules]\ninline-schedule = \"off\"\n"),
        (
            "packages/a/retrylint.toml",
            "extend = \"../../retrylint.toml\"\n[rules]\nretry-without-predicate = \"off\"\n",
        ),
        ("packages/a/src/y.ts", suppressed),
        ("packages/b/src/y.ts", suppressed),
        ("packages/b/src/z.ts", "import { Effect } from \"effect\"\n// retrylint-ignore retry-without-predicate -- none here\nexport const z = Effect.succeed(1)\n"),
    ]);
    let (_, report) = check_json(dir.path(), &["."]);
    let found: BTreeSet<(String, String)> = rules_by_file(&report);
    assert_eq!(
        found,
        BTreeSet::from([("packages/b/src/z.ts".to_string(), "unused-suppression".to_string())]),
        "{report:#}"
    );
}

#[test]
fn an_explicit_config_elsewhere_does_not_move_the_project_15_2() {
    let dir = project(&[
        ("app/retrylint.toml", "[rules]\ninline-schedule = \"off\"\n"),
        ("app/src/a.ts", INLINE),
        ("shared/retrylint.toml", "[rules]\nretry-without-predicate = \"off\"\n"),
        ("shared/elsewhere.ts", INLINE),
    ]);
    let (_, report) = check_json(&dir.path().join("app"), &[".", "--config", "../shared/retrylint.toml"]);
    let found = rules_by_file(&report);
    // The project is app/ (its files, with the explicit config's settings), not shared/.
    assert_eq!(
        found,
        BTreeSet::from([("src/a.ts".to_string(), "inline-schedule".to_string())]),
        "{report:#}"
    );
    assert_eq!(report["summary"]["files"], 1, "{report:#}");
    // Baseline paths are relative to that project's root.
    let output = check(
        &dir.path().join("app"),
        &[
            ".",
            "--config",
            "../shared/retrylint.toml",
            "--write-baseline",
            "baseline.json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let written = std::fs::read_to_string(dir.path().join("app/baseline.json")).unwrap();
    assert!(written.contains("\"path\": \"src/a.ts\""), "{written}");
}
