//! `--format sarif`: a SARIF 2.1.0 log with one run, for GitHub code scanning and SARIF
//! viewers. The driver lists every rule (ruleIndex points into that list); columns and
//! character offsets are counted in UTF-16 code units (`columnKind`), as JavaScript and
//! editors count them.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::{measure, percent_encode_path, region, rule_doc_url, slash_path, Region, Texts, Unit};
use crate::check::Outcome;
use crate::index::FileId;
use crate::rules::{self, FixSafety, Rule, Severity};
use crate::source::Span;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const INFORMATION_URI: &str = "https://github.com/retrylint/retrylint";
const SRCROOT: &str = "%SRCROOT%";
/// The key of retrylint's fingerprint in `partialFingerprints` (versioned, as SARIF asks).
pub const FINGERPRINT_KEY: &str = "retrylint/v1";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    original_uri_base_ids: BTreeMap<&'static str, ArtifactLocation>,
    column_kind: &'static str,
    invocations: Vec<Invocation>,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor {
    id: &'static str,
    short_description: Message,
    full_description: Message,
    help: MultiformatMessage,
    help_uri: String,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct RuleProperties {
    /// The policy decision the rule enforces.
    decision: &'static str,
    /// `none`, `safe` or `unsafe`: what `--fix` can do for the rule.
    fix: &'static str,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
    enabled: bool,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
struct MultiformatMessage {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<SarifRegion>,
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifRegion {
    start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<usize>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix {
    description: Message,
    artifact_changes: Vec<ArtifactChange>,
    properties: FixProperties,
}

#[derive(Serialize)]
struct FixProperties {
    /// `safe` (`--fix` applies it) or `unsafe` (`--fix --unsafe-fixes`).
    applicability: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: CharRegion,
    #[serde(skip_serializing_if = "Option::is_none")]
    inserted_content: Option<ArtifactContent>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CharRegion {
    char_offset: usize,
    char_length: usize,
}

#[derive(Serialize)]
struct ArtifactContent {
    text: String,
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Off => "none",
    }
}

/// A path as a SARIF artifact location: relative paths against `%SRCROOT%` (the current
/// directory), absolute ones as `file://` URIs.
fn artifact(path: &Path) -> ArtifactLocation {
    if path.is_absolute() {
        ArtifactLocation {
            uri: file_uri(path),
            uri_base_id: None,
        }
    } else {
        ArtifactLocation {
            uri: percent_encode_path(&slash_path(path)),
            uri_base_id: Some(SRCROOT),
        }
    }
}

fn file_uri(path: &Path) -> String {
    let text = slash_path(path);
    let text = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    format!("file://{}", percent_encode_path(&text))
}

/// The first paragraph under a rule doc's `## What it does`, on one line.
pub fn what_it_does(doc: &str) -> String {
    let lines = doc.lines().skip_while(|l| l.trim() != "## What it does").skip(1);
    let paragraph: Vec<&str> = lines
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::trim)
        .collect();
    paragraph.join(" ")
}

fn descriptor(rule: &Rule) -> ReportingDescriptor {
    let full = what_it_does(rule.doc);
    ReportingDescriptor {
        id: rule.name,
        short_description: Message {
            text: rule.summary.to_string(),
        },
        full_description: Message {
            text: if full.is_empty() {
                rule.summary.to_string()
            } else {
                full
            },
        },
        help: MultiformatMessage {
            text: rule.doc.to_string(),
            markdown: rule.doc.to_string(),
        },
        help_uri: rule_doc_url(rule.name),
        default_configuration: Configuration {
            level: level(rule.default_severity),
            enabled: rule.default_severity != Severity::Off,
        },
        properties: RuleProperties {
            decision: rule.decision,
            fix: match rule.fix {
                FixSafety::None => "none",
                FixSafety::Safe => "safe",
                FixSafety::Unsafe => "unsafe",
            },
        },
    }
}

pub use crate::fingerprint::fnv1a64;

pub fn sarif(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let texts = Texts::read(outcome);
    let index: HashMap<&str, usize> = rules::RULES.iter().enumerate().map(|(i, r)| (r.name, i)).collect();
    let location = |file: FileId, span: Span, message: Option<&str>, id: Option<usize>| -> (Location, Region) {
        let r = region(outcome, &texts, file, span, Unit::Utf16);
        let location = Location {
            id,
            physical_location: PhysicalLocation {
                artifact_location: artifact(outcome.index.path(file)),
                region: Some(SarifRegion {
                    start_line: r.line,
                    start_column: Some(r.column),
                    end_line: Some(r.end_line),
                    end_column: Some(r.end_column),
                }),
            },
            message: message.map(|m| Message { text: m.to_string() }),
        };
        (location, r)
    };

    let fingerprints = crate::fingerprint::fingerprints(&outcome.index, &outcome.diagnostics);
    let mut results = Vec::with_capacity(outcome.diagnostics.len());
    for (index_of, d) in outcome.diagnostics.iter().enumerate() {
        let (primary, _) = location(d.file, d.span, None, None);
        let related = d
            .labels
            .iter()
            .enumerate()
            .map(|(i, label)| location(label.file, label.span, Some(&label.message), Some(i + 1)).0)
            .collect();

        // rule + path + what the lines say; the n-th identical finding gets index n.
        let fingerprint = fingerprints[index_of];

        let fixes = d
            .fix
            .iter()
            .map(|fix| {
                let mut by_file: BTreeMap<FileId, Vec<Replacement>> = BTreeMap::new();
                let mut edits: Vec<_> = fix.edits.iter().collect();
                edits.sort_by_key(|e| (e.file, e.span.start, e.span.end));
                for edit in edits {
                    let (offset, length) = match texts.get(edit.file) {
                        Some(text) => (
                            measure(text, 0, edit.span.start as usize, Unit::Utf16),
                            measure(text, edit.span.start as usize, edit.span.end as usize, Unit::Utf16),
                        ),
                        None => (None, None),
                    };
                    by_file.entry(edit.file).or_default().push(Replacement {
                        deleted_region: CharRegion {
                            char_offset: offset.unwrap_or(edit.span.start as usize),
                            char_length: length.unwrap_or((edit.span.end - edit.span.start) as usize),
                        },
                        inserted_content: (!edit.replacement.is_empty()).then(|| ArtifactContent {
                            text: edit.replacement.clone(),
                        }),
                    });
                }
                SarifFix {
                    description: Message {
                        text: fix.title.clone(),
                    },
                    artifact_changes: by_file
                        .into_iter()
                        .map(|(file, replacements)| ArtifactChange {
                            artifact_location: artifact(outcome.index.path(file)),
                            replacements,
                        })
                        .collect(),
                    properties: FixProperties {
                        applicability: if fix.safety == FixSafety::Safe {
                            "safe"
                        } else {
                            "unsafe"
                        },
                    },
                }
            })
            .collect();

        results.push(SarifResult {
            rule_id: d.rule,
            rule_index: index.get(d.rule).copied().unwrap_or(0),
            level: level(d.severity),
            message: Message {
                text: d.message.clone(),
            },
            locations: vec![primary],
            related_locations: related,
            partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, format!("{fingerprint:016x}"))]),
            fixes,
        });
    }

    let notifications = outcome
        .notes
        .iter()
        .map(|note| Notification {
            level: "note",
            message: Message {
                text: note.message.clone(),
            },
            locations: vec![Location {
                id: None,
                physical_location: PhysicalLocation {
                    artifact_location: artifact(&note.path),
                    region: note.line.map(|line| SarifRegion {
                        start_line: line,
                        start_column: None,
                        end_line: None,
                        end_column: None,
                    }),
                },
                message: None,
            }],
        })
        .collect();

    let mut original_uri_base_ids = BTreeMap::new();
    if let Ok(cwd) = std::env::current_dir() {
        let mut uri = file_uri(&cwd);
        if !uri.ends_with('/') {
            uri.push('/');
        }
        original_uri_base_ids.insert(SRCROOT, ArtifactLocation { uri, uri_base_id: None });
    }

    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "retrylint",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: INFORMATION_URI,
                    rules: rules::RULES.iter().map(|r| descriptor(r)).collect(),
                },
            },
            original_uri_base_ids,
            column_kind: "utf16CodeUnits",
            invocations: vec![Invocation {
                execution_successful: true,
                tool_execution_notifications: notifications,
            }],
            results,
        }],
    };
    serde_json::to_writer_pretty(&mut *out, &log).map_err(io::Error::from)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn what_it_does_is_the_first_paragraph() {
        let doc = "# r\n\n## What it does\n\nReports a\nretry.\n\nMore.\n\n## Why\n";
        assert_eq!(what_it_does(doc), "Reports a retry.");
        assert_eq!(what_it_does("# r\n"), "");
    }

    #[test]
    fn every_rule_has_a_one_line_description() {
        for rule in rules::RULES {
            let text = descriptor(rule).full_description.text;
            assert!(!text.is_empty() && !text.contains('\n'), "{}: {text:?}", rule.name);
        }
    }

    #[test]
    fn paths_become_uris() {
        let a = artifact(Path::new("src/a b#1.ts"));
        assert_eq!(a.uri, "src/a%20b%231.ts");
        assert_eq!(a.uri_base_id, Some(SRCROOT));
        let b = artifact(Path::new("/repo/src/é.ts"));
        assert_eq!(b.uri, "file:///repo/src/%C3%A9.ts");
        assert_eq!(b.uri_base_id, None);
    }
}
