//! Runs a rule's vectors ([`crate::rules::tester::Tester`], declared in the rule's file) and
//! its doc's examples through the whole pipeline: the in-memory entry point
//! ([`crate::workspace::check_texts_with`]) with only that rule selected, and the rendered
//! findings kept as one insta snapshot per rule (`src/snapshots/`). A module of its own, at
//! the top of the crate, so that the pipeline still flows one way: rules never reach
//! `workspace`, `check`, `fix` or `render`, even in their tests.
//!
//! Test code only (`#![cfg(test)]`).

#![cfg(test)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::check::{CheckOptions, Outcome};
use crate::config::Config;
use crate::fix::Applicability;
use crate::rules::doc_blocks::{blocks, Block};
use crate::rules::tester::{Case, Tester};
use crate::rules::FixSafety;
use crate::source::Language;

/// A project on disk holding only what the pipeline reads beside the sources (the
/// `package.json` naming Effect's version); the sources are given as texts.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    fn new(effect: Option<&str>) -> Project {
        let dir = tempfile::tempdir().expect("a temporary directory");
        if let Some(version) = effect {
            let manifest = format!("{{\"dependencies\": {{\"effect\": \"{version}\"}}}}\n");
            std::fs::write(dir.path().join("package.json"), manifest).expect("package.json written");
        }
        let root = std::fs::canonicalize(dir.path()).expect("the directory exists");
        Project { _dir: dir, root }
    }

    fn config(&self) -> Config {
        Config::defaults(self.root.clone())
    }
}

impl Tester {
    /// Runs the vectors and the doc's examples, then compares the snapshot of the rendered
    /// findings. Panics with every failure at once.
    pub fn test(mut self) {
        let name = self.rule.name;
        if self.pass.len() < 2 || self.fail.len() < 2 {
            self.failures.push(format!(
                "{name}: a rule has at least two pass and two fail vectors of its own ({} and {})",
                self.pass.len(),
                self.fail.len()
            ));
        }
        match (self.rule.fix, self.fix.is_empty()) {
            (FixSafety::None, false) => {
                self.failures
                    .push(format!("{name} declares no fix, yet has fix vectors"));
            }
            (FixSafety::Safe | FixSafety::Unsafe, true) => self.failures.push(format!(
                "{name} declares a fix: it has fix vectors (`.fix(&[(path, before, after)])`)"
            )),
            _ => {}
        }
        // The files beside every vector, whether given before or after it.
        let context = std::mem::take(&mut self.context);
        let cases = self
            .pass
            .iter_mut()
            .chain(self.fail.iter_mut())
            .chain(self.fix.iter_mut().map(|(case, _)| case));
        for case in cases {
            case.files.splice(0..0, context.iter().cloned());
        }
        for case in std::mem::take(&mut self.pass) {
            self.expect(&case, 0);
            self.parses(&case);
        }
        for case in std::mem::take(&mut self.fail) {
            self.expect(&case, 1);
            self.parses(&case);
        }
        for (case, after) in std::mem::take(&mut self.fix) {
            self.parses(&case);
            let fixed = self.fixed(&case);
            if fixed.as_deref() != Some(after.as_str()) {
                self.failures.push(format!(
                    "{name}: {} fixed is\n{}\nnot\n{after}",
                    case.label,
                    fixed.as_deref().unwrap_or("(unchanged)")
                ));
            }
        }
        self.docs();
        let Tester { failures, snapshot, .. } = self;
        assert!(
            failures.is_empty(),
            "{} failure(s):\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
        insta::assert_snapshot!(name, snapshot);
    }

    /// The doc's examples: each incorrect block its one finding, each correct block none,
    /// each fix its `after` block.
    fn docs(&mut self) {
        let name = self.rule.name;
        let all = blocks(self.rule.doc);
        let context: Vec<&Block> = all.iter().filter(|b| b.context).collect();
        let example = |label: String, block: &Block| {
            let mut files: Vec<(String, String)> = context.iter().map(|c| (c.path.clone(), c.code.clone())).collect();
            files.push((block.path.clone(), block.code.clone()));
            Case {
                label,
                files,
                effect: block.effect.clone(),
            }
        };
        let incorrect: Vec<&Block> = all
            .iter()
            .filter(|b| !b.context && b.after.is_none() && b.section == "Example")
            .collect();
        let correct: Vec<&Block> = all
            .iter()
            .filter(|b| !b.context && b.after.is_none() && b.section == "Use instead")
            .collect();
        if incorrect.is_empty() || correct.is_empty() {
            self.failures.push(format!(
                "{name}: its doc has an `## Example` and a `## Use instead` block"
            ));
        }
        let afters: BTreeMap<usize, &Block> = all.iter().filter_map(|b| b.after.map(|n| (n, b))).collect();
        if let Some(n) = afters.keys().find(|n| !(1..=incorrect.len()).contains(n)) {
            self.failures.push(format!("{name}: `after={n}` names no example"));
        }
        for (at, block) in correct.iter().enumerate() {
            self.expect(&example(format!("doc: correct example {}", at + 1), block), 0);
        }
        for (at, block) in incorrect.iter().enumerate() {
            let case = example(format!("doc: example {}", at + 1), block);
            self.expect(&case, 1);
            if self.rule.fix == FixSafety::None {
                continue;
            }
            let fixed = self.fixed(&case);
            match (afters.get(&(at + 1)), fixed) {
                (Some(after), fixed) if fixed.as_deref() != Some(after.code.as_str()) => self.failures.push(format!(
                    "{name}: {} fixed is\n{}\nnot its `after={}` block\n{}",
                    case.label,
                    fixed.as_deref().unwrap_or("(unchanged)"),
                    at + 1,
                    after.code
                )),
                (None, Some(fixed)) => self.failures.push(format!(
                    "{name}: {} has a fix: show it with an `after={}` block\n{fixed}",
                    case.label,
                    at + 1
                )),
                _ => {}
            }
        }
    }

    /// Checks `case` with only this rule: `want` findings in total, all in the case's file,
    /// and every fix of the declared safety. The rendered findings join the snapshot.
    fn expect(&mut self, case: &Case, want: usize) {
        let name = self.rule.name;
        let project = Project::new(case.effect.as_deref());
        let outcome = self.check(&project, &case.files);
        let found = outcome.diagnostics.len();
        let in_file = outcome
            .diagnostics
            .iter()
            .filter(|d| outcome.index.path(d.file) == Path::new(case.path()))
            .count();
        if found != want || in_file != want {
            self.failures.push(format!(
                "{name}: {} ({}) has {found} finding(s), {in_file} in its file, not {want}:\n{}\n{}",
                case.label,
                case.path(),
                render(&outcome),
                case.code()
            ));
        }
        for diagnostic in &outcome.diagnostics {
            if let Some(fix) = diagnostic.fix.as_ref().filter(|f| f.safety != self.rule.fix) {
                self.failures.push(format!(
                    "{name}: {} emits a {:?} fix, but the rule declares {:?}",
                    case.label, fix.safety, self.rule.fix
                ));
            }
        }
        if want > 0 {
            self.snapshot.push_str(&format!("── {}: {}\n", case.label, case.path()));
            self.snapshot.push_str(&render(&outcome));
            self.snapshot.push('\n');
        }
    }

    /// A vector is code as written: it parses without an error.
    fn parses(&mut self, case: &Case) {
        let errors = Language::from_path(Path::new(case.path()))
            .and_then(|language| crate::extract::parse_error_count(language, case.code().as_bytes()));
        // SQL has no grammar here: its text is read, not parsed.
        if errors.is_some_and(|n| n > 0) {
            self.failures.push(format!(
                "{}: {} does not parse ({} errors):\n{}",
                self.rule.name,
                case.label,
                errors.unwrap_or_default(),
                case.code()
            ));
        }
    }

    /// The case's file as `--fix --unsafe-fixes` leaves it, when a fix changed it, after
    /// the invariants: the fixed text parses with no new error, the finding is gone, and a
    /// second run changes nothing.
    fn fixed(&mut self, case: &Case) -> Option<String> {
        let name = self.rule.name;
        let project = Project::new(case.effect.as_deref());
        let files = case.files.clone();
        let report = self.fix_report(&project, &files)?;
        let file = report.files.iter().find(|f| f.path == Path::new(case.path()))?;
        let fixed = String::from_utf8(file.fixed.clone()).expect("a fix keeps the text UTF-8");
        let language = Language::from_path(Path::new(case.path())).expect("a checked file has a language");
        if !crate::fix::still_parses(language, case.code().as_bytes(), fixed.as_bytes()) {
            self.failures
                .push(format!("{name}: {} fixed does not parse:\n{fixed}", case.label));
        }
        let mut refixed = files;
        refixed.last_mut().expect("a case has its file").1 = fixed.clone();
        let outcome = self.check(&project, &refixed);
        let left: Vec<_> = outcome
            .diagnostics
            .iter()
            .filter(|d| outcome.index.path(d.file) == Path::new(case.path()))
            .collect();
        if !left.is_empty() {
            self.failures.push(format!(
                "{name}: {} fixed still has its finding:\n{}\n{fixed}",
                case.label,
                render(&outcome)
            ));
        }
        if let Some(again) = self.fix_report(&project, &refixed) {
            if !again.files.is_empty() {
                self.failures.push(format!(
                    "{name}: {} changes again on a second --fix:\n{fixed}",
                    case.label
                ));
            }
        }
        // Declared safe: `--fix` alone applies it too; declared unsafe: `--fix` alone leaves
        // the file as it is.
        let safe_only = self.fix_with(&project, &case.files, Applicability::Safe);
        let safe_fixed = safe_only
            .as_ref()
            .and_then(|r| r.files.iter().find(|f| f.path == Path::new(case.path())));
        match self.rule.fix {
            FixSafety::Safe if safe_fixed.map(|f| &f.fixed) != Some(&file.fixed) => self.failures.push(format!(
                "{name}: {} is fixed differently without --unsafe-fixes",
                case.label
            )),
            FixSafety::Unsafe if safe_fixed.is_some() => self.failures.push(format!(
                "{name}: {} is fixed by --fix without --unsafe-fixes",
                case.label
            )),
            _ => {}
        }
        Some(fixed)
    }

    fn fix_report(&mut self, project: &Project, files: &[(String, String)]) -> Option<crate::fix::FixReport> {
        self.fix_with(project, files, Applicability::All)
    }

    fn fix_with(
        &mut self,
        project: &Project,
        files: &[(String, String)],
        applicability: Applicability,
    ) -> Option<crate::fix::FixReport> {
        let texts: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        let mut options = CheckOptions::new(Vec::new());
        options.select = Some(vec![self.rule]);
        match crate::workspace::fix_texts(&|| project.config(), &texts, &options, applicability) {
            Ok(report) => {
                for note in &report.notes {
                    self.failures
                        .push(format!("{}: --fix: {}", self.rule.name, note.message));
                }
                Some(report)
            }
            Err(e) => {
                self.failures.push(format!("{}: --fix failed: {e:?}", self.rule.name));
                None
            }
        }
    }

    fn check(&self, project: &Project, files: &[(String, String)]) -> Outcome {
        let texts: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        let mut options = CheckOptions::new(Vec::new());
        options.select = Some(vec![self.rule]);
        crate::workspace::check_texts_with(project.config(), &texts, &options)
    }
}

/// The findings as `retrylint check` prints them, without colour.
fn render(outcome: &Outcome) -> String {
    let mut out = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
    crate::render::human_findings(&mut out, outcome).expect("rendering into memory");
    String::from_utf8(out.into_inner()).expect("rendered text is UTF-8")
}
