//! The npm packages (npm/): the launcher's search order (`node --test`), then the packages
//! staged and packed with the binary built here, by the commands of the README's "npm, from the
//! clone" (npm/scripts/stage.mjs --pack), installed offline into a TypeScript project from the
//! .tgz files — no registry, an empty cache — and run as users run them: `npx retrylint check .`, with the exit code, the arguments and the
//! signals passed through, and the RETRYLINT_BINARY and PATH fallbacks.
//!
//! Without a registry, the platform package is installed from its .tgz beside the launcher
//! package; the launcher then finds it through `require.resolve`, exactly as it finds the
//! optional dependency npm installs from the registry (the other platforms' optional
//! dependencies cannot be fetched offline, and npm skips them as it skips them on a platform
//! they do not fit).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn node_available() {
    common::require("node", "Node.js 18 or later");
    common::require("npm", "npm");
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(command: &mut Command) -> Output {
    let output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    output
}

/// A private, empty npm cache and no registry access, for npm and what runs it.
fn offline<'c>(command: &'c mut Command, cache: &Path) -> &'c mut Command {
    command
        .env("npm_config_cache", cache)
        .env("npm_config_offline", "true")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false")
        // A registry nothing listens on: a request that slipped past --offline fails fast.
        .env("npm_config_registry", "http://127.0.0.1:9/")
}

/// npm in `dir`, offline.
fn npm(dir: &Path, cache: &Path) -> Command {
    let mut command = Command::new("npm");
    command.current_dir(dir);
    offline(&mut command, cache);
    command
}

const FEATURE: &str = r#"import { Effect, Schedule } from "effect"

export const charge = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(3), while: (e) => e === "busy" }))
"#;

struct Installed {
    _root: tempfile::TempDir,
    project: PathBuf,
    cache: PathBuf,
}

impl Installed {
    fn launcher(&self) -> PathBuf {
        self.project.join("node_modules/retrylint/bin/retrylint.js")
    }

    fn npx(&self, args: &[&str]) -> Output {
        npm(&self.project, &self.cache)
            .args(["exec", "--offline", "--", "retrylint"])
            .args(args)
            .env("NO_COLOR", "1")
            .env("RETRYLINT_NO_CACHE", "1")
            .output()
            .expect("npm exec runs")
    }
}

/// The packages staged, packed and installed into a fresh TypeScript project, once for all
/// the tests of this file (none of them changes the installation).
fn install() -> &'static Installed {
    static INSTALLED: std::sync::OnceLock<Installed> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(install_once)
}

/// The README's "npm, from the clone" block: the `stage.mjs` arguments, and what `npm i -D`
/// installs (a glob of the staged .tgz files).
fn readme_npm_commands() -> (Vec<String>, String) {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let start = readme
        .find("**npm, from the clone**")
        .expect("the README's npm-from-the-clone block");
    let block = &readme[start..];
    let block = &block[block.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("\n```").unwrap()];
    let stage = block
        .lines()
        .find_map(|l| l.strip_prefix("node npm/scripts/stage.mjs "))
        .expect("the block stages the packages");
    let stage: Vec<String> = stage.split_whitespace().map(String::from).collect();
    let install = block
        .split("npm i -D ")
        .nth(1)
        .expect("the block installs them")
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    (stage, install)
}

fn install_once() -> Installed {
    let root = tempfile::tempdir().unwrap();
    let stage = root.path().join("stage");
    let cache = root.path().join("npm-cache");
    // The test binary carries debug info (140 MB); packing a stripped copy is 5× faster, and a
    // release stages the stripped binary of Cargo.toml's `dist` profile.
    let binary = root.path().join("retrylint");
    std::fs::copy(env!("CARGO_BIN_EXE_retrylint"), &binary).unwrap();
    let _ = Command::new("strip").arg(&binary).status();

    // The README's commands, with this test's directories and binary: stage and pack with the
    // arguments it gives, then install `OUT/*.tgz`.
    let (args, install_glob) = readme_npm_commands();
    let value_of = |flag: &str| {
        let at = args
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("the README passes {flag}"));
        args[at + 1].clone()
    };
    let out = value_of("--out");
    assert_eq!(
        value_of("--host-binary"),
        "target/dist/retrylint",
        "the stripped build the block makes"
    );
    assert!(args.contains(&"--pack".to_string()), "{args:?}");
    assert!(
        install_glob.ends_with(&format!("/{out}/*.tgz")),
        "`npm i -D` installs what was packed into {out}: {install_glob}"
    );
    let mut stage_args = args.clone();
    let at = stage_args.iter().position(|a| a == "--out").unwrap();
    stage_args[at + 1] = stage.display().to_string();
    let at = stage_args.iter().position(|a| a == "--host-binary").unwrap();
    stage_args[at + 1] = binary.display().to_string();
    let mut node = Command::new("node");
    offline(&mut node, &cache);
    let staged = run(node
        .current_dir(common::repo_root())
        .arg("npm/scripts/stage.mjs")
        .args(&stage_args));
    let packed: Vec<PathBuf> = text(&staged.stdout).lines().map(PathBuf::from).collect();
    let names: Vec<String> = packed
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(packed.len(), 2, "the launcher and this platform's package: {names:?}");
    assert!(names.contains(&"retrylint-0.1.0.tgz".to_string()), "{names:?}");
    let mut globbed: Vec<PathBuf> = std::fs::read_dir(&stage)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tgz"))
        .collect();
    globbed.sort();
    let mut sorted = packed.clone();
    sorted.sort();
    assert_eq!(globbed, sorted, "`OUT/*.tgz` is what was packed");

    let project = root.path().join("shop");
    for (path, contents) in [
        (
            "package.json",
            "{ \"name\": \"shop\", \"version\": \"1.0.0\", \"private\": true, \"type\": \"module\" }\n",
        ),
        (
            "tsconfig.json",
            "{ \"compilerOptions\": { \"strict\": true, \"module\": \"NodeNext\" } }\n",
        ),
        ("src/features/charge.ts", FEATURE),
        (
            "src/features/clean.ts",
            "import { Effect } from \"effect\"\nexport const a = Effect.succeed(1)\n",
        ),
    ] {
        let full = project.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, contents).unwrap();
    }
    let mut install = npm(&project, &cache);
    install.args(["i", "-D", "--offline", "--no-audit", "--no-fund"]);
    install.args(&globbed);
    let output = run(&mut install);
    let log = text(&output.stderr);
    assert!(!log.contains("ERR!"), "{log}");

    // What npm recorded: the launcher and this platform's binary, from the .tgz files.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("package.json")).unwrap()).unwrap();
    let deps = manifest["devDependencies"].as_object().unwrap();
    assert!(deps.contains_key("retrylint"), "{manifest}");
    let installed = Installed {
        _root: root,
        project,
        cache,
    };
    let bin = installed.project.join("node_modules/.bin/retrylint");
    assert!(bin.exists(), "npm links the launcher into node_modules/.bin");
    // The launcher package carries the config's JSON Schema, for `#:schema` (README, Configuration).
    let schema = installed.project.join("node_modules/retrylint/retrylint.schema.json");
    assert_eq!(
        std::fs::read(&schema).ok(),
        std::fs::read(common::repo_root().join("retrylint.schema.json")).ok(),
        "{}",
        schema.display()
    );
    installed
}

#[test]
#[ignore = "needs Node.js 18+ and npm; .ci/run runs it"]
fn the_launcher_search_order() {
    node_available();
    let output = Command::new("node")
        .args(["--test", "npm/retrylint/test/"])
        .current_dir(common::repo_root())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    assert!(stdout.contains("# fail 0"), "{stdout}");
}

#[test]
#[ignore = "needs Node.js 18+ and npm; .ci/run runs it"]
fn npx_retrylint_checks_a_typescript_project_offline() {
    node_available();
    let installed = install();

    // `npx retrylint check .`: findings, the summary and exit 1, as the binary prints them.
    let output = installed.npx(&["check", ".", "--format", "short"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{}", text(&output.stderr));
    assert!(
        stdout.contains(
            "src/features/charge.ts:3:71: error[inline-schedule]: retry policy built inline with `Schedule.recurs`"
        ),
        "{stdout}"
    );
    // The two sources, and package.json, package-lock.json and tsconfig.json (read for RS2 policies).
    assert!(
        stdout.contains("1 finding at 1 site (1 error, 0 warnings) in 5 files"),
        "{stdout}"
    );
    let direct = common::check(&installed.project, &[".", "--format", "json"]);
    let through_npm = installed.npx(&["check", ".", "--format", "json"]);
    let strip = |o: &Output| {
        let mut report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        report["summary"]["elapsed_ms"] = 0.into();
        report
    };
    assert_eq!(strip(&through_npm), strip(&direct), "the launcher adds nothing");

    // Exit codes pass through: clean is 0, a usage error is 2.
    let output = installed.npx(&["check", "src/features/clean.ts"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    let output = installed.npx(&["check", ".", "--select", "no-such-rule"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("unknown rule `no-such-rule`"));
    let output = installed.npx(&["--version"]);
    assert_eq!(
        text(&output.stdout).trim(),
        format!("retrylint {}", env!("CARGO_PKG_VERSION"))
    );

    // Stdin passes through too (`--stdin-filename`, as editors and hooks use it).
    let mut child = npm(&installed.project, &installed.cache)
        .args(["exec", "--offline", "--", "retrylint", "check", "--stdin-filename"])
        .arg("src/features/clean.ts")
        .args(["--format", "short"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(FEATURE.as_bytes()).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stdout).contains("src/features/clean.ts:3:71: error[inline-schedule]"));
}

#[test]
#[ignore = "needs Node.js 18+ and npm; .ci/run runs it"]
fn the_launcher_falls_back_to_retrylint_binary_and_path() {
    node_available();
    let installed = install();
    // The launcher as published, where no platform package can be resolved from.
    let alone = tempfile::tempdir().unwrap();
    let launcher = alone.path().join("retrylint.js");
    std::fs::copy(installed.launcher(), &launcher).unwrap();
    let launch = |envs: &[(&str, &str)]| {
        let mut command = Command::new("node");
        command
            .arg(&launcher)
            .args(["check", ".", "--format", "short"])
            .current_dir(&installed.project)
            .env_remove("RETRYLINT_BINARY")
            .env("PATH", std::env::var("PATH").unwrap());
        for (key, value) in envs {
            command.env(key, value);
        }
        command.output().unwrap()
    };
    let binary = env!("CARGO_BIN_EXE_retrylint");
    let output = launch(&[("RETRYLINT_BINARY", binary)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("error[inline-schedule]"));

    let bin_dir = Path::new(binary).parent().unwrap();
    let node_dir = which("node").parent().unwrap().to_path_buf();
    let path = format!("{}:{}", node_dir.display(), bin_dir.display());
    let output = launch(&[("PATH", &path)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("error[inline-schedule]"));

    let output = launch(&[("PATH", &node_dir.display().to_string())]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("retrylint: no binary found"), "{stderr}");
    assert!(stderr.contains("RETRYLINT_BINARY"), "{stderr}");

    let output = launch(&[("RETRYLINT_BINARY", "/nonexistent/retrylint")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("cannot run /nonexistent/retrylint (from RETRYLINT_BINARY)"));
}

fn which(tool: &str) -> PathBuf {
    let output = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .unwrap();
    PathBuf::from(text(&output.stdout).trim())
}

#[cfg(unix)]
#[test]
#[ignore = "needs Node.js 18+ and npm; .ci/run runs it"]
fn signals_reach_the_binary_and_its_fate_is_the_launchers() {
    use std::os::unix::process::ExitStatusExt;
    node_available();
    let installed = install();
    // The language server waits on stdin, which the test keeps open: only a signal ends it.
    let mut child = Command::new("node")
        .arg(installed.launcher())
        .arg("lsp")
        .current_dir(&installed.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let mut stdout = child.stdout.take().unwrap();
    // Wait until the binary runs (an initialize request gets its answer).
    {
        use std::io::{Read, Write};
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;
        let mut stdin = _stdin.as_ref().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
        let mut header = [0u8; 16];
        stdout.read_exact(&mut header).unwrap();
        assert_eq!(&header, b"Content-Length: ");
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the launcher did not exit on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        status.signal(),
        Some(15),
        "the launcher dies of the binary's signal: {status:?}"
    );
    // The binary is gone too: its stdout (the pipe) closes.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut rest);
        let _ = done.send(());
    });
    assert!(
        finished.recv_timeout(Duration::from_secs(20)).is_ok(),
        "the binary still runs after the launcher exited"
    );
}
