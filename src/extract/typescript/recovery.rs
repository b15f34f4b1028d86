//! Recovery from what tree-sitter-typescript 0.23 cannot parse in valid code: variance
//! annotations, `const` type parameters, some type lists. Blanking keeps every byte offset,
//! so spans stay true to the file.

use super::*;

/// Parses the file with the TypeScript constructs tree-sitter-typescript 0.23 does not know
/// (variance annotations `<in out A>`, `const` type parameters, some type lists) blanked out
/// first — a byte scan, so a file that needs it is parsed once, not twice. Blanking keeps
/// every byte offset, so spans stay true to the file. Only when the blanked text still has
/// errors is the original parsed too, and the tree with fewer errors kept.
pub(crate) fn parse_with_recovery(language: Language, text: &[u8]) -> Option<Tree> {
    let modifiers = blank_type_parameter_modifiers(text);
    let lists = blank_unparsed_type_lists(modifiers.as_deref().unwrap_or(text), language == Language::Tsx);
    let Some(blanked) = lists.or(modifiers) else {
        return parse(language, text);
    };
    let tree = parse(language, &blanked)?;
    if !tree.root_node().has_error() {
        return Some(tree);
    }
    let original = parse(language, text)?;
    if count_errors(&original) < count_errors(&tree) {
        Some(original)
    } else {
        Some(tree)
    }
}

/// Blanks type parameter and argument lists that tree-sitter-typescript 0.23 trips over, all
/// of which carry no fact the rules read:
/// - type arguments of a tagged template, ``sql<{ id: number }>`SELECT …` ``;
/// - type parameters of a generic function type in return position, `(a: A): <B>(b: B) => B`;
/// - type parameters opening a call signature line in a type literal, `<A>(a: A): A`
///   (not in TSX, where a line may open with a JSX tag).
pub(super) fn blank_unparsed_type_lists(text: &[u8], tsx: bool) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    // Every file is scanned before its parse: look for a closing `>` only where one of the
    // three shapes can open (a name before a tagged template's `<`, a `:` or a line start).
    let has_template = memchr::memchr(b'`', text).is_some();
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'<', &text[i..]) {
        let open = i + offset;
        i = open + 1;
        let before = text[..open].iter().rposition(|c| *c != b' ' && *c != b'\t');
        let candidate = match before.map(|b| text[b]) {
            Some(c) if c.is_ascii_alphanumeric() || c == b'_' => has_template,
            Some(b':') => true,
            Some(b'\n') | None => !tsx,
            _ => false,
        };
        if !candidate {
            continue;
        }
        let Some(close) = matching_angle(text, open) else {
            continue;
        };
        let after = text[close + 1..]
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .map(|p| close + 1 + p);
        let starts_identifier = text[open + 1..]
            .iter()
            .find(|c| !c.is_ascii_whitespace())
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'$' || *c == b'{');
        let blank = match after.map(|a| text[a]) {
            Some(b'`') => before.is_some_and(|b| text[b].is_ascii_alphanumeric() || text[b] == b'_'),
            Some(b'(') if starts_identifier => match before.map(|b| text[b]) {
                Some(b':') => true,
                Some(b'\n') | None => !tsx,
                _ => false,
            },
            _ => false,
        };
        if blank {
            out.get_or_insert_with(|| text.to_vec())[open..=close].fill(b' ');
            i = close + 1;
        }
    }
    out
}

/// The `>` closing the `<` at `open`, skipping nested brackets and `=>`; `None` when the list
/// is not a plausible type list (too long, or a `;` or `)` at its own level).
pub(super) fn matching_angle(text: &[u8], open: usize) -> Option<usize> {
    let mut angle = 0usize;
    let mut bracket = 0usize;
    for (k, &c) in text.iter().enumerate().skip(open).take(600) {
        match c {
            b'<' => angle += 1,
            b'>' if k > 0 && text[k - 1] == b'=' => {}
            b'>' => {
                angle -= 1;
                if angle == 0 {
                    return (bracket == 0).then_some(k);
                }
            }
            b'(' | b'[' | b'{' => bracket += 1,
            b')' | b']' | b'}' => {
                if bracket == 0 {
                    return None;
                }
                bracket -= 1;
            }
            b';' if bracket == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Replaces `in`, `out` and `const` modifiers directly after `<` or `,` (a type parameter
/// position) with spaces. Returns `None` when there is nothing to blank.
pub(super) fn blank_type_parameter_modifiers(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'<' || text[i] == b',' {
            let mut j = i + 1;
            loop {
                while j < text.len() && (text[j] == b' ' || text[j] == b'\n' || text[j] == b'\t') {
                    j += 1;
                }
                let rest = &text[j..];
                let keyword = [&b"in"[..], b"out", b"const"].into_iter().find(|k| {
                    rest.starts_with(k)
                        && rest.get(k.len()).is_some_and(|c| c.is_ascii_whitespace())
                        && rest[k.len()..]
                            .iter()
                            .find(|c| !c.is_ascii_whitespace())
                            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'$')
                });
                let Some(keyword) = keyword else { break };
                let buffer = out.get_or_insert_with(|| text.to_vec());
                buffer[j..j + keyword.len()].fill(b' ');
                j += keyword.len();
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_variance_annotations_without_moving_bytes() {
        let text = b"interface Foo<in out A, out E> { a: A }\nfor (const k in obj) {}";
        let blanked = blank_type_parameter_modifiers(text).unwrap();
        assert_eq!(blanked.len(), text.len());
        assert_eq!(&blanked[..30], b"interface Foo<       A,     E>");
        assert!(blanked.ends_with(b"for (const k in obj) {}"));
    }

    #[test]
    fn blanks_type_lists_the_grammar_cannot_parse() {
        let text = b"const r = sql<{ id: number }>`SELECT 1`\ntype F = {\n  (a: string): <A, E>(self: E) => A\n  <A>(a: A): A\n}\nconst lt = a < b && c > (d)\n";
        let blanked = blank_unparsed_type_lists(text, false).unwrap();
        let blanked = String::from_utf8(blanked).unwrap();
        assert!(
            blanked.starts_with("const r = sql") && blanked.contains("  `SELECT 1`"),
            "{blanked}"
        );
        assert!(!blanked.contains("<{") && !blanked.contains("<A, E>"), "{blanked}");
        assert!(blanked.contains("\n     (a: A): A\n"), "{blanked}");
        assert!(
            blanked.ends_with("const lt = a < b && c > (d)\n"),
            "comparisons stay: {blanked}"
        );
        assert_eq!(blanked.len(), text.len());
    }
}
