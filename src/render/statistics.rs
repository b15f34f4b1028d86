//! `--statistics`: how many findings each rule reported, instead of the findings themselves.
//! Text (`count  rule  severity  fixable`) for the human and short formats, a JSON array for
//! `--format json`.

use std::io::{self, Write};

use serde::Serialize;

use crate::check::Outcome;
use crate::rules::{FixSafety, Severity};

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct RuleCount {
    pub rule: &'static str,
    /// `error` or `warning` (a rule's findings share one severity).
    pub severity: &'static str,
    pub count: usize,
    /// Findings `--fix` fixes.
    pub fixable: usize,
    /// Findings only `--fix --unsafe-fixes` fixes.
    pub unsafe_fixable: usize,
}

/// One row per rule that reported something: most findings first, then by rule name.
pub fn counts(outcome: &Outcome) -> Vec<RuleCount> {
    let mut rows: Vec<RuleCount> = Vec::new();
    for d in &outcome.diagnostics {
        let row = match rows.iter_mut().position(|r| r.rule == d.rule) {
            Some(at) => &mut rows[at],
            None => {
                rows.push(RuleCount {
                    rule: d.rule,
                    severity: d.severity.as_str(),
                    count: 0,
                    fixable: 0,
                    unsafe_fixable: 0,
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.count += 1;
        if d.severity == Severity::Error {
            row.severity = "error";
        }
        match d.fix.as_ref().map(|f| f.safety) {
            Some(FixSafety::Safe) => row.fixable += 1,
            Some(_) => row.unsafe_fixable += 1,
            None => {}
        }
    }
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.cmp(b.rule)));
    rows
}

pub fn text(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let rows = counts(outcome);
    let width = rows.iter().map(|r| r.rule.len()).max().unwrap_or(0);
    let count_width = rows.iter().map(|r| r.count.to_string().len()).max().unwrap_or(1);
    for row in &rows {
        let mut fixes = Vec::new();
        if row.fixable > 0 {
            fixes.push(format!("{} fixable", row.fixable));
        }
        if row.unsafe_fixable > 0 {
            fixes.push(format!("{} with --unsafe-fixes", row.unsafe_fixable));
        }
        let line = format!(
            "{:>count_width$}  {:width$}  {:7}  {}",
            row.count,
            row.rule,
            row.severity,
            fixes.join(", ")
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

pub fn json(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &counts(outcome)).map_err(io::Error::from)?;
    writeln!(out)
}
