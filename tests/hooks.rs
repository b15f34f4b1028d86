//! `.pre-commit-hooks.yaml`, run by pre-commit itself (`pre-commit try-repo` with this
//! repository, its uncommitted changes included) in a throwaway git repository: the `retrylint`
//! hook (language: system, the binary under test on PATH) reports the findings of the staged
//! files, with the project around them, and skips commits that touch no file it reads. The
//! hooks and the README's lint-staged recipe pass exactly the files the binary reads.

mod common;
#[path = "support/git.rs"]
mod git;

use std::process::{Command, Output};

use git::{Repo, RETRY};

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
    let root = common::repo_root().display().to_string();
    let mut all = vec!["try-repo", root.as_str(), "retrylint"];
    all.extend_from_slice(args);
    pre_commit(repo, &all)
}

/// A JavaScript file with an inline policy: read like TypeScript.
const INLINE_JS: &str = "import { Effect, Schedule } from \"effect\"\nexport const c = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(1), while: (e) => e === 1 }))\n";

#[test]
#[ignore = "needs pre-commit from PyPI (a virtual environment under target/tmp); .ci/run runs it"]
fn the_pre_commit_hook_checks_the_staged_files_in_their_project() {
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

    // Every kind of file retrylint reads is passed: a staged JavaScript module is checked.
    repo.commit("a");
    repo.write("src/features/c.js", INLINE_JS);
    repo.git(&["add", "src/features/c.js"]);
    let output = try_repo(&repo, &[]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("src/features/c.js:2:"), "{stdout}");

    // A commit of files retrylint does not read: the hook is skipped.
    repo.commit("c");
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

/// `python -m pre_commit ARGS` in `repo`, with the binary under test on PATH.
fn pre_commit(repo: &Repo, args: &[&str]) -> Output {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_retrylint")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    Command::new(common::python_tools())
        .arg("-m")
        .arg("pre_commit")
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

/// The README's `.pre-commit-config.yaml`, as a project uses it: `repo:` is a repository with
/// this `.pre-commit-hooks.yaml` (standing in for the published one, whose tag `rev:` names),
/// and, as the README says a clone can until the release, the same with `rev:` a commit.
#[test]
#[ignore = "needs pre-commit from PyPI (a virtual environment under target/tmp); .ci/run runs it"]
fn the_readme_pre_commit_config_runs_the_hook() {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let start = readme
        .find("**pre-commit** (`.pre-commit-config.yaml`)")
        .expect("the README's pre-commit recipe");
    let block = &readme[start..];
    let block = &block[block.find("```yaml\n").unwrap() + 8..];
    let block = &block[..block.find("\n```").unwrap() + 1];
    let url = "https://github.com/retrylint/retrylint";
    assert!(block.contains(&format!("repo: {url}\n")), "{block}");
    let rev = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("rev: "))
        .expect("the recipe pins a rev");

    let hooks = Repo::new();
    hooks.write(
        ".pre-commit-hooks.yaml",
        &std::fs::read_to_string(common::repo_root().join(".pre-commit-hooks.yaml")).unwrap(),
    );
    let commit = hooks.commit("hooks");
    hooks.git(&["tag", rev]);

    for (label, pinned) in [("the release tag", rev.to_string()), ("a commit", commit)] {
        let config = block
            .replace(url, &hooks.path().display().to_string())
            .replace(&format!("rev: {rev}"), &format!("rev: {pinned}"));
        let repo = Repo::new();
        repo.write(".pre-commit-config.yaml", &config);
        repo.write("src/infra/retry.ts", RETRY);
        repo.write("src/policies.ts", POLICIES);
        repo.commit("base");
        repo.write("src/features/c.js", INLINE_JS);
        repo.git(&["add", "src/features/c.js"]);
        let output = pre_commit(&repo, &["run"]);
        let stdout = text(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{label}:\n{config}\n{stdout}\n{}",
            text(&output.stderr)
        );
        assert!(stdout.contains("src/features/c.js:2:"), "{label}: {stdout}");
    }
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
        "  pass_filenames: true\n",
    ] {
        assert!(hooks.contains(line), "`{}` in .pre-commit-hooks.yaml", line.trim_end());
    }
}

/// The value of `key` in each hook of .pre-commit-hooks.yaml, in order (a plain or a
/// single-quoted YAML scalar).
fn hook_values(hooks: &str, key: &str) -> Vec<String> {
    let prefix = format!("  {key}: ");
    hooks
        .split("\n- id: ")
        .skip(1)
        .map(|hook| {
            let value = hook
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("every hook sets `{key}`:\n{hook}"));
            match value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
                Some(quoted) => quoted.replace("''", "'"),
                None => value.to_string(),
            }
        })
        .collect()
}

/// The words of the first `(a|b|c)` group of a pattern, or of a `{a,b,c}` glob.
fn alternatives(pattern: &str, open: char, close: char, separator: char) -> Vec<String> {
    let start = pattern.find(open).unwrap_or_else(|| panic!("`{open}` in {pattern}")) + 1;
    let end = start + pattern[start..].find(close).unwrap();
    pattern[start..end].split(separator).map(String::from).collect()
}

/// pre-commit passes a hook the staged paths its `files` pattern finds (Python's `re.search`)
/// and its `exclude` pattern does not: for each hook, exactly the names the binary reads, as
/// `check --show-settings` tells, over every extension the README lists and many it does not.
#[test]
fn the_hooks_pass_exactly_the_files_retrylint_reads() {
    let hooks = std::fs::read_to_string(common::repo_root().join(".pre-commit-hooks.yaml")).unwrap();
    let files = hook_values(&hooks, "files");
    let exclude = hook_values(&hooks, "exclude");
    assert_eq!(files.len(), 2, "two hooks");
    assert!(files.iter().all(|f| *f == files[0]) && exclude.iter().all(|e| *e == exclude[0]));
    let extensions = alternatives(&files[0], '(', ')', '|');
    let (files, exclude) = (
        regex_lite::Regex::new(&files[0]).unwrap(),
        regex_lite::Regex::new(&exclude[0]).unwrap(),
    );
    let mut wrong = Vec::new();
    for name in common::candidate_names(&extensions) {
        let passed = files.is_match(&name) && !exclude.is_match(&name);
        let read = common::reads(&name);
        if passed != read {
            wrong.push(format!(
                "{name}: the hook {}, retrylint {} it",
                if passed { "passes it" } else { "leaves it out" },
                if read { "reads" } else { "does not read" }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "fix `files`/`exclude` in .pre-commit-hooks.yaml:\n{}",
        wrong.join("\n")
    );
}

/// The README's lint-staged recipe names every extension retrylint reads, and no other.
#[test]
fn the_lint_staged_recipe_covers_every_extension_retrylint_reads() {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let start = readme
        .find("\"lint-staged\": {")
        .expect("the README's lint-staged recipe");
    let line = readme[start..].lines().nth(1).unwrap();
    let glob = line.trim().split('"').nth(1).unwrap();
    assert!(
        glob.starts_with("*.{") && glob.ends_with('}'),
        "one glob of extensions: {glob}"
    );
    let listed: std::collections::BTreeSet<String> = alternatives(glob, '{', '}', ',').into_iter().collect();
    let extra: Vec<String> = listed.iter().cloned().collect();
    let read: std::collections::BTreeSet<String> = common::candidate_names(&extra)
        .iter()
        .filter_map(|name| name.strip_prefix("src/a.").filter(|e| !e.contains('.')))
        .filter(|e| common::reads(&format!("src/a.{e}")))
        .map(String::from)
        .collect();
    assert_eq!(listed, read, "the lint-staged glob in the README's Install section");
}
