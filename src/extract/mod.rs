//! Parse + extract: one file's text in, [`FileFacts`] out. The tree is dropped before the
//! function returns; nothing here knows where the file is or what the configuration says
//! (the prefilter excepted), so facts can be cached by the file's content.

mod generated;
mod prefilter;
mod rust;
pub mod sql;
mod sql_text;
mod suppressions;
mod typescript;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

pub use generated::is_generated;
pub use prefilter::{Prefilter, Trigger};

use crate::facts::FileFacts;
use crate::source::Language;

/// Bumped whenever extraction changes what it produces: cached facts of another version are
/// not reused.
pub const FACTS_VERSION: u32 = 1;

thread_local! {
    // One parser per rayon worker and language: parsers are reused, never shared.
    static PARSERS: RefCell<[Option<Parser>; 3]> = const { RefCell::new([None, None, None]) };
}

pub fn parse(language: Language, text: &[u8]) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let slot = match language {
            Language::TypeScript => 0,
            Language::Tsx => 1,
            Language::Rust => 2,
            // No tree-sitter grammar: `.sql` files go to the SQL parser whole.
            Language::Sql => return None,
        };
        let parser = parsers[slot].get_or_insert_with(|| {
            let mut parser = Parser::new();
            let grammar: tree_sitter::Language = match language {
                Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
                Language::Rust | Language::Sql => tree_sitter_rust::LANGUAGE.into(),
            };
            parser
                .set_language(&grammar)
                .expect("grammar matches the tree-sitter version");
            parser
        });
        parser.parse(text, None)
    })
}

/// `child_by_field_name` with each field's id looked up once per grammar and thread:
/// tree-sitter finds a field name by comparing it with every field name of the grammar, on
/// every call, which made field lookups a large share of extraction.
pub(crate) trait FieldExt<'t> {
    fn field(&self, name: &'static str) -> Option<tree_sitter::Node<'t>>;

    /// `Node::kind`, without its cost: the binding checks the kind's C string to be UTF-8 on
    /// every call, a few percent of a run. Names are looked up once per grammar and thread.
    fn kind_str(&self) -> &'static str;
}

impl<'t> FieldExt<'t> for tree_sitter::Node<'t> {
    fn field(&self, name: &'static str) -> Option<tree_sitter::Node<'t>> {
        thread_local! {
            // (grammar, field name) → field id; a grammar is told apart by its kind count.
            static IDS: RefCell<std::collections::HashMap<(usize, usize), u16>> = RefCell::new(Default::default());
        }
        let language = self.language();
        let key = (language.node_kind_count(), name.as_ptr() as usize);
        let id = IDS.with(|ids| {
            *ids.borrow_mut()
                .entry(key)
                .or_insert_with(|| language.field_id_for_name(name).map_or(0, |id| id.get()))
        });
        if id == 0 {
            return None;
        }
        self.child_by_field_id(id)
    }

    fn kind_str(&self) -> &'static str {
        thread_local! {
            // (grammar, told apart by its kind count) → kind names by id.
            static KINDS: RefCell<Vec<(usize, Vec<&'static str>)>> = const { RefCell::new(Vec::new()) };
        }
        let id = self.kind_id() as usize;
        KINDS.with(|kinds| {
            let language = self.language();
            let count = language.node_kind_count();
            let mut kinds = kinds.borrow_mut();
            let position = match kinds.iter().position(|(c, _)| *c == count) {
                Some(p) => p,
                None => {
                    // Once per grammar and thread: the names are kept for the process.
                    let names = (0..count)
                        .map(|k| -> &'static str {
                            let name = language.node_kind_for_id(k as u16).unwrap_or("");
                            Box::leak(name.to_string().into_boxed_str())
                        })
                        .collect();
                    kinds.push((count, names));
                    kinds.len() - 1
                }
            };
            kinds[position].1.get(id).copied().unwrap_or("")
        })
    }
}

/// How many error and missing nodes a tree holds.
pub fn count_errors(tree: &Tree) -> usize {
    let mut count = 0;
    let mut cursor = tree.walk();
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
        Language::Rust | Language::Sql => parse(language, text),
    }
}

/// Parses `text` and extracts its facts. Never panics on bad input: text that is not UTF-8
/// becomes a note, and a bug hit while extracting becomes a note naming it.
pub fn extract_file(language: Language, text: &[u8]) -> FileFacts {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| extract_unguarded(language, text)));
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

fn extract_unguarded(language: Language, text: &[u8]) -> FileFacts {
    let mut facts = FileFacts::new(language, text);
    facts.parsed = true;
    if std::str::from_utf8(text).is_err() {
        facts.note(None, "skipped: not valid UTF-8");
        return facts;
    }
    facts.suppressions = suppressions::scan(text);
    match language {
        Language::TypeScript | Language::Tsx => typescript::extract(&mut facts, text),
        Language::Rust => {
            // SQL string literals (leases), then the retry libraries' sites and policies.
            match parse(language, text) {
                Some(tree) => {
                    sql_text::rust_strings(&mut facts, text, &tree);
                    rust::extract(&mut facts, text, &tree);
                }
                None => facts.note(None, "skipped: the parser gave up on this file"),
            }
        }
        Language::Sql => sql_text::sql_file(&mut facts, text),
    }
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
