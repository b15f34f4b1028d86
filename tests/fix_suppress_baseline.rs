//! `--fix`, `--diff`, suppressions and baselines on the real binary.

mod common;

use common::{check, check_json, findings, project};

const RETRY_MODULE: &str = r#"import { Schedule } from "effect"

export const contention = Schedule.max([
  Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]),
  Schedule.recurs(3),
]).pipe(Schedule.jittered)

export const isContention = (error: unknown): boolean => error instanceof Error
"#;

const BARREL: &str = "export * as Retry from \"./retry.js\"\n";

/// An inline copy of `contention` (safe fix) and an unjittered inline policy (unsafe fix).
const FEATURE: &str = r#"import { Effect, Schedule } from "effect"
import { Retry } from "../infra/index.js"

export const a = Effect.succeed(1).pipe(
  Effect.retry({
    schedule: Schedule.max([Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]), Schedule.recurs(3)]).pipe(Schedule.jittered),
    while: Retry.isContention,
  }),
)
export const b = Effect.succeed(2).pipe(Effect.retry({ schedule: Retry.contention.pipe(Schedule.upTo({ times: 2 })), while: Retry.isContention }))
"#;

fn app() -> tempfile::TempDir {
    project(&[
        ("src/infra/retry.ts", RETRY_MODULE),
        ("src/infra/index.ts", BARREL),
        ("src/features/a.ts", FEATURE),
    ])
}

fn read(dir: &tempfile::TempDir, path: &str) -> String {
    std::fs::read_to_string(dir.path().join(path)).unwrap()
}

#[test]
fn fix_applies_safe_fixes_only_and_is_idempotent() {
    let dir = app();
    let output = check(dir.path(), &[".", "--fix", "--format", "json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("fixed 1 finding in 1 file"), "{stderr}");
    let fixed = read(&dir, "src/features/a.ts");
    assert!(
        fixed.contains("schedule: Retry.contention,\n    while: Retry.isContention"),
        "{fixed}"
    );
    assert!(!fixed.contains("Schedule.max"), "the inline copy is gone: {fixed}");
    assert!(
        !fixed.contains(".pipe(Schedule.jittered), while"),
        "unsafe fixes need --unsafe-fixes: {fixed}"
    );
    // The report after fixing shows what is left, and a second run changes nothing.
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        findings(&report).iter().all(|f| f.2 != "inline-schedule" || f.1 == 10),
        "{report:#}"
    );
    let again = check(dir.path(), &[".", "--fix"]);
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("fixed"),
        "nothing left to fix safely"
    );
    assert_eq!(read(&dir, "src/features/a.ts"), fixed);
}

#[test]
fn unsafe_fixes_apply_with_the_flag_and_converge() {
    let dir = project(&[(
        "src/a.ts",
        "import { Effect, Schedule as S } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: S.spaced(\"100 millis\").pipe(S.upTo({ times: 2 })), while: (e) => e === 1 }))\n",
    )]);
    let output = check(
        dir.path(),
        &[".", "--fix", "--unsafe-fixes", "--select", "unjittered-schedule"],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let fixed = read(&dir, "src/a.ts");
    assert!(
        fixed.contains("S.spaced(\"100 millis\").pipe(S.upTo({ times: 2 })).pipe(S.jittered)"),
        "{fixed}"
    );
    let again = check(
        dir.path(),
        &[".", "--fix", "--unsafe-fixes", "--select", "unjittered-schedule"],
    );
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(read(&dir, "src/a.ts"), fixed, "a second run changes nothing");
}

#[test]
fn diff_prints_and_writes_nothing() {
    let dir = app();
    let before = read(&dir, "src/features/a.ts");
    let output = check(dir.path(), &[".", "--diff"]);
    assert_eq!(output.status.code(), Some(1), "a diff exits 1");
    let diff = String::from_utf8_lossy(&output.stdout);
    assert!(
        diff.starts_with("--- a/src/features/a.ts\n+++ b/src/features/a.ts\n"),
        "{diff}"
    );
    assert!(diff.contains("+    schedule: Retry.contention,"), "{diff}");
    assert_eq!(read(&dir, "src/features/a.ts"), before, "--diff writes nothing");
    let entries: Vec<_> = std::fs::read_dir(dir.path().join("src/features")).unwrap().collect();
    assert_eq!(entries.len(), 1, "no temporary files left");
}

#[test]
fn suppressions_silence_findings_and_are_checked() {
    let text = r#"import { Effect, Schedule } from "effect"
// retrylint-ignore inline-schedule, retry-without-predicate -- a test double that fails once
export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(1)))
export const b = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(1))) // retrylint-ignore inline-schedule, retry-without-predicate
// retrylint-ignore unjittered-schedule -- nothing to suppress on the next line
export const c = Effect.succeed(3)
// retrylint-ignore inline-schedul -- a typo
export const d = Effect.succeed(4)
"#;
    let dir = project(&[("src/a.ts", text)]);
    let (code, report) = check_json(dir.path(), &["."]);
    let found: Vec<(u64, String)> = findings(&report).into_iter().map(|f| (f.1, f.2)).collect();
    assert_eq!(
        found,
        [
            (4, "suppression-without-reason".to_string()),
            (5, "unused-suppression".to_string()),
            (7, "unused-suppression".to_string()),
        ],
        "{report:#}"
    );
    assert_eq!(code, 0, "suppression findings are warnings");
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages[2].contains("`inline-schedul` is not a retrylint rule"),
        "{messages:?}"
    );
}

#[test]
fn file_suppressions_cover_the_whole_file_and_unrun_rules_are_not_unused() {
    let text = "// retrylint-ignore-file inline-schedule, retry-without-predicate -- generated test fixtures\nimport { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(1)))\n";
    let dir = project(&[("src/a.ts", text)]);
    let (code, report) = check_json(dir.path(), &["."]);
    assert_eq!((code, findings(&report)), (0, vec![]));
    // With only one rule selected, a suppression of another rule cannot be judged unused.
    let (_, report) = check_json(dir.path(), &[".", "--select", "inline-schedule,unused-suppression"]);
    assert_eq!(findings(&report), vec![]);
}

#[test]
fn a_baseline_hides_known_findings_survives_moves_and_reports_stale_entries() {
    let dir = project(&[(
        "src/a.ts",
        "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(1), while: (e) => e === 1 }))\n",
    )]);
    let baseline = dir.path().join("retrylint-baseline.json");
    let output = check(dir.path(), &[".", "--write-baseline", "retrylint-baseline.json"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains("wrote 1 finding"));
    let (code, report) = check_json(dir.path(), &[".", "--baseline", "retrylint-baseline.json"]);
    assert_eq!((code, findings(&report).len()), (0, 0));

    // Unrelated lines above move the finding: still known.
    let moved = "import { Effect, Schedule } from \"effect\"\n// a comment\n\nexport const x = 1\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(1), while: (e) => e === 1 }))\n";
    std::fs::write(dir.path().join("src/a.ts"), moved).unwrap();
    let (code, report) = check_json(dir.path(), &[".", "--baseline", "retrylint-baseline.json"]);
    assert_eq!((code, findings(&report).len()), (0, 0), "{report:#}");

    // A new finding is reported; the old one fixed leaves a stale entry.
    let changed = "import { Effect, Schedule } from \"effect\"\nexport const b = Effect.succeed(2).pipe(Effect.retry({ schedule: Schedule.recurs(2), while: (e) => e === 2 }))\n";
    std::fs::write(dir.path().join("src/a.ts"), changed).unwrap();
    let output = check(
        dir.path(),
        &[".", "--baseline", "retrylint-baseline.json", "--format", "short"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("src/a.ts:2:"),
        "the new finding is reported"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("baseline entry for inline-schedule no longer matches"));

    std::fs::write(&baseline, "not json").unwrap();
    let output = check(dir.path(), &[".", "--baseline", "retrylint-baseline.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a retrylint baseline"));
}
