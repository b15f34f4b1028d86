//! File names and source text come from whoever opened the pull request. None of it may reach
//! a terminal as a control sequence, a CI log as a workflow command of its own, or the job
//! summary as Markdown or HTML (issue 22, items 9 and 10). Each test runs the real binary on a
//! project whose names and strings carry the payloads, in every output channel.

use std::path::Path;
use std::process::Output;

mod common;

/// A newline and a workflow command in a file name.
const INJECTED_NAME: &str = "src/c\n::error::INJECTED\n.ts";
/// An escape sequence (set the window title) in a file name.
const TITLE_NAME: &str = "src/t\u{1b}]0;pwned\u{7}.ts";
/// Markup in a file name, for the job summary.
const MARKUP_NAME: &str = "src/a<img src=x onerror=alert(1)>`|# h.ts";

const RETRY: &str = "import { Effect, Schedule } from \"effect\"\n\
    export const a = Effect.fail(1).pipe(Effect.retry(Schedule.spaced(\"1 second\")))\n";

/// A cron string that clears the screen, in a job: its text reaches the messages.
const CRON: &str = "import { Jobs } from \"../infra/jobs.js\"\n\
    export const nightly = Jobs.make({\n\
      name: \"n\",\n\
      cron: \"\u{1b}[2J\u{1b}]0;x\u{7}0 61 * * *\",\n\
      exclusive: false,\n\
      timeout: \"1 minute\",\n\
      run: (slot) => work(slot),\n\
    })\n";

fn hostile_project() -> tempfile::TempDir {
    let dir = common::project(&[
        ("retrylint.toml", ""),
        ("package.json", r#"{ "dependencies": { "effect": "3.10.0" } }"#),
        ("src/jobs/nightly.ts", CRON),
        (INJECTED_NAME, RETRY),
        (TITLE_NAME, RETRY),
        (MARKUP_NAME, RETRY),
        // A retry in a region that does not parse: a note naming the file.
        (
            "src/broken\n::warning::X\n.ts",
            "import { Effect } from \"effect\"\nexport const b = Effect.retry(x, { times: 3 \n",
        ),
    ]);
    // A file that is not UTF-8: a note naming it.
    std::fs::write(
        dir.path().join("src/u\u{1b}[31m.ts"),
        b"import { Effect } from \"effect\"\nexport const x = Effect.retry(\"\xff\xfe\")\n",
    )
    .unwrap();
    dir
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = common::bin();
    command.current_dir(dir).args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the binary runs")
}

/// No control character but newlines and tabs, and no line that GitHub Actions reads as a
/// workflow command except the annotations retrylint writes itself.
fn assert_inert(what: &str, bytes: &[u8], own_commands: &[&str]) {
    let text = String::from_utf8_lossy(bytes);
    for c in text.chars() {
        assert!(
            !(matches!(c, '\u{202a}'..='\u{202e}') || c.is_control() && c != '\n' && c != '\t'),
            "{what}: a raw {c:?} reached the output:\n{text}"
        );
    }
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("::") {
            assert!(
                own_commands.iter().any(|own| trimmed.starts_with(own)),
                "{what}: a line a runner reads as a workflow command:\n{line}\n\nin:\n{text}"
            );
        }
    }
}

fn annotations_only() -> &'static [&'static str] {
    &["::error file=", "::warning file="]
}

#[test]
fn file_names_and_source_strings_cannot_inject_in_people_formats() {
    let dir = hostile_project();
    for format in ["human", "short"] {
        let out = run(
            dir.path(),
            &["check", ".", "--format", format, "--color", "always"],
            &[],
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Colour is retrylint's own escape sequences: take them out before looking.
        let stdout = strip_colour(&out.stdout);
        assert_inert(&format!("{format} stdout"), &stdout, &[]);
        assert_inert(&format!("{format} stderr"), &out.stderr, &[]);
        let text = String::from_utf8_lossy(&stdout);
        assert!(
            text.contains("src/c\\u{a}::error::INJECTED\\u{a}.ts"),
            "{format}: the name is shown escaped:\n{text}"
        );
        let notes = String::from_utf8_lossy(&out.stderr);
        assert!(notes.contains("src/u\\u{1b}[31m.ts"), "{format}: {notes}");
    }
}

#[test]
fn file_names_and_source_strings_cannot_inject_workflow_commands() {
    let dir = hostile_project();
    let summary = dir.path().join("summary.md");
    let out = run(
        dir.path(),
        &["check", "."],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_inert("github stdout", &out.stdout, annotations_only());
    assert_inert("github stderr", &out.stderr, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("file=src/c\\u{a}%3A%3Aerror%3A%3AINJECTED\\u{a}.ts"),
        "{stdout}"
    );

    // The job summary: the file names and messages are text, never markup.
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert_inert("job summary", markdown.as_bytes(), &[]);
    for forbidden in ["<img", "`|"] {
        assert!(
            !markdown.contains(forbidden),
            "{forbidden} in the job summary:\n{markdown}"
        );
    }
    for line in markdown.lines() {
        assert!(
            !line.starts_with('#') || line == "## retrylint",
            "a heading from the project: {line}\n{markdown}"
        );
        assert!(
            line.is_empty() || line.starts_with('|') || line.starts_with("## ") || !line.contains('<'),
            "{line}"
        );
    }
    assert!(
        markdown.contains("src/a&#60;img src=x onerror=alert(1)&#62;"),
        "{markdown}"
    );
    // A `)` in the name cannot end a link's destination early.
    assert!(markdown.contains("onerror=alert%281%29%3E"), "{markdown}");
}

#[test]
fn fix_notes_diffs_and_policies_are_escaped() {
    let dir = hostile_project();
    let fix = run(dir.path(), &["check", ".", "--fix", "--unsafe-fixes"], &[]);
    assert_inert("--fix stderr", &fix.stderr, &[]);
    assert_inert("--fix stdout", &fix.stdout, &[]);

    let dir = hostile_project();
    let diff = run(
        dir.path(),
        &["check", ".", "--diff", "--unsafe-fixes"],
        &[("GITHUB_ACTIONS", "true")],
    );
    let text = String::from_utf8_lossy(&diff.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let token = lines
        .first()
        .and_then(|l| l.strip_prefix("::stop-commands::"))
        .unwrap_or_else(|| panic!("a diff in a GitHub log stops workflow commands first:\n{text}"));
    assert!(token.len() >= 16, "an unguessable token: {token}");
    assert_eq!(lines.last(), Some(&format!("::{token}::").as_str()), "{text}");
    assert!(text.contains("+++ b/src/c\\u{a}::error::INJECTED\\u{a}.ts"), "{text}");
    assert_inert("--diff stderr", &diff.stderr, &[]);

    let policies = run(dir.path(), &["policies", "."], &[]);
    assert_inert("policies", &policies.stdout, &[]);
    assert_inert("policies stderr", &policies.stderr, &[]);
}

#[test]
fn a_config_error_never_prints_its_control_characters() {
    let dir = common::project(&[(
        "retrylint.toml",
        "# \u{1b}]0;pwned\u{7}\nbudget = \"\u{1b}[2J2 s\"\nunknown\u{1b}[31m = 1\n",
    )]);
    std::fs::write(dir.path().join("a.ts"), RETRY).unwrap();
    let out = run(dir.path(), &["check", "."], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_inert("config error", &out.stderr, &[]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("retrylint.toml"), "the error names the config:\n{text}");
}

/// The bytes without the SGR colour sequences (`ESC [ … m`) retrylint writes itself.
fn strip_colour(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b';') {
                j += 1;
            }
            if bytes.get(j) == Some(&b'm') {
                i = j + 1;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}
