//! Printers: human (codespan-reporting), short, json, github (workflow commands, in
//! [`github`]), sarif (in [`sarif`]), gitlab (Code Climate JSON, in [`gitlab`]), junit (in
//! [`junit`]) and the per-rule counts of `--statistics` (in [`statistics`]). Each writes into
//! any `io::Write`, so tests print into a buffer.

pub mod github;
pub mod gitlab;
pub mod junit;
pub mod sarif;
pub mod statistics;

use std::collections::HashMap;
use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label as ReportLabel, Severity as ReportSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::WriteColor, Config as TermConfig, Styles, StylesWriter};
use serde::Serialize;

use crate::check::Outcome;
use crate::diagnostic::{Diagnostic, FixSafety, Severity};
use crate::index::FileId;
use crate::source::printable;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Source snippets with labels and help (codespan-reporting).
    Human,
    /// One line per finding: `path:line:col: severity[rule]: message`.
    Short,
    /// The versioned JSON contract (see README).
    Json,
    /// GitHub Actions workflow commands: one annotation per finding (the default when
    /// `GITHUB_ACTIONS=true`).
    Github,
    /// SARIF 2.1.0, for code scanning and SARIF viewers.
    Sarif,
    /// GitLab Code Quality (Code Climate JSON), for merge request widgets.
    Gitlab,
    /// JUnit XML: one test case per finding, for CI test reports.
    Junit,
}

/// Where a rule's documentation is published.
pub fn rule_doc_url(rule: &str) -> String {
    format!("https://github.com/retrylint/retrylint/blob/main/rules/{rule}.md")
}

/// A path as a forward-slash string (SARIF URIs, GitHub annotations, links).
pub(crate) fn slash_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

/// Percent-encodes a forward-slash path for a URI or a link: everything but unreserved
/// characters, `/` and the sub-delimiters RFC 3986 allows in a path (`:` is encoded so a
/// relative reference never reads as a scheme).
pub(crate) fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(byte as char),
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b'@' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// The text of every file a finding or a fix points into, as the analysis read it (never
/// a second read of the file: what is shown is what was analysed).
pub(crate) struct Texts<'o> {
    texts: HashMap<FileId, &'o str>,
}

impl<'o> Texts<'o> {
    pub(crate) fn read(outcome: &'o Outcome) -> Texts<'o> {
        let mut texts = HashMap::new();
        let files = outcome.diagnostics.iter().flat_map(|d| {
            std::iter::once(d.file)
                .chain(d.labels.iter().map(|l| l.file))
                .chain(d.fix.iter().flat_map(|f| f.edits.iter().map(|e| e.file)))
        });
        for file in files {
            if let Some(text) = text_of(outcome, file) {
                texts.insert(file, text);
            }
        }
        Texts { texts }
    }

    pub(crate) fn get(&self, file: FileId) -> Option<&'o str> {
        self.texts.get(&file).copied()
    }
}

/// A file's text as analysed, when it was parsed and is UTF-8.
pub(crate) fn text_of(outcome: &Outcome, file: FileId) -> Option<&str> {
    std::str::from_utf8(outcome.index.text(file)?).ok()
}

/// How columns and offsets are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Unicode scalar values (what editors and GitHub annotations show).
    Chars,
    /// UTF-16 code units (SARIF's default `columnKind`, JavaScript's string indices).
    Utf16,
}

/// Counts `text[from..to]` in `unit`; `None` when the range is not on character boundaries.
pub(crate) fn measure(text: &str, from: usize, to: usize, unit: Unit) -> Option<usize> {
    let slice = text.get(from..to)?;
    Some(match unit {
        Unit::Chars => slice.chars().count(),
        Unit::Utf16 => slice.encode_utf16().count(),
    })
}

/// A finding's (or label's) place, 1-based, columns counted in a [`Unit`] when the text is
/// at hand and in bytes otherwise. The end is exclusive (the column after the last character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

pub(crate) fn region(outcome: &Outcome, texts: &Texts, file: FileId, span: crate::source::Span, unit: Unit) -> Region {
    let Some(facts) = outcome.index.loaded(file) else {
        return Region {
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 1,
        };
    };
    let column = |offset: u32| -> (usize, usize) {
        let (line, byte_column) = facts.position(offset);
        let line_start = offset as usize - (byte_column - 1);
        let counted = texts
            .get(file)
            .and_then(|text| measure(text, line_start, offset as usize, unit));
        (line, counted.map_or(byte_column, |n| n + 1))
    };
    let (line, column_start) = column(span.start);
    let (end_line, end_column) = column(span.end);
    Region {
        line,
        column: column_start,
        end_line,
        end_column,
    }
}

/// 1-based positions of a finding, in bytes within the line.
struct Position {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

fn position(outcome: &Outcome, d: &Diagnostic) -> Position {
    let Some(facts) = outcome.index.loaded(d.file) else {
        return Position {
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 1,
        };
    };
    let (line, column) = facts.position(d.span.start);
    let (end_line, end_column) = facts.position(d.span.end);
    Position {
        line,
        column,
        end_line,
        end_column,
    }
}

/// `path:line:col: severity[rule]: message` per finding, coloured when `out` supports it,
/// then the summary.
pub fn short(out: &mut dyn WriteColor, outcome: &Outcome) -> io::Result<()> {
    short_findings(out, outcome)?;
    summary(out, outcome)
}

/// The findings of [`short`] alone (`--quiet`).
pub fn short_findings(out: &mut dyn WriteColor, outcome: &Outcome) -> io::Result<()> {
    use codespan_reporting::term::termcolor::{Color, ColorSpec};
    for d in &outcome.diagnostics {
        let p = position(outcome, d);
        out.set_color(ColorSpec::new().set_bold(true))?;
        write!(
            out,
            "{}:{}:{}:",
            printable::path(outcome.index.path(d.file)),
            p.line,
            p.column
        )?;
        out.reset()?;
        write!(out, " ")?;
        let color = if d.severity == Severity::Error {
            Color::Red
        } else {
            Color::Yellow
        };
        out.set_color(ColorSpec::new().set_fg(Some(color)).set_bold(true))?;
        write!(out, "{}[{}]", d.severity, d.rule)?;
        out.reset()?;
        writeln!(out, ": {}", printable::line(&d.message))?;
    }
    Ok(())
}

/// The closing lines of the human and short formats: the counts, and what `--fix` would fix.
pub fn summary(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    summary_line(out, outcome)?;
    if let Some(line) = fixable_line(outcome) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `110 findings at 74 sites (106 errors, 4 warnings) in 50 files (40 ms)`: a site is where
/// the human format prints one diagnostic (see [`sites`]).
fn summary_line(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let errors = outcome.count(Severity::Error);
    let warnings = outcome.count(Severity::Warning);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if errors + warnings == 0 {
        writeln!(
            out,
            "no findings in {} ({} ms)",
            plural(outcome.files, "file"),
            outcome.elapsed.as_millis()
        )
    } else {
        writeln!(
            out,
            "{} at {} ({}, {}) in {} ({} ms)",
            plural(outcome.diagnostics.len(), "finding"),
            plural(sites(outcome).len(), "site"),
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(outcome.files, "file"),
            outcome.elapsed.as_millis()
        )
    }
}

/// "N fixable with --fix (M more with --unsafe-fixes)", when any finding has a fix.
pub fn fixable_line(outcome: &Outcome) -> Option<String> {
    let safe = outcome
        .diagnostics
        .iter()
        .filter(|d| d.fix.as_ref().is_some_and(|f| f.safety == FixSafety::Safe))
        .count();
    let with_fix = outcome.diagnostics.iter().filter(|d| d.fix.is_some()).count();
    let unsafe_only = with_fix - safe;
    match (safe, unsafe_only) {
        (0, 0) => None,
        (0, m) => Some(format!("{m} fixable with --fix --unsafe-fixes")),
        (n, 0) => Some(format!("{n} fixable with --fix")),
        (n, m) => Some(format!("{n} fixable with --fix ({m} more with --unsafe-fixes)")),
    }
}

pub fn human(out: &mut dyn WriteColor, outcome: &Outcome) -> io::Result<()> {
    human_findings(out, outcome)?;
    summary(out, outcome)
}

/// The findings of [`human`] alone (`--quiet`).
pub fn human_findings(out: &mut dyn WriteColor, outcome: &Outcome) -> io::Result<()> {
    let mut files = ShownFiles {
        files: SimpleFiles::new(),
        shifts: HashMap::new(),
        moved: HashMap::new(),
    };
    let mut ids: HashMap<FileId, usize> = HashMap::new();
    // A label's file id and range: the file's text, or, on a line too long to print whole
    // (a minified bundle), a window of that line with the same line number and columns.
    let mut file_id =
        |file: FileId, span: crate::source::Span, files: &mut ShownFiles| -> Option<(usize, Range<usize>)> {
            // The text as analysed (stdin's for `--stdin-filename`).
            // Shown with its control characters as visible symbols (one character for one, so
            // columns stay the file's own): source text never reaches the terminal raw.
            let text = text_of(outcome, file)?;
            let name = printable::path(outcome.index.path(file));
            if let Some((window, range, line, shift)) = long_line_window(text, span.range()) {
                let mut ranges = [range];
                let window = printable::shown_source(&window, &mut ranges);
                let id = files.files.add(name, window);
                files.shifts.insert(id, (line, shift));
                let [range] = ranges;
                return Some((id, range));
            }
            let id = match ids.get(&file) {
                Some(id) => *id,
                None => {
                    let shown = printable::Shown::of(text);
                    let id = files.files.add(
                        name,
                        shown.as_ref().map_or_else(|| text.to_string(), |s| s.text.clone()),
                    );
                    ids.insert(file, id);
                    if let Some(shown) = shown {
                        files.moved.insert(id, shown);
                    }
                    id
                }
            };
            let range = files.moved.get(&id).map_or(span.range(), |s| s.range(span.range()));
            Some((id, range))
        };
    let config = TermConfig::default();
    let styles = Styles::default();
    for site in sites(outcome) {
        let d = &outcome.diagnostics[site.headline];
        let Some((primary, primary_range)) = file_id(d.file, d.span, &mut files) else {
            // No text to show (not UTF-8): one line per finding.
            for &i in &site.findings {
                let d = &outcome.diagnostics[i];
                let p = position(outcome, d);
                writeln!(
                    out,
                    "{}:{}:{}: {}[{}]: {}",
                    printable::path(outcome.index.path(d.file)),
                    p.line,
                    p.column,
                    d.severity,
                    d.rule,
                    printable::line(&d.message)
                )?;
            }
            continue;
        };
        let severity = match d.severity {
            Severity::Error => ReportSeverity::Error,
            _ => ReportSeverity::Warning,
        };
        let others: Vec<&Diagnostic> = site
            .findings
            .iter()
            .filter(|&&i| i != site.headline)
            .map(|&i| &outcome.diagnostics[i])
            .collect();
        let mut labels = vec![ReportLabel::primary(primary, primary_range)];
        // Where the other findings of the site point, when not where the headline does: their
        // rules, at their own span (the retry call beside its inline schedule).
        let mut marks: Vec<(crate::source::Span, Vec<&str>)> = Vec::new();
        for other in others.iter().filter(|o| o.span != d.span) {
            match marks.iter_mut().find(|(span, _)| *span == other.span) {
                Some((_, rules)) => rules.push(other.rule),
                None => marks.push((other.span, vec![other.rule])),
            }
        }
        for (span, rules) in &marks {
            if let Some((id, range)) = file_id(d.file, *span, &mut files) {
                labels.push(ReportLabel::secondary(id, range).with_message(rules.join(", ")));
            }
        }
        // Each label once: the sites that use a policy are the same for every rule about it.
        let mut shown: Vec<(FileId, crate::source::Span, &str)> = Vec::new();
        for label in std::iter::once(d).chain(others.iter().copied()).flat_map(|f| &f.labels) {
            if shown.contains(&(label.file, label.span, label.message.as_str())) {
                continue;
            }
            shown.push((label.file, label.span, &label.message));
            if let Some((id, range)) = file_id(label.file, label.span, &mut files) {
                labels.push(ReportLabel::secondary(id, range).with_message(printable::line(&label.message)));
            }
        }
        let mut notes = finding_notes(d, "");
        for other in &others {
            let mut lines = vec![format!(
                "also {}[{}]: {}",
                other.severity,
                other.rule,
                printable::line(&other.message)
            )];
            lines.extend(finding_notes(other, "  "));
            notes.push(lines.join("\n"));
        }
        let report = Report::new(severity)
            .with_code(d.rule)
            .with_message(printable::line(&d.message))
            .with_labels(labels)
            .with_notes(notes);
        let mut writer = StylesWriter::new(&mut *out, &styles);
        term::emit_to_write_style(&mut writer, &config, &files, &report).map_err(|e| match e {
            // A closed pipe (`check | head`) stays a broken pipe: it ends the run quietly.
            codespan_reporting::files::Error::Io(e) => e,
            other => io::Error::other(other),
        })?;
    }
    Ok(())
}

/// A finding's help and fix, as notes (each line after the first indented by `indent`).
fn finding_notes(d: &Diagnostic, indent: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(help) = &d.help {
        let help = printable::lines(help);
        notes.push(format!("{indent}help: {}", help.replace('\n', &format!("\n{indent}"))));
    }
    if let Some(fix) = &d.fix {
        let how = match fix.safety {
            FixSafety::Safe => "--fix",
            _ => "--fix --unsafe-fixes",
        };
        notes.push(format!("{indent}fix ({how}): {}", printable::line(&fix.title)));
    }
    notes
}

/// The findings at one place: one diagnostic in the human format, its headline the most
/// severe (then the first in rule order), the others attached as notes.
pub struct Site {
    /// Indices into `outcome.diagnostics`, in output order.
    pub findings: Vec<usize>,
    pub headline: usize,
}

/// The findings grouped by site: those whose primary location starts on the same line of the
/// same file (on a line too long to show whole, a minified bundle, those with the same span),
/// in output order. Each rule's finding stays its own in JSON, SARIF and annotations; the human
/// format prints a site as one diagnostic, and the summary counts sites.
pub fn sites(outcome: &Outcome) -> Vec<Site> {
    #[derive(PartialEq, Eq, Hash)]
    enum Key {
        Line(FileId, usize),
        Span(FileId, crate::source::Span),
        Alone(usize),
    }
    let rank = |d: &Diagnostic| {
        let order = crate::rules::RULES
            .iter()
            .position(|r| r.name == d.rule)
            .unwrap_or(usize::MAX);
        (std::cmp::Reverse(d.severity), order)
    };
    let mut at: HashMap<Key, usize> = HashMap::new();
    let mut sites: Vec<Site> = Vec::new();
    for (i, d) in outcome.diagnostics.iter().enumerate() {
        let key = match outcome.index.loaded(d.file) {
            None => Key::Alone(i),
            Some(_) if text_of(outcome, d.file).is_some_and(|t| on_long_line(t, d.span.start as usize)) => {
                Key::Span(d.file, d.span)
            }
            Some(facts) => Key::Line(d.file, facts.position(d.span.start).0),
        };
        match at.get(&key) {
            Some(&site) => {
                let site = &mut sites[site];
                site.findings.push(i);
                if rank(d) < rank(&outcome.diagnostics[site.headline]) {
                    site.headline = i;
                }
            }
            None => {
                at.insert(key, sites.len());
                sites.push(Site {
                    findings: vec![i],
                    headline: i,
                });
            }
        }
    }
    sites
}

/// Whether the line holding `offset` is longer than [`LONG_LINE`].
fn on_long_line(text: &str, offset: usize) -> bool {
    let start = offset.min(text.len());
    let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..start]).map_or(0, |i| i + 1);
    let line_end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
    line_end - line_start > LONG_LINE
}

/// Lines longer than this many bytes are shown as a window around the label.
const LONG_LINE: usize = 400;
/// Bytes shown before and after a label's start on a long line.
const WINDOW_BEFORE: usize = 60;
const WINDOW_AFTER: usize = 180;

/// The files of a human report, with the windows of long lines: `shifts` maps a window's id
/// to its line index and the chars cut before the window, so columns stay the file's own.
struct ShownFiles {
    files: SimpleFiles<String, String>,
    shifts: HashMap<usize, (usize, usize)>,
    /// The files whose text has characters shown as symbols: how offsets moved.
    moved: HashMap<usize, printable::Shown>,
}

impl<'a> codespan_reporting::files::Files<'a> for ShownFiles {
    type FileId = usize;
    type Name = String;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<String, codespan_reporting::files::Error> {
        self.files.name(id)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, codespan_reporting::files::Error> {
        self.files.source(id)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        self.files.line_index(id, byte_index)
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, codespan_reporting::files::Error> {
        self.files.line_range(id, line_index)
    }

    fn column_number(
        &'a self,
        id: usize,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        let source = self.files.source(id)?;
        let range = self.files.line_range(id, line_index)?;
        let column = codespan_reporting::files::column_index(source, range, byte_index) + 1;
        Ok(match self.shifts.get(&id) {
            Some((line, shift)) if *line == line_index => column + shift,
            _ => column,
        })
    }
}

/// When `range` starts on a line longer than [`LONG_LINE`]: a text with as many lines before
/// it and a window of that line (marked `…` where it is cut), the range within it, the line's
/// index, and how many chars of the line the window leaves out before it.
fn long_line_window(text: &str, range: Range<usize>) -> Option<(String, Range<usize>, usize, usize)> {
    let start = range.start.min(text.len());
    let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..start]).map_or(0, |i| i + 1);
    let line_end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
    if line_end - line_start <= LONG_LINE {
        return None;
    }
    let floor = |mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let from = floor(start.saturating_sub(WINDOW_BEFORE).max(line_start));
    let to = floor((start + WINDOW_AFTER).min(line_end)).max(start);
    let line = memchr::memchr_iter(b'\n', &text.as_bytes()[..line_start]).count();
    let mut window = "\n".repeat(line);
    let cut = if from > line_start { "… " } else { "" };
    window.push_str(cut);
    let offset = window.len();
    window.push_str(&text[from..to]);
    if to < line_end {
        window.push_str(" …");
    }
    let end = range.end.clamp(start, to);
    // Columns count chars: those cut before the window, less the marker's.
    let shift = text[line_start..from].chars().count() - cut.chars().count();
    Some((window, offset + (start - from)..offset + (end - from), line, shift))
}

#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    notes: Vec<JsonNote>,
    summary: JsonSummary,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    rule: &'a str,
    severity: &'a str,
    path: String,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
    help: Option<&'a str>,
    /// Secondary locations: where a policy is defined, the sites that use it, ….
    related: Vec<JsonRelated<'a>>,
    fix: Option<JsonFix>,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    path: String,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonFix {
    applicability: &'static str,
    title: String,
    edits: Vec<JsonEdit>,
}

#[derive(Serialize)]
struct JsonEdit {
    path: String,
    start: u32,
    end: u32,
    replacement: String,
}

#[derive(Serialize)]
struct JsonNote {
    path: String,
    line: Option<usize>,
    message: String,
}

#[derive(Serialize)]
struct JsonSummary {
    files: usize,
    parsed: usize,
    cached: usize,
    errors: usize,
    warnings: usize,
    /// Where the findings are: the places the human format prints one diagnostic for.
    sites: usize,
    elapsed_ms: u128,
}

pub fn json(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let path = |file: FileId| outcome.index.path(file).display().to_string();
    let diagnostics = outcome
        .diagnostics
        .iter()
        .map(|d| {
            let p = position(outcome, d);
            JsonDiagnostic {
                rule: d.rule,
                severity: d.severity.as_str(),
                path: path(d.file),
                line: p.line,
                column: p.column,
                end_line: p.end_line,
                end_column: p.end_column,
                message: &d.message,
                help: d.help.as_deref(),
                related: d
                    .labels
                    .iter()
                    .map(|label| {
                        let (line, column, end_line, end_column) =
                            outcome.index.loaded(label.file).map_or((1, 1, 1, 1), |facts| {
                                let (line, column) = facts.position(label.span.start);
                                let (end_line, end_column) = facts.position(label.span.end);
                                (line, column, end_line, end_column)
                            });
                        JsonRelated {
                            path: path(label.file),
                            line,
                            column,
                            end_line,
                            end_column,
                            message: &label.message,
                        }
                    })
                    .collect(),
                fix: d.fix.as_ref().map(|fix| JsonFix {
                    applicability: if fix.safety == FixSafety::Safe {
                        "safe"
                    } else {
                        "unsafe"
                    },
                    title: fix.title.clone(),
                    edits: fix
                        .edits
                        .iter()
                        .map(|e| JsonEdit {
                            path: path(e.file),
                            start: e.span.start,
                            end: e.span.end,
                            replacement: e.replacement.clone(),
                        })
                        .collect(),
                }),
            }
        })
        .collect();
    let notes = outcome
        .notes
        .iter()
        .map(|n| JsonNote {
            path: n.path.display().to_string(),
            line: n.line,
            message: n.message.clone(),
        })
        .collect();
    let report = JsonReport {
        version: 1,
        diagnostics,
        notes,
        summary: JsonSummary {
            files: outcome.files,
            parsed: outcome.parsed,
            cached: outcome.cached,
            errors: outcome.count(Severity::Error),
            warnings: outcome.count(Severity::Warning),
            sites: sites(outcome).len(),
            elapsed_ms: outcome.elapsed.as_millis(),
        },
    };
    serde_json::to_writer_pretty(&mut *out, &report).map_err(io::Error::from)?;
    writeln!(out)
}

/// Notes go to stderr in the human formats: what was skipped or not analysed.
pub fn notes(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    for note in &outcome.notes {
        match note.line {
            Some(line) => writeln!(
                out,
                "note: {}:{}: {}",
                printable::path(&note.path),
                line,
                printable::line(&note.message)
            )?,
            None => writeln!(
                out,
                "note: {}: {}",
                printable::path(&note.path),
                printable::line(&note.message)
            )?,
        }
    }
    Ok(())
}
