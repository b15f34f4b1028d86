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
}

pub struct Outcome {
    pub project: Project,
    pub diagnostics: Vec<Diagnostic>,
    pub notes: Vec<Note>,
    /// Files discovered (parsed or ruled out by the prefilter).
    pub files: usize,
    /// Files parsed.
    pub parsed: usize,
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
    let discovery = discover::discover(paths, &config)?;
    let project = Project::new(config, discovery.files);
    let parsed = (0..project.len())
        .into_par_iter()
        .filter(|&id| project.load(id, prefilter))
        .count();
    Ok((project, discovery.notes, parsed))
}

pub fn run(config: Config, options: &CheckOptions) -> Result<Outcome, Report> {
    let started = Instant::now();
    let (project, mut notes, parsed) = load_project(config, &options.paths, options.prefilter)?;

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
    notes.sort_by(|a, b| (&a.path, a.line, &a.message).cmp(&(&b.path, b.line, &b.message)));
    notes.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.message == b.message);

    Ok(Outcome {
        files: project.len(),
        parsed,
        project,
        diagnostics,
        notes,
        elapsed: started.elapsed(),
    })
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
