//! `--changed-since REV`: the whole project is analysed, only findings the change since REV
//! touches (lines added or changed, lines deleted inside a retry call, untracked files) are
//! reported; git trouble exits 2.

mod common;
#[path = "support/git.rs"]
mod git;

use common::{check, check_json, findings};
use git::{Repo, BASE, RETRY};

/// Line 4 changed, line 6 added, line 3 untouched.
const CHANGED: &str = r#"import { Effect, Schedule } from "effect"
import { transient } from "../infra/retry.js"
export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
export const b = Effect.succeed(2).pipe(Effect.retry(Schedule.recurs(5)))
export const c = Effect.succeed(3).pipe(Effect.retry(transient))
export const d = Effect.succeed(4).pipe(Effect.retry(local))
"#;

/// A policy outside the retry module, used by the new line 6 above: its finding is reported
/// once, at its definition here, and a change that adds a site using it brings it along (the
/// site is its related location) — which also proves the whole project was analysed.
const LOCAL: &str = r#"import { Schedule } from "effect"
export const local = Schedule.spaced("1 second")
"#;

/// stderr without whitespace and miette's frame, so that its line wrapping does not matter;
/// compare with [`squeeze`]d text.
fn stderr(output: &std::process::Output) -> String {
    squeeze(&String::from_utf8_lossy(&output.stderr).replace(['│', '×'], ""))
}

fn squeeze(text: &str) -> String {
    text.split_whitespace().collect()
}

fn rules_only() -> Vec<&'static str> {
    vec!["--select", "inline-schedule"]
}

fn repo_with_a_change() -> (Repo, String) {
    let repo = Repo::new();
    repo.write("src/infra/retry.ts", RETRY);
    repo.write("src/features/a.ts", BASE);
    repo.write("src/features/local.ts", LOCAL);
    repo.write("src/features/old.ts", BASE);
    let base = repo.commit("base");
    repo.write(
        "src/features/a.ts",
        &CHANGED.replace("export const d", "import { local } from \"./local.js\"\nexport const d"),
    );
    repo.commit("change");
    (repo, base)
}

#[test]
fn only_findings_on_changed_lines_are_reported() {
    let (repo, base) = repo_with_a_change();
    let mut args = vec![".", "--changed-since", &base];
    args.extend(rules_only());
    let (code, report) = check_json(repo.root(), &args);
    let found: Vec<(String, u64)> = findings(&report).into_iter().map(|f| (f.0, f.1)).collect();
    // Line 3 (unchanged) and old.ts are not reported; line 4 (changed) is, and so is the
    // unchanged local.ts policy that the added line 7 now uses (line 7 is its related location).
    assert_eq!(
        found,
        [
            ("src/features/a.ts".to_string(), 4),
            ("src/features/local.ts".to_string(), 2)
        ],
        "{report:#}"
    );
    let related = &report["diagnostics"][1]["related"][0];
    assert_eq!(
        (related["path"].as_str(), related["line"].as_u64()),
        (Some("src/features/a.ts"), Some(7))
    );
    assert_eq!(code, 1);
    assert_eq!(
        report["summary"]["errors"], 2,
        "the summary counts the reported findings"
    );

    // Without the flag, everything.
    let (_, all) = check_json(repo.root(), &[".", "--select", "inline-schedule"]);
    assert_eq!(findings(&all).len(), 5, "{all:#}");
}

#[test]
fn uncommitted_edits_and_untracked_files_count_as_changed() {
    let (repo, _) = repo_with_a_change();
    repo.write("src/features/new.ts", BASE);
    let mut staged = BASE.to_string();
    staged.push_str("export const e = Effect.succeed(5).pipe(Effect.retry(Schedule.recurs(6)))\n");
    repo.write("src/features/old.ts", &staged);
    let mut args = vec![".", "--changed-since", "HEAD"];
    args.extend(rules_only());
    let (_, report) = check_json(repo.root(), &args);
    let found: Vec<(String, u64)> = findings(&report).into_iter().map(|f| (f.0, f.1)).collect();
    assert_eq!(
        found,
        [
            ("src/features/new.ts".to_string(), 3),
            ("src/features/new.ts".to_string(), 4),
            ("src/features/old.ts".to_string(), 6),
        ]
    );
}

#[test]
fn nothing_changed_exits_0_even_with_old_findings() {
    let (repo, _) = repo_with_a_change();
    let output = check(repo.root(), &[".", "--changed-since", "HEAD"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("no findings"));
}

#[test]
fn git_runs_where_the_checked_path_is() {
    // The current directory is outside the repository; the checked path is inside it.
    let (repo, base) = repo_with_a_change();
    let elsewhere = tempfile::tempdir().unwrap();
    let path = repo.join("src/features");
    let mut args = vec![path.to_str().unwrap(), "--changed-since", &base];
    args.extend(rules_only());
    let (code, report) = check_json(elsewhere.path(), &args);
    assert_eq!(code, 1);
    let lines: Vec<u64> = findings(&report).into_iter().map(|f| f.1).collect();
    assert_eq!(lines, [4, 2], "a.ts:4, then local.ts:2 (used by the added a.ts:7)");
    // A file as the checked path: git runs in its directory, and the project around it is
    // its context: the policy in local.ts that a.ts:7 starts using is reported too (issue 15.2).
    let file = repo.join("src/features/a.ts");
    let mut args = vec![file.to_str().unwrap(), "--changed-since", &base];
    args.extend(rules_only());
    let (_, report) = check_json(elsewhere.path(), &args);
    let lines: Vec<u64> = findings(&report).into_iter().map(|f| f.1).collect();
    assert_eq!(lines, [4, 2], "{report:#}");
}

#[test]
fn a_bad_revision_exits_2() {
    let (repo, _) = repo_with_a_change();
    for rev in ["no-such-branch", "0123456789012345678901234567890123456789"] {
        let output = check(repo.root(), &[".", "--changed-since", rev]);
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&squeeze(&format!("unknown revision `{rev}` for --changed-since"))),
            "{stderr}"
        );
        assert!(stderr.contains("gitfetch"), "the help says how to fetch it: {stderr}");
    }
    let output = check(repo.root(), &[".", "--changed-since", "--cached"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn outside_a_git_repository_exits_2() {
    let dir = common::project(&[("src/a.ts", BASE)]);
    let output = check(dir.path(), &[".", "--changed-since", "HEAD"]);
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&squeeze("cannot list the lines changed since `HEAD`")),
        "{stderr}"
    );
    assert!(stderr.contains(&squeeze("inside a git work tree")), "{stderr}");
}

#[test]
fn renamed_files_report_only_their_edited_lines() {
    let (repo, _) = repo_with_a_change();
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.git(&["mv", "src/features/old.ts", "src/features/moved.ts"]);
    let mut moved = BASE.to_string();
    moved.push_str("export const e = Effect.succeed(5).pipe(Effect.retry(Schedule.recurs(6)))\n");
    repo.write("src/features/moved.ts", &moved);
    repo.commit("move");
    let mut args = vec![".", "--changed-since", &head];
    args.extend(rules_only());
    let (_, report) = check_json(repo.root(), &args);
    let found: Vec<(String, u64)> = findings(&report).into_iter().map(|f| (f.0, f.1)).collect();
    assert_eq!(found, [("src/features/moved.ts".to_string(), 6)]);
}

/// A retry that names what it retries, over several lines.
const WITH_PREDICATE: &str = r#"import { Effect } from "effect"
import { transient } from "../infra/retry.js"
export const a = Effect.succeed(1).pipe(
  Effect.retry({
    schedule: transient,
    while: (e) => e === 1,
  }),
)
export const b = Effect.succeed(2).pipe(Effect.retry(transient))
"#;

#[test]
fn deleting_a_line_inside_a_retry_call_reports_what_the_deletion_made() {
    let repo = Repo::new();
    repo.write("src/infra/retry.ts", RETRY);
    repo.write("src/features/a.ts", WITH_PREDICATE);
    let base = repo.commit("base");
    // Only a deletion: no line that is left changed, yet the retry now has no predicate.
    repo.write(
        "src/features/a.ts",
        &WITH_PREDICATE.replace("    while: (e) => e === 1,\n", ""),
    );
    let (code, report) = check_json(
        repo.root(),
        &[".", "--changed-since", &base, "--select", "retry-without-predicate"],
    );
    let found: Vec<(String, u64)> = findings(&report).into_iter().map(|f| (f.0, f.1)).collect();
    // Line 4 (`Effect.retry({`) is reported; line 9's old finding is not the change's.
    assert_eq!(found, [("src/features/a.ts".to_string(), 4)], "{report:#}");
    assert_eq!(code, 1);
}

/// A retry module whose policy is written over several lines, and a site that uses it.
const POLICY: &str = r#"import { Schedule } from "effect"

export const transient = Schedule.exponential("100 millis").pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(4)),
)
"#;

const USES_POLICY: &str = r#"import { Effect } from "effect"
import { transient } from "../infra/retry.js"
export const a = Effect.succeed(1).pipe(Effect.retry({ schedule: transient, while: (e) => e === 1 }))
"#;

fn policy_findings(repo: &Repo, base: &str) -> Vec<(String, String, u64)> {
    let (_, report) = check_json(repo.root(), &[".", "--changed-since", base]);
    findings(&report).into_iter().map(|f| (f.2, f.0, f.1)).collect()
}

#[test]
fn a_change_inside_a_policy_reports_the_policy() {
    let repo = Repo::new();
    repo.write("src/infra/retry.ts", POLICY);
    repo.write("src/features/a.ts", USES_POLICY);
    let base = repo.commit("base");
    let at_name = |rule: &str| (rule.to_string(), "src/infra/retry.ts".to_string(), 3);

    // Nothing changed: the policy's old finding (no per-gap cap) is not the change's.
    assert_eq!(policy_findings(&repo, &base), []);

    // Deleting the `Schedule.jittered,` line changes no line that is left.
    repo.write("src/infra/retry.ts", &POLICY.replace("  Schedule.jittered,\n", ""));
    let found = policy_findings(&repo, &base);
    assert!(found.contains(&at_name("unjittered-schedule")), "{found:?}");
    assert!(
        found.contains(&at_name("uncapped-schedule")),
        "the policy's other finding: {found:?}"
    );

    // Raising `recurs(4)` to `recurs(6)` on line 5 reports the policy named on line 3.
    repo.write("src/infra/retry.ts", &POLICY.replace("recurs(4)", "recurs(6)"));
    let found = policy_findings(&repo, &base);
    assert!(found.contains(&at_name("policy-over-budget")), "{found:?}");
    assert!(found.contains(&at_name("uncapped-schedule")), "{found:?}");

    // An edit below the policy, outside its definition, is not the policy's.
    let mut after = POLICY.to_string();
    after.push_str("\nexport const unrelated = 1\n");
    repo.write("src/infra/retry.ts", &after);
    assert_eq!(policy_findings(&repo, &base), []);
}

/// A policy whose chain ends with its own line, without a semicolon, and a statement after it.
const CHAINED: &str = r#"import { Schedule } from "effect"

export const transient = Schedule.exponential("100 millis")
  .pipe(Schedule.intersect(Schedule.recurs(3)), Schedule.upTo("2 seconds"))
  .pipe(Schedule.jittered)
export const other = 1
"#;

#[test]
fn deleting_the_last_line_of_a_policy_chain_reports_it() {
    let repo = Repo::new();
    repo.write("src/infra/retry.ts", CHAINED);
    repo.write("src/features/a.ts", USES_POLICY);
    let base = repo.commit("base");
    // The chain's last line goes: no line that is left changed, and the deletion sits right
    // after the definition's (new) last line.
    repo.write(
        "src/infra/retry.ts",
        &CHAINED.replace("  .pipe(Schedule.jittered)\n", ""),
    );
    let found = policy_findings(&repo, &base);
    let unjittered = ("unjittered-schedule".to_string(), "src/infra/retry.ts".to_string(), 3);
    assert!(found.contains(&unjittered), "{found:?}");
    // With that committed, deleting the statement after the policy is not a change of it.
    let unjittered = repo.commit("no jitter");
    repo.write(
        "src/infra/retry.ts",
        &CHAINED
            .replace("  .pipe(Schedule.jittered)\n", "")
            .replace("export const other = 1\n", ""),
    );
    assert_eq!(policy_findings(&repo, &unjittered), []);
}
