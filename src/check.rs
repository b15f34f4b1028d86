//! The pipeline: discover → parse + extract (parallel) → index → rules (parallel) → sort.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use miette::Report;
use rayon::prelude::*;

use crate::config::Config;
use crate::discover;
use crate::facts::Note;
use crate::project::{FileId, Project};
use crate::rules::{self, Context, Diagnostic, Rule, Severity};

pub struct CheckOptions {
    pub paths: Vec<PathBuf>,
    /// Parse only files whose bytes can hold a fact (on by default; off to verify it).
    pub prefilter: bool,
    /// Run only these rules (`--select`).
    pub select: Option<Vec<&'static Rule>>,
    /// Never run these rules (`--ignore`).
    pub ignore: Vec<&'static Rule>,
    /// Report only findings on these lines (`--changed-since`); the whole project is analysed.
    pub changed: Option<crate::changed::ChangedLines>,
    /// Report only findings not recorded in this baseline (`--baseline`).
    pub baseline: Option<crate::baseline::Baseline>,
    /// Texts that replace the files on disk (canonical path → text): fixes in progress.
    pub overlay: std::collections::HashMap<PathBuf, Vec<u8>>,
}

impl CheckOptions {
    pub fn new(paths: Vec<PathBuf>) -> CheckOptions {
        CheckOptions {
            paths,
            prefilter: true,
            select: None,
            ignore: Vec::new(),
            changed: None,
            baseline: None,
            overlay: Default::default(),
        }
    }
}

pub struct Outcome {
    pub project: Project,
    pub diagnostics: Vec<Diagnostic>,
    pub notes: Vec<Note>,
    /// Files discovered (parsed or ruled out by the prefilter).
    pub files: usize,
    /// Files parsed.
    pub parsed: usize,
    /// Baseline entries that matched no finding.
    pub stale: Vec<crate::baseline::Entry>,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == severity).count()
    }
}

/// Discovers the files under `paths` and parses, in parallel, those that can hold a fact.
/// Returns the project, the discovery notes and how many files were parsed.
pub fn load_project(config: Config, paths: &[PathBuf], prefilter: bool) -> Result<(Project, Vec<Note>, usize), Report> {
    load_project_with(config, paths, prefilter, Default::default())
}

fn load_project_with(
    config: Config,
    paths: &[PathBuf],
    prefilter: bool,
    overlay: std::collections::HashMap<PathBuf, Vec<u8>>,
) -> Result<(Project, Vec<Note>, usize), Report> {
    let discovery = discover::discover(paths, &config)?;
    let project = Project::with_overlay(config, discovery.files, overlay);
    let parsed = (0..project.len())
        .into_par_iter()
        .filter(|&id| project.load(id, prefilter))
        .count();
    Ok((project, discovery.notes, parsed))
}

pub fn run(config: Config, options: &CheckOptions) -> Result<Outcome, Report> {
    let started = Instant::now();
    let (project, mut notes, parsed) =
        load_project_with(config, &options.paths, options.prefilter, options.overlay.clone())?;

    let enabled: Vec<(&Rule, Severity)> = rules::RULES
        .iter()
        .copied()
        .filter(|rule| {
            options
                .select
                .as_ref()
                .is_none_or(|s| s.iter().any(|r| r.name == rule.name))
        })
        .filter(|rule| !options.ignore.iter().any(|r| r.name == rule.name))
        .map(|rule| (rule, project.config.severity(rule)))
        .filter(|(_, severity)| *severity != Severity::Off)
        .collect();

    let checked: Vec<FileId> = project.checked_files().collect();
    let results: Vec<(Vec<Diagnostic>, Vec<Note>)> = checked
        .par_iter()
        .map(|&file| check_file(&project, file, &enabled))
        .collect();
    let mut diagnostics = Vec::new();
    for (found, file_notes) in results {
        diagnostics.extend(found);
        notes.extend(file_notes);
    }
    // Notes of every file looked at, including those parsed lazily for resolution.
    for id in 0..project.len() {
        if let Some(facts) = project.parsed(id) {
            notes.extend(facts.notes.iter().cloned());
        }
    }
    diagnostics.sort_by(|a, b| {
        let pa = &project.sources[a.file].path;
        let pb = &project.sources[b.file].path;
        (pa, a.span.start, a.rule, a.span.end).cmp(&(pb, b.span.start, b.rule, b.span.end))
    });
    diagnostics.dedup_by(|a, b| a.file == b.file && a.span == b.span && a.rule == b.rule && a.message == b.message);
    let mut diagnostics = apply_suppressions(&project, diagnostics, &enabled);
    let stale = match &options.baseline {
        Some(baseline) => crate::baseline::filter(baseline, &project, &mut diagnostics),
        None => Vec::new(),
    };
    if let Some(changed) = &options.changed {
        diagnostics.retain(|d| {
            let line = project.facts(d.file).position(d.span.start).0;
            changed.contains(&project.sources[d.file].absolute, line)
        });
    }
    notes.sort_by(|a, b| (&a.path, a.line, &a.message).cmp(&(&b.path, b.line, &b.message)));
    notes.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.message == b.message);

    Ok(Outcome {
        files: project.len(),
        parsed,
        project,
        diagnostics,
        notes,
        stale,
        elapsed: started.elapsed(),
    })
}

/// Drops findings a `retrylint-ignore` comment covers, and reports the comments themselves:
/// without a reason (`suppression-without-reason`), or suppressing nothing / naming no rule
/// (`unused-suppression`). A suppression of a rule that did not run is never called unused.
fn apply_suppressions(
    project: &Project,
    diagnostics: Vec<Diagnostic>,
    enabled: &[(&Rule, Severity)],
) -> Vec<Diagnostic> {
    use std::collections::HashSet;
    let severity_of = |name: &str| enabled.iter().find(|(r, _)| r.name == name).map(|(_, s)| *s);
    let mut used: HashSet<(FileId, usize, String)> = HashSet::new();
    let mut kept = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        let line = project.facts(d.file).line_of(d.span.start);
        let suppressed_by = project
            .suppressions(d.file)
            .iter()
            .enumerate()
            .find(|(_, s)| (s.line.is_none() || s.line == Some(line)) && s.rules.iter().any(|r| r == d.rule));
        match suppressed_by {
            Some((index, _)) => {
                used.insert((d.file, index, d.rule.to_string()));
            }
            None => kept.push(d),
        }
    }
    for file in 0..project.len() {
        for (index, suppression) in project.suppressions(file).iter().enumerate() {
            let meta = |rule: &'static str, message: String, help: &str| Diagnostic {
                rule,
                severity: severity_of(rule).unwrap_or(Severity::Warning),
                file,
                span: suppression.span,
                message,
                help: Some(help.to_string()),
                labels: Vec::new(),
                fix: None,
            };
            if suppression.reason.is_none() && severity_of("suppression-without-reason").is_some() {
                kept.push(meta(
                    "suppression-without-reason",
                    "suppression without a reason: a reviewer cannot tell a deliberate exception from a silenced finding".into(),
                    "add `-- <why this exception holds>` to the comment",
                ));
            }
            if severity_of("unused-suppression").is_none() {
                continue;
            }
            for name in &suppression.rules {
                let message = match rules::by_name(name) {
                    None => format!("`{name}` is not a retrylint rule: this suppression suppresses nothing"),
                    // Whether it is used cannot be known when the rule did not run.
                    Some(rule) if severity_of(rule.name).is_none() => continue,
                    Some(rule) if used.contains(&(file, index, rule.name.to_string())) => continue,
                    Some(rule) => format!("`{}` reports nothing here: this suppression is unused", rule.name),
                };
                kept.push(meta(
                    "unused-suppression",
                    message,
                    "remove the suppression, or fix the rule name",
                ));
            }
        }
    }
    kept.sort_by(|a, b| {
        let pa = &project.sources[a.file].path;
        let pb = &project.sources[b.file].path;
        (pa, a.span.start, a.rule, a.span.end).cmp(&(pb, b.span.start, b.rule, b.span.end))
    });
    kept
}

/// Runs every enabled rule on one file. A panic in a rule becomes a note naming the file and
/// the rule; the other rules' findings on the file are kept.
fn check_file(project: &Project, file: FileId, enabled: &[(&Rule, Severity)]) -> (Vec<Diagnostic>, Vec<Note>) {
    let facts = project.facts(file);
    let ctx = Context { project, file, facts };
    let mut diagnostics = Vec::new();
    let mut notes = Vec::new();
    for (rule, severity) in enabled {
        let mut found = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (rule.check)(&ctx, &mut found)));
        match outcome {
            Ok(()) => diagnostics.extend(found.into_iter().map(|mut d| {
                d.severity = *severity;
                d
            })),
            Err(_) => notes.push(Note {
                path: facts.path.clone(),
                line: None,
                message: format!(
                    "rule {} failed on this file (internal error); please report it",
                    rule.name
                ),
            }),
        }
    }
    (diagnostics, notes)
}
