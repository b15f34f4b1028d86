//! Baselines: `--write-baseline FILE` records today's findings; `--baseline FILE` reports
//! only findings that are not in it. Entries that no longer match are reported as stale, so
//! the baseline only shrinks. Entries name files relative to the project root, so a
//! baseline written from one working directory matches from any other. Its text is the
//! user's to edit, so whatever of it is printed goes through
//! [`crate::source::printable`] first.

use std::collections::HashMap;
use std::path::Path;

use miette::{miette, Report};
use serde::{Deserialize, Serialize};

use crate::diagnostic::Diagnostic;
use crate::index::Index;

#[derive(Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub version: u32,
    pub findings: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct Entry {
    pub rule: String,
    pub path: String,
    pub fingerprint: String,
    /// For the reader of the file; not compared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

fn entries(index: &Index, diagnostics: &[Diagnostic]) -> Vec<Entry> {
    crate::fingerprint::fingerprints(index, diagnostics)
        .into_iter()
        .zip(diagnostics)
        .map(|(fingerprint, d)| Entry {
            rule: d.rule.to_string(),
            path: index.root_relative(d.file),
            fingerprint: format!("{fingerprint:016x}"),
            message: d.message.clone(),
        })
        .collect()
}

pub fn write(path: &Path, index: &Index, diagnostics: &[Diagnostic]) -> Result<usize, Report> {
    // Replacing a symlink would cut the link (or, followed, write where it points); a
    // directory or a device is never a baseline.
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        let kind = metadata.file_type();
        let what = if kind.is_symlink() {
            Some("a symbolic link")
        } else if kind.is_dir() {
            Some("a directory")
        } else if !kind.is_file() {
            Some("not a regular file")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(miette!(
                help = "name a regular file (or a path that does not exist yet) for --write-baseline",
                "cannot write baseline {}: it is {what}",
                path.display()
            ));
        }
    }
    let baseline = Baseline {
        version: 1,
        findings: entries(index, diagnostics),
    };
    let json = serde_json::to_string_pretty(&baseline).map_err(|e| miette!("cannot write baseline: {e}"))?;
    crate::files::write_atomically(path, format!("{json}\n").as_bytes())
        .map_err(|e| miette!("cannot write baseline {}: {e}", path.display()))?;
    Ok(baseline.findings.len())
}

/// Reads a baseline: a regular file (`--baseline /dev/zero` or a FIFO is an error, never a
/// hang), of at most [`crate::files::MAX_BASELINE_SIZE`] bytes.
pub fn read(path: &Path) -> Result<Baseline, Report> {
    let bytes = crate::files::read_file(path, crate::files::MAX_BASELINE_SIZE, true)
        .map_err(|e| miette!("cannot read baseline {}: {e}", path.display()))?;
    let baseline: Baseline = serde_json::from_slice(&bytes).map_err(|e| {
        // serde's message quotes the offending value, which is the file's text, and the file
        // may be anything (`--baseline .env`): where, and what kind of mistake, is enough.
        let what = match e.classify() {
            serde_json::error::Category::Syntax => "not valid JSON",
            serde_json::error::Category::Eof => "the JSON ends early",
            serde_json::error::Category::Data => "JSON, but not a baseline's fields",
            serde_json::error::Category::Io => "cannot be read",
        };
        miette!(
            help = "write one with `retrylint check --write-baseline FILE`",
            "{} is not a retrylint baseline: {what} (line {}, column {})",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if baseline.version != 1 {
        return Err(miette!(
            "baseline {} has version {}, this retrylint reads version 1",
            path.display(),
            baseline.version
        ));
    }
    Ok(baseline)
}

/// Removes the findings the baseline knows (each entry matches one finding) and returns the
/// entries that matched nothing.
pub fn filter(baseline: &Baseline, index: &Index, diagnostics: &mut Vec<Diagnostic>) -> Vec<Entry> {
    let current = entries(index, diagnostics);
    let mut remaining: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for entry in &baseline.findings {
        *remaining
            .entry((&entry.rule, &entry.path, &entry.fingerprint))
            .or_default() += 1;
    }
    let mut keep = Vec::with_capacity(diagnostics.len());
    for (entry, diagnostic) in current.iter().zip(diagnostics.drain(..)) {
        match remaining.get_mut(&(entry.rule.as_str(), entry.path.as_str(), entry.fingerprint.as_str())) {
            Some(count) if *count > 0 => *count -= 1,
            _ => keep.push(diagnostic),
        }
    }
    *diagnostics = keep;
    let mut stale = Vec::new();
    for entry in &baseline.findings {
        let key = (entry.rule.as_str(), entry.path.as_str(), entry.fingerprint.as_str());
        if let Some(count) = remaining.get_mut(&key) {
            if *count > 0 {
                *count -= 1;
                stale.push(entry.clone());
            }
        }
    }
    stale
}
