//! Text from the project made safe to print. A path, a string from a source file or a line of
//! a config comes from whoever wrote the pull request: on a terminal an escape sequence in it
//! clears the screen or sets the window title, and in a CI log a newline in it starts a line
//! of its own, which GitHub Actions reads as a workflow command (`::error::…`). Every printer
//! of people-facing text (the human and short formats, notes, fix and baseline messages, the
//! tool's own errors, the GitHub annotations and job summary, `policies` and `init`) passes
//! project text through here. Machine formats (JSON, SARIF, GitLab, JUnit) escape it their own
//! way, in their serializers.

use std::borrow::Cow;
use std::path::Path;

/// A character that must not reach a terminal or a log as itself: the C0 and C1 controls and
/// DEL (escape sequences, carriage returns, newlines, bells), the bidirectional overrides and
/// isolates that reorder what a reader sees ("Trojan Source"), and the Unicode line and
/// paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'
        )
}

/// `text` on one line: every unsafe character (newlines and tabs included) written as its
/// escape, `\u{1b}`; the rest as is.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// `text` that may span lines (a help text, a code example): newlines and tabs kept, every
/// other unsafe character escaped as [`line`] does.
pub fn lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// A path as [`line`] prints it (a name that is not UTF-8 shows U+FFFD where it is not).
pub fn path(path: &Path) -> String {
    line(&path.to_string_lossy()).into_owned()
}

fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_lines && matches!(c, '\n' | '\t');
    if !text.chars().any(|c| is_unsafe(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) && !kept(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A source text for a snippet (the human format's source lines, the tool's config errors),
/// with each unsafe character but newlines and tabs shown as one visible character: a control
/// as its Control Pictures symbol (`␛` for ESC, `␍` for a carriage return that ends no line),
/// anything else as `�`. One character for one keeps every column as the file counts it; byte
/// offsets move, so spans go through [`Shown::offset`].
#[derive(Debug, Clone)]
pub struct Shown {
    pub text: String,
    /// `(offset in the original, how many bytes the shown text adds up to there)`, at each
    /// replaced character's end, in order. Empty when nothing was replaced.
    shifts: Vec<(usize, usize)>,
}

impl Shown {
    /// The text as shown, or `None` when it is safe as it is (nearly always: no copy then).
    pub fn of(text: &str) -> Option<Shown> {
        let lone_cr = |at: usize| text.as_bytes().get(at + 1) != Some(&b'\n');
        let replaced = |at: usize, c: char| is_unsafe(c) && !matches!(c, '\n' | '\t') && (c != '\r' || lone_cr(at));
        if !text.char_indices().any(|(at, c)| replaced(at, c)) {
            return None;
        }
        let mut shown = String::with_capacity(text.len() + 16);
        let mut shifts = Vec::new();
        let mut added = 0usize;
        for (at, c) in text.char_indices() {
            if !replaced(at, c) {
                shown.push(c);
                continue;
            }
            let picture = match c as u32 {
                n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{fffd}'),
                0x7f => '\u{2421}',
                _ => '\u{fffd}',
            };
            shown.push(picture);
            added += picture.len_utf8();
            added -= c.len_utf8();
            shifts.push((at + c.len_utf8(), added));
        }
        Some(Shown { text: shown, shifts })
    }

    /// Where byte `offset` of the original text is in the shown one.
    pub fn offset(&self, offset: usize) -> usize {
        let before = self.shifts.partition_point(|&(end, _)| end <= offset);
        match before {
            0 => offset,
            n => offset + self.shifts[n - 1].1,
        }
    }

    pub fn range(&self, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.offset(range.start)..self.offset(range.end)
    }
}

/// `text` as [`Shown`] shows it, and the ranges moved with it.
pub fn shown_source(text: &str, ranges: &mut [std::ops::Range<usize>]) -> String {
    match Shown::of(text) {
        None => text.to_string(),
        Some(shown) => {
            for range in ranges.iter_mut() {
                *range = shown.range(range.clone());
            }
            shown.text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_text_escapes_controls_newlines_and_bidi() {
        assert_eq!(line("a\u{1b}[2Jb\r\u{7}"), "a\\u{1b}[2Jb\\u{d}\\u{7}");
        assert_eq!(line("src/c\n::error::x\n.ts"), "src/c\\u{a}::error::x\\u{a}.ts");
        assert_eq!(line("x\u{202e}y\u{2028}"), "x\\u{202e}y\\u{2028}");
        assert_eq!(line("\u{85}"), "\\u{85}", "C1 controls (NEL) too");
        assert!(matches!(line("plain `text` é"), Cow::Borrowed(_)));
    }

    #[test]
    fn multi_line_text_keeps_newlines_and_tabs() {
        assert_eq!(lines("a\n\tb\u{1b}]0;title\u{7}"), "a\n\tb\\u{1b}]0;title\\u{7}");
    }

    #[test]
    fn shown_source_keeps_columns_and_maps_offsets() {
        assert!(Shown::of("a\r\nb\tc\n").is_none(), "CRLF and tabs are safe");
        let text = "ab\u{1b}[2Jcd\u{85}ef\rg";
        let shown = Shown::of(text).unwrap();
        assert_eq!(shown.text, "ab\u{241b}[2Jcd\u{fffd}ef\u{240d}g");
        assert_eq!(text.chars().count(), shown.text.chars().count());
        for (at, c) in text.char_indices() {
            let mapped = shown.offset(at);
            let expected = if is_unsafe(c) { None } else { Some(c) };
            match expected {
                Some(c) => assert_eq!(shown.text[mapped..].chars().next(), Some(c), "at {at}"),
                None => assert!(shown.text.is_char_boundary(mapped)),
            }
        }
        assert_eq!(shown.offset(text.len()), shown.text.len());
        let mut ranges = [0..2, 3..7, 10..text.len()];
        let shown_text = shown_source(text, &mut ranges);
        assert_eq!(&shown_text[ranges[1].clone()], "[2Jc");
        assert_eq!(&shown_text[ranges[2].clone()], "ef\u{240d}g");
    }
}
