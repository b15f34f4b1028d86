//! Text positions: LSP's (line, UTF-16 column) against byte offsets, incremental edits, and
//! the identifier path under the cursor.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

use crate::source::{Language, LineIndex as Lines, TextUnit};

/// A text with its line index ([`crate::source::LineIndex`]), for converting between byte
/// offsets and LSP positions (UTF-16 columns).
pub struct LineIndex<'t> {
    text: &'t str,
    lines: Lines,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> LineIndex<'t> {
        LineIndex {
            text,
            lines: Lines::new(text.as_bytes()),
        }
    }

    /// The LSP position of a byte offset (clamped to the text, moved back to a character
    /// boundary).
    pub fn position(&self, offset: usize) -> Position {
        let p = self.lines.position_in(self.text, offset, TextUnit::Utf16);
        Position::new(p.line, p.column)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of an LSP position. A line past the end is the end of the text; a
    /// column past the end of its line is the end of the line (before its line break).
    pub fn offset(&self, position: Position) -> usize {
        let at = crate::source::Position {
            line: position.line,
            column: position.character,
        };
        self.lines.offset_in(self.text, at, TextUnit::Utf16)
    }

    /// The start of the line holding `offset`.
    pub fn line_start(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len()) as u32;
        self.lines.line_start(self.lines.line_of(offset)).unwrap_or(0) as usize
    }
}

/// Applies `textDocument/didChange` events in order: ranged ones are incremental, one without
/// a range replaces the whole text.
pub fn apply_changes(text: &mut String, changes: Vec<TextDocumentContentChangeEvent>) {
    for change in changes {
        match change.range {
            None => *text = change.text,
            Some(range) => {
                let index = LineIndex::new(text);
                let start = index.offset(range.start);
                let end = index.offset(range.end).max(start);
                text.replace_range(start..end, &change.text);
            }
        }
    }
}

/// The identifier or member path (`Retry.transient`, `Infra.Retry.contention`) under the
/// cursor, up to and including the segment the cursor is on, with its byte span.
pub fn path_at(text: &str, offset: usize) -> Option<(Vec<String>, usize, usize)> {
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let offset = offset.min(bytes.len());
    // The segment under the cursor (the cursor may sit just after its last character).
    let mut end = offset;
    while end < bytes.len() && is_ident(bytes[end]) {
        end += 1;
    }
    let mut start = offset;
    while start > 0 && is_ident(bytes[start - 1]) {
        start -= 1;
    }
    if start == end {
        return None;
    }
    // Earlier segments: `a.b.` (optionally `?.`), with no spaces.
    let mut first = start;
    loop {
        let mut dot = first;
        if dot > 0 && bytes[dot - 1] == b'.' {
            dot -= 1;
            if dot > 0 && bytes[dot - 1] == b'?' {
                dot -= 1;
            }
        } else {
            break;
        }
        let mut segment = dot;
        while segment > 0 && is_ident(bytes[segment - 1]) {
            segment -= 1;
        }
        if segment == dot {
            break;
        }
        first = segment;
    }
    let whole = text.get(first..end)?;
    let path: Vec<String> = whole.split('.').map(|s| s.trim_end_matches('?').to_string()).collect();
    if path.iter().any(|s| s.is_empty() || s.as_bytes()[0].is_ascii_digit()) {
        return None;
    }
    Some((path, first, end))
}

/// How many error and missing nodes the parser leaves in `text` (after the extractor's own
/// error recovery); 0 for languages without a tree-sitter grammar.
pub fn parse_errors(language: Language, text: &str) -> usize {
    crate::extract::parse_error_count(language, text.as_bytes()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_utf16_positions() {
        let text = "a😀b\r\nξc\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(0), Position::new(0, 0));
        assert_eq!(index.position(5), Position::new(0, 3)); // after the emoji (2 UTF-16 units)
        assert_eq!(index.position(2), Position::new(0, 1)); // inside the emoji: back to its start
        assert_eq!(index.position(8), Position::new(1, 0));
        assert_eq!(index.offset(Position::new(0, 3)), 5);
        assert_eq!(index.offset(Position::new(0, 99)), 6); // end of line, before \r\n
        assert_eq!(index.offset(Position::new(1, 1)), 10);
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
    }

    #[test]
    fn applies_incremental_changes() {
        let mut text = "one\ntwo😀\nthree\n".to_string();
        let change = |sl, sc, el, ec, t: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
            range_length: None,
            text: t.into(),
        };
        apply_changes(&mut text, vec![change(1, 5, 2, 0, "!\n"), change(0, 0, 0, 3, "1")]);
        assert_eq!(text, "1\ntwo😀!\nthree\n");
    }

    #[test]
    fn finds_the_member_path_under_the_cursor() {
        let text = "x = Effect.retry({ schedule: Infra.Retry.contention })";
        let at = text.find("contention").unwrap() + 3;
        let (path, start, end) = path_at(text, at).unwrap();
        assert_eq!(path, ["Infra", "Retry", "contention"]);
        assert_eq!(&text[start..end], "Infra.Retry.contention");
        let at = text.find("Retry.c").unwrap() + 1;
        assert_eq!(path_at(text, at).unwrap().0, ["Infra", "Retry"]);
        assert!(path_at(text, text.find('{').unwrap() + 1).is_none());
    }

    #[test]
    fn counts_parse_errors() {
        assert_eq!(parse_errors(Language::TypeScript, "const a = 1\n"), 0);
        assert!(parse_errors(Language::TypeScript, "const a = (1 +\n") > 0);
    }
}
