//! The one line index of the crate: line starts of a text, and conversions between byte
//! offsets and (line, column) in the units each consumer counts in — bytes (JSON, the human
//! output), Unicode scalar values (GitHub annotations) and UTF-16 code units (SARIF, LSP).

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextUnit {
    Bytes,
    /// Unicode scalar values (what editors and GitHub annotations show).
    Chars,
    /// UTF-16 code units (SARIF's default `columnKind`, LSP, JavaScript string indices).
    Utf16,
}

/// A 0-based line and column (in some [`TextUnit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// Byte offsets of line starts. Kept with a file's facts so positions need no text; the
/// methods that count characters take the text they were built from.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &[u8]) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i as u32 + 1));
        LineIndex {
            starts,
            len: text.len() as u32,
        }
    }

    /// How many lines the text has (a final line without a line break counts).
    pub fn lines(&self) -> usize {
        self.starts.len()
    }

    /// The length of the text this index was built from.
    pub fn text_len(&self) -> u32 {
        self.len
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: u32) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> Option<u32> {
        self.starts.get(line).copied()
    }

    /// Byte offset where 0-based `line` ends, its line break excluded.
    pub fn line_end(&self, line: usize) -> Option<u32> {
        if line >= self.starts.len() {
            return None;
        }
        Some(self.starts.get(line + 1).map_or(self.len, |next| next - 1))
    }

    /// The start of the line after the one holding `offset` (or the end of the text).
    pub fn next_line_start(&self, offset: u32) -> u32 {
        self.starts.get(self.line_of(offset) + 1).copied().unwrap_or(self.len)
    }

    /// 1-based (line, column in bytes) of a byte offset.
    pub fn position(&self, offset: u32) -> (usize, usize) {
        let line = self.line_of(offset);
        (line + 1, (offset - self.starts[line]) as usize + 1)
    }

    /// The 0-based position of `offset` with the column counted in `unit`. The offset is
    /// clamped to the text and moved back to a character boundary.
    pub fn position_in(&self, text: &str, offset: usize, unit: TextUnit) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_of(offset as u32);
        let start = self.starts[line] as usize;
        let slice = &text[start.min(offset)..offset];
        let column = match unit {
            // ASCII counts the same in every unit, and is checked many bytes at a time: a
            // position on a line of 40 KB (generated or minified code) was a char-by-char
            // count per position.
            _ if slice.is_ascii() => slice.len(),
            TextUnit::Bytes => slice.len(),
            TextUnit::Chars => slice.chars().count(),
            TextUnit::Utf16 => slice.encode_utf16().count(),
        };
        Position {
            line: line as u32,
            column: column as u32,
        }
    }

    /// The byte offset of a 0-based position counted in `unit`. A line past the end is the
    /// end of the text; a column past the end of its line is the end of the line (before its
    /// line break).
    pub fn offset_in(&self, text: &str, position: Position, unit: TextUnit) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return text.len();
        };
        let start = start as usize;
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(text.len(), |next| *next as usize - 1);
        let line = text.get(start..end.max(start)).unwrap_or("");
        let line = line.strip_suffix('\r').unwrap_or(line);
        // No unit is shorter than a byte: a column past the line's bytes is its end, and in
        // ASCII a column is a byte.
        if position.column as usize >= line.len() {
            return start + line.len();
        }
        if line.as_bytes()[..position.column as usize].is_ascii() {
            return start + position.column as usize;
        }
        let mut units = 0;
        for (at, c) in line.char_indices() {
            if units >= position.column as usize {
                return start + at;
            }
            units += match unit {
                TextUnit::Bytes => c.len_utf8(),
                TextUnit::Chars => 1,
                TextUnit::Utf16 => c.len_utf16(),
            };
        }
        start + line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_every_unit() {
        let text = "a\né😀x\n";
        let index = LineIndex::new(text.as_bytes());
        assert_eq!(index.lines(), 3);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(x as u32), (2, 7));
        assert_eq!(
            index.position_in(text, x, TextUnit::Chars),
            Position { line: 1, column: 2 }
        );
        assert_eq!(
            index.position_in(text, x, TextUnit::Utf16),
            Position { line: 1, column: 3 }
        );
        assert_eq!(
            index.offset_in(text, Position { line: 1, column: 3 }, TextUnit::Utf16),
            x
        );
        assert_eq!(
            index.offset_in(text, Position { line: 1, column: 99 }, TextUnit::Utf16),
            x + 1
        );
        assert_eq!(
            index.offset_in(text, Position { line: 9, column: 0 }, TextUnit::Utf16),
            text.len()
        );
        assert_eq!(index.line_end(1), Some(x as u32 + 1));
        assert_eq!(index.next_line_start(0), 2);
    }
}
