//! Suppression comments: `// retrylint-ignore <rule>[, <rule>] -- <reason>` on the line before a
//! finding or at the end of its line, and `// retrylint-ignore-file <rule>[, …] -- <reason>`
//! for a whole file. SQL files use `--` comments the same way.
//!
//! Suppressions are found by a byte scan, not by the parser, so a comment counts wherever it
//! is (the prefilter keeps every file that holds one, and an unused one is reported).

use crate::facts::Suppression;
use crate::source::Span;

const MARKER: &[u8] = b"retrylint-ignore";

/// Every suppression comment in `text`.
pub fn scan(text: &[u8]) -> Vec<Suppression> {
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(text, MARKER) {
        let line_start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
        let before = &text[line_start..at];
        // The marker must open a comment: `// retrylint-ignore` or `-- retrylint-ignore`.
        let Some(comment_start) = comment_opening(before) else {
            continue;
        };
        let comment_start = line_start + comment_start;
        let code_before = text[line_start..comment_start].iter().any(|b| !b.is_ascii_whitespace());
        let Ok(rest) = std::str::from_utf8(&text[at + MARKER.len()..line_end]) else {
            continue;
        };
        let (file_level, rest) = match rest.strip_prefix("-file") {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let (names, reason) = match rest.split_once("--") {
            Some((names, reason)) => (names, Some(reason.trim().trim_end_matches("*/").trim().to_string())),
            None => (rest.trim_end_matches("*/"), None),
        };
        // A second comment after the names (`// retrylint-ignore x // note`) is not a rule name.
        let names = names.split("//").next().unwrap_or(names);
        let rules: Vec<String> = names
            .split([',', ' '])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        let line = text[..line_start].iter().filter(|b| **b == b'\n').count();
        out.push(Suppression {
            span: Span::new(comment_start, line_end),
            line: if file_level {
                None
            } else if code_before {
                Some(line)
            } else {
                Some(line + 1)
            },
            rules,
            reason: reason.filter(|r| !r.is_empty()),
        });
    }
    out
}

/// Where the comment that the marker sits in opens, within `before` (the line up to the marker).
fn comment_opening(before: &[u8]) -> Option<usize> {
    let trimmed_end = before.iter().rposition(|b| !b.is_ascii_whitespace())?;
    let opener = &before[..=trimmed_end];
    for token in [&b"//"[..], b"/*", b"--", b"#"] {
        if opener.ends_with(token) {
            return Some(opener.len() - token.len());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_line_trailing_and_file_suppressions() {
        let text = b"// retrylint-ignore-file stacked-retry -- the relay is configured with no retries\n\
                     // retrylint-ignore inline-schedule, unjittered-schedule -- a test double\n\
                     Effect.retry(Schedule.recurs(1))\n\
                     Effect.retry(Schedule.recurs(2)) // retrylint-ignore inline-schedule\n\
                     const s = \"retrylint-ignore in a string is not a comment\"\n\
                     -- retrylint-ignore lease-without-slot -- a read-only replica\n";
        let found = scan(text);
        assert_eq!(found.len(), 4);
        assert_eq!(found[0].line, None);
        assert_eq!(found[0].rules, ["stacked-retry"]);
        assert_eq!(found[1].line, Some(2));
        assert_eq!(found[1].rules, ["inline-schedule", "unjittered-schedule"]);
        assert_eq!(found[1].reason.as_deref(), Some("a test double"));
        assert_eq!(found[2].line, Some(3));
        assert_eq!(found[2].reason, None);
        assert_eq!(found[3].line, Some(6));
    }
}
