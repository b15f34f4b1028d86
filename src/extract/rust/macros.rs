//! The token trees of common macros, unfolded into code the parser reads (issue 16.4).
//!
//! tree-sitter keeps a macro's arguments as a flat token tree, so a retry inside
//! `tokio::select!`, `tokio::try_join!`, `join!` or a `tracing` event or span would be
//! invisible. The text of those invocations is rewritten in place, byte for byte — the macro
//! path blanked, separators turned into `;`, `pattern =` and `=>` of `select!` branches
//! blanked — so each becomes a block of expression statements, and the file is parsed again.
//! Every span stays true (only ASCII bytes other than newlines are replaced), and the
//! rewrite is kept only when the new tree has no more errors than the old one. A macro whose
//! tokens do not follow the expected shape is left alone: what is not understood stays unseen.

use tree_sitter::{Node, Parser, Tree};

use super::{named_children, ERROR_REGION_TOKENS};
use crate::extract::FieldExt;

/// Rounds of unfolding: a `join!` inside a `select!` is a token tree until the first round.
const ROUNDS: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `join!(a, b)`, `try_join!(a, b)`: comma-separated expressions.
    List,
    /// `select! { pattern = future (, if condition)? => handler, … else => handler }`.
    Select,
    /// `tracing` events and spans: `target: …, field = value, ?debug, %display, "message"`.
    Fields,
}

fn shape(name: &str) -> Option<Shape> {
    Some(match name {
        "join" | "try_join" => Shape::List,
        "select" | "select_biased" => Shape::Select,
        "info" | "warn" | "error" | "debug" | "trace" | "event" | "span" | "info_span" | "warn_span" | "error_span"
        | "debug_span" | "trace_span" => Shape::Fields,
        _ => return None,
    })
}

/// The text of a file with its known macros unfolded, its tree, and the byte ranges of the
/// log events and spans unfolded (what they format is no work of a retried unit), in order.
pub(in crate::extract) type Unfolded = (Vec<u8>, Tree, Vec<(usize, usize)>);

/// The file's text with the known macros unfolded, and its tree; `None` when there is
/// nothing to unfold or the rewrite would not parse as well as the original.
pub(in crate::extract) fn unfold(text: &[u8], tree: &Tree) -> Option<Unfolded> {
    // Nothing to unfold without a `join!`/`select!` or a log line that mentions a retry: the
    // walk over every node is not taken (a byte test; a superset is safe).
    let mentions = |word: &[u8]| memchr::memmem::find(text, word).is_some();
    if !super::may_invoke_macro(text, b"join")
        && !super::may_invoke_macro(text, b"select")
        && !ERROR_REGION_TOKENS.iter().any(|t| mentions(t))
    {
        return None;
    }
    let mut current: Option<Unfolded> = None;
    for _ in 0..ROUNDS {
        let (source, source_tree) = match &current {
            Some((t, tr, _)) => (t.as_slice(), tr),
            None => (text, tree),
        };
        let mut out = source.to_vec();
        let mut logged = current.as_ref().map(|c| c.2.clone()).unwrap_or_default();
        if !rewrite_all(source, source_tree.root_node(), &mut out, &mut logged) {
            break;
        }
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).ok()?;
        let reparsed = parser.parse(&out, None)?;
        if errors(reparsed.root_node()) > errors(source_tree.root_node()) {
            break;
        }
        current = Some((out, reparsed, logged));
    }
    // In order of their starts, for a binary search.
    if let Some((_, _, logged)) = &mut current {
        logged.sort_unstable();
    }
    current
}

fn errors(root: Node) -> usize {
    if !root.has_error() {
        return 0;
    }
    crate::extract::count_error_nodes(root)
}

/// Rewrites every known macro invocation below `root` into `out`, the log events' ranges
/// into `logged`; whether any was.
fn rewrite_all(text: &[u8], root: Node, out: &mut [u8], logged: &mut Vec<(usize, usize)>) -> bool {
    let mut changed = false;
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        let mut descend = true;
        if node.kind_str() == "macro_invocation" {
            descend = false;
            match rewrite(text, node, out) {
                Some(Shape::Fields) => {
                    logged.push((node.start_byte(), node.end_byte()));
                    changed = true;
                }
                Some(_) => changed = true,
                None => {}
            }
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    changed
}

fn text_of<'a>(text: &'a [u8], node: Node) -> &'a [u8] {
    &text[node.byte_range()]
}

fn blank(out: &mut [u8], from: usize, to: usize) {
    for byte in &mut out[from..to] {
        if *byte != b'\n' && *byte != b'\r' {
            *byte = b' ';
        }
    }
}

/// One invocation: its path and `!` blanked, its delimiters made braces, its tokens turned
/// into statements; its shape. `None` when it is not a known macro or its tokens do not fit.
fn rewrite(text: &[u8], invocation: Node, out: &mut [u8]) -> Option<Shape> {
    let path = invocation.field("macro")?;
    let name_node = path.field("name").unwrap_or(path);
    let name = std::str::from_utf8(text_of(text, name_node)).ok()?;
    let shape = shape(name)?;
    let body = named_children(invocation)
        .into_iter()
        .find(|c| c.kind_str() == "token_tree")?;
    // A log line rarely holds a retry: only those that mention one are unfolded.
    if shape == Shape::Fields
        && !ERROR_REGION_TOKENS
            .iter()
            .any(|t| memchr::memmem::find(text_of(text, body), t).is_some())
    {
        return None;
    }
    let mut cursor = body.walk();
    let tokens: Vec<Node> = body.children(&mut cursor).collect();
    // Half-typed code (`join!(a.retry(b)` at the end of the file) ends its token tree in a
    // zero-width `MISSING` delimiter, at or past the last byte, and error recovery can miss
    // any other token the same way: every edit below writes at a token's bytes, so a macro
    // with a token that has none is left alone.
    if tokens.iter().any(|t| t.is_missing() || t.start_byte() >= t.end_byte()) {
        return None;
    }
    let (open, close) = (tokens.first()?, tokens.last()?);
    if tokens.len() < 2 || !matches!(open.kind_str(), "(" | "[" | "{") || !matches!(close.kind_str(), ")" | "]" | "}") {
        return None;
    }
    let inner = &tokens[1..tokens.len() - 1];
    let mut edits = out.to_vec();
    let fits = match shape {
        Shape::List => list(inner, &mut edits),
        Shape::Select => select(text, inner, &mut edits),
        Shape::Fields => fields(inner, &mut edits),
    };
    if !fits {
        return None;
    }
    blank(&mut edits, invocation.start_byte(), body.start_byte());
    edits[open.start_byte()] = b'{';
    edits[close.start_byte()] = b'}';
    out.copy_from_slice(&edits);
    Some(shape)
}

/// `a, b, c` → `a; b; c`.
fn list(tokens: &[Node], out: &mut [u8]) -> bool {
    for token in tokens {
        if token.kind_str() == "," {
            out[token.start_byte()] = b';';
        }
    }
    true
}

/// The branches of `select!`: `pattern =` blanked, `, if` made `;`, `=>` made `;`, `else`
/// and `biased;` blanked; the futures and handlers stay.
fn select(text: &[u8], tokens: &[Node], out: &mut [u8]) -> bool {
    #[derive(PartialEq)]
    enum State {
        Pattern,
        Future,
        Else,
        /// After `=>`: whether a token of the handler was seen.
        Handler(bool),
        /// After a block handler.
        Block,
    }
    let mut state = State::Pattern;
    let mut branch: Option<usize> = None;
    for token in tokens {
        let kind = token.kind_str();
        let word = text_of(text, *token);
        if state == State::Block {
            if kind == "," {
                out[token.start_byte()] = b';';
                state = State::Pattern;
                continue;
            }
            state = State::Pattern;
        }
        match state {
            State::Pattern => match kind {
                "identifier" if word == b"biased" && branch.is_none() => {
                    blank(out, token.start_byte(), token.end_byte())
                }
                ";" if branch.is_none() => {}
                "identifier" if word == b"else" && branch.is_none() => {
                    blank(out, token.start_byte(), token.end_byte());
                    state = State::Else;
                }
                "=" => {
                    blank(out, branch.unwrap_or(token.start_byte()), token.end_byte());
                    branch = None;
                    state = State::Future;
                }
                "=>" | "," => return false,
                _ => {
                    branch.get_or_insert(token.start_byte());
                }
            },
            State::Future => match kind {
                "=>" => {
                    blank(out, token.start_byte(), token.end_byte());
                    out[token.start_byte()] = b';';
                    state = State::Handler(false);
                }
                "," => out[token.start_byte()] = b';',
                "if" => blank(out, token.start_byte(), token.end_byte()),
                _ => {}
            },
            State::Else => {
                if kind != "=>" {
                    return false;
                }
                blank(out, token.start_byte(), token.end_byte());
                state = State::Handler(false);
            }
            State::Handler(seen) => match kind {
                "," => {
                    out[token.start_byte()] = b';';
                    state = State::Pattern;
                }
                "token_tree" if !seen && word.first() == Some(&b'{') => state = State::Block,
                _ => state = State::Handler(true),
            },
            State::Block => unreachable!("handled above"),
        }
    }
    // A branch must not be left half-read.
    matches!(state, State::Pattern | State::Block | State::Handler(true)) && branch.is_none()
}

/// `target: "t", field = value, ?debug, %display, "message {}", arg` → the values, as
/// statements.
fn fields(tokens: &[Node], out: &mut [u8]) -> bool {
    let mut segment: Vec<Node> = Vec::new();
    let mut segments = Vec::new();
    for token in tokens {
        if token.kind_str() == "," {
            out[token.start_byte()] = b';';
            segments.push(std::mem::take(&mut segment));
        } else {
            segment.push(*token);
        }
    }
    segments.push(segment);
    for segment in segments {
        let Some(first) = segment.first() else { continue };
        // `target: …`, `parent: …`, `name: …`.
        if segment.len() > 1 && first.kind_str() == "identifier" && segment[1].kind_str() == ":" {
            blank(out, first.start_byte(), segment[1].end_byte());
            continue;
        }
        // `field = value`, `a.b = value`.
        let mut start = 0;
        if let Some(eq) = segment.iter().position(|t| t.kind_str() == "=") {
            blank(out, first.start_byte(), segment[eq].end_byte());
            start = eq + 1;
        }
        // `?value`, `%value`.
        if let Some(sigil) = segment.get(start).filter(|t| matches!(t.kind_str(), "?" | "%")) {
            blank(out, sigil.start_byte(), sigil.end_byte());
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_events_unfolded_are_said() {
        let source = "fn f() { tracing::warn!(error = %describe(&e), \"retrying\"); join!(a.retry(b), c); }";
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        let tree = parser.parse(source, None).unwrap();
        let (_, _, logged) = unfold(source.as_bytes(), &tree).expect("unfolded");
        let start = source.find("tracing").unwrap();
        let end = source.find(");").unwrap() + 1;
        assert_eq!(logged, vec![(start, end)], "the event only, not `join!`");
    }

    fn unfolded(source: &str) -> String {
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        let tree = parser.parse(source, None).unwrap();
        let (text, tree, _) = unfold(source.as_bytes(), &tree).expect("unfolded");
        assert!(!tree.root_node().has_error(), "{}", String::from_utf8_lossy(&text));
        assert_eq!(text.len(), source.len());
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn select_branches_become_statements() {
        let text = unfolded(
            "fn f() { tokio::select! {\n biased;\n r = a.retry(b) => { x }\n _ = c, if d => 1,\n else => 2\n }\n let y = 1; }",
        );
        assert!(text.contains("a.retry(b) ;  { x }"), "{text}");
        assert!(
            !text.contains("select") && !text.contains("biased") && !text.contains("else"),
            "{text}"
        );
    }

    #[test]
    fn joins_and_log_lines() {
        let text = unfolded("async fn f() { let (a, b) = tokio::try_join!(one(), two.retry(p))?; }");
        assert!(text.contains("{one(); two.retry(p)}?"), "{text}");
        let text = unfolded("fn f() { tracing::info!(target: \"t\", id = ?op.retry(p), %x, \"done\"); }");
        assert!(text.contains("op.retry(p)"), "{text}");
        assert!(!text.contains("target") && !text.contains("id ="), "{text}");
        // A nested join in a select is unfolded in a second round.
        let text = unfolded("fn f() { tokio::select! { r = async { join!(a.retry(p), b) } => r } }");
        assert!(!text.contains("join"), "{text}");
    }

    #[test]
    fn half_typed_macros_at_the_end_of_a_file_are_left_alone() {
        // Each ends in a zero-width `MISSING` token (a delimiter, a `=>`), at the last byte.
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        for source in [
            "fn f() { join!(x.retry(b)",
            "fn f() { join!(x.retry(b),",
            "fn f() { tokio::try_join!(a.retry(b), c",
            "fn f() { tokio::select! { r = a.retry(b)",
            "fn f() { tokio::select! { r = a.retry(b) =>",
            "fn f() { tokio::select! { r = a.retry(b) => { x }",
            "fn f() { tokio::select! { r = a.retry(b), if c",
            "fn f() { tokio::select! { else",
            "fn f() { tracing::info!(id = ?op.retry(p)",
            "fn f() { tracing::info!(target: \"t\", x = op.retry(p)",
            "fn f() { tracing::info!(target:",
            "fn f() { tracing::info_span!(\"s\", retry = %a.retry(b),",
        ] {
            for source in [source.to_string(), format!("{source}\n"), format!("{source} ")] {
                let tree = parser.parse(&source, None).unwrap();
                // Unfolded or not, never a panic; what is unfolded keeps every offset.
                if let Some((text, _, _)) = unfold(source.as_bytes(), &tree) {
                    assert_eq!(text.len(), source.len(), "{source}");
                }
            }
        }
    }

    #[test]
    fn other_macros_and_odd_shapes_are_left_alone() {
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        for source in [
            "fn f() { println!(\"{}\", a.retry(p)); }",
            "fn f() { tracing::info!(\"nothing to see\"); }",
            "fn f() { tokio::select! { => 1 } }",
        ] {
            let tree = parser.parse(source, None).unwrap();
            assert!(unfold(source.as_bytes(), &tree).is_none(), "{source}");
        }
    }
}
