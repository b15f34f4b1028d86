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
use crate::source::printable;

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
            escape_property(&printable::line(&env.path(outcome, d.file))),
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
        // Project text is escaped before the command's own encoding: a newline or an escape
        // sequence from a source file shows as `\u{a}`, never as a line or a control of its own.
        let mut message = printable::line(&d.message).into_owned();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(&printable::lines(help));
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
        // The file name is the pull request's: shown as text, never as Markdown or HTML.
        let location = format!("<code>{}:{}</code>", markdown_text(&path), r.line);
        let location = match &env.blob_url {
            Some(base) => {
                let lines = if r.end_line > r.line {
                    format!("L{}-L{}", r.line, r.end_line)
                } else {
                    format!("L{}", r.line)
                };
                // Parentheses too: a `)` in a file name must not end the link's destination.
                let encoded = percent_encode_path(&path).replace('(', "%28").replace(')', "%29");
                format!("[{location}]({base}/{encoded}#{lines})")
            }
            None => location,
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

/// Makes a message safe in a Markdown table cell. Its code spans (between backticks) become
/// `<code>` elements and every character Markdown or HTML could read as markup is written as a
/// character reference, inside code and out: what the cell shows is the message's text, never
/// markup from a source file (a backtick in a cron string cannot open or close a span, a `<img>`
/// stays text, a newline cannot start a heading).
fn table_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_code = false;
    for (at, part) in text.split('`').enumerate() {
        if at > 0 {
            out.push_str(if in_code { "</code>" } else { "<code>" });
            in_code = !in_code;
        }
        out.push_str(&markdown_text(part));
    }
    if in_code {
        out.push_str("</code>");
    }
    out
}

/// `text` as literal text in Markdown (a table cell, a link's text): ASCII punctuation that
/// Markdown or HTML reads as markup as character references, unsafe characters as their
/// escapes (`\u{1b}`, itself escaped), nothing that can end the cell or the line.
fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in printable::line(text).chars() {
        match c {
            // HTML (`<`, `&`), code, emphasis and strikethrough, links and images (`[`), table
            // cells, escapes, math and headings; the rest is markup only after one of these.
            '<' | '>' | '&' | '`' | '*' | '_' | '[' | ']' | '|' | '\\' | '~' | '$' | '#' => {
                out.push_str(&format!("&#{};", c as u32))
            }
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
    fn table_cells_hold_text_only() {
        assert_eq!(table_cell("a | b"), "a &#124; b");
        assert_eq!(
            table_cell("`Effect<A | B>` over <b>\nnext"),
            "<code>Effect&#60;A &#124; B&#62;</code> over &#60;b&#62;&#92;u{a}next"
        );
        // An odd backtick from a source string cannot leave HTML unescaped.
        let cell = table_cell("cron `a` b `c <img src=x onerror=alert(1)>");
        assert!(!cell.contains('<') || !cell.contains("<img"), "{cell}");
        assert!(cell.ends_with("</code>"), "{cell}");
        // Nothing in a cell starts a line, a heading or a link.
        let cell = table_cell("x\n# heading\r\n[a](javascript:b)");
        assert!(
            !cell.contains('\n') && !cell.contains("# heading") && !cell.contains('['),
            "{cell}"
        );
    }

    #[test]
    fn file_names_in_the_summary_are_text() {
        let name = "src/a`</code><img src=x onerror=alert(1)>\n## owned|.ts";
        let text = markdown_text(name);
        for forbidden in ["<", ">", "`", "\n", "|", "## "] {
            assert!(!text.contains(forbidden), "{forbidden:?} in {text}");
        }
    }

    #[test]
    fn commit_ids_are_shortened() {
        assert_eq!(short_rev("0123456789abcdef0123456789abcdef01234567"), "0123456789ab");
        assert_eq!(short_rev("origin/main"), "origin/main");
    }
}
