//! `.pre-commit-hooks.yaml`, run by pre-commit itself (`pre-commit try-repo` with this
//! repository, its uncommitted changes included) in a throwaway git repository: the `retrylint`
//! hook (language: system, the binary under test on PATH) reports the findings of the staged
//! files, with the project around them, and skips commits that touch no file it reads.

mod common;
#[path = "support/git.rs"]
mod git;

use std::process::{Command, Output};

use git::{Repo, RETRY};

fn pre_commit_available() -> bool {
    let ok = Command::new("python3")
        .args(["-m", "pre_commit", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs pre-commit (tests/tools/requirements.txt)"
        );
        eprintln!("pre-commit is not installed: skipped");
    }
    ok
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A policy defined outside the retry module: only the project around a.ts tells.
const POLICIES: &str = r#"import { Schedule } from "effect"
export const slow = Schedule.spaced("1 second")
"#;

const USES_POLICY: &str = r#"import { Effect } from "effect"
import { slow } from "../policies.js"
export const a = Effect.succeed(1).pipe(Effect.retry({ schedule: slow, while: (e) => e === 1 }))
"#;

const CLEAN: &str = r#"import { Effect } from "effect"
import { transient } from "../infra/retry.js"
export const b = Effect.succeed(2).pipe(Effect.retry({ schedule: transient, while: (e) => e === 1 }))
"#;

fn try_repo(repo: &Repo, args: &[&str]) -> Output {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_retrylint")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("python3")
        .args(["-m", "pre_commit", "try-repo"])
        .arg(common::repo_root())
        .arg("retrylint")
        .args(args)
        .current_dir(repo.path())
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", repo.path().join(".git/pre-commit-home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo.path().join(".git"))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("pre-commit runs")
}

#[test]
fn the_pre_commit_hook_checks_the_staged_files_in_their_project() {
    if !pre_commit_available() {
        return;
    }
    let repo = Repo::new();
    repo.write("src/infra/retry.ts", RETRY);
    repo.write("src/policies.ts", POLICIES);
    repo.write("src/features/b.ts", CLEAN);
    repo.write("src/features/old.ts", "import { Effect, Schedule } from \"effect\"\nexport const o = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(1), while: (e) => e === 1 }))\n");
    repo.commit("base");

    // A commit that adds a.ts, whose policy lives outside the retry module.
    repo.write("src/features/a.ts", USES_POLICY);
    repo.git(&["add", "src/features/a.ts"]);
    let output = try_repo(&repo, &[]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{}", text(&output.stderr));
    assert!(
        stdout.contains("retry policy `slow` is built with `Schedule.spaced` here instead of in the retry module"),
        "the project around the staged file resolves the policy:\n{stdout}"
    );
    // Reported where the policy is built, with the staged file's use as its label.
    assert!(stdout.contains("src/policies.ts:2:14"), "{stdout}");
    assert!(stdout.contains("src/features/a.ts:3:66"), "{stdout}");
    assert!(
        !stdout.contains("old.ts"),
        "unstaged, unchanged files are not reported:\n{stdout}"
    );

    // --all-files: every file, old.ts included.
    let output = try_repo(&repo, &["--all-files"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout.contains("src/features/old.ts:2:"), "{stdout}");

    // A commit of files retrylint does not read: the hook is skipped.
    repo.commit("a");
    repo.write("README.md", "# shop\n");
    repo.write("src/types.d.ts", "export type A = 1\n");
    repo.git(&["add", "README.md", "src/types.d.ts"]);
    let output = try_repo(&repo, &[]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("(no files to check)Skipped"), "{stdout}");

    // A clean change passes.
    repo.commit("docs");
    repo.write("src/features/b.ts", &format!("{CLEAN}// reviewed\n"));
    repo.git(&["add", "src/features/b.ts"]);
    let output = try_repo(&repo, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
}

#[test]
fn the_hooks_file_declares_what_pre_commit_needs() {
    let hooks = std::fs::read_to_string(common::repo_root().join(".pre-commit-hooks.yaml")).unwrap();
    for line in [
        "- id: retrylint\n",
        "  language: system\n",
        "- id: retrylint-build\n",
        "  language: rust\n",
        "  entry: retrylint check --project .\n",
        "  files: \\.(ts|tsx|mts|cts|rs|sql)$\n",
        "  pass_filenames: true\n",
    ] {
        assert!(hooks.contains(line), "`{}` in .pre-commit-hooks.yaml", line.trim_end());
    }
}
