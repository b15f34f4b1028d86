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
        !fixed.contains("Schedule.jittered"),
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
        fixed.contains("S.spaced(\"100 millis\").pipe(S.upTo({ times: 2 }), S.jittered)"),
        "one more argument of the schedule's pipe, never `.pipe(…).pipe(`: {fixed}"
    );
    let again = check(
        dir.path(),
        &[".", "--fix", "--unsafe-fixes", "--select", "unjittered-schedule"],
    );
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(read(&dir, "src/a.ts"), fixed, "a second run changes nothing");
}

/// Schedules whose jitter fix once did not clear its finding (appended ten times a run): a
/// conditional schedule (the `.pipe(…)` bound to the last branch alone), and a delay with a
/// block body one branch of which retries at once (no delay to spread, read as unjittered).
const UNJITTERED_SHAPES: &str = r#"import { Duration, Effect, Schedule } from "effect"
declare const config: { readonly patient: boolean }
declare const call: Effect.Effect<number, { readonly status: number }>
export const poll = call.pipe(
  Effect.retry({ schedule: config.patient ? Schedule.spaced("1 second") : Schedule.recurs(3), while: (e) => e.status === 503 }),
)
export const both = call.pipe(
  Effect.retry({ schedule: config.patient ? Schedule.spaced("1 second").pipe(Schedule.take(3)) : Schedule.exponential("10 millis").pipe(Schedule.take(3)), while: (e) => e.status === 503 }),
)
export const block = call.pipe(
  Effect.retry({
    schedule: Schedule.identity<{ readonly status: number }>().pipe(
      Schedule.addDelay((e) => {
        if (e.status >= 500) {
          return Duration.seconds(1)
        }
        return Duration.zero
      }),
      Schedule.intersect(Schedule.recurs(5)),
    ),
    while: (e) => e.status === 503,
  }),
)
"#;

#[test]
fn a_jitter_fix_clears_its_finding_on_conditional_and_block_bodied_schedules() {
    let dir = project(&[("src/a.ts", UNJITTERED_SHAPES)]);
    let args = [".", "--no-config", "--select", "unjittered-schedule"];
    let (_, report) = check_json(dir.path(), &args);
    assert_eq!(findings(&report).len(), 3, "{report:#}");
    let mut fix = args.to_vec();
    fix.extend(["--fix", "--unsafe-fixes"]);
    let output = check(dir.path(), &fix);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("fixed 3 findings in 1 file"), "{stderr}");
    let fixed = read(&dir, "src/a.ts");
    assert!(
        fixed.contains(r#"config.patient ? Schedule.spaced("1 second").pipe(Schedule.jittered) : Schedule.recurs(3)"#),
        "the branch that waits is jittered, the immediate one left: {fixed}"
    );
    assert!(
        fixed.contains(r#"Schedule.spaced("1 second").pipe(Schedule.take(3), Schedule.jittered) : Schedule.exponential("10 millis").pipe(Schedule.take(3), Schedule.jittered)"#),
        "each branch that waits is jittered: {fixed}"
    );
    assert!(
        fixed.contains("      Schedule.intersect(Schedule.recurs(5)),\n      Schedule.jittered,\n    ),"),
        "{fixed}"
    );
    assert_eq!(fixed.matches("jittered").count(), 4, "{fixed}");
    let (code, report) = check_json(dir.path(), &args);
    assert_eq!((code, findings(&report)), (0, vec![]), "the findings are gone: {fixed}");
    check(dir.path(), &fix);
    assert_eq!(read(&dir, "src/a.ts"), fixed, "a second run changes nothing");
}

/// A policy that never retries (`times: 0`) is jittered in vain: the model still reads it as
/// unjittered, so no fix is offered rather than one appended every round.
#[test]
fn no_jitter_fix_is_offered_that_would_not_clear_its_finding() {
    let text = "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.spaced(\"1 second\"), times: 0, while: (e) => e === 1 }))\n";
    let dir = project(&[("src/a.ts", text)]);
    let args = [".", "--no-config", "--select", "unjittered-schedule"];
    let (_, report) = check_json(dir.path(), &args);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report:#}");
    assert!(diagnostics[0]["fix"].is_null(), "{report:#}");
    let mut fix = args.to_vec();
    fix.extend(["--fix", "--unsafe-fixes"]);
    check(dir.path(), &fix);
    assert_eq!(read(&dir, "src/a.ts"), text);
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

/// `retrylint check ARGS` in `dir` with extra environment.
fn check_env(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = common::bin();
    command.current_dir(dir).arg("check").args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the binary runs")
}

#[test]
fn fix_applies_only_the_fixes_of_reported_findings_baseline_and_changed_since() {
    let dir = app();
    let before = read(&dir, "src/features/a.ts");
    let output = check(dir.path(), &[".", "--write-baseline", "baseline.json"]);
    assert_eq!(output.status.code(), Some(0));
    // The baseline hides the finding, so its fix is not applied either.
    for flag in ["--fix", "--diff"] {
        let output = check(dir.path(), &[".", flag, "--baseline", "baseline.json"]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.stdout.is_empty() || flag == "--fix", "{flag}: nothing to diff");
        assert_eq!(read(&dir, "src/features/a.ts"), before, "{flag} --baseline");
    }

    // --changed-since: only the new file's finding is the change's, and only it is fixed.
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .current_dir(dir.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::write(dir.path().join("src/features/c.ts"), FEATURE).unwrap();
    let output = check(dir.path(), &[".", "--fix", "--changed-since", "HEAD"]);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("fixed 1 finding in 1 file"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        read(&dir, "src/features/a.ts"),
        before,
        "an unchanged file is not fixed"
    );
    assert!(read(&dir, "src/features/c.ts").contains("schedule: Retry.contention,"));
}

#[test]
fn a_file_edited_while_retrylint_ran_is_left_alone_with_a_note() {
    let dir = app();
    let output = check_env(
        dir.path(),
        &[".", "--fix"],
        &[("RETRYLINT_TEST_EDIT_BEFORE_WRITE", "a.ts")],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("note: src/features/a.ts: not fixed: the file changed since it was read"),
        "{stderr}"
    );
    let text = read(&dir, "src/features/a.ts");
    assert!(
        text.ends_with("// edited while retrylint ran\n"),
        "the edit is kept: {text}"
    );
    assert!(text.contains("Schedule.max"), "and no fix is written over it: {text}");
}

/// The summary counts what was written: a file skipped as changed since read is not in it,
/// and a note says what was left.
#[test]
fn the_fix_summary_counts_only_what_was_written() {
    let dir = app();
    std::fs::write(dir.path().join("src/features/z.ts"), FEATURE).unwrap();
    let output = check_env(
        dir.path(),
        &[".", "--fix"],
        &[("RETRYLINT_TEST_EDIT_BEFORE_WRITE", "a.ts")],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("\nfixed 1 finding in 1 file\n"), "{stderr}");
    assert!(
        stderr.contains("note: not fixed: 1 finding in 1 file, left as they were"),
        "{stderr}"
    );
    assert!(read(&dir, "src/features/z.ts").contains("schedule: Retry.contention,"));
    assert!(read(&dir, "src/features/a.ts").contains("Schedule.max"));
}

/// An edit that lands after the last check, as the fix goes into place, is found in the file
/// the fix displaced and put back: by the swap undone, or (where there is no swap) by the old
/// file's text written again.
#[test]
fn an_edit_during_the_swap_is_put_back_and_the_fix_skipped() {
    for plain in [false, true] {
        let dir = app();
        let before = read(&dir, "src/features/a.ts");
        let mut env = vec![("RETRYLINT_TEST_EDIT_BEFORE_RENAME", "a.ts")];
        if plain {
            env.push(("RETRYLINT_TEST_PLAIN_RENAME", "1"));
        }
        let output = check_env(dir.path(), &[".", "--fix"], &env);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("note: src/features/a.ts: not fixed: the file changed while the fix was written"),
            "plain rename {plain}: {stderr}"
        );
        assert!(!stderr.contains("fixed 1"), "{stderr}");
        assert_eq!(
            read(&dir, "src/features/a.ts"),
            format!("{before}\n// edited while retrylint ran\n"),
            "plain rename {plain}: the edit is at the path, without the fix"
        );
        let entries: Vec<_> = std::fs::read_dir(dir.path().join("src/features")).unwrap().collect();
        assert_eq!(entries.len(), 1, "no temporary file left");
    }
}

/// A writer races `--fix`: in each trial a thread appends a line to the file being fixed at a
/// moment around its write (once the fix's temporary file appears, after a pseudo-random
/// pause of up to 3 ms). The line is never lost: either the fix is skipped with a note, or
/// the fix is written and the line appended to it. The one exception is the window
/// `write_fix` documents, which no tool closes without locks: the writer opened the file that
/// was at the path and wrote to it after the fix took its place and the displaced file was
/// checked. A trial is in that window only when the path named another file right after the
/// writer wrote (had it still named the writer's file, the write went in before any swap and
/// must be seen); such a trial may lose the line, no other.
#[cfg(unix)]
#[test]
fn a_line_appended_while_the_fix_is_written_is_never_lost() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let trials = 50;
    use std::os::unix::fs::MetadataExt;
    let (mut lost, mut skipped, mut written, mut raced, mut window) = (Vec::new(), 0, 0, 0, 0);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for trial in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let pause = std::time::Duration::from_micros(seed % 3000);
        let dir = app();
        let features = dir.path().join("src/features");
        let path = features.join("a.ts");
        let line = format!("// appended in trial {trial}\n");
        let done = Arc::new(AtomicBool::new(false));
        let appender = {
            let (done, line, path) = (done.clone(), line.clone(), path.clone());
            std::thread::spawn(move || {
                // Until the fix's temporary file appears beside the file, or the run ends.
                let mut saw = false;
                while !saw && !done.load(Ordering::Relaxed) {
                    saw = std::fs::read_dir(&features)
                        .unwrap()
                        .flatten()
                        .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"));
                }
                let start = std::time::Instant::now();
                while start.elapsed() < pause {
                    std::hint::spin_loop();
                }
                let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                file.write_all(line.as_bytes()).unwrap();
                let held = file.metadata().unwrap();
                let at_path = std::fs::metadata(&path).unwrap();
                (saw, (held.dev(), held.ino()) != (at_path.dev(), at_path.ino()))
            })
        };
        let output = check(dir.path(), &[".", "--fix"]);
        done.store(true, Ordering::Relaxed);
        let (saw, displaced) = appender.join().unwrap();
        raced += usize::from(saw);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let text = read(&dir, "src/features/a.ts");
        if !text.contains(&line) && displaced {
            window += 1;
        } else if !text.contains(&line) {
            lost.push((trial, stderr.to_string()));
        } else if text.contains("schedule: Retry.contention,") {
            written += 1;
        } else {
            assert!(stderr.contains("note: src/features/a.ts: not fixed"), "{stderr}");
            skipped += 1;
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {trials} trials lost the appended line ({written} written, {skipped} skipped, {window} in the \
         window no tool closes): {lost:#?}",
        lost.len()
    );
    assert!(
        window <= trials / 10,
        "{window} of {trials} trials fell in the window: it is a few system calls wide"
    );
    assert!(raced >= trials / 2, "only {raced} of {trials} trials raced the write");
}

#[cfg(unix)]
#[test]
fn a_fix_keeps_permissions_and_hard_links_and_never_writes_through_a_symlink() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = app();
    let file = dir.path().join("src/features/a.ts");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::hard_link(&file, dir.path().join("a-link.txt")).unwrap();
    let output = check(dir.path(), &[".", "--fix"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("fixed 1 finding"));
    let fixed = read(&dir, "src/features/a.ts");
    assert!(fixed.contains("schedule: Retry.contention,"), "{fixed}");
    assert_eq!(read(&dir, "a-link.txt"), fixed, "the hard link still shares the file");
    let (a, link) = (
        std::fs::metadata(&file).unwrap(),
        std::fs::metadata(dir.path().join("a-link.txt")).unwrap(),
    );
    assert_eq!(a.ino(), link.ino());
    assert_eq!(a.mode() & 0o777, 0o640);

    // The owner is kept too (when this test may give the file away, as root can).
    let dir = app();
    let file = dir.path().join("src/features/a.ts");
    if std::os::unix::fs::chown(&file, Some(4321), Some(4321)).is_ok() {
        let output = check(dir.path(), &[".", "--fix"]);
        assert!(String::from_utf8_lossy(&output.stderr).contains("fixed 1 finding"));
        let metadata = std::fs::metadata(&file).unwrap();
        assert_eq!((metadata.uid(), metadata.gid()), (4321, 4321), "the owner is kept");
        assert!(read(&dir, "src/features/a.ts").contains("schedule: Retry.contention,"));
    }

    // A symlink to a fixable file is skipped with a note, named or found.
    let dir = app();
    std::fs::rename(
        dir.path().join("src/features/a.ts"),
        dir.path().join("src/infra/target.ts.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../infra/target.ts.txt", dir.path().join("src/features/a.ts")).unwrap();
    let before = read(&dir, "src/infra/target.ts.txt");
    for paths in [&["."][..], &["src/features/a.ts"]] {
        let mut args = paths.to_vec();
        args.push("--fix");
        let output = check(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("src/features/a.ts: skipped: a symbolic link"),
            "{stderr}"
        );
        assert_eq!(read(&dir, "src/infra/target.ts.txt"), before, "{paths:?}");
        assert!(std::fs::symlink_metadata(dir.path().join("src/features/a.ts"))
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn a_failed_write_says_which_files_were_already_written() {
    let dir = app();
    std::fs::write(dir.path().join("src/features/z.ts"), FEATURE).unwrap();
    let output = check_env(dir.path(), &[".", "--fix"], &[("RETRYLINT_TEST_FAIL_WRITE", "z.ts")]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write src/features/z.ts"), "{stderr}");
    assert!(
        stderr.contains("already written (fixed): src/features/a.ts"),
        "{stderr}"
    );
    assert!(read(&dir, "src/features/a.ts").contains("schedule: Retry.contention,"));
    assert_eq!(read(&dir, "src/features/z.ts"), FEATURE);
}

/// A file with no relative import in a NodeNext ES module project: the retry module's import
/// that a fix adds names its `.js` file (TS2835 without it); the same file in a bundler project
/// gets an extensionless one.
#[test]
fn an_added_import_follows_the_projects_module_resolution() {
    const ALONE: &str = r#"import { Effect, Schedule } from "effect"

export const a = Effect.succeed(1).pipe(
  Effect.retry({
    schedule: Schedule.max([Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]), Schedule.recurs(3)]).pipe(Schedule.jittered),
    while: (e: unknown) => e instanceof Error,
  }),
)
"#;
    for (resolution, want) in [
        ("NodeNext", "import * as Retry from \"../infra/retry.js\""),
        ("Bundler", "import * as Retry from \"../infra/retry\""),
    ] {
        let module = if resolution == "NodeNext" { "NodeNext" } else { "ESNext" };
        let tsconfig = format!(
            "{{ \"compilerOptions\": {{ \"module\": \"{module}\", \"moduleResolution\": \"{resolution}\" }}, \"include\": [\"src\"] }}\n"
        );
        let dir = project(&[
            ("package.json", "{ \"name\": \"app\", \"type\": \"module\" }\n"),
            ("tsconfig.json", &tsconfig),
            ("src/infra/retry.ts", RETRY_MODULE),
            ("src/features/a.ts", ALONE),
        ]);
        check(dir.path(), &[".", "--fix"]);
        let fixed = read(&dir, "src/features/a.ts");
        assert!(fixed.contains(want), "{resolution}: {fixed}");
        assert!(fixed.contains("Retry.contention"), "{resolution}: {fixed}");
    }
    // The file's quotes, too.
    let single = ALONE.replace("from \"effect\"", "from 'effect'");
    let dir = project(&[("src/infra/retry.ts", RETRY_MODULE), ("src/features/a.ts", &single)]);
    check(dir.path(), &[".", "--fix"]);
    let fixed = read(&dir, "src/features/a.ts");
    assert!(fixed.contains("import * as Retry from '../infra/retry'"), "{fixed}");
}

/// The jitter fix follows the chain's layout: one argument per line gets `Schedule.jittered` on
/// a line of its own (with the trailing comma the chain uses or not), a one-line chain one more
/// argument on that line.
#[test]
fn the_jitter_fix_follows_the_chains_layout() {
    const CHAINS: &str = include_str!("data/jitter-layout.ts");
    let dir = project(&[("retrylint.toml", ""), ("src/features/a.ts", CHAINS)]);
    check(dir.path(), &[".", "--fix", "--unsafe-fixes"]);
    let fixed = read(&dir, "src/features/a.ts");
    assert!(
        fixed.contains(
            "      Schedule.intersect(Schedule.recurs(3)),\n      Schedule.jittered,\n    ),\n    while: (e: unknown) => e instanceof Error,\n  }),\n)\n\nexport const b"
        ),
        "{fixed}"
    );
    assert!(
        fixed.contains("      Schedule.intersect(Schedule.recurs(3)),\n      Schedule.jittered\n    ),"),
        "{fixed}"
    );
    assert!(
        fixed.contains("Schedule.intersect(Schedule.recurs(3)), Schedule.jittered), while:"),
        "{fixed}"
    );
    assert!(!fixed.contains(")), Schedule.jittered,\n"), "{fixed}");
}
