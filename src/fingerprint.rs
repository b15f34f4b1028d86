//! Stable identities for findings, shared by SARIF `partialFingerprints` and baselines:
//! rule + path (relative to the project root) + the finding's source lines (trimmed, whitespace collapsed) + the index among
//! identical ones. They survive unrelated edits that move lines, and change when the code of
//! the finding itself changes.

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::index::Index;
pub use crate::source::fnv1a64;

/// One fingerprint per diagnostic, in order. Diagnostics must be in output order (the
/// occurrence index counts identical findings from the top of the file).
pub fn fingerprints(index: &Index, diagnostics: &[Diagnostic]) -> Vec<u64> {
    let mut occurrences: HashMap<u64, usize> = HashMap::new();
    diagnostics
        .iter()
        .map(|d| {
            // Relative to the project root: the same whichever directory the run started in.
            let path = index.root_relative(d.file);
            let lines = index
                .text(d.file)
                .zip(index.loaded(d.file))
                .and_then(|(text, facts)| {
                    let (first, last) = (facts.line_of(d.span.start), facts.line_of(d.span.end.max(d.span.start)));
                    let start = facts.lines.line_start(first)? as usize;
                    let end = facts.lines.line_start(last + 1).map_or(text.len(), |s| s as usize);
                    let content = String::from_utf8_lossy(text.get(start..end)?);
                    Some(
                        content
                            .lines()
                            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    )
                })
                .unwrap_or_else(|| d.message.clone());
            let identity = fnv1a64(format!("{}\0{path}\0{lines}", d.rule).as_bytes());
            let occurrence = occurrences.entry(identity).or_insert(0);
            let fingerprint = fnv1a64(format!("{identity:016x}\0{occurrence}").as_bytes());
            *occurrence += 1;
            fingerprint
        })
        .collect()
}
