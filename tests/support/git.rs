//! A throwaway git repository for tests of `--changed-since` and the GitHub Action.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    /// `git init` in a fresh temporary directory, with a local identity and no signing.
    pub fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo.git(&["config", "user.name", "retrylint tests"]);
        repo.git(&["config", "user.email", "tests@retrylint.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    pub fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    /// Runs git in the repository, panics on failure, returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .current_dir(self.dir.path())
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.dir.path())
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn write(&self, path: &str, text: &str) {
        let full = self.dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    /// Stages everything and commits; returns the commit id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--message", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    pub fn join(&self, path: &str) -> PathBuf {
        self.dir.path().join(path)
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

/// The retry module of the pull-request fixtures (`tests/changed_since.rs`, `tests/github.rs`).
pub const RETRY: &str = r#"import { Schedule } from "effect"
export const transient = Schedule.exponential("100 millis").pipe(Schedule.jittered)
"#;

/// The base version of a feature: inline policies on lines 3 and 4, a named one on line 5.
pub const BASE: &str = r#"import { Effect, Schedule } from "effect"
import { transient } from "../infra/retry.js"
export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
export const b = Effect.succeed(2).pipe(Effect.retry(Schedule.recurs(4)))
export const c = Effect.succeed(3).pipe(Effect.retry(transient))
"#;
