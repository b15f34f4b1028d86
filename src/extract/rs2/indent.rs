//! A guard before YAML reaches tree-sitter-yaml, whose external scanner aborts the process
//! (a C `assert`, which nothing can catch) when its stack of indentation levels no longer fits
//! the 1,024 bytes tree-sitter gives a scanner's state: 4 bytes a level after a 10-byte
//! header, so at 254 open levels. A block mapping or sequence is a level, and a line can open
//! several (`- - - x`, `- key:`), so a file of 260 lines indented one level deeper each, or
//! one line of 254 dashes, is enough.
//!
//! The scan here bounds the scanner's stack from above, line by line: the columns still
//! open, each counted twice (a mapping and a sequence can share a column, `key:` then
//! `- item`). A line opens its indentation's column, and the column of each `- ` or `? ` on
//! it and of what follows each (`- name: x` opens a sequence at the dash and a mapping at
//! `name`); it closes those deeper than its indentation. Measured against the scanner itself
//! (a copy instrumented to record its deepest stack, run on 69,000 generated documents:
//! nested block collections of every form, token soup, mutations of both, indentation past
//! `i16`), the estimate was never below the real depth; on 4,690 YAML files of a development
//! machine (SDKs, packages, CI configuration) it never was either, and was 36 at most. It is
//! twice the depth of plain nested mappings. Flow collections (`[`, `{`) never open a level,
//! so deep JSON-style nesting passes here and is bounded by the reader instead.

/// The estimate above which a document is not parsed. The scanner aborts at 254 levels, and
/// no generated document that reached them was estimated under 468; real files stay under 40.
/// Plain mappings reach it at 100 levels of nesting.
pub(super) const MAX_ESTIMATE: usize = 200;

/// Whether tree-sitter-yaml can parse `text` without aborting: `Err` with the estimate when
/// the document may open more indentation levels than its scanner can hold.
pub(super) fn check(text: &[u8]) -> Result<(), usize> {
    let estimate = estimate(text, MAX_ESTIMATE);
    if estimate > MAX_ESTIMATE {
        return Err(estimate);
    }
    Ok(())
}

/// An upper bound of the scanner's open indentation levels over the document, counted until
/// it passes `stop`.
pub(super) fn estimate(text: &[u8], stop: usize) -> usize {
    // The open columns, increasing (in characters, as the scanner counts them).
    let mut open: Vec<usize> = Vec::new();
    let mut worst = 0;
    for line in text.split(|b| *b == b'\n') {
        // A lone `\r` ends a line for the scanner too.
        for line in line.split(|b| *b == b'\r') {
            let indent = line.iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
            let rest = &line[indent..];
            // A blank or comment line changes nothing (kept open: an over-estimate at most).
            if rest.is_empty() || rest[0] == b'#' {
                continue;
            }
            while open.last().is_some_and(|column| *column > indent) {
                open.pop();
            }
            if open.last() != Some(&indent) {
                open.push(indent);
            }
            // Each `- ` or `? ` opens a level at its column, and what follows it on the line
            // another at its own (`- name: x` is a sequence at the dash and a mapping at `name`).
            let mut column = indent;
            let mut after_indicator = false;
            for (i, byte) in rest.iter().enumerate() {
                // UTF-8 continuation bytes are not characters.
                if byte & 0xc0 == 0x80 {
                    continue;
                }
                let after_space = i == 0 || matches!(rest[i - 1], b' ' | b'\t');
                let before_space = rest.get(i + 1).is_none_or(|b| matches!(b, b' ' | b'\t'));
                let indicator = matches!(byte, b'-' | b'?') && after_space && before_space;
                if indicator || (after_indicator && !matches!(byte, b' ' | b'\t' | b'#')) {
                    if open.last().is_some_and(|top| column > *top) {
                        open.push(column);
                    }
                    after_indicator = indicator;
                } else if !matches!(byte, b' ' | b'\t') {
                    after_indicator = false;
                }
                column += 1;
            }
            worst = worst.max(2 * open.len());
            if worst > stop {
                return worst;
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        (0..levels).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect()
    }

    #[test]
    fn configuration_passes_and_deep_indentation_does_not() {
        assert_eq!(check(b""), Ok(()));
        assert_eq!(check(nested(60).as_bytes()), Ok(()));
        assert!(check(nested(101).as_bytes()).is_err());
        assert!(check(nested(260).as_bytes()).is_err());
        // One line of dashes opens a level each.
        assert!(check(format!("{}x\n", "- ".repeat(254)).as_bytes()).is_err());
        assert_eq!(check(format!("{}x\n", "- ".repeat(40)).as_bytes()), Ok(()));
    }

    #[test]
    fn long_flat_documents_and_flow_nesting_pass() {
        // Siblings do not add up, nor do many pairs on one line, nor JSON-style nesting.
        let flat: String = (0..5000).map(|i| format!("key{i}: value - with - dashes\n")).collect();
        assert_eq!(check(flat.as_bytes()), Ok(()));
        let line = format!(
            "{{{}}}\n",
            (0..2000)
                .map(|i| format!("\"k{i}\": {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert_eq!(check(line.as_bytes()), Ok(()));
        let flow = format!("retry: {}{}\n", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(check(flow.as_bytes()), Ok(()));
        // A dedent closes the levels: nesting repeated is not nesting added.
        assert_eq!(check(nested(60).repeat(20).as_bytes()), Ok(()));
    }

    #[test]
    fn line_ends_of_every_kind_split_lines() {
        let crlf = nested(60).replace('\n', "\r\n");
        assert_eq!(check(crlf.as_bytes()), Ok(()));
        let cr = nested(120).replace('\n', "\r");
        assert!(check(cr.as_bytes()).is_err());
    }
}
