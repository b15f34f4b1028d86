//! The rule tester (oxc's `Tester`): a rule file's own `pass`, `fail` and `fix` vectors and
//! its doc's examples (`rules/<name>.md`), each checked in a project of its own through the
//! in-memory entry point (`workspace::check_texts_with`) with only that rule selected, and the
//! rendered findings kept as one insta snapshot per rule (`src/snapshots/`). `cargo test <rule>` (the rule's file name, `uncapped_schedule`)
//! runs them all; every failure is collected and reported together.
//!
//! - a `pass` vector, and each block under the doc's `## Use instead`: no finding;
//! - a `fail` vector, and each block under `## Example`: exactly one finding, in its file;
//! - a `fix` vector, and each example a `## Fix` block shows `after=N`: `--fix
//!   --unsafe-fixes` turns it into the after text, which parses with no new error, no longer
//!   has the finding, and a second run leaves alone; a doc example that a fix changes must
//!   show its after block;
//! - every fix the rule emits has the safety its metadata declares, a rule that declares a
//!   fix has fix vectors, and one that declares none emits none;
//! - at least two `pass` and two `fail` vectors of the rule's own.
//!
//! Test code only (`#![cfg(test)]`). This module only collects a rule's vectors, so that a
//! rule file's tests import nothing above `rules`; running them through the whole pipeline,
//! which rules never reach, is `crate::rule_tester`'s (`Tester::test`).

#![cfg(test)]

use super::Rule;

/// One project to check: its files, the one asserted on last, and its package's `effect`.
pub(crate) struct Case {
    pub(crate) label: String,
    pub(crate) files: Vec<(String, String)>,
    pub(crate) effect: Option<String>,
}

impl Case {
    pub(crate) fn path(&self) -> &str {
        &self.files.last().expect("a case has its file").0
    }

    pub(crate) fn code(&self) -> &str {
        &self.files.last().expect("a case has its file").1
    }
}

pub struct Tester {
    pub(crate) rule: &'static Rule,
    pub(crate) pass: Vec<Case>,
    pub(crate) fail: Vec<Case>,
    pub(crate) fix: Vec<(Case, String)>,
    /// Files written beside every vector (a policy module the vectors import).
    pub(crate) context: Vec<(String, String)>,
    pub(crate) failures: Vec<String>,
    pub(crate) snapshot: String,
}

impl Tester {
    pub fn new(rule: &'static Rule) -> Tester {
        Tester {
            rule,
            pass: Vec::new(),
            fail: Vec::new(),
            fix: Vec::new(),
            context: Vec::new(),
            failures: Vec::new(),
            snapshot: String::new(),
        }
    }

    /// A file written beside every vector, wherever it is declared (not beside the doc's
    /// examples, which have their own `context` blocks).
    pub fn with_file(mut self, path: &str, code: &str) -> Tester {
        self.context.push((path.to_string(), code.to_string()));
        self
    }

    /// `(path, code)` pairs that must produce no finding.
    pub fn pass(mut self, cases: &[(&str, &str)]) -> Tester {
        let cases: Vec<Case> = cases
            .iter()
            .enumerate()
            .map(|(at, (path, code))| self.case(format!("pass {}", at + 1), path, code))
            .collect();
        self.pass.extend(cases);
        self
    }

    /// `(path, code)` pairs that must produce exactly one finding.
    pub fn fail(mut self, cases: &[(&str, &str)]) -> Tester {
        let cases: Vec<Case> = cases
            .iter()
            .enumerate()
            .map(|(at, (path, code))| self.case(format!("fail {}", at + 1), path, code))
            .collect();
        self.fail.extend(cases);
        self
    }

    /// `(path, before, after)`: `--fix --unsafe-fixes` turns `before` into `after`.
    pub fn fix(mut self, cases: &[(&str, &str, &str)]) -> Tester {
        let cases: Vec<(Case, String)> = cases
            .iter()
            .enumerate()
            .map(|(at, (path, before, after))| (self.case(format!("fix {}", at + 1), path, before), after.to_string()))
            .collect();
        self.fix.extend(cases);
        self
    }

    /// A vector at `path`, which may add the version of `effect` its package depends on as a
    /// doc block's info string does (`"src/infra/retry.ts effect=4.0.0-beta.66"`); without
    /// it the version is unknown, and every version's names are understood.
    fn case(&self, label: String, path: &str, code: &str) -> Case {
        let mut words = path.split_whitespace();
        let path = words.next().unwrap_or_default();
        let effect = words.find_map(|w| w.strip_prefix("effect=")).map(str::to_string);
        Case {
            label,
            files: vec![(path.to_string(), code.to_string())],
            effect,
        }
    }
}
