//! The README's first screen, Install section and test instructions are true: it opens with the
//! two commands a newcomer types, it leads with what works from a clone and labels what needs a
//! release, and it lists exactly the tests that `cargo test` ignores without their tools, which
//! say what they need and which `.ci/run` runs.

mod common;

use std::collections::BTreeSet;

fn readme() -> String {
    std::fs::read_to_string(common::repo_root().join("README.md")).unwrap()
}

/// The README's text under `heading` (`## Install`), up to the next `## ` heading.
fn section(text: &str, heading: &str) -> String {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("the README has `{heading}`"));
    let body = &text[start + heading.len() + 2..];
    body[..body.find("\n## ").unwrap_or(body.len())].to_string()
}

/// `file::test` for every `#[ignore]`d test in tests/*.rs, with its reason.
fn ignored_tests() -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(common::repo_root().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let ignore =
        regex_lite::Regex::new(r#"(?m)^#\[ignore(?: = "([^"]*)")?\]\n(?:#\[[^\n]*\]\n)*fn ([a-z0-9_]+)"#).unwrap();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        for caps in ignore.captures_iter(&text) {
            let reason = caps.get(1).map_or("", |m| m.as_str()).to_string();
            found.push((format!("{stem}::{}", &caps[2]), reason));
        }
    }
    found
}

#[test]
fn the_readme_opens_with_the_commands_a_newcomer_types() {
    let text = readme();
    let first_heading = text.find("\n## ").unwrap();
    let head = &text[..first_heading];
    let block = &head[head.find("```sh\n").expect("a shell block on the first screen") + 6..];
    let block = &block[..block.find("\n```").unwrap()];
    let commands: Vec<(&str, &str)> = block
        .lines()
        .map(|l| {
            l.split_once('#')
                .map_or((l.trim(), ""), |(c, comment)| (c.trim(), comment.trim()))
        })
        .collect();
    let names: Vec<&str> = commands.iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        ["cargo run --release -- check demo/shop", "cargo test"],
        "{block}"
    );

    // The main job: its comment gives the count `check demo/shop` reports (the full output is
    // tests/readme.rs's).
    let claimed: usize = regex_lite::Regex::new(r"(\d+) findings")
        .unwrap()
        .captures(commands[0].1)
        .expect("the comment says how many findings")[1]
        .parse()
        .unwrap();
    let (code, report) = common::check_json(&common::repo_root(), &["demo/shop"]);
    assert_eq!(code, 1);
    assert_eq!(
        report["diagnostics"].as_array().unwrap().len(),
        claimed,
        "{}",
        commands[0].1
    );

    // The tests: the comment gives the number `cargo test` leaves out without their tools.
    let left_out: usize = regex_lite::Regex::new(r"but for (\d+) tests that need other tools")
        .unwrap()
        .captures(commands[1].1)
        .expect("the comment says how many tests are ignored")[1]
        .parse()
        .unwrap();
    assert_eq!(left_out, ignored_tests().len(), "{}", commands[1].1);
}

/// Every ignored test says what it needs and that .ci/run runs it; .ci/run does, and the README's
/// Development section lists exactly these tests, with their number.
#[test]
fn the_ignored_tests_are_the_ones_the_readme_lists_and_ci_runs() {
    let ignored = ignored_tests();
    assert!(!ignored.is_empty());
    for (test, reason) in &ignored {
        assert!(
            reason.starts_with("needs ") && reason.ends_with("; .ci/run runs it"),
            "{test}: #[ignore = \"needs …; .ci/run runs it\"], not {reason:?}"
        );
    }
    let development = section(&readme(), "## Development");
    let table: String = development
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect::<Vec<_>>()
        .join("\n");
    let listed: BTreeSet<String> = regex_lite::Regex::new(r"`([a-z0-9_]+::[a-z0-9_]+)`")
        .unwrap()
        .captures_iter(&table)
        .map(|c| c[1].to_string())
        .collect();
    let actual: BTreeSet<String> = ignored.iter().map(|(t, _)| t.clone()).collect();
    assert_eq!(listed, actual, "the README's table of ignored tests (Development)");
    let number = format!("\n{} tests that need other tools are `#[ignore]`d", actual.len());
    assert!(
        development.contains(&number),
        "the Development section says `{}`",
        number.trim()
    );

    let ci = std::fs::read_to_string(common::repo_root().join(".ci/run")).unwrap();
    let last = ci
        .lines()
        .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap();
    assert!(
        last.contains("cargo test --locked -- --include-ignored"),
        ".ci/run ends with the whole suite, ignored tests included: {last}"
    );
}

/// The Install section leads with what works from a clone; every command that needs a
/// published package comes after "**After a release**".
#[test]
fn registry_installs_are_labelled_as_after_a_release() {
    let install = section(&readme(), "## Install");
    let marker = install
        .find("**After a release**")
        .expect("the Install section's release part");
    let (today, released) = install.split_at(marker);
    for registry in [
        "npm i -D retrylint ",
        "cargo install --locked retrylint",
        "retrylint@",
        "releases/download",
    ] {
        assert!(
            !today.contains(registry),
            "`{registry}` needs a release: it belongs after **After a release**"
        );
    }
    assert!(released.contains("npm i -D retrylint ") && released.contains("cargo install --locked retrylint"));
    let first = today.find("```sh\n").expect("a command that works today");
    assert!(
        today[first..].starts_with("```sh\ncargo install --locked --path ."),
        "the first install command builds from the clone"
    );
    assert!(
        today.contains("node npm/scripts/stage.mjs "),
        "the staged npm packages (tests/npm.rs runs them)"
    );

    // Outside the Install section, a command that fetches retrylint from a registry says so.
    let text = readme();
    for (at, _) in text.match_indices("npx retrylint@") {
        let line_start = text[..at].rfind('\n').unwrap();
        let context = &text[text[..line_start].rfind("\n\n").unwrap_or(0)..at];
        assert!(context.contains("after a release"), "`npx retrylint@…` near: {context}");
    }
}

/// The `run: |` script of the step `name` in a workflow, dedented.
fn step_script(workflow: &str, name: &str) -> String {
    let start = workflow
        .find(&format!("- name: {name}\n"))
        .unwrap_or_else(|| panic!("the workflow has a step `{name}`"));
    let mut lines = workflow[start..].lines().skip(1);
    let run_indent = loop {
        let line = lines.next().unwrap_or_else(|| panic!("step `{name}` has `run: |`"));
        if line.trim() == "run: |" {
            break line.len() - line.trim_start().len();
        }
        assert!(!line.trim_start().starts_with("- "), "step `{name}` has `run: |`");
    };
    let mut script = String::new();
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        if !line.trim().is_empty() && indent <= run_indent {
            break;
        }
        script.push_str(line.get(run_indent + 2..).unwrap_or(""));
        script.push('\n');
    }
    script
}

/// Runs `script` with bash (`-eo pipefail`, as GitHub runs a `shell: bash` step) in `dir`.
fn bash(script: &str, dir: &std::path::Path, envs: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .envs(envs.iter().copied())
        .env("LC_ALL", "C")
        .output()
        .expect("bash runs")
}

/// The release tarball, end to end without GitHub: the release workflow's own steps ("Stripped",
/// "Archive and checksum" once per target, then "Collect the checksums") make the archives and
/// `sha256sums.txt` from the binary built here, and the README's download block, pointed at
/// them (`file://` for the release URL), verifies one, unpacks it and runs it. The stripped-size
/// guard rejects a binary with its debug info.
#[test]
fn the_release_tarball_installs_as_the_readme_says() {
    let workflow = std::fs::read_to_string(common::repo_root().join(".github/workflows/release.yml")).unwrap();
    assert!(
        workflow.contains("run: cargo build --profile dist --locked --target \"$TARGET\""),
        "the release builds Cargo.toml's stripped `dist` profile"
    );
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(common::repo_root().join("Cargo.toml")).unwrap()).unwrap();
    let dist = &manifest["profile"]["dist"];
    assert_eq!(dist["inherits"].as_str(), Some("release"));
    assert_eq!(dist["strip"].as_bool(), Some(true), "[profile.dist] strips the binary");

    let scratch = tempfile::tempdir().unwrap();
    let checkout = scratch.path().join("checkout");
    std::fs::create_dir_all(&checkout).unwrap();
    for file in ["README.md", "LICENSE", "retrylint.schema.json"] {
        std::fs::copy(common::repo_root().join(file), checkout.join(file)).unwrap();
    }
    let stripped = scratch.path().join("retrylint");
    std::fs::copy(env!("CARGO_BIN_EXE_retrylint"), &stripped).unwrap();
    let stripped_size = {
        let status = std::process::Command::new("strip").arg(&stripped).status();
        assert!(status.is_ok_and(|s| s.success()), "strip (binutils) runs");
        std::fs::metadata(&stripped).unwrap().len()
    };

    let size_guard = step_script(&workflow, "Stripped");
    let archive = step_script(&workflow, "Archive and checksum");
    let targets = [
        ("x86_64-unknown-linux-musl", ""),
        ("aarch64-unknown-linux-musl", ""),
        ("x86_64-apple-darwin", ""),
        ("aarch64-apple-darwin", ""),
        ("x86_64-pc-windows-msvc", ".exe"),
    ];
    for (target, exe) in targets {
        assert!(
            workflow.contains(&format!("target: {target}\n")),
            "the matrix builds {target}"
        );
        let built = checkout.join(format!("target/{target}/dist/retrylint{exe}"));
        std::fs::create_dir_all(built.parent().unwrap()).unwrap();
        // The unstripped binary (debug info) fails the size guard; the stripped one passes.
        if target == targets[0].0 {
            std::fs::copy(env!("CARGO_BIN_EXE_retrylint"), &built).unwrap();
            let output = bash(&size_guard, &checkout, &[("TARGET", target), ("EXE", exe)]);
            assert!(
                !output.status.success(),
                "a binary with debug info passes the size guard"
            );
            assert!(String::from_utf8_lossy(&output.stdout).contains("not stripped"));
        }
        if target == targets[0].0 {
            std::fs::copy(&stripped, &built).unwrap();
        } else {
            // A stand-in for the cross-compiled binaries: the README installs the first.
            std::fs::write(&built, format!("{target}\n")).unwrap();
        }
        let output = bash(&size_guard, &checkout, &[("TARGET", target), ("EXE", exe)]);
        assert!(
            output.status.success(),
            "{target}: the stripped binary ({stripped_size} bytes) passes the size guard: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        let output = bash(&archive, &checkout, &[("TARGET", target), ("EXE", exe)]);
        assert!(
            output.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let output = bash(&step_script(&workflow, "Collect the checksums"), &checkout, &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let release = checkout.join("dist");

    // The README's block, with the release URL pointing at the archives made above.
    let install = section(&readme(), "## Install");
    let block = &install[install
        .find("Each GitHub release attaches")
        .expect("the README's release-binary block")..];
    let block = &block[block.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("\n```").unwrap() + 1];
    let url = "https://github.com/retrylint/retrylint/releases/download/v$v/";
    assert!(block.contains(url), "{block}");
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        block.starts_with(&format!("v={version} target=x86_64-unknown-linux-musl")),
        "{block}"
    );
    let local = block.replace(url, &format!("file://{}/", release.display()));
    let user = scratch.path().join("user");
    std::fs::create_dir_all(&user).unwrap();
    let output = bash(&local, &user, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{local}\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(": OK\n"),
        "sha256sum --check verified the archive: {stdout}"
    );
    assert!(stdout.ends_with(&format!("retrylint {version}\n")), "{stdout}");
    let unpacked = user.join("retrylint-x86_64-unknown-linux-musl");
    assert_eq!(
        std::fs::read(unpacked.join("retrylint")).unwrap(),
        std::fs::read(&stripped).unwrap(),
        "the archive holds the stripped binary"
    );
    for file in ["README.md", "LICENSE", "retrylint.schema.json"] {
        assert!(unpacked.join(file).is_file(), "the archive holds {file}");
    }

    // A tampered archive fails the README's check before anything is unpacked.
    let tampered = scratch.path().join("tampered");
    std::fs::create_dir_all(&tampered).unwrap();
    let archive = release.join("retrylint-x86_64-unknown-linux-musl.tar.gz");
    let mut bytes = std::fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let output = bash(&local, &tampered, &[]);
    assert!(!output.status.success(), "a corrupted archive is refused");
    assert!(!tampered.join("retrylint-x86_64-unknown-linux-musl").exists());
}

/// What .ci/run checks of the README's first install command: the same command, with a
/// scratch `--root`, and the installed binary run. (`cargo test` itself does not run it: a
/// `cargo install` is a build of its own, minutes long.)
#[test]
fn ci_runs_the_readmes_first_install_command() {
    let install = section(&readme(), "## Install");
    let block = &install[install.find("```sh\n").unwrap() + 6..];
    let command = block.lines().next().unwrap();
    let command = command.split('#').next().unwrap().trim();
    assert_eq!(command, "cargo install --locked --path .");
    let ci = std::fs::read_to_string(common::repo_root().join(".ci/run")).unwrap();
    let line = ci
        .lines()
        .find(|l| l.starts_with("cargo install "))
        .expect(".ci/run installs retrylint as the README says");
    let mut words: Vec<&str> = line.split_whitespace().collect();
    for extra in ["--quiet", "--root", "\"$install_root\""] {
        let at = words
            .iter()
            .position(|w| *w == extra)
            .unwrap_or_else(|| panic!("{line}"));
        words.remove(at);
    }
    assert_eq!(
        words.join(" "),
        command,
        ".ci/run's install is the README's, into a scratch root"
    );
    assert!(
        ci.contains("\"$install_root/bin/retrylint\" check demo/shop"),
        "and runs what it installed"
    );
}
