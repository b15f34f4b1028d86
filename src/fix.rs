//! Applying fixes: edits by byte span, applied in rounds (overlapping edits wait for the next
//! round, after the file is re-analysed) and checked to re-parse without new errors; `files`
//! writes them.

use crate::diagnostic::{Edit, Fix, FixSafety};
use crate::source::Language;

/// Which fixes to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applicability {
    Safe,
    /// Safe and unsafe (`--unsafe-fixes`).
    All,
}

impl Applicability {
    pub fn allows(self, safety: FixSafety) -> bool {
        match safety {
            FixSafety::Safe => true,
            FixSafety::Unsafe => self == Applicability::All,
            FixSafety::None => false,
        }
    }
}

/// Applies as many of `fixes` (all edits of one file) as do not overlap, in span order.
/// A fix is applied whole or not at all. Returns the new text and how many fixes applied.
pub fn apply(text: &[u8], fixes: &[&Fix]) -> (Vec<u8>, usize) {
    let mut chosen: Vec<&Edit> = Vec::new();
    let mut applied = 0;
    let mut ordered: Vec<&Fix> = fixes.to_vec();
    ordered.sort_by_key(|f| f.edits.iter().map(|e| e.span.start).min().unwrap_or(0));
    for fix in ordered {
        let fits = fix.edits.iter().all(|edit| {
            edit.span.end as usize <= text.len()
                && edit.span.start <= edit.span.end
                && !chosen.iter().any(|other| overlaps(edit, other))
        });
        if fits {
            chosen.extend(fix.edits.iter());
            applied += 1;
        }
    }
    chosen.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = Vec::with_capacity(text.len() + 64);
    let mut at = 0usize;
    for edit in chosen {
        out.extend_from_slice(&text[at..edit.span.start as usize]);
        out.extend_from_slice(edit.replacement.as_bytes());
        at = edit.span.end as usize;
    }
    out.extend_from_slice(&text[at..]);
    (out, applied)
}

/// Two edits conflict when their ranges intersect, or both insert at the same point.
fn overlaps(a: &Edit, b: &Edit) -> bool {
    let (a0, a1, b0, b1) = (a.span.start, a.span.end, b.span.start, b.span.end);
    (a0 < b1 && b0 < a1) || (a0 == b0 && (a0 == a1 || b0 == b1))
}

/// Whether `fixed` parses with no more syntax errors than `original`.
pub fn still_parses(language: Language, original: &[u8], fixed: &[u8]) -> bool {
    let errors = |text: &[u8]| crate::extract::parse_error_count(language, text);
    match (errors(original), errors(fixed)) {
        (Some(before), Some(after)) => after <= before,
        _ => false,
    }
}

/// What `--fix` / `--diff` would change: each file's text before and after.
pub struct FixReport {
    pub files: Vec<FixedFile>,
    pub notes: Vec<crate::source::Note>,
}

impl FixReport {
    /// Fixes applied to the files of the report, over all rounds.
    pub fn applied(&self) -> usize {
        self.files.iter().map(|f| f.fixes).sum()
    }
}

pub struct FixedFile {
    pub path: std::path::PathBuf,
    pub absolute: std::path::PathBuf,
    pub original: Vec<u8>,
    pub fixed: Vec<u8>,
    /// Fixes applied to the file over all rounds: the findings its new text fixes.
    pub fixes: usize,
}

/// Rounds of analysis and fixing, in memory, until no fix applies (at most ten rounds): an
/// edit that overlapped another waits for the next round, on the re-analysed text. A file whose
/// fixed text would not parse as well as the original is left untouched, with a note.
/// `run` is one check of the project (the front door's, [`crate::workspace::fix`]).
pub fn fix_project(
    run: &dyn Fn(&crate::check::CheckOptions) -> Result<crate::check::Outcome, miette::Report>,
    options: &crate::check::CheckOptions,
    applicability: Applicability,
) -> Result<FixReport, miette::Report> {
    use std::collections::HashMap;
    // The texts given (stdin's) are fixed as a file's would be.
    let mut overlay: HashMap<std::path::PathBuf, std::sync::Arc<[u8]>> = options.overlay.clone();
    let mut originals: Vec<(std::path::PathBuf, std::path::PathBuf, Language, Vec<u8>)> = Vec::new();
    let mut applied: HashMap<std::path::PathBuf, usize> = HashMap::new();
    for _round in 0..10 {
        let mut round_options = crate::check::CheckOptions::new(options.paths.clone());
        round_options.prefilter = options.prefilter;
        round_options.select = options.select.clone();
        round_options.ignore = options.ignore.clone();
        round_options.overlay = overlay.clone();
        round_options.only = options.only.clone();
        // Only the fixes of reported findings: `--changed-since` and `--baseline` hold.
        round_options.changed = options.changed.clone();
        round_options.baseline = options.baseline.as_ref().map(|b| crate::baseline::Baseline {
            version: b.version,
            findings: b.findings.clone(),
        });
        let outcome = run(&round_options)?;
        let mut by_file: HashMap<crate::index::FileId, Vec<&Fix>> = HashMap::new();
        for d in &outcome.diagnostics {
            let Some(fix) = &d.fix else { continue };
            // A fix edits the file of its finding only; anything else is left to the user.
            if applicability.allows(fix.safety) && fix.edits.iter().all(|e| e.file == d.file) {
                by_file.entry(d.file).or_default().push(fix);
            }
        }
        let mut progressed = false;
        for (file, fixes) in by_file {
            let Some(text) = outcome.index.text(file) else {
                continue;
            };
            let (fixed, count) = apply(text, &fixes);
            if count == 0 || fixed == text {
                continue;
            }
            let source = &outcome.index.files[file];
            if !originals.iter().any(|(_, absolute, _, _)| *absolute == source.absolute) {
                originals.push((
                    source.path.clone(),
                    source.absolute.clone(),
                    source.language,
                    text.to_vec(),
                ));
            }
            overlay.insert(source.absolute.clone(), fixed.into());
            *applied.entry(source.absolute.clone()).or_default() += count;
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    let mut files = Vec::new();
    let mut notes = Vec::new();
    for (path, absolute, language, original) in originals {
        let Some(fixed) = overlay.remove(&absolute) else {
            continue;
        };
        if *fixed == *original {
            continue;
        }
        let fixed = fixed.to_vec();
        if !still_parses(language, &original, &fixed) {
            notes.push(crate::source::Note {
                path,
                line: None,
                message: "not fixed: the fixed file would not parse, so it is left as it is".into(),
            });
            continue;
        }
        let fixes = applied.get(&absolute).copied().unwrap_or(0);
        files.push(FixedFile {
            path,
            absolute,
            original,
            fixed,
            fixes,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(FixReport { files, notes })
}

/// What writing a report's files did: the summary counts what was written, and only that.
pub struct Written {
    /// Files written, and the fixes in them.
    pub files: usize,
    pub fixes: usize,
    /// Files left as they were, with why, and the fixes in them.
    pub skipped: Vec<(std::path::PathBuf, String, usize)>,
}

/// Writes each fixed file (see [`crate::files::write_fix`]); a file that changed since it was
/// read is skipped. A write that fails stops the run with an error naming the files already
/// written.
pub fn write(report: &FixReport) -> Result<Written, miette::Report> {
    let mut written = Written {
        files: 0,
        fixes: 0,
        skipped: Vec::new(),
    };
    let mut done: Vec<String> = Vec::new();
    for file in &report.files {
        match crate::files::write_fix(&file.absolute, &file.original, &file.fixed) {
            Ok(crate::files::Written::Written) => {
                written.files += 1;
                written.fixes += file.fixes;
                done.push(file.path.display().to_string());
            }
            Ok(crate::files::Written::Skipped(reason)) => written.skipped.push((file.path.clone(), reason, file.fixes)),
            Err(e) => {
                return Err(miette::miette!(
                    help = if done.is_empty() {
                        "no file was written".to_string()
                    } else {
                        format!("already written (fixed): {}", done.join(", "))
                    },
                    "cannot write {}: {e}; it is left as it was",
                    file.path.display()
                ))
            }
        }
    }
    Ok(written)
}

impl Written {
    /// `fixed 3 findings in 2 files`: what was written, when anything was.
    pub fn summary(&self) -> Option<String> {
        (self.files > 0).then(|| {
            format!(
                "fixed {} in {}",
                count(self.fixes, "finding"),
                count(self.files, "file")
            )
        })
    }

    /// What was not written, when a file was skipped (each has its own note).
    pub fn skipped_summary(&self) -> Option<String> {
        let fixes: usize = self.skipped.iter().map(|(_, _, fixes)| fixes).sum();
        (!self.skipped.is_empty()).then(|| {
            format!(
                "not fixed: {} in {}, left as they were (see the notes above)",
                count(fixes, "finding"),
                count(self.skipped.len(), "file")
            )
        })
    }
}

/// `1 finding`, `2 findings`.
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// A unified diff of one fixed file, with `a/` and `b/` paths as `git diff` prints them.
pub fn unified_diff(file: &FixedFile) -> String {
    let before = String::from_utf8_lossy(&file.original);
    let after = String::from_utf8_lossy(&file.fixed);
    // A file name with a newline or an escape sequence would end the header line.
    let path = crate::source::printable::line(&file.path.to_string_lossy().replace('\\', "/")).into_owned();
    similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::FileId;
    use crate::source::Span;

    fn fix(start: u32, end: u32, replacement: &str) -> Fix {
        Fix {
            safety: FixSafety::Safe,
            title: String::new(),
            edits: vec![Edit {
                file: 0 as FileId,
                span: Span { start, end },
                replacement: replacement.into(),
            }],
        }
    }

    #[test]
    fn applies_non_overlapping_fixes_and_defers_the_rest() {
        let text = b"let a = 1; let b = 2;";
        let (one, two, clash) = (fix(8, 9, "10"), fix(19, 20, "20"), fix(8, 9, "11"));
        let (out, applied) = apply(text, &[&two, &one, &clash]);
        assert_eq!(String::from_utf8(out).unwrap(), "let a = 10; let b = 20;");
        assert_eq!(applied, 2);
    }

    #[test]
    fn a_fix_that_breaks_parsing_is_detected() {
        let original = b"export const a = f(1)\n";
        assert!(still_parses(
            Language::TypeScript,
            original,
            b"export const a = f(1).pipe(g)\n"
        ));
        assert!(!still_parses(
            Language::TypeScript,
            original,
            b"export const a = f(1.pipe(g)\n"
        ));
    }
}
