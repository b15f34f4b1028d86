//! Parse + extract: one file in, [`FileFacts`] out. The tree is dropped before returning.

mod typescript;

use std::cell::RefCell;
use std::path::Path;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use tree_sitter::{Parser, Tree};

use crate::facts::{FileFacts, Language, Note};

/// Byte tokens without which a file cannot hold any fact a rule reads. A file without them
/// is parsed only if the cross-file index needs it (a barrel, the retry module).
const RELEVANT_TOKENS: &[&str] = &["retry", "Retry", "Schedule", "lease", "cron", "Jobs"];

/// Cheap byte-level test: can this file hold a fact at all?
pub fn is_relevant(text: &[u8]) -> bool {
    static MATCHER: OnceLock<AhoCorasick> = OnceLock::new();
    MATCHER
        .get_or_init(|| AhoCorasick::new(RELEVANT_TOKENS).expect("static patterns"))
        .is_match(text)
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
        };
        let parser = parsers[slot].get_or_insert_with(|| {
            let mut parser = Parser::new();
            let grammar: tree_sitter::Language = match language {
                Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
                Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            };
            parser
                .set_language(&grammar)
                .expect("grammar matches the tree-sitter version");
            parser
        });
        parser.parse(text, None)
    })
}

/// Parses `text` as the extractor does, with its error recovery (for diagnosis tools).
pub fn parse_recovering(language: Language, text: &[u8]) -> Option<Tree> {
    match language {
        Language::TypeScript | Language::Tsx => typescript::parse_with_recovery(language, text),
        Language::Rust => parse(language, text),
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
            // Rust retry libraries come with their own extractor; until then the file is
            // only checked to parse, so later rules see the same file set.
            if parse(language, text).is_none() {
                facts.notes.push(Note {
                    path: path.to_path_buf(),
                    line: None,
                    message: "skipped: the parser gave up on this file".into(),
                });
            }
        }
    }
    facts
}
