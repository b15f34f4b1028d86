//! Issue 22, what retrylint reads: every file is a regular file, opened without blocking and
//! read with a size bound (22.6); a config extends only `.toml` files of its project, and an
//! error never quotes a file that is not a config (22.7); a symbolic link named on the command
//! line never moves the project (22.8); and a path that was not checked is always said (22.15).
//! The real binary, on projects written to temporary directories, run with a time limit (a read
//! that blocks fails the test rather than hanging it) and a memory limit (a read that never
//! ends fails it rather than the machine).
#![cfg(unix)]

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INLINE: &str = "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(3), while: (e) => e === \"busy\" }))\n";

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Standard error with miette's line wrapping undone: words separated by single spaces.
    fn said(&self) -> String {
        self.stderr
            .split_whitespace()
            .filter(|word| *word != "│")
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn report(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }

    /// The notes of a JSON report, as (path, message).
    fn notes(&self) -> Vec<(String, String)> {
        self.report()["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["path"].as_str().unwrap().into(),
                    n["message"].as_str().unwrap().into(),
                )
            })
            .collect()
    }
}

/// `retrylint ARGS` in `dir`, with `env`, the facts cache on only when `cache`: limited to 2 GB
/// of address space and killed after 60 s.
fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)], cache: bool) -> Run {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_retrylint"))
        .args(args)
        .current_dir(dir)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("RETRYLINT_CACHE_DIR")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if cache {
        command.env_remove("RETRYLINT_NO_CACHE");
    } else {
        command.env("RETRYLINT_NO_CACHE", "1");
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("the binary runs");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("retrylint {args:?} did not finish within 60 s (a read blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        code: status.code(),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    assert!(
        run.code.is_some(),
        "retrylint {args:?} was killed ({status}; out of memory?): {}",
        run.stderr
    );
    run
}

/// `retrylint check ARGS` in `dir`, without the cache.
fn check(dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    run_with(dir, &all, &[], false)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn symlink(target: impl AsRef<Path>, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// A project below a fresh temporary directory (`<tmp>/project`, canonical), with `.git` at
/// its root when `git`: a work tree's root, as retrylint tells one.
fn project_in(files: &[(&str, &str)], git: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("project");
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    std::fs::create_dir_all(&root).unwrap();
    if git {
        std::fs::create_dir(root.join(".git")).unwrap();
    }
    (dir, root)
}

#[test]
fn a_fifo_or_a_device_as_config_extend_or_baseline_is_an_error_not_a_hang_22_6() {
    let (_dir, root) = project_in(&[("src/a.ts", INLINE)], true);
    mkfifo(&root.join("fifo.toml"));
    mkfifo(&root.join("fifo.json"));
    for (args, says) in [
        (
            &["--config", "fifo.toml"][..],
            "cannot read config fifo.toml: not a regular file (a FIFO)",
        ),
        (
            &["--config", "/dev/zero"],
            "cannot read config /dev/zero: not a regular file (a character device)",
        ),
        (
            &["--baseline", "fifo.json"],
            "cannot read baseline fifo.json: not a regular file (a FIFO)",
        ),
        (
            &["--baseline", "/dev/zero"],
            "cannot read baseline /dev/zero: not a regular file (a character device)",
        ),
    ] {
        let mut all = vec!["."];
        all.extend_from_slice(args);
        let run = check(&root, &all);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.said().contains(says), "{args:?}: {}", run.stderr);
    }
    // `extend`: an error that names the config and its line, after no read of the target.
    for (extend, says) in [
        ("fifo.toml", "not a regular file (a FIFO)"),
        ("/dev/zero", "it leads outside the project"),
    ] {
        std::fs::write(root.join("retrylint.toml"), format!("extend = \"{extend}\"\n")).unwrap();
        let run = check(&root, &["."]);
        assert_eq!(run.code, Some(2), "{extend}: {}", run.stderr);
        assert!(
            run.said()
                .contains(&format!("cannot read the config `{extend}` extends: {says}")),
            "{extend}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("retrylint.toml:1:10]"), "{}", run.stderr);
    }
}

#[test]
fn ignore_files_are_read_as_every_file_is_22_6() {
    // A `.gitignore` that is a FIFO blocked the walk; one that is a link to /dev/zero read until
    // memory ran out; one that links out of the project was read. Each is a note now, and its
    // patterns do not apply (more is checked, not less).
    let (_dir, root) = project_in(
        &[("src/a.ts", INLINE), ("lib/b.ts", INLINE), ("app/c.ts", INLINE)],
        true,
    );
    let outside = root.parent().unwrap().join("outside-ignore");
    std::fs::write(&outside, "*.ts\n").unwrap();
    mkfifo(&root.join("src/.gitignore"));
    symlink("/dev/zero", &root.join("lib/.gitignore"));
    symlink(&outside, &root.join("app/.ignore"));
    // A regular one still applies, with its odd lines passed over.
    std::fs::write(root.join(".gitignore"), "[\n!\nignored.ts\n").unwrap();
    std::fs::write(root.join("src/ignored.ts"), INLINE).unwrap();
    let run = check(&root, &[".", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let files: Vec<String> = common::findings(&run.report()).into_iter().map(|f| f.0).collect();
    assert_eq!(files, ["app/c.ts", "lib/b.ts", "src/a.ts"], "{}", run.stdout);
    let notes = run.notes();
    for (path, says) in [
        ("src/.gitignore", "not a regular file (a FIFO)"),
        ("lib/.gitignore", "leads outside the project"),
        ("app/.ignore", "leads outside the project"),
    ] {
        assert!(
            notes
                .iter()
                .any(|(p, m)| p == path && m.starts_with("ignore file not read: ") && m.contains(says)),
            "{path}: {notes:#?}"
        );
    }
}

#[test]
fn resolution_files_are_read_only_inside_the_project_22_6() {
    // `@/policies` resolves through a tsconfig's `paths`. The project's tsconfig extends one
    // outside the project (its git root): that one is never read, so whether it exists does
    // not change the answer.
    let uses = "import { Effect } from \"effect\"\nimport { slow } from \"@/policies\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: slow, while: (e) => e === 1 }))\n";
    let policies = "import { Schedule } from \"effect\"\nexport const slow = Schedule.spaced(\"1 second\")\n";
    let (dir, root) = project_in(
        &[
            ("tsconfig.json", "{ \"extends\": \"../tsconfig.base.json\" }"),
            ("src/a.ts", uses),
            ("src/policies.ts", policies),
        ],
        true,
    );
    let base = std::fs::canonicalize(dir.path()).unwrap().join("tsconfig.base.json");
    let alone = check(&root, &["src/a.ts", "--format", "json"]);
    std::fs::write(
        &base,
        "{ \"compilerOptions\": { \"paths\": { \"@/*\": [\"./project/src/*\"] } } }",
    )
    .unwrap();
    let with_outside = check(&root, &["src/a.ts", "--format", "json"]);
    assert_eq!(
        common::findings(&with_outside.report()),
        common::findings(&alone.report()),
        "the tsconfig outside the project was read: {}",
        with_outside.stdout
    );
    // Inside the project, the same file is read and resolves the alias.
    std::fs::rename(&base, root.join("tsconfig.base.json")).unwrap();
    std::fs::write(root.join("tsconfig.json"), "{ \"extends\": \"./tsconfig.base.json\" }").unwrap();
    std::fs::write(
        root.join("tsconfig.base.json"),
        "{ \"compilerOptions\": { \"paths\": { \"@/*\": [\"./src/*\"] } } }",
    )
    .unwrap();
    let inside = check(&root, &["src/a.ts", "--format", "json"]);
    assert_ne!(
        common::findings(&inside.report()),
        common::findings(&alone.report()),
        "the alias resolves: {}",
        inside.stdout
    );
    // A package.json or lockfile that is a FIFO or a link to a device is passed over.
    mkfifo(&root.join("src/tsconfig.json"));
    mkfifo(&root.join("package.json"));
    symlink("/dev/zero", &root.join("pnpm-lock.yaml"));
    let (_dir, other) = project_in(
        &[
            ("package.json", "{ \"dependencies\": { \"effect\": \"^3.10.0\" } }"),
            ("src/a.ts", INLINE),
        ],
        true,
    );
    symlink("/dev/zero", &other.join("pnpm-lock.yaml"));
    mkfifo(&other.join("tsconfig.json"));
    for dir in [&root, &other] {
        let run = check(dir, &[".", "--format", "json"]);
        assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
    }
    let run = check(&other, &[".", "--format", "json"]);
    assert_eq!(common::findings(&run.report()).len(), 1, "{}", run.stdout);
}

#[test]
fn a_config_extends_only_toml_files_of_its_project_and_never_quotes_another_file_22_7() {
    let secret = "retrylint-test-secret-3f9c";
    let (dir, root) = project_in(
        &[("src/a.ts", INLINE), ("ci.env", &format!("TOKEN = {secret} ]\n"))],
        true,
    );
    // Outside the project (its git root), a valid config: not read either.
    let outside = std::fs::canonicalize(dir.path()).unwrap().join("outside.toml");
    std::fs::write(&outside, "[rules]\ninline-schedule = \"off\"\n").unwrap();
    for (extend, says) in [
        ("/proc/self/environ", "it leads outside the project"),
        ("/etc/passwd", "it leads outside the project"),
        ("ci.env", "not a `.toml` file"),
        ("../outside.toml", "it leads outside the project"),
    ] {
        std::fs::write(
            root.join("retrylint.toml"),
            format!("budget = \"2 seconds\"\nextend = \"{extend}\"\n"),
        )
        .unwrap();
        let run = run_with(&root, &["check", "."], &[("RETRYLINT_TEST_SECRET", secret)], false);
        assert_eq!(run.code, Some(2), "{extend}: {}", run.stderr);
        assert!(
            run.said()
                .contains(&format!("cannot read the config `{extend}` extends: {says}")),
            "{extend}: {}",
            run.stderr
        );
        // The error names the config and the line, and quotes nothing of the target.
        assert!(run.stderr.contains("retrylint.toml:2:10]"), "{}", run.stderr);
        assert!(!run.stderr.contains(secret), "{extend}: {}", run.stderr);
        assert!(!run.stderr.contains("root:x:0"), "{extend}: {}", run.stderr);
    }
    // A project's retrylint.toml that is a link to a file that is not a config is not read.
    std::fs::remove_file(root.join("retrylint.toml")).unwrap();
    for target in [root.join("ci.env"), PathBuf::from("/etc/passwd")] {
        let _ = std::fs::remove_file(root.join("retrylint.toml"));
        symlink(&target, &root.join("retrylint.toml"));
        let run = check(&root, &["."]);
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        assert!(run.said().contains("cannot read config"), "{}", run.stderr);
        assert!(
            !run.stderr.contains(secret) && !run.stderr.contains("root:x:0"),
            "{}",
            run.stderr
        );
    }
    // A baseline's parse error says where, never what (serde quotes the value it rejects).
    std::fs::write(root.join("baseline.json"), format!("{{\"version\": \"{secret}\"}}")).unwrap();
    std::fs::remove_file(root.join("retrylint.toml")).unwrap();
    let run = check(&root, &[".", "--baseline", "baseline.json"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.said().contains("baseline.json is not a retrylint baseline"),
        "{}",
        run.stderr
    );
    assert!(run.said().contains("(line 1, column"), "{}", run.stderr);
    assert!(!run.stderr.contains(secret), "{}", run.stderr);
}

#[test]
fn a_symbolic_link_named_on_the_command_line_never_moves_the_project_22_8() {
    // pre-commit and lint-staged pass staged links. Their targets: a file in another tree, a
    // directory elsewhere.
    let (dir, root) = project_in(&[("src/a.ts", "export const a = 1\n")], true);
    let elsewhere = std::fs::canonicalize(dir.path()).unwrap().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("deep")).unwrap();
    std::fs::write(elsewhere.join("e.ts"), INLINE).unwrap();
    std::fs::write(elsewhere.join("deep/f.ts"), INLINE).unwrap();
    symlink(elsewhere.join("e.ts"), &root.join("src/link.ts"));
    symlink(&elsewhere, &root.join("src/dir.ts"));
    for link in ["src/link.ts", "src/dir.ts"] {
        let run = run_with(&root, &["check", link, "--format", "json"], &[], true);
        assert_eq!(run.code, Some(0), "{link}: {}", run.stderr);
        let report = run.report();
        assert_eq!(report["summary"]["files"], 0, "{link}: {report:#}");
        assert!(
            run.notes()
                .iter()
                .any(|(p, m)| p == link && m.contains("a symbolic link")),
            "{link}: {report:#}"
        );
        // The cache is the project's, and nothing was walked or written where the link points.
        assert!(root.join(".retrylint_cache").is_dir(), "{link}");
        assert!(
            !elsewhere.join(".retrylint_cache").exists(),
            "{link}: the cache moved to the target"
        );
        // `--show-settings` names the project's root.
        let shown = run_with(&root, &["check", "--show-settings", link], &[], false);
        assert!(
            shown.stdout.contains(&format!("# root: {}\n", root.display())),
            "{link}: {}",
            shown.stdout
        );
    }
}

#[test]
fn a_cache_directory_that_is_a_link_is_never_used_22_8() {
    // A checkout can hold `.retrylint_cache` as a link: the cache would be written where it
    // points, and every other directory there removed as a stale cache.
    let (dir, root) = project_in(&[("src/a.ts", INLINE)], true);
    let victim = std::fs::canonicalize(dir.path()).unwrap().join("victim");
    std::fs::create_dir_all(victim.join("keep-me")).unwrap();
    std::fs::write(victim.join("keep-me/file"), "precious\n").unwrap();
    symlink(&victim, &root.join(".retrylint_cache"));
    let run = run_with(&root, &["check", "."], &[], true);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.said().contains("so no facts cache is read or written"),
        "{}",
        run.stderr
    );
    let left: Vec<_> = std::fs::read_dir(&victim)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["keep-me"], "the link's target was written or pruned");
    assert_eq!(
        std::fs::read_to_string(victim.join("keep-me/file")).unwrap(),
        "precious\n"
    );
}

#[test]
fn a_symlinked_retrylint_toml_keeps_the_project_where_the_link_is_22_8() {
    // A monorepo sharing one config: `app/retrylint.toml` is a link to `shared/retrylint.toml`,
    // inside the git root. The project is app/, not shared/.
    let dir = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(top.join(".git")).unwrap();
    for (path, text) in [
        ("shared/retrylint.toml", "[rules]\nretry-without-predicate = \"off\"\n"),
        ("shared/s.ts", INLINE),
        ("shared/package.toml", "[rules]\ninline-schedule = \"off\"\n"),
        ("app/src/a.ts", INLINE),
        ("app/pkg/p.ts", INLINE),
    ] {
        std::fs::create_dir_all(top.join(path).parent().unwrap()).unwrap();
        std::fs::write(top.join(path), text).unwrap();
    }
    let app = top.join("app");
    symlink("../shared/retrylint.toml", &app.join("retrylint.toml"));
    // A package's config may be a link too: it applies to the package's files.
    symlink("../../shared/package.toml", &app.join("pkg/retrylint.toml"));
    let run = run_with(&app, &["check", ".", "--format", "json"], &[], true);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let files: Vec<String> = common::findings(&run.report()).into_iter().map(|f| f.0).collect();
    assert_eq!(files, ["src/a.ts"], "{}", run.stdout);
    assert_eq!(run.report()["summary"]["files"], 2, "{}", run.stdout);
    assert!(app.join(".retrylint_cache").is_dir());
    assert!(
        !top.join("shared/.retrylint_cache").exists(),
        "the cache moved to the link's target"
    );
    let shown = run_with(&app, &["check", "--show-settings", "src/a.ts"], &[], false);
    assert!(
        shown.stdout.contains(&format!("# root: {}\n", app.display())),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("retry-without-predicate = \"off\""),
        "{}",
        shown.stdout
    );
}

#[test]
fn fifos_and_loops_of_links_in_the_tree_get_a_note_22_15() {
    let (_dir, root) = project_in(&[("src/a.ts", "export const a = 1\n")], true);
    mkfifo(&root.join("src/pipe.ts"));
    symlink("/dev/null", &root.join("src/null.ts"));
    symlink("two.ts", &root.join("src/one.ts"));
    symlink("one.ts", &root.join("src/two.ts"));
    symlink("b", &root.join("src/a"));
    symlink("a", &root.join("src/b"));
    symlink("nowhere.ts", &root.join("src/dangling.ts"));
    let run = check(&root, &[".", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let notes = run.notes();
    for (path, says) in [
        ("src/pipe.ts", "skipped: not a regular file (a FIFO)"),
        ("src/null.ts", "skipped: a symbolic link"),
        ("src/one.ts", "skipped: a symbolic link"),
        ("src/two.ts", "skipped: a symbolic link"),
        ("src/a", "skipped: a symbolic link"),
        ("src/b", "skipped: a symbolic link"),
        ("src/dangling.ts", "skipped: a symbolic link"),
    ] {
        assert!(
            notes.iter().any(|(p, m)| p == path && m.starts_with(says)),
            "{path}: {notes:#?}"
        );
    }
}

#[test]
fn a_named_path_that_is_not_checked_is_said_22_15() {
    let (_dir, root) = project_in(
        &[
            ("src/a.ts", "export const a = 1\n"),
            ("src/ignored.ts", INLINE),
            (".gitignore", "src/ignored.ts\ndist/\n"),
            ("dist/out.ts", INLINE),
            ("node_modules/pkg/index.ts", INLINE),
            (".hidden/h.ts", INLINE),
            ("README.md", "# app\n"),
        ],
        true,
    );
    mkfifo(&root.join("src/pipe.ts"));
    symlink("nowhere.ts", &root.join("src/dangling.ts"));
    for (path, says) in [
        ("src/pipe.ts", "skipped: not a regular file (a FIFO)"),
        ("src/dangling.ts", "skipped: a symbolic link"),
        (
            "src/ignored.ts",
            "skipped: an ignore file (.gitignore, .ignore) leaves it out",
        ),
        (
            "dist/out.ts",
            "skipped: an ignore file (.gitignore, .ignore) leaves out dist",
        ),
        ("node_modules/pkg/index.ts", "skipped: inside node_modules"),
        (".hidden/h.ts", "skipped: `.hidden` is hidden"),
        ("README.md", "skipped: not a kind of file retrylint reads"),
    ] {
        // Alone, beside a file that is checked, and as lint-staged and pre-commit name them.
        for args in [&[path][..], &["src/a.ts", path], &["--project", ".", path]] {
            let mut all = args.to_vec();
            all.extend(["--format", "json"]);
            let run = check(&root, &all);
            assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
            let notes = run.notes();
            assert!(
                notes.iter().any(|(p, m)| p == path && m.starts_with(says)),
                "{args:?}: {notes:#?}"
            );
        }
    }
    // A device outside the project: said, and its directory is not analysed as a project.
    let run = check(&root, &["src/a.ts", "/dev/null", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.notes()
            .iter()
            .any(|(p, m)| p == "/dev/null" && m == "skipped: not a regular file (a character device)"),
        "{:#?}",
        run.notes()
    );
    assert_eq!(run.report()["summary"]["files"], 1, "{}", run.stdout);
}

#[test]
fn a_named_path_that_cannot_be_read_exits_2_22_15() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, root) = project_in(
        &[
            ("src/a.ts", "export const a = 1\n"),
            ("src/locked.ts", INLINE),
            ("src/closed/b.ts", INLINE),
        ],
        true,
    );
    for path in [dir.path(), &root, &root.join("src")] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(root.join("src/locked.ts"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(root.join("src/closed"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    // Root reads anything: run as nobody (setpriv is in util-linux, on every Debian).
    let run_as = |args: &[&str]| -> Run {
        let mut all: Vec<&str> = Vec::new();
        if is_root {
            all.extend(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        }
        all.push(env!("CARGO_BIN_EXE_retrylint"));
        all.push("check");
        all.extend_from_slice(args);
        let output = Command::new(if is_root {
            "setpriv"
        } else {
            env!("CARGO_BIN_EXE_retrylint")
        })
        .args(if is_root { &all[..] } else { &all[2..] })
        .current_dir(&root)
        .env("RETRYLINT_NO_CACHE", "1")
        .env("NO_COLOR", "1")
        .output()
        .expect("setpriv (util-linux) runs retrylint as nobody");
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into(),
            stderr: String::from_utf8_lossy(&output.stderr).into(),
        }
    };
    for args in [
        &["src/locked.ts"][..],
        &["src/a.ts", "src/locked.ts"],
        &["--project", ".", "src/locked.ts"],
        &["src/closed"],
    ] {
        let run = run_as(args);
        let named = args.last().unwrap();
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.said().contains(&format!("cannot read {named}: Permission denied")),
            "{args:?}: {}",
            run.stderr
        );
    }
    // Met in a walk, an unreadable file is a note, and the run goes on.
    let run = run_as(&[".", "--format", "json"]);
    std::fs::set_permissions(root.join("src/closed"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let notes = run.notes();
    assert!(
        notes
            .iter()
            .any(|(p, m)| p == "src/locked.ts" && m.starts_with("skipped: cannot read")),
        "{notes:#?}"
    );
}
