//! RS2 runtime configuration in JSON and YAML: retry policies, calls and `$_retry`.
//!
//! Recognition is by content, so the facts stay a function of the bytes: a policy is an object
//! under a `retry` key holding at least one policy key with a value of the type RS2 reads (a
//! UI string table's `"retry": { "maxAttempts": "Too many attempts" }` is not one); a nested
//! policy that is neither top-level nor a call's needs more than `enabled` (Spring's
//! `retry: { enabled: true, max-attempts: 3 }` is not RS2). Multi-document YAML and
//! Kubernetes objects (`apiVersion` with `kind`) are never RS2 and yield nothing.
//!
//! Hostile documents are bounded: YAML indented deeper than tree-sitter-yaml's scanner can
//! hold is not parsed ([`indent`]), collections nested past [`MAX_DEPTH`] and aliases that
//! copy past [`MAX_COPIED`] are not followed ([`value`]), and each is said in a note.

mod indent;
mod value;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

use value::{Converter, Entry, Kind, Node, MAX_COPIED, MAX_DEPTH};

use crate::facts::rs2::{Place, Rs2Call, Rs2Facts, Rs2Policy, Setting, POLICY_KEYS};
use crate::facts::FileFacts;
use crate::source::{Language, Span};

thread_local! {
    // One parser per rayon worker and grammar (JSON, YAML), as for the code grammars.
    static PARSERS: RefCell<[Option<Parser>; 2]> = const { RefCell::new([None, None]) };
}

/// Parses JSON (comments allowed, as in `tsconfig.json`) or YAML; `None` for YAML that
/// tree-sitter-yaml cannot parse without aborting the process ([`indent`]).
pub(super) fn parse(language: Language, text: &[u8]) -> Option<Tree> {
    if language == Language::Yaml && indent::check(text).is_err() {
        return None;
    }
    // Deep flow collections that do not close (`[,[,[,…`) cost tree-sitter's error recovery
    // seconds a hundred kilobytes, as in code.
    if super::deep_and_broken(text) {
        return None;
    }
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let (slot, grammar): (usize, tree_sitter::Language) = match language {
            Language::Json => (0, tree_sitter_json::LANGUAGE.into()),
            Language::Yaml => (1, tree_sitter_yaml::LANGUAGE.into()),
            _ => return None,
        };
        let parser = parsers[slot].get_or_insert_with(|| {
            let mut parser = Parser::new();
            parser
                .set_language(&grammar)
                .expect("grammar matches the tree-sitter version");
            parser
        });
        parser.parse(text, None)
    })
}

/// Jitter modes a policy is recognised by (`jitter` alone is too common a key).
const JITTER_MODES: &[&str] = &["full", "none", "equal", "decorrelated"];

pub(super) fn extract(facts: &mut FileFacts, text: &[u8]) {
    if facts.language == Language::Yaml && indent::check(text).is_err() {
        facts.note(
            None,
            format!(
                "skipped: YAML indented deeper than its parser can read (about {} levels)",
                indent::MAX_ESTIMATE / 2
            ),
        );
        return;
    }
    let Some(tree) = parse(facts.language, text) else {
        facts.note(None, super::unparsed_note(facts.language, text));
        return;
    };
    let mut converter = Converter::new(text);
    let root = match facts.language {
        Language::Json => converter.json_document(tree.root_node()),
        _ => converter.yaml_stream(tree.root_node()),
    };
    let Some(root) = root else {
        // A document that is all error (an unclosed `[` makes the root one) is said too.
        note_parse_errors(facts, text, &tree);
        return;
    };
    if root.get("apiVersion").is_some() && root.get("kind").is_some() {
        return;
    }
    let mut rs2 = Rs2Facts {
        mount_key: root.get("mount").is_some(),
        tenant_key: root.get("tenant").is_some(),
        ..Rs2Facts::default()
    };
    walk(&root, &mut Vec::new(), true, None, &mut rs2);
    if let Some(span) = converter.too_deep {
        let (line, column) = facts.position(span.start);
        facts.note(
            Some(line),
            format!(
                "not analysed: the value at {line}:{column} nests deeper than retrylint follows ({MAX_DEPTH} levels)"
            ),
        );
    }
    if let Some(span) = converter.too_many {
        let (line, column) = facts.position(span.start);
        facts.note(
            Some(line),
            format!(
                "not analysed: YAML aliases from {line}:{column} on copy more than retrylint follows ({MAX_COPIED} nodes)"
            ),
        );
    }
    rs2.imperative = converter.imperative;
    rs2.imperative.sort_unstable();
    rs2.imperative.dedup();
    note_parse_errors(facts, text, &tree);
    facts.rs2 = rs2;
}

/// One step of a key path: a key, or an index into a sequence.
enum Step<'n> {
    Key(&'n str),
    Index(usize),
}

/// A key path as messages show it, `mounts[0].retry`: a key longer than [`MAX_KEY_SHOWN`]
/// characters is cut, so a path stays short however long the document's keys are (a policy
/// under 64 levels of 10 KB keys, many times over, would otherwise be gigabytes).
fn path_of(steps: &[Step]) -> String {
    let mut path = String::new();
    for step in steps {
        match step {
            Step::Key(key) => {
                if !path.is_empty() {
                    path.push('.');
                }
                match key.char_indices().nth(MAX_KEY_SHOWN) {
                    Some((cut, _)) => {
                        path.push_str(&key[..cut]);
                        path.push('…');
                    }
                    None => path.push_str(key),
                }
            }
            Step::Index(i) => {
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
            }
        }
    }
    path
}

const MAX_KEY_SHOWN: usize = 40;

/// Walks the tree for policies and calls, `path` the steps to `node`. `call` is the call
/// whose call object `node` is.
fn walk<'n>(node: &'n Node, path: &mut Vec<Step<'n>>, top: bool, call: Option<usize>, out: &mut Rs2Facts) {
    match &node.kind {
        Kind::Map(entries) => {
            // An object with a `call` object is a call: its `retry` is the call's own.
            let here = node
                .get("call")
                .filter(|e| matches!(e.value.kind, Kind::Map(_)))
                .map(|e| {
                    out.calls.push(read_call(e));
                    out.calls.len() - 1
                });
            for entry in entries {
                path.push(Step::Key(&entry.key));
                if entry.key == "retry" {
                    let place = if top {
                        Place::TopLevel
                    } else if let Some(c) = call.or(here) {
                        Place::Call(c)
                    } else {
                        Place::Nested
                    };
                    if let Some(policy) = read_policy(entry, path_of(path), place) {
                        path.pop();
                        out.policies.push(policy);
                        if let Place::Call(c) = place {
                            // A `retry` in the call object wins over one beside it.
                            if call.is_some() || out.calls[c].policy.is_none() {
                                out.calls[c].policy = Some(out.policies.len() - 1);
                            }
                        }
                        continue;
                    }
                }
                let inner = if entry.key == "call" { here } else { None };
                walk(&entry.value, path, false, inner, out);
                path.pop();
            }
        }
        Kind::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                walk(item, path, false, None, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn read_call(entry: &Entry) -> Rs2Call {
    let string = |key: &str| {
        let found = entry.value.get(key)?;
        match &found.value.kind {
            Kind::Str(text) => Some((text.clone(), found.span)),
            _ => None,
        }
    };
    Rs2Call {
        span: entry.key_span,
        method: string("method"),
        effect: string("effect"),
        policy: None,
    }
}

/// The policy under a `retry` key, if the object is one.
fn read_policy(entry: &Entry, path: String, place: Place) -> Option<Rs2Policy> {
    let object = &entry.value;
    if !matches!(object.kind, Kind::Map(_)) {
        return None;
    }
    let typed = |key: &str| -> bool {
        let Some(found) = object.get(key) else { return false };
        match (&found.value.kind, key) {
            (Kind::Bool(_), "enabled" | "retryOnNetworkError" | "respectRetryAfter") => true,
            (Kind::Num(_), "maxAttempts" | "baseDelayMs" | "maxDelayMs" | "backoffMultiplier") => true,
            (Kind::Str(mode), "jitter") => JITTER_MODES.contains(&mode.as_str()),
            (Kind::Seq(_), "retryStatuses") => true,
            _ => false,
        }
    };
    let recognised = match place {
        Place::Nested => POLICY_KEYS.iter().any(|k| *k != "enabled" && typed(k)),
        _ => POLICY_KEYS.iter().any(|k| typed(k)),
    };
    if !recognised {
        return None;
    }
    let number = |key: &str| {
        setting(
            object,
            key,
            |kind| if let Kind::Num(n) = kind { Some(*n) } else { None },
        )
    };
    let boolean = |key: &str| {
        setting(
            object,
            key,
            |kind| if let Kind::Bool(b) = kind { Some(*b) } else { None },
        )
    };
    Some(Rs2Policy {
        retry: entry.key_span,
        span: object.span,
        path,
        place,
        enabled: boolean("enabled"),
        max_attempts: number("maxAttempts"),
        base_delay_ms: number("baseDelayMs"),
        max_delay_ms: number("maxDelayMs"),
        backoff_multiplier: number("backoffMultiplier"),
        jitter: setting(object, "jitter", |kind| match kind {
            Kind::Str(mode) => Some(mode.clone()),
            _ => None,
        }),
        retry_statuses: match object.get("retryStatuses") {
            None => Setting::Absent,
            Some(found) => match &found.value.kind {
                Kind::Seq(items) => Setting::Known(
                    items
                        .iter()
                        .filter_map(|item| match item.kind {
                            Kind::Num(n) => Some((n, item.span)),
                            _ => None,
                        })
                        .collect(),
                    found.value.span,
                ),
                _ => Setting::Unknown(found.value.span),
            },
        },
        retry_on_network_error: boolean("retryOnNetworkError"),
        respect_retry_after: boolean("respectRetryAfter"),
    })
}

fn setting<T>(object: &Node, key: &str, read: impl Fn(&Kind) -> Option<T>) -> Setting<T> {
    match object.get(key) {
        None => Setting::Absent,
        Some(found) => match read(&found.value.kind) {
            Some(value) => Setting::Known(value, found.value.span),
            None => Setting::Unknown(found.value.span),
        },
    }
}

/// A region the parser could not read that mentions `retry` is said, not silently skipped.
fn note_parse_errors(facts: &mut FileFacts, text: &[u8], tree: &Tree) {
    let root = tree.root_node();
    if !root.has_error() {
        return;
    }
    let mut cursor = root.walk();
    let mut stack = vec![root];
    let mut errors: Vec<Span> = Vec::new();
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            errors.push(Span::new(node.start_byte(), node.end_byte()));
            continue;
        }
        if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    errors.sort_unstable();
    // Where the lines read so far end: the next error on them adds nothing (and a minified
    // line of many errors is searched once, not once an error).
    let mut read_to = 0;
    for error in errors {
        if (error.end as usize) <= read_to && read_to > 0 {
            continue;
        }
        // The line around the error: a `retry` key the error swallowed or cut off.
        let start = memchr::memrchr(b'\n', &text[..error.start as usize]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &text[error.end as usize..]).map_or(text.len(), |i| error.end as usize + i);
        read_to = end;
        if memchr::memmem::find(&text[start..end], b"retry").is_none() {
            continue;
        }
        let (line, column) = facts.position(error.start);
        facts.note(
            Some(line),
            format!("not analysed: parse error at {line}:{column} in a document mentioning `retry`"),
        );
    }
}

#[cfg(test)]
mod tests;
