//! What a parse error hid: a retry the extractor could not read gets a note naming the file
//! and line, so a retry in code that does not parse is never a silent miss.
//!
//! The extractors note a retry call whose own arguments are broken, and the tokens an error
//! node could not place; this pass covers the rest: for each error (or missing) node left
//! after recovery, the statement around it is the region the extractor may have misread. A
//! region that mentions a retry or a schedule, yet holds no retry site and no note, gets
//! one; so does a broken import of Effect or of a retry module, which leaves every name it
//! imports unknown. Valid code leaves no error node once recovery has blanked what the
//! grammar does not know (variance annotations, `const` type parameters), so valid code
//! gets no note.

use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;

/// What a retry is written with, in TypeScript (`Effect.retry(`, `Retry.transient`,
/// `Schedule.`) and Rust (`.retry(`, `Retry::spawn`, `backoff::future::retry`): a word such
/// as `retryable` alone is not a retry.
const RETRY_TOKENS: &[&[u8]] = &[
    b"retry(",
    b"retryOrElse(",
    b"retryTransient",
    b"Retry.",
    b"Schedule.",
    b"Retry::",
    b"RetryIf",
    b"retry_notify",
    b"backoff::",
];

/// At most this many notes per file: a file that does not parse at all needs one per region
/// at most, not one per token.
const MAX_NOTES: usize = 8;

/// Adds a note for each region of `tree` (the tree `facts` was extracted from, of `text`)
/// where a parse error may have hidden a retry.
pub(crate) fn note_unread(facts: &mut FileFacts, text: &[u8], tree: &Tree) {
    if !tree.root_node().has_error() {
        return;
    }
    let mut regions: Vec<(Node, Node)> = Vec::new();
    collect(tree.root_node(), &mut Vec::new(), &mut regions);
    let mut noted = 0;
    for (region, error) in regions {
        if noted == MAX_NOTES {
            break;
        }
        let (start, end) = (region.start_byte() as u32, region.end_byte() as u32);
        let Some(code) = text.get(region.byte_range()) else {
            continue;
        };
        // An import that breaks may take the rest of the file into one error node.
        let import = matches!(region.kind(), "import_statement" | "use_declaration")
            || (region.is_error() && (code.starts_with(b"import") || code.starts_with(b"use ")));
        let what = if import {
            if !(mentions(code, b"effect") || mentions(code, b"retry")) {
                continue;
            }
            "an import: the names it imports are unknown"
        } else {
            if !RETRY_TOKENS
                .iter()
                .any(|token| memchr::memmem::find(code, token).is_some())
            {
                continue;
            }
            "code that retries: a retry there is not read"
        };
        let (first, last) = (facts.line_of(start) + 1, facts.line_of(end.max(start + 1) - 1) + 1);
        let read = facts
            .retry_sites
            .iter()
            .any(|site| start <= site.span.start && site.span.start < end);
        let already = facts
            .notes
            .iter()
            .any(|note| note.line.is_some_and(|line| first <= line && line <= last));
        if (read && !import) || already {
            continue;
        }
        let (line, column) = facts.position(error.start_byte() as u32);
        facts.note(
            Some(line),
            format!("not analysed: parse error at {line}:{column} in {what}"),
        );
        noted += 1;
    }
}

/// Whether `code` holds `word`, ignoring ASCII case.
fn mentions(code: &[u8], word: &[u8]) -> bool {
    code.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word))
}

/// The (region, first error) pairs below `node`, in order, one per region: the region of an
/// error is the innermost statement, declaration or item around it (`path` holds the
/// ancestors of `node`, root first). Subtrees without errors are skipped.
fn collect<'t>(node: Node<'t>, path: &mut Vec<Node<'t>>, out: &mut Vec<(Node<'t>, Node<'t>)>) {
    if out.len() > MAX_NOTES * 4 {
        return;
    }
    if node.is_error() || node.is_missing() {
        let region = path
            .iter()
            .rev()
            .copied()
            .find(|n| is_region(*n))
            .or_else(|| path.get(1).copied())
            .unwrap_or(node);
        // An ERROR right below the root is its own region.
        let region = if region.kind() == "program" || region.kind() == "source_file" {
            node
        } else {
            region
        };
        if !out.iter().any(|(r, _)| r.id() == region.id()) {
            out.push((region, node));
        }
        return;
    }
    if !node.has_error() || path.len() > 256 {
        return;
    }
    path.push(node);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(child, path, out);
    }
    path.pop();
}

/// A statement, declaration or item: the unit a misread error spoils.
fn is_region(node: Node) -> bool {
    let kind = node.kind();
    kind.ends_with("_statement")
        || kind.ends_with("_declaration")
        || kind.ends_with("_item")
        || kind == "method_definition"
        || kind == "public_field_definition"
}
