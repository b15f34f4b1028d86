//! Parse + extract: one file in, [`FileFacts`] out. The tree is dropped before returning.

mod rust;
mod sql_text;
mod typescript;
mod units;

use std::cell::RefCell;
use std::path::Path;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use tree_sitter::{Parser, Tree};

use crate::facts::{FileFacts, Language, Note};

/// What the prefilter looks for. A TypeScript file can hold a retry site, a job or a cron
/// repeat only if it imports Effect *and* names one of them; lease SQL needs neither.
const EFFECT_IMPORT: &[&str] = &["from \"effect", "from 'effect", "from \"@effect/", "from '@effect/"];
const EFFECT_TOKENS: &[&str] = &["retry", "cron", "Jobs"];
/// An in-memory cursor needs both: a `Ref` and a clock read to store in it.
const CURSOR_REF_TOKENS: &[&str] = &["Ref."];
const CURSOR_CLOCK_TOKENS: &[&str] = &["currentTimeMillis", "Date.now", "new Date", "DateTime.now"];
const ANY_FILE_TOKENS: &[&str] = &["lease_until", "jobs_leases", "last_slot", "Jobs.make"];
const RUST_TOKENS: &[&str] = &[
    "retry",
    "Retry",
    "backoff",
    "Backoff",
    "backon",
    "ExponentialBuilder",
    "ConstantBuilder",
    "FibonacciBuilder",
    "lease_until",
    "jobs_leases",
    "last_slot",
];
/// A `.sql` file matters when it touches a lease.
const SQL_TOKENS: &[&str] = &["lease_until", "jobs_leases", "last_slot"];

/// Cheap byte-level test: can this file hold a fact at all? Files that fail it are parsed
/// only when the cross-file index needs them (a barrel, the retry module).
pub fn is_relevant(language: Language, text: &[u8]) -> bool {
    static TS: OnceLock<AhoCorasick> = OnceLock::new();
    static RUST: OnceLock<AhoCorasick> = OnceLock::new();
    static SQL: OnceLock<AhoCorasick> = OnceLock::new();
    if language == Language::Sql {
        return SQL
            .get_or_init(|| AhoCorasick::new(SQL_TOKENS).expect("static patterns"))
            .is_match(text);
    }
    if language == Language::Rust {
        return RUST
            .get_or_init(|| AhoCorasick::new(RUST_TOKENS).expect("static patterns"))
            .is_match(text);
    }
    let groups: [&[&str]; 5] = [
        EFFECT_IMPORT,
        EFFECT_TOKENS,
        CURSOR_REF_TOKENS,
        CURSOR_CLOCK_TOKENS,
        ANY_FILE_TOKENS,
    ];
    let matcher = TS.get_or_init(|| AhoCorasick::new(groups.iter().flat_map(|g| g.iter())).expect("static patterns"));
    let group_of = |id: usize| {
        let mut end = 0;
        groups.iter().position(|g| {
            end += g.len();
            id < end
        })
    };
    let (mut imports_effect, mut names_fact, mut has_ref, mut has_clock) = (false, false, false, false);
    // Overlapping: `Jobs` must not hide `Jobs.make`, which needs no Effect import.
    for found in matcher.find_overlapping_iter(text) {
        match group_of(found.pattern().as_usize()) {
            // Documentation examples (`* import { Effect } from "effect"`) import nothing.
            Some(0) => imports_effect |= !in_comment_line(text, found.start()),
            Some(1) => names_fact = true,
            Some(2) => has_ref = true,
            Some(3) => has_clock = true,
            _ => return true,
        }
        if imports_effect && (names_fact || (has_ref && has_clock)) {
            return true;
        }
    }
    false
}

/// Whether the line holding `offset` starts as a comment line (`//`, `*`, `/*`).
fn in_comment_line(text: &[u8], offset: usize) -> bool {
    let line_start = memchr::memrchr(b'\n', &text[..offset]).map_or(0, |i| i + 1);
    let line = text[line_start..offset].trim_ascii_start();
    line.starts_with(b"//") || line.starts_with(b"*") || line.starts_with(b"/*")
}

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
/// becomes a note (the caller has already read the bytes).
pub fn extract_file(path: &Path, language: Language, text: &[u8]) -> FileFacts {
    let mut facts = FileFacts::new(path.to_path_buf(), language, text);
    if std::str::from_utf8(text).is_err() {
        facts.notes.push(Note {
            path: path.to_path_buf(),
            line: None,
            message: "skipped: not valid UTF-8".into(),
        });
        return facts;
    }
    match language {
        Language::TypeScript | Language::Tsx => typescript::extract(&mut facts, text),
        Language::Rust => {
            // SQL string literals (leases), then the retry libraries' sites and policies.
            match parse(language, text) {
                Some(tree) => {
                    sql_text::rust_strings(&mut facts, text, &tree);
                    rust::extract(&mut facts, text, &tree);
                }
                None => facts.notes.push(Note {
                    path: path.to_path_buf(),
                    line: None,
                    message: "skipped: the parser gave up on this file".into(),
                }),
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
