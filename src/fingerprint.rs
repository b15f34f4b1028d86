//! Stable identities for findings, shared by SARIF `partialFingerprints` and baselines:
//! rule + path + the finding's source lines (trimmed, whitespace collapsed) + the index among
//! identical ones. They survive unrelated edits that move lines, and change when the code of
//! the finding itself changes.

use std::collections::HashMap;

use crate::project::{FileId, Project};
use crate::rules::Diagnostic;

/// 64-bit FNV-1a: a fingerprint must not change with the Rust version, as `DefaultHasher` may.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// One fingerprint per diagnostic, in order. Diagnostics must be in output order (the
/// occurrence index counts identical findings from the top of the file).
pub fn fingerprints(project: &Project, diagnostics: &[Diagnostic]) -> Vec<u64> {
    let mut texts: HashMap<FileId, Option<Vec<u8>>> = HashMap::new();
    let mut occurrences: HashMap<u64, usize> = HashMap::new();
    diagnostics
        .iter()
        .map(|d| {
            let text = texts.entry(d.file).or_insert_with(|| project.text(d.file));
            let facts = project.facts(d.file);
            let path = project.path(d.file).to_string_lossy().replace('\\', "/");
            let lines = text
                .as_deref()
                .and_then(|text| {
                    let (first, last) = (facts.line_of(d.span.start), facts.line_of(d.span.end.max(d.span.start)));
                    let start = *facts.line_starts.get(first)? as usize;
                    let end = facts.line_starts.get(last + 1).map_or(text.len(), |&s| s as usize);
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
