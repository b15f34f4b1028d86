//! Single-file components (`.svelte`, `.vue`): the `<script>` blocks are the code. Rather than
//! parse each block apart and shift every span, the file is masked: every byte outside the
//! blocks becomes a space (newlines stay), so the masked text parses as one program whose
//! offsets, lines and columns are the file's own — findings, fixes and suppressions need no
//! mapping back.

use crate::source::Language;

/// The masked text and the grammar that reads it: TypeScript when a block says
/// `lang="ts"`, TSX for `lang="tsx"`/`"jsx"`, and otherwise TSX too, which reads plain
/// JavaScript.
pub fn scripts(text: &[u8]) -> (Language, Vec<u8>) {
    let mut masked: Vec<u8> = text
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b } else { b' ' })
        .collect();
    let mut grammar = Language::Tsx;
    let mut at = 0;
    while let Some(open) = find_ascii_ci(text, at, b"<script") {
        let after_name = open + b"<script".len();
        // `<scripts>` or `<script-foo>` is another element.
        if !text
            .get(after_name)
            .is_some_and(|&b| b == b'>' || b.is_ascii_whitespace() || b == b'/')
        {
            at = after_name;
            continue;
        }
        let Some(tag_end) = memchr::memchr(b'>', &text[after_name..]).map(|i| after_name + i) else {
            break;
        };
        let attributes = &text[after_name..tag_end];
        let body_start = tag_end + 1;
        let body_end = find_ascii_ci(text, body_start, b"</script").unwrap_or(text.len());
        at = body_end;
        if attributes.ends_with(b"/") || !is_script_type(attributes) {
            continue;
        }
        match attribute(attributes, b"lang").as_deref() {
            Some(b"ts" | b"typescript") => grammar = Language::TypeScript,
            Some(b"tsx" | b"jsx") => grammar = Language::Tsx,
            _ => {}
        }
        masked[body_start..body_end].copy_from_slice(&text[body_start..body_end]);
        // Blocks follow each other in one program: end each as a statement ends.
        if body_end < masked.len() {
            masked[body_end] = b';';
        }
    }
    (grammar, masked)
}

/// `<script type="…">` holds code only for the JavaScript types (or no type at all).
fn is_script_type(attributes: &[u8]) -> bool {
    match attribute(attributes, b"type") {
        None => true,
        Some(kind) => matches!(
            kind.to_ascii_lowercase().as_slice(),
            b"module" | b"text/javascript" | b"application/javascript" | b"text/typescript" | b"ts"
        ),
    }
}

/// The value of attribute `name` (quoted or bare), if present.
fn attribute(attributes: &[u8], name: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    while at < attributes.len() {
        let rest = &attributes[at..];
        let skip = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let rest = &rest[skip..];
        let key_len = rest
            .iter()
            .take_while(|&&b| !b.is_ascii_whitespace() && b != b'=')
            .count();
        if key_len == 0 {
            return None;
        }
        let key = &rest[..key_len];
        let mut next = skip + key_len;
        let mut value: Option<&[u8]> = None;
        if rest.get(key_len) == Some(&b'=') {
            let value_start = &rest[key_len + 1..];
            match value_start.first() {
                Some(&quote @ (b'"' | b'\'')) => {
                    let len = memchr::memchr(quote, &value_start[1..]).unwrap_or(value_start.len() - 1);
                    value = Some(&value_start[1..1 + len]);
                    next += 1 + len + 2;
                }
                _ => {
                    let len = value_start.iter().take_while(|b| !b.is_ascii_whitespace()).count();
                    value = Some(&value_start[..len]);
                    next += 1 + len;
                }
            }
        }
        if key.eq_ignore_ascii_case(name) {
            return Some(value.unwrap_or_default().to_vec());
        }
        at += next.max(1);
    }
    None
}

fn find_ascii_ci(text: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let first = needle[0];
    let mut at = from;
    while let Some(i) = memchr::memchr2(first, first.to_ascii_uppercase(), text.get(at..)?) {
        let start = at + i;
        if text
            .get(start..start + needle.len())
            .is_some_and(|window| window.eq_ignore_ascii_case(needle))
        {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> (Language, String) {
        let (grammar, masked) = scripts(text.as_bytes());
        (grammar, String::from_utf8(masked).unwrap())
    }

    #[test]
    fn only_script_blocks_survive_at_their_own_offsets() {
        let text = "<script lang=\"ts\">\nconst a = 1\n</script>\n<div>{a} é</div>\n";
        let (grammar, out) = masked(text);
        assert_eq!(grammar, Language::TypeScript);
        assert_eq!(out.len(), text.len());
        assert_eq!(out.lines().count(), text.lines().count());
        assert_eq!(&out[text.find("const").unwrap()..][..11], "const a = 1");
        assert!(!out.contains("div"));
        assert_eq!(out.as_bytes()[text.find("</script").unwrap()], b';');
    }

    #[test]
    fn several_blocks_other_types_and_other_elements() {
        let text = "<script context=\"module\">export const x = 1</script>\n\
                    <script type=\"application/ld+json\">{\"a\": 1}</script>\n\
                    <scripts>not code</scripts>\n\
                    <SCRIPT setup lang='tsx'>let y = <b/></SCRIPT>\n";
        let (grammar, out) = masked(text);
        assert_eq!(grammar, Language::Tsx);
        assert!(out.contains("export const x = 1"));
        assert!(!out.contains("\"a\""));
        assert!(!out.contains("not code"));
        assert!(out.contains("let y = <b/>"));
    }

    #[test]
    fn unterminated_and_empty_input_do_not_panic() {
        for text in [
            "",
            "<script",
            "<script lang=",
            "<script lang=\"ts",
            "<script>let a",
            "<script/>",
        ] {
            let (_, out) = masked(text);
            assert_eq!(out.len(), text.len());
        }
    }
}
