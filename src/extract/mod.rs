//! Parse + extract: one file's text in, [`FileFacts`] out. The tree is dropped before the
//! function returns; nothing here knows where the file is or what the configuration says
//! (the prefilter excepted), so facts can be cached by the file's content.

mod component;
mod generated;
mod lineage;
mod prefilter;
mod rs2;
mod rust;
pub mod sql;
mod sql_text;
mod suppressions;
mod typescript;
mod unread;
pub mod work;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

pub use generated::is_generated;
pub use prefilter::{Prefilter, Trigger};

use crate::facts::FileFacts;
use crate::source::Language;

/// Bumped whenever extraction changes what it produces: cached facts of another version are
/// not reused.
pub const FACTS_VERSION: u32 = 24;

thread_local! {
    // One parser per rayon worker and language: parsers are reused, never shared.
    static PARSERS: RefCell<[Option<Parser>; 3]> = const { RefCell::new([None, None, None]) };
}

pub fn parse(language: Language, text: &[u8]) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let slot = match language {
            Language::TypeScript => 0,
            // JavaScript (and components, once masked) read with the TSX grammar.
            Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue => 1,
            Language::Rust => 2,
            // No tree-sitter grammar: `.sql` files go to the SQL parser whole.
            Language::Sql => return None,
            Language::Json | Language::Yaml => return rs2::parse(language, text),
        };
        let parser = parsers[slot].get_or_insert_with(|| {
            let mut parser = Parser::new();
            let grammar: tree_sitter::Language = match language {
                Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue => {
                    tree_sitter_typescript::LANGUAGE_TSX.into()
                }
                Language::Rust | Language::Sql | Language::Json | Language::Yaml => tree_sitter_rust::LANGUAGE.into(),
            };
            parser
                .set_language(&grammar)
                .expect("grammar matches the tree-sitter version");
            parser
        });
        if deep_and_broken(text) {
            return None;
        }
        parser.parse(text, None)
    })
}

/// Brackets nested deeper than this are parsed only when every one closes with its match.
/// tree-sitter's error recovery is not bounded in deep broken nesting: 40 KB of fuzzed
/// TypeScript with 7,000 levels of mismatched brackets took 18 s and 3.9 GB to parse (its
/// time goes to accepting the thousands of paths its stack holds at the end of the file),
/// where no real source file seen here nests past 25. Deep, well-matched nesting (16,000
/// blocks) parses in linear time and is read.
pub(crate) const DEEP_NESTING: usize = 256;

/// Whether `text`'s brackets nest past [`DEEP_NESTING`] and do not match: a closer of
/// another kind, one too many, or brackets left open at the end. Brackets in strings and
/// comments count too, which can only send a deep file to the note.
fn deep_and_broken(text: &[u8]) -> bool {
    if long_tag_run(text) {
        return true;
    }
    let mut depth = 0usize;
    let deep = text.iter().any(|&byte| {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth > DEEP_NESTING
    });
    if !deep {
        return false;
    }
    let mut open = Vec::new();
    for &byte in text {
        match byte {
            b'(' => open.push(b')'),
            b'[' => open.push(b']'),
            b'{' => open.push(b'}'),
            b')' | b']' | b'}' if open.pop() != Some(byte) => return true,
            _ => {}
        }
    }
    !open.is_empty()
}

/// Whether `text` holds more than [`DEEP_NESTING`] tags in a row, `<div><div>…` (whitespace
/// between them aside): nested type assertions or elements that no source writes, on which
/// tree-sitter's error recovery is quadratic in the run's length (a fuzzed 20 KB `.vue` script of
/// 4,000 took 2 s in release, 80 KB 29 s).
fn long_tag_run(text: &[u8]) -> bool {
    let mut run = 0usize;
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'<', &text[i..]) {
        let open = i + offset;
        let name = text[open + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'.')
            .count();
        let close = open + 1 + name;
        let tag = name > 0 && text[open + 1].is_ascii_alphabetic() && text.get(close) == Some(&b'>');
        // Only whitespace since the previous tag keeps the run going.
        let adjacent = run > 0 && text[i..open].iter().all(u8::is_ascii_whitespace);
        run = match (tag, adjacent) {
            (true, true) => run + 1,
            (true, false) => 1,
            (false, _) => 0,
        };
        if run > DEEP_NESTING {
            return true;
        }
        i = if tag { close + 1 } else { open + 1 };
    }
    false
}

/// Why `parse` gave no tree for `text`, for the file's note.
pub(crate) fn unparsed_note(text: &[u8]) -> String {
    if long_tag_run(text) {
        format!(
            "skipped: more than {DEEP_NESTING} tags in a row (`<a><a>…`), which retrylint does not parse (the \
             parser's error recovery is unbounded there)"
        )
    } else if deep_and_broken(text) {
        format!(
            "skipped: brackets nest more than {DEEP_NESTING} deep and do not match, which retrylint does not \
             parse (the parser's error recovery is unbounded there)"
        )
    } else {
        "skipped: the parser gave up on this file".to_string()
    }
}

/// The names of one grammar, read once: kind names by id, field ids by name.
struct Names {
    kinds: Vec<&'static str>,
    /// Sorted by name, for a binary search.
    fields: Vec<(&'static str, u16)>,
}

/// The grammars' names, built on first use. A node's grammar is told apart by its kind count
/// (an FFI call that reads one field), so no lookup needs a lock, a thread local or a hash.
fn names_of(language: &tree_sitter::LanguageRef) -> Option<&'static Names> {
    static GRAMMARS: std::sync::OnceLock<Vec<(usize, Names)>> = std::sync::OnceLock::new();
    let grammars = GRAMMARS.get_or_init(|| {
        let languages: [tree_sitter::Language; 3] = [
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            tree_sitter_rust::LANGUAGE.into(),
        ];
        languages
            .iter()
            .map(|language| {
                // Kept for the process: three grammars' names, a few kilobytes.
                let leak = |name: &str| -> &'static str { Box::leak(name.to_string().into_boxed_str()) };
                let kinds = (0..language.node_kind_count())
                    .map(|id| leak(language.node_kind_for_id(id as u16).unwrap_or("")))
                    .collect();
                let mut fields: Vec<(&'static str, u16)> = (1..=language.field_count() as u16)
                    .filter_map(|id| Some((leak(language.field_name_for_id(id)?), id)))
                    .collect();
                fields.sort_unstable();
                (language.node_kind_count(), Names { kinds, fields })
            })
            .collect()
    });
    let count = language.node_kind_count();
    grammars.iter().find(|(c, _)| *c == count).map(|(_, names)| names)
}

/// `child_by_field_name` and `kind` without their costs: tree-sitter finds a field name by
/// comparing it with every field name of the grammar, on every call, and the binding checks
/// a kind's C string to be UTF-8 on every call — together a large share of extraction.
pub(crate) trait FieldExt<'t> {
    fn field(&self, name: &'static str) -> Option<tree_sitter::Node<'t>>;

    fn kind_str(&self) -> &'static str;
}

impl<'t> FieldExt<'t> for tree_sitter::Node<'t> {
    fn field(&self, name: &'static str) -> Option<tree_sitter::Node<'t>> {
        let names = names_of(&self.language())?;
        let at = names.fields.binary_search_by(|(field, _)| (*field).cmp(name)).ok()?;
        self.child_by_field_id(names.fields[at].1)
    }

    fn kind_str(&self) -> &'static str {
        work::step(1);
        names_of(&self.language())
            .and_then(|names| names.kinds.get(self.kind_id() as usize).copied())
            .unwrap_or("")
    }
}

/// How many error and missing nodes a tree holds.
pub fn count_errors(tree: &Tree) -> usize {
    count_error_nodes(tree.root_node())
}

/// How many error and missing nodes lie below `root` (subtrees without errors are skipped).
pub(crate) fn count_error_nodes(root: tree_sitter::Node) -> usize {
    let mut count = 0;
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count += 1;
        } else if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    count
}

/// Syntax errors left in `text` after the extractor's own recovery; `None` when there is no
/// tree-sitter grammar for the language (SQL) or the parser gave up.
pub fn parse_error_count(language: Language, text: &[u8]) -> Option<usize> {
    parse_recovering(language, text).map(|tree| count_errors(&tree))
}

/// Parses `text` as the extractor does, with its error recovery (for diagnosis tools).
pub fn parse_recovering(language: Language, text: &[u8]) -> Option<Tree> {
    match language {
        Language::TypeScript | Language::Tsx => typescript::parse_with_recovery(language, text),
        Language::JavaScript => typescript::parse_with_recovery(Language::Tsx, text),
        Language::Svelte | Language::Vue => {
            let (grammar, masked) = component::scripts(text);
            typescript::parse_with_recovery(grammar, &masked)
        }
        Language::Rust | Language::Sql | Language::Json | Language::Yaml => parse(language, text),
    }
}

/// Parses `text` and extracts its facts. Never panics on bad input: text that is not UTF-8
/// becomes a note, and a bug hit while extracting becomes a note naming it.
pub fn extract_file(language: Language, text: &[u8]) -> FileFacts {
    extract_file_with(language, text, &[], Depth::Full)
}

/// How much of a file extraction reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Everything.
    Full,
    /// Everything, except — in a file that retries nothing — the named units and services,
    /// which then only matter when a retried unit elsewhere calls into the file.
    /// Reading them was a fifth of a check that parses every file; the few files a call is
    /// followed into are read again in full (`FileFacts::units_deferred`).
    Lazy,
}

/// [`extract_file`], reading the imports `aliases` names as the Effect imports they are (a
/// project module re-exports Effect; the index finds them), to `depth`.
pub fn extract_file_with(
    language: Language,
    text: &[u8],
    aliases: &[crate::facts::EffectAlias],
    depth: Depth,
) -> FileFacts {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::crash::test_hook("extract");
        extract_unguarded(language, text, aliases, depth)
    }));
    result.unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let mut facts = FileFacts::new(language, text);
        facts.note(
            None,
            format!("skipped: internal error while analysing this file ({reason}); please report it"),
        );
        facts
    })
}

fn extract_unguarded(
    language: Language,
    text: &[u8],
    aliases: &[crate::facts::EffectAlias],
    depth: Depth,
) -> FileFacts {
    let mut facts = FileFacts::new(language, text);
    facts.parsed = true;
    if std::str::from_utf8(text).is_err() {
        facts.note(None, "skipped: not valid UTF-8");
        return facts;
    }
    facts.suppressions = suppressions::scan(text);
    match language {
        Language::TypeScript | Language::Tsx => typescript::extract(&mut facts, text, language, aliases, depth),
        Language::JavaScript => typescript::extract(&mut facts, text, Language::Tsx, aliases, depth),
        Language::Svelte | Language::Vue => {
            // The template's text is masked out, so `// retrylint-ignore` outside a script
            // block is not read either.
            let (grammar, masked) = component::scripts(text);
            facts.suppressions = suppressions::scan(&masked);
            typescript::extract(&mut facts, &masked, grammar, aliases, depth);
        }
        Language::Rust => {
            // SQL string literals (leases), then the retry libraries' sites and policies.
            match parse(language, text) {
                Some(tree) => {
                    facts.syntax_errors = count_errors(&tree);
                    sql_text::rust_strings(&mut facts, text, &tree);
                    // Retries inside `select!`, `join!` and `tracing` macros are read from
                    // their unfolded token trees (same offsets).
                    match rust::unfold(text, &tree) {
                        Some((unfolded, tree)) => rust::extract(&mut facts, &unfolded, &tree),
                        None => rust::extract(&mut facts, text, &tree),
                    }
                    unread::note_unread(&mut facts, text, &tree);
                }
                None => facts.note(None, unparsed_note(text)),
            }
        }
        Language::Sql => sql_text::sql_file(&mut facts, text),
        Language::Json | Language::Yaml => rs2::extract(&mut facts, text),
    }
    facts.forget_lookups();
    facts
}

/// One escape sequence of a JavaScript or Rust string literal: `\n`, `\'`, `\u0041`,
/// `\u{1F600}`, `\x41`; a line continuation yields nothing.
pub(crate) fn decode_escape(escape: &str) -> Option<char> {
    let body = escape.strip_prefix('\\')?;
    let mut chars = body.chars();
    Some(match chars.next()? {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        'x' => char::from_u32(u32::from_str_radix(&body[1..], 16).ok()?)?,
        'u' => char::from_u32(u32::from_str_radix(body[1..].trim_matches(['{', '}']), 16).ok()?)?,
        '\n' | '\r' => return None,
        other => other,
    })
}

/// Moves a pre-order walk below `root` past the cursor's subtree: to its next sibling, or the
/// next sibling of the nearest ancestor that has one. `false` when the walk of `root` is over.
/// The one cursor step of every language's subtree walks.
pub(crate) fn step_past(cursor: &mut tree_sitter::TreeCursor, root: tree_sitter::Node) -> bool {
    loop {
        if cursor.node() == root {
            return false;
        }
        if cursor.goto_next_sibling() {
            return true;
        }
        if !cursor.goto_parent() {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammars_are_told_apart_and_their_names_read_right() {
        let languages: [tree_sitter::Language; 3] = [
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            tree_sitter_rust::LANGUAGE.into(),
        ];
        let counts: std::collections::HashSet<usize> = languages.iter().map(|l| l.node_kind_count()).collect();
        assert_eq!(counts.len(), 3, "each grammar has its own kind count");
        for (language, text) in [
            (Language::TypeScript, "f(1)"),
            (Language::Tsx, "const a = <div>{f(1)}</div>"),
            (Language::Rust, "fn main() { f(1); }"),
        ] {
            let tree = parse(language, text.as_bytes()).unwrap();
            let mut cursor = tree.walk();
            loop {
                let node = cursor.node();
                assert_eq!(node.kind_str(), node.kind());
                if node.kind() == "call_expression" {
                    assert_eq!(node.field("function"), node.child_by_field_name("function"));
                    assert_eq!(node.field("arguments"), node.child_by_field_name("arguments"));
                    assert!(node.field("function").is_some());
                }
                if cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        break;
                    }
                }
                if cursor.node() == tree.root_node() {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod nesting_tests {
    use super::*;

    #[test]
    fn deep_matched_nesting_is_parsed_and_deep_broken_nesting_is_not() {
        let matched = format!("{}{}", "{([".repeat(200), "])}".repeat(200));
        assert!(!deep_and_broken(matched.as_bytes()));
        assert!(parse(Language::TypeScript, matched.as_bytes()).is_some());
        let open = "(".repeat(DEEP_NESTING + 1);
        assert!(deep_and_broken(open.as_bytes()));
        let crossed = format!("{}{}", "(".repeat(DEEP_NESTING + 1), "]".repeat(DEEP_NESTING + 1));
        assert!(deep_and_broken(crossed.as_bytes()));
        assert!(parse(Language::Rust, crossed.as_bytes()).is_none());
        // Shallow broken code is parsed (with its errors), as before.
        let shallow = "(".repeat(DEEP_NESTING);
        assert!(!deep_and_broken(shallow.as_bytes()));
        assert!(parse(Language::TypeScript, shallow.as_bytes()).is_some());
        assert!(unparsed_note(crossed.as_bytes()).contains("do not match"));
        // Tags in a row: a run past the limit is not parsed; as many spread out are.
        let run = "<div> ".repeat(DEEP_NESTING + 1);
        assert!(deep_and_broken(run.as_bytes()));
        assert!(unparsed_note(run.as_bytes()).contains("tags in a row"));
        let spread = "<div>x ".repeat(DEEP_NESTING * 2);
        assert!(!deep_and_broken(spread.as_bytes()));
        let generics = "const a: Array<Map<string, number>> = [];\n".repeat(DEEP_NESTING * 2);
        assert!(!deep_and_broken(generics.as_bytes()));
    }
}
