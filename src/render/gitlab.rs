//! `--format gitlab`: a GitLab Code Quality report, the Code Climate JSON subset GitLab reads
//! (`description`, `check_name`, `fingerprint`, `severity`, `location.path`,
//! `location.lines.begin`/`end`), for the merge request widget and the pipeline's Code Quality
//! tab. Fingerprints are the ones SARIF and baselines use, so a finding keeps its identity
//! across pipelines while unrelated lines move.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::slash_path;
use crate::check::Outcome;
use crate::rules::Severity;

#[derive(Serialize)]
struct Issue<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    check_name: &'a str,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

/// GitLab's severities are info, minor, major, critical and blocker.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "major",
        _ => "minor",
    }
}

/// The project directory GitLab resolves report paths against: `CI_PROJECT_DIR` on a runner.
pub fn project_dir_from_env() -> Option<std::path::PathBuf> {
    std::env::var_os("CI_PROJECT_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .and_then(|d| std::fs::canonicalize(d).ok())
}

/// Writes the report: a JSON array of issues, in output order. Paths are relative to
/// `project_dir` when the file is inside it, else as shown elsewhere (relative to the current
/// directory).
pub fn gitlab(out: &mut dyn Write, outcome: &Outcome, project_dir: Option<&Path>) -> io::Result<()> {
    let fingerprints = crate::fingerprint::fingerprints(&outcome.index, &outcome.diagnostics);
    let issues: Vec<Issue> = outcome
        .diagnostics
        .iter()
        .zip(fingerprints)
        .map(|(d, fingerprint)| {
            let (begin, end) = outcome.index.loaded(d.file).map_or((1, 1), |facts| {
                (
                    facts.position(d.span.start).0,
                    facts.position(d.span.end.max(d.span.start)).0,
                )
            });
            let absolute = &outcome.index.files[d.file].absolute;
            let path = project_dir
                .and_then(|dir| absolute.strip_prefix(dir).ok())
                .unwrap_or_else(|| outcome.index.path(d.file));
            let description = match &d.help {
                Some(help) => format!("{} (help: {help})", d.message),
                None => d.message.clone(),
            };
            Issue {
                kind: "issue",
                description,
                check_name: d.rule,
                fingerprint: format!("{fingerprint:016x}"),
                severity: severity(d.severity),
                location: Location {
                    path: slash_path(path),
                    lines: Lines { begin, end },
                },
            }
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &issues).map_err(io::Error::from)?;
    writeln!(out)
}
