//! `--format junit`: JUnit XML for CI test reports (GitLab, Jenkins, Azure Pipelines, …). One
//! `<testsuite>` per file with findings, one failed `<testcase>` per finding; a clean run is a
//! single passing test case, so a report always holds at least one test.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::check::Outcome;
use crate::rules::{Diagnostic, Severity};

/// Escapes text for an XML attribute or element, dropping characters XML 1.0 cannot hold.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

pub fn junit(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let mut by_file: BTreeMap<String, Vec<&Diagnostic>> = BTreeMap::new();
    for d in &outcome.diagnostics {
        let path = super::slash_path(outcome.index.path(d.file));
        by_file.entry(path).or_default().push(d);
    }
    let total = outcome.diagnostics.len();
    let seconds = outcome.elapsed.as_secs_f64();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="retrylint" tests="{}" failures="{total}" errors="0" time="{seconds:.3}">"#,
        total.max(1)
    )?;
    if by_file.is_empty() {
        let files = outcome.files;
        writeln!(
            out,
            r#"  <testsuite name="retrylint" tests="1" failures="0" errors="0" skipped="0">"#
        )?;
        writeln!(
            out,
            r#"    <testcase name="no findings in {files} file{}" classname="retrylint"/>"#,
            if files == 1 { "" } else { "s" }
        )?;
        writeln!(out, "  </testsuite>")?;
    }
    for (path, diagnostics) in &by_file {
        let path = escape(path);
        writeln!(
            out,
            r#"  <testsuite name="{path}" tests="{n}" failures="{n}" errors="0" skipped="0">"#,
            n = diagnostics.len()
        )?;
        for d in diagnostics {
            let (line, column) = outcome
                .index
                .loaded(d.file)
                .map_or((1, 1), |f| f.position(d.span.start));
            let severity = if d.severity == Severity::Error {
                "error"
            } else {
                "warning"
            };
            writeln!(
                out,
                r#"    <testcase name="{rule} at {line}:{column}" classname="{path}" file="{path}" line="{line}">"#,
                rule = d.rule
            )?;
            let mut body = format!("{severity}[{}]: {}\n", d.rule, d.message);
            if let Some(help) = &d.help {
                body.push_str(&format!("help: {help}\n"));
            }
            body.push_str(&format!("at {}:{line}:{column}", outcome.index.path(d.file).display()));
            writeln!(
                out,
                r#"      <failure type="{severity}" message="{}">{}</failure>"#,
                escape(&d.message),
                escape(&body)
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(
            escape("a < b && \"c\" > 'd'\u{1}\t"),
            "a &lt; b &amp;&amp; &quot;c&quot; &gt; &apos;d&apos;\t"
        );
    }
}
