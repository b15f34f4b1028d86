//! Suppression comments applied to findings: `retrylint-ignore` drops what it names on its
//! line, `retrylint-ignore-file` in its file; the comments themselves are checked.

use std::collections::HashSet;

use crate::diagnostic::{Diagnostic, Severity};
use crate::index::{FileId, Index};
use crate::rules::{self, Rule};

/// Drops findings a `retrylint-ignore` comment covers, and reports the comments themselves:
/// without a reason (`suppression-without-reason`), or suppressing nothing / naming no rule
/// (`unused-suppression`). A suppression of a rule that did not run is never called unused.
pub(super) fn apply(index: &Index, diagnostics: Vec<Diagnostic>, enabled: &[(&Rule, Severity)]) -> Vec<Diagnostic> {
    // A rule runs on a file when it is enabled and the file's own config does not turn it off.
    let severity_of = |file: FileId, name: &str| {
        enabled
            .iter()
            .find(|(r, _)| r.name == name)
            .map(|(r, _)| index.config_of(file).severity(r.name, r.default_severity))
            .filter(|s| *s != Severity::Off)
    };
    let mut used: HashSet<(FileId, usize, String)> = HashSet::new();
    let mut kept = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        let Some(facts) = index.loaded(d.file) else {
            kept.push(d);
            continue;
        };
        let line = facts.line_of(d.span.start);
        let suppressed_by = facts
            .suppressions
            .iter()
            .enumerate()
            .find(|(_, s)| (s.line.is_none() || s.line == Some(line)) && s.rules.iter().any(|r| r == d.rule));
        match suppressed_by {
            Some((index_of, _)) => {
                used.insert((d.file, index_of, d.rule.to_string()));
            }
            None => kept.push(d),
        }
    }
    for file in 0..index.len() {
        let Some(facts) = index.loaded(file) else { continue };
        for (position, suppression) in facts.suppressions.iter().enumerate() {
            let meta = |rule: &'static str, message: String, help: &str| Diagnostic {
                rule,
                severity: severity_of(file, rule).unwrap_or(Severity::Warning),
                file,
                span: suppression.span,
                message,
                help: Some(help.to_string()),
                labels: Vec::new(),
                fix: None,
            };
            if suppression.reason.is_none() && severity_of(file, "suppression-without-reason").is_some() {
                kept.push(meta(
                    "suppression-without-reason",
                    "suppression without a reason: a reviewer cannot tell a deliberate exception from a silenced finding".into(),
                    "add `-- <why this exception holds>` to the comment",
                ));
            }
            if severity_of(file, "unused-suppression").is_none() {
                continue;
            }
            // `// retrylint-ignore -- reason` names no rule, so it suppresses nothing.
            if suppression.rules.is_empty() {
                kept.push(meta(
                    "unused-suppression",
                    "this suppression names no rule, so it suppresses nothing".into(),
                    "name the rule it is for: `retrylint-ignore <rule> -- <reason>`",
                ));
            }
            for name in &suppression.rules {
                let message = match rules::by_name(name) {
                    None => format!(
                        "`{name}` is not a retrylint rule: this suppression suppresses nothing{}",
                        crate::diagnostic::did_you_mean_suffix(name, &rules::names())
                    ),
                    // Whether it is used cannot be known when the rule did not run.
                    Some(rule) if severity_of(file, rule.name).is_none() => continue,
                    Some(rule) if used.contains(&(file, position, rule.name.to_string())) => continue,
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
    kept
}
