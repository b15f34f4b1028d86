//! Bad input never panics: random bytes, truncated real files, invalid UTF-8 and syntax errors
//! become notes or partial analysis, and the exit code stays 0 or 1.

mod common;

use std::path::Path;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn fixture_sources(root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && name != "node_modules" && name != "dist" {
            fixture_sources(&path, out);
        } else if name.ends_with(".ts") || name.ends_with(".tsx") {
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
}

fn assert_survives(dir: &Path) {
    let output = common::check(dir, &[".", "--format", "json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "exit {:?}: {stderr}",
        output.status.code()
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    for note in report["notes"].as_array().unwrap() {
        let message = note["message"].as_str().unwrap();
        assert!(!message.contains("internal error"), "a panic was caught: {message}");
    }
}

#[test]
fn random_bytes_and_truncated_files_do_not_crash() {
    let mut sources = Vec::new();
    fixture_sources(&common::fixture("effect-app"), &mut sources);
    assert!(sources.len() > 10);
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for (i, (name, text)) in sources.iter().enumerate() {
        // Every prefix length class: empty, mid-token, mid-string, nearly whole.
        for cut in [0, 1, text.len() / 3, text.len() / 2, text.len().saturating_sub(1)] {
            let cut = cut.min(text.len());
            std::fs::write(dir.path().join(format!("t{i}_{cut}_{name}")), &text[..cut]).unwrap();
        }
        // The same file with random bytes spliced in.
        let mut spliced = text.clone();
        for _ in 0..8 {
            let at = (rng.next() as usize) % spliced.len().max(1);
            let byte = (rng.next() & 0xff) as u8;
            if at < spliced.len() {
                spliced[at] = byte;
            }
        }
        std::fs::write(dir.path().join(format!("s{i}_{name}")), &spliced).unwrap();
    }
    for i in 0..40 {
        let len = (rng.next() % 4096) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
        std::fs::write(dir.path().join(format!("random{i}.ts")), bytes).unwrap();
    }
    assert_survives(dir.path());
}

#[test]
fn invalid_utf8_is_skipped_with_a_note() {
    let dir = common::project(&[("src/ok.ts", "export const a = 1\n")]);
    std::fs::write(
        dir.path().join("src/latin1.ts"),
        b"// caf\xe9\nimport { Effect, Schedule } from \"effect\"\nEffect.retry(Schedule.recurs(1))\n",
    )
    .unwrap();
    let (code, report) = common::check_json(dir.path(), &["."]);
    assert_eq!(code, 0);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["path"] == "src/latin1.ts" && n["message"] == "skipped: not valid UTF-8"),
        "{notes:?}"
    );
}

#[test]
fn a_retry_inside_a_parse_error_is_a_note_not_a_silent_miss() {
    let broken = "import { Effect, Schedule } from \"effect\"\n\
                  export const ok = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(1)))\n\
                  export const broken = Effect.retry(Schedule.recurs(2), @@ #)\n\
                  export const after = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))\n";
    let dir = common::project(&[("src/broken.ts", broken)]);
    let (_, report) = common::check_json(dir.path(), &[".", "--select", "inline-schedule"]);
    let found = common::findings(&report);
    assert_eq!(
        found,
        [
            ("src/broken.ts".to_string(), 2, "inline-schedule".to_string()),
            ("src/broken.ts".to_string(), 4, "inline-schedule".to_string())
        ],
        "code before and after the error is analysed"
    );
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["path"] == "src/broken.ts"
            && n["message"]
                .as_str()
                .unwrap()
                .starts_with("not analysed: parse error at 3:")),
        "{notes:?}"
    );
}

/// A retry module, for the broken files below.
const RETRY_MODULE: &str = "import { Schedule } from \"effect\"\n\
                            export const transient = Schedule.exponential(\"100 millis\").pipe(Schedule.jittered, Schedule.upTo(\"2 seconds\"))\n";

/// Parse-error notes of a report: `(path, line)`.
fn parse_error_notes(report: &serde_json::Value) -> Vec<(String, u64)> {
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["message"].as_str().unwrap().starts_with("not analysed: parse error"))
        .map(|n| (n["path"].as_str().unwrap().to_string(), n["line"].as_u64().unwrap_or(0)))
        .collect()
}

#[test]
fn a_retry_lost_to_a_parse_error_is_noted_at_its_file_and_line() {
    // `Effect.retry` lost its `(`: the parser ends the `pipe(` call early and the retry
    // becomes an object in an error node: no retry site, no finding.
    let broken = r#"import { Effect } from "effect"
import * as Retry from "./infra/retry.js"

export class UserService {
  load(id: string) {
    return this.http.get(`/users/${id}`).pipe(
      Effect.map((r) => r.body),
      Effect.retry{ schedule: Retry.transient }),
    )
  }
}
"#;
    // The import of Effect is not closed: nothing it imports is known, so no retry is.
    let unclosed_import = r#"import { Effect, Schedule from "effect"

export const sync = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
"#;
    let dir = common::project(&[
        ("src/infra/retry.ts", RETRY_MODULE),
        ("src/broken.ts", broken),
        ("src/unclosed.ts", unclosed_import),
    ]);
    let (_, report) = common::check_json(dir.path(), &["."]);
    let found = common::findings(&report);
    assert!(
        found.iter().all(|f| f.0 == "src/infra/retry.ts"),
        "no retry is read from the broken files: {found:?}"
    );
    let notes = parse_error_notes(&report);
    assert!(
        notes
            .iter()
            .any(|(path, line)| path == "src/broken.ts" && (6..=8).contains(line)),
        "{report:#}"
    );
    assert!(notes.contains(&("src/unclosed.ts".to_string(), 1)), "{report:#}");
    let message = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == "src/unclosed.ts")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("parse error at 1:"), "{message}");
    assert!(message.contains("an import"), "{message}");
}

#[test]
fn valid_code_gets_no_parse_error_note() {
    // Variance annotations leave error nodes in tree-sitter-typescript 0.23 (recovery blanks
    // them); a retry beside them is read and no note says otherwise.
    let variance = r#"import { Effect, Schedule } from "effect"
export interface Port<in out E> { readonly run: (e: E) => Effect.Effect<void> }
export const f = <const T,>(x: T) => x
export const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(2), while: (e) => e === 1 }))
"#;
    let dir = common::project(&[("src/infra/retry.ts", RETRY_MODULE), ("src/variance.ts", variance)]);
    let (_, report) = common::check_json(dir.path(), &["."]);
    assert_eq!(parse_error_notes(&report), [], "{report:#}");
    // Nor does any fixture: they are valid code.
    for entry in std::fs::read_dir(common::repo_root().join("fixtures")).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let (_, report) = common::check_json(&path, &["."]);
        assert_eq!(parse_error_notes(&report), [], "{}", path.display());
    }
}

/// `(exit code, stdout, stderr)` of `retrylint check ARGS` in `dir`, with extra environment.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut command = common::bin();
    command.current_dir(dir).arg("check").args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn flat_sql_expressions_of_thousands_of_terms_are_skipped_with_a_note_not_a_stack_overflow() {
    let terms: Vec<String> = (0..2300).map(|i| format!("id = {i}")).collect();
    let or = format!(
        "UPDATE job_leases SET holder = 'a', lease_until = now() WHERE {};\n",
        terms.join(" OR ")
    );
    let selects: Vec<String> = (0..30000).map(|i| format!("SELECT {i}")).collect();
    let union = format!("INSERT INTO job_leases (name) {};\n", selects.join(" UNION ALL "));
    let ok = "UPDATE job_leases SET holder = $1 WHERE name = $2;\n";
    let dir = common::project(&[("db/or.sql", &or), ("db/union.sql", &union), ("db/ok.sql", ok)]);
    let (code, stdout, stderr) = run(dir.path(), &[".", "--no-prefilter", "--format", "json"], &[]);
    assert!(matches!(code, Some(0 | 1)), "{code:?}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let notes = report["notes"].as_array().unwrap();
    for file in ["db/or.sql", "db/union.sql"] {
        assert!(
            notes.iter().any(|n| n["path"] == file
                && n["message"]
                    .as_str()
                    .unwrap()
                    .contains("statement too large to analyse")),
            "{file}: {notes:#?}"
        );
    }
    assert!(!notes.iter().any(|n| n["path"] == "db/ok.sql"), "{notes:#?}");
}

#[test]
fn a_minified_sql_file_is_analysed_in_linear_time() {
    // One line of 3,000 statements: locating each statement once scanned the whole line.
    let statements: Vec<String> = (0..3000)
        .map(|i| format!("UPDATE job_leases SET holder = 'x{i}' WHERE name = 'n' AND x = 1;"))
        .collect();
    let dir = common::project(&[("db/min.sql", &statements.join(" "))]);
    let started = std::time::Instant::now();
    let (code, _, stderr) = run(dir.path(), &[".", "--format", "json"], &[]);
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn max_file_size_applies_to_a_file_named_on_the_command_line() {
    let big = format!(
        "import {{ Effect, Schedule }} from \"effect\"\nexport const a = Effect.retry({{ schedule: Schedule.exponential(\"1 second\") }})\n{}",
        "// padding\n".repeat(50)
    );
    let dir = common::project(&[("retrylint.toml", "max-file-size = 200\n"), ("src/a.ts", &big)]);
    let (code, stdout, stderr) = run(dir.path(), &["src/a.ts", "--format", "json"], &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(common::findings(&report).is_empty(), "{report:#}");
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["path"] == "src/a.ts" && n["message"].as_str().unwrap().contains("max-file-size")),
        "{report:#}"
    );
}

#[test]
fn human_output_shows_a_window_of_a_long_line_with_its_real_column() {
    let line = format!(
        "export const a = Effect.retry({{ schedule: Schedule.exponential(\"1 second\") }}){}",
        "; const x = 1".repeat(16_000)
    );
    let text = format!("import {{ Effect, Schedule }} from \"effect\"\n{line}\n");
    let dir = common::project(&[("src/min.ts", &text)]);
    let (code, stdout, _) = run(dir.path(), &["."], &[]);
    assert_eq!(code, Some(1));
    assert!(
        stdout.len() < 20_000,
        "printed {} bytes for a 200 KB line",
        stdout.len()
    );
    assert!(stdout.contains("┌─ src/min.ts:2:18"), "{stdout}");
    assert!(stdout.contains("┌─ src/min.ts:2:43"), "{stdout}");
    assert!(stdout.contains(" …\n"), "the cut is marked: {stdout}");
}

#[test]
fn a_panic_prints_a_report_and_exits_2() {
    let dir = common::project(&[(
        "src/a.ts",
        "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.retry({ schedule: Schedule.exponential(\"1 second\") })\n",
    )]);
    let (code, _, stderr) = run(dir.path(), &["."], &[("RETRYLINT_TEST_PANIC", "inline-schedule")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("retrylint {} crashed", env!("CARGO_PKG_VERSION"))),
        "{stderr}"
    );
    assert!(stderr.contains("file: src/a.ts"), "{stderr}");
    assert!(stderr.contains("rule: inline-schedule"), "{stderr}");
    // A panic while a file is read is caught (the other files are still checked), reported
    // and exits 2.
    let (code, _, stderr) = run(dir.path(), &["."], &[("RETRYLINT_TEST_PANIC", "extract")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("file: src/a.ts\n  rule: extract"), "{stderr}");
    assert!(stderr.contains("src/a.ts: skipped: internal error"), "{stderr}");
    let (code, _, stderr) = run(dir.path(), &["."], &[("RETRYLINT_TEST_PANIC", "main")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("crashed (internal error: RETRYLINT_TEST_PANIC=main"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn skipped_files_always_get_a_note() {
    use std::os::unix::ffi::OsStrExt;
    let retry = "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.retry({ schedule: Schedule.exponential(\"1 second\") })\n";
    let dir = common::project(&[("src/a.ts", retry), ("outside/b.ts", retry)]);
    std::os::unix::fs::symlink(dir.path().join("outside/b.ts"), dir.path().join("src/link.ts")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), dir.path().join("src/linked-dir")).unwrap();
    let odd = dir.path().join("src").join(std::ffi::OsStr::from_bytes(b"odd-\xff.ts"));
    std::fs::write(&odd, retry).unwrap();
    let (_, stdout, stderr) = run(dir.path(), &["src", "src/link.ts", "--format", "json"], &[]);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let notes = report["notes"].as_array().unwrap();
    let noted = |path: &str, what: &str| {
        notes
            .iter()
            .any(|n| n["path"].as_str().unwrap().starts_with(path) && n["message"].as_str().unwrap().contains(what))
    };
    assert!(noted("src/link.ts", "symbolic link"), "{notes:#?}");
    assert!(noted("src/linked-dir", "symbolic link"), "{notes:#?}");
    assert!(noted("src/odd-", "not valid UTF-8"), "{notes:#?}");
    let files: Vec<String> = common::findings(&report).into_iter().map(|f| f.0).collect();
    assert!(files.iter().all(|f| f == "src/a.ts"), "{files:?}");
}

#[cfg(unix)]
#[test]
fn reading_a_config_or_stdin_is_bounded() {
    let dir = common::project(&[
        ("retrylint.toml", "max-file-size = 100\n"),
        ("src/a.ts", "export const a = 1\n"),
    ]);
    // An endless config (a device) is an error, not a hang or an exhausted memory.
    let (code, _, stderr) = run(dir.path(), &[".", "--config", "/dev/zero"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not a regular file (a character device)"), "{stderr}");
    let mut child = common::bin()
        .current_dir(dir.path())
        .args(["check", "--stdin-filename", "src/a.ts"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The writer stops when retrylint stops reading.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let chunk = vec![b' '; 4096];
        while stdin.write_all(&chunk).is_ok() {}
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("stdin is over the size limit of 100 bytes"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_retry_policy_nested_deeper_than_the_extractor_follows_gets_a_note() {
    let policy = format!(
        "Schedule.exponential(\"1 second\"){}",
        ".pipe(Schedule.upTo({ times: 2 }))".repeat(40)
    );
    let text = format!(
        "import {{ Effect, Schedule }} from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({{ schedule: {policy}, while: (e) => e === 1 }}))\n"
    );
    let dir = common::project(&[("src/deep.ts", &text)]);
    let (code, stdout, stderr) = run(dir.path(), &[".", "--format", "json"], &[]);
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["path"] == "src/deep.ts"
                && n["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("not analysed: the policy of the retry at 2:")),
        "{report:#}"
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_directory_gets_a_note() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::project(&[
        ("src/a.ts", "export const a = 1\n"),
        ("src/locked/b.ts", "import { Effect, Schedule } from \"effect\"\n"),
    ]);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.path().join("src/locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    // Root reads any directory: run as nobody.
    let mut command = if root {
        let mut command = std::process::Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        command.arg(env!("CARGO_BIN_EXE_retrylint"));
        command
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_retrylint"))
    };
    let output = command
        .current_dir(dir.path())
        .env("RETRYLINT_NO_CACHE", "1")
        .env("NO_COLOR", "1")
        .args(["check", "."])
        .output();
    std::fs::set_permissions(dir.path().join("src/locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = match output {
        Ok(output) if !root || output.status.code() != Some(127) => output,
        // Root without setpriv (util-linux, in every Debian) would read the directory: fail
        // rather than pass unrun.
        _ => panic!("running as root, this test needs setpriv (util-linux) to run retrylint as nobody"),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("note: src/locked: skipped: cannot read"), "{stderr}");
}

/// A file with hundreds of the same note (each retry's policy nested deeper than retrylint
/// follows) says the first twenty and counts the rest in one note, in the CLI and so in the
/// editor: a generated file must not flood the log, nor make the language server turn a
/// thousand notes into ranges.
#[test]
fn a_file_keeps_twenty_notes_and_counts_the_rest() {
    let deep = format!(
        "{}Schedule.recurs(1){}",
        "Schedule.jittered(".repeat(60),
        ")".repeat(60)
    );
    let mut source = String::from("import { Effect, Schedule } from \"effect\"\n");
    for i in 0..50 {
        source.push_str(&format!(
            "export const p{i} = Effect.retry(Effect.succeed({i}), {deep})\n"
        ));
    }
    let dir = common::project(&[("src/deep.ts", &source)]);
    let (_, report) = common::check_json(dir.path(), &[]);
    let notes: Vec<String> = report["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n["path"].as_str().is_some_and(|p| p.ends_with("deep.ts")))
        .map(|n| n["message"].as_str().unwrap_or_default().to_string())
        .collect();
    let deeper = notes
        .iter()
        .filter(|m| m.contains("nests deeper than retrylint follows"))
        .count();
    assert_eq!(deeper, 20, "{notes:#?}");
    assert!(
        notes
            .iter()
            .any(|m| m.starts_with("30 more notes of this file not shown")),
        "{notes:#?}"
    );
    assert_eq!(notes.len(), 21, "{notes:#?}");
}

/// The byte tests that decide whether a file is walked or parsed again (a string that may be
/// SQL, a `query!`/`select!` macro, what a ruled-out script can re-export) read each byte a
/// bounded number of times: a hostile file of repeats is checked in about the time a plain one
/// is, with the prefilter and with every file parsed. (Read quadratically, the quotes and the
/// identifiers each took over a minute at half this size.)
#[test]
fn hostile_repeats_are_read_in_linear_time() {
    let quotes = format!("pub fn a() -> &'static str {{ r#\"{}\"# }}\n", "\"".repeat(400_000));
    let idents = format!("pub fn a() {{ let _ = {}; }}\n", "query".repeat(80_000));
    let selects = format!("pub fn a() {{ {} }}\n", "select ".repeat(60_000));
    let exports = format!(
        "import * as P from \"./p\"\nP.Effect.retry(x)\n{}\n}}\n",
        "export {".repeat(50_000)
    );
    let reexports = format!(
        "import * as A from \"./a\"\n{}export {{ A }}\n",
        "export { x } from \"./x\"\n".repeat(16_000)
    );
    let dir = common::project(&[
        ("Cargo.toml", "[package]\nname = \"h\"\nversion = \"0.1.0\"\n"),
        ("src/lib.rs", "mod quotes;\nmod idents;\nmod selects;\n"),
        ("src/quotes.rs", &quotes),
        ("src/idents.rs", &idents),
        ("src/selects.rs", &selects),
        ("web/exports.ts", &exports),
        ("web/reexports.ts", &reexports),
        ("web/p.ts", "export * from \"./reexports\"\n"),
    ]);
    for args in [
        &[".", "--format", "json", "--no-cache"][..],
        &[".", "--format", "json", "--no-cache", "--no-prefilter"],
    ] {
        let started = std::time::Instant::now();
        let (code, _, stderr) = run(dir.path(), args, &[]);
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {stderr}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
}
