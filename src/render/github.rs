//! `--format github`: GitHub Actions workflow commands (`::error file=…::message`), one per
//! finding, and the Markdown job summary written to `GITHUB_STEP_SUMMARY`.
//!
//! Annotation paths are relative to `GITHUB_WORKSPACE` (the repository root on a runner), so
//! they land on the right file whatever directory retrylint runs from.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use super::{percent_encode_path, region, rule_doc_url, slash_path, Texts, Unit};
use crate::check::Outcome;
use crate::index::FileId;
use crate::rules::Severity;

/// GitHub limits the annotations it shows per step (10 errors and 10 warnings); past that,
/// the job summary is where every finding is listed.
const ANNOTATIONS_SHOWN: usize = 10;

/// The job summary is cut off by GitHub at 1 MiB; the table stops a little before.
const SUMMARY_BUDGET: usize = 900 * 1024;

/// What the runner's environment tells the printer.
#[derive(Debug, Clone, Default)]
pub struct GithubEnv {
    /// `GITHUB_WORKSPACE`, canonical: annotation paths are relative to it.
    pub workspace: Option<PathBuf>,
    /// `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA`: links in the summary.
    pub blob_url: Option<String>,
}

impl GithubEnv {
    pub fn from_env() -> GithubEnv {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let workspace = var("GITHUB_WORKSPACE").and_then(|w| std::fs::canonicalize(w).ok());
        let blob_url = match (var("GITHUB_SERVER_URL"), var("GITHUB_REPOSITORY"), var("GITHUB_SHA")) {
            (Some(server), Some(repository), Some(sha)) => {
                Some(format!("{}/{repository}/blob/{sha}", server.trim_end_matches('/')))
            }
            _ => None,
        };
        GithubEnv { workspace, blob_url }
    }

    /// The path GitHub knows a file by: relative to the workspace when inside it, else as shown.
    fn path(&self, outcome: &Outcome, file: FileId) -> String {
        let source = &outcome.index.files[file];
        if let Some(relative) = self
            .workspace
            .as_ref()
            .and_then(|w| source.absolute.strip_prefix(w).ok())
        {
            return slash_path(relative);
        }
        slash_path(&source.path)
    }
}

/// Escapes the message of a workflow command.
pub fn escape_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a property value of a workflow command (`file=…`, `title=…`).
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// One workflow command per finding, then the summary line (shown in the log as is).
pub fn annotations(out: &mut dyn Write, outcome: &Outcome, env: &GithubEnv) -> io::Result<()> {
    let texts = Texts::read(outcome);
    for d in &outcome.diagnostics {
        let r = region(outcome, &texts, d.file, d.span, Unit::Chars);
        let command = match d.severity {
            Severity::Error => "error",
            _ => "warning",
        };
        let mut properties = format!(
            "file={},line={},endLine={}",
            escape_property(&env.path(outcome, d.file)),
            r.line,
            r.end_line
        );
        // GitHub rejects columns on an annotation that spans lines (ruff drops them too).
        if r.line == r.end_line {
            properties.push_str(&format!(",col={},endColumn={}", r.column, r.end_column));
        }
        properties.push_str(&format!(
            ",title={}",
            escape_property(&format!("retrylint ({})", d.rule))
        ));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        writeln!(out, "::{command} {properties}::{}", escape_data(&message))?;
    }
    super::summary_line(out, outcome)
}

/// The Markdown job summary: counts per rule and a table of every finding, each linked to its
/// line when the run's commit is known.
pub fn step_summary(outcome: &Outcome, env: &GithubEnv, changed_since: Option<&str>) -> String {
    let errors = outcome.count(Severity::Error);
    let warnings = outcome.count(Severity::Warning);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let scope = match changed_since {
        Some(rev) => format!(", on lines changed since `{}`", short_rev(rev)),
        None => String::new(),
    };
    let mut md = String::from("## retrylint\n\n");
    if errors + warnings == 0 {
        md.push_str(&format!("No findings in {}{scope}.\n", plural(outcome.files, "file")));
        return md;
    }
    md.push_str(&format!(
        "Found {} and {} in {}{scope}.\n\n",
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(outcome.files, "file"),
    ));

    let mut per_rule: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for d in &outcome.diagnostics {
        let counts = per_rule.entry(d.rule).or_default();
        match d.severity {
            Severity::Error => counts.0 += 1,
            _ => counts.1 += 1,
        }
    }
    md.push_str("| rule | errors | warnings |\n| --- | ---: | ---: |\n");
    for (rule, (e, w)) in &per_rule {
        md.push_str(&format!("| [`{rule}`]({}) | {e} | {w} |\n", rule_doc_url(rule)));
    }
    md.push('\n');

    md.push_str("| severity | rule | location | message |\n| --- | --- | --- | --- |\n");
    let texts = Texts::read(outcome);
    for (listed, d) in outcome.diagnostics.iter().enumerate() {
        if md.len() > SUMMARY_BUDGET {
            md.push_str(&format!(
                "\n{} more not listed: GitHub cuts a job summary off at 1 MiB.\n",
                outcome.diagnostics.len() - listed
            ));
            break;
        }
        let r = region(outcome, &texts, d.file, d.span, Unit::Chars);
        let path = env.path(outcome, d.file);
        let location = format!("{path}:{}", r.line);
        let location = match &env.blob_url {
            Some(base) => {
                let lines = if r.end_line > r.line {
                    format!("L{}-L{}", r.line, r.end_line)
                } else {
                    format!("L{}", r.line)
                };
                format!("[`{location}`]({base}/{}#{lines})", percent_encode_path(&path))
            }
            None => format!("`{location}`"),
        };
        md.push_str(&format!(
            "| {} | `{}` | {location} | {} |\n",
            d.severity,
            d.rule,
            table_cell(&d.message)
        ));
    }
    if errors > ANNOTATIONS_SHOWN || warnings > ANNOTATIONS_SHOWN {
        md.push_str(&format!(
            "\nGitHub shows at most {ANNOTATIONS_SHOWN} error and {ANNOTATIONS_SHOWN} warning annotations per step: \
             this table lists every finding.\n"
        ));
    }
    md
}

/// A commit id shortened for display; anything else (a branch name) as is.
fn short_rev(rev: &str) -> &str {
    if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        &rev[..12]
    } else {
        rev
    }
}

/// Makes a message safe in a Markdown table cell: pipes escaped, lines joined, and HTML
/// characters escaped outside code spans (inside them they are shown literally).
fn table_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '|' => out.push_str("\\|"),
            '\r' => {}
            '\n' => out.push_str(if in_code { " " } else { "<br>" }),
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            '&' if !in_code => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_properties_are_escaped() {
        assert_eq!(escape_data("50% of a\r\nb"), "50%25 of a%0D%0Ab");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(escape_data("a:b,c"), "a:b,c", "data keeps colons and commas");
    }

    #[test]
    fn table_cells_escape_pipes_and_html_outside_code() {
        assert_eq!(table_cell("a | b"), "a \\| b");
        assert_eq!(
            table_cell("`Effect<A | B>` over <b>\nnext"),
            "`Effect<A \\| B>` over &lt;b&gt;<br>next"
        );
    }

    #[test]
    fn commit_ids_are_shortened() {
        assert_eq!(short_rev("0123456789abcdef0123456789abcdef01234567"), "0123456789ab");
        assert_eq!(short_rev("origin/main"), "origin/main");
    }
}
