//! JSON and YAML trees (tree-sitter-json, tree-sitter-yaml) as one small owned value tree
//! with byte spans: what recognition reads. YAML anchors, aliases and `<<` merge keys are
//! followed within the document; what cannot be read (an error region, an unknown alias) is
//! `Opaque`. Every `$_retry` written in a key or a string is collected on the way.
//!
//! The tree is bounded whatever the document: collections nested deeper than [`MAX_DEPTH`]
//! (an alias's copy counted where it is used) and aliases past a budget of copied nodes
//! ([`MAX_COPIED`], a "billion laughs" alias bomb) are `Opaque`, and the converter says where
//! it stopped. Every walk of the tree (conversion, recognition, clone, drop) recurses, so the
//! bound on depth is what keeps a 20 KB file of nested arrays from overflowing the stack.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node as TsNode;

use crate::source::Span;

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub kind: Kind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(super) enum Kind {
    Map(Vec<Entry>),
    Seq(Vec<Node>),
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    Opaque,
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
    /// The whole entry, key to value.
    pub span: Span,
}

impl Node {
    fn new(kind: Kind, node: TsNode) -> Node {
        Node {
            kind,
            span: span_of(node),
        }
    }

    /// The entries of a mapping (empty for anything else).
    pub fn entries(&self) -> &[Entry] {
        match &self.kind {
            Kind::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The value of `key` in a mapping (the last one written, as parsers read duplicates).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries().iter().rev().find(|e| e.key == key)
    }
}

fn span_of(node: TsNode) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// How deep collections (mappings, sequences) are followed. RS2 configuration nests a
/// handful of levels (tenant, mounts, a call, its `retry`); JSON or YAML nested deeper is
/// data, and a collection below this depth is `Opaque`. 64 levels take about 4 frames each
/// of the conversion's recursion, far inside a worker thread's stack.
pub(super) const MAX_DEPTH: usize = 64;

/// How many nodes the YAML anchors and aliases of one document may copy (a string counts a
/// node per 64 bytes): nine anchors each aliasing the one before ten times make 10⁹ nodes
/// from a few hundred bytes. Real configuration merges a few defaults a few times.
pub(super) const MAX_COPIED: usize = 100_000;

/// What a conversion collects besides the tree.
pub(super) struct Converter<'t> {
    text: &'t [u8],
    /// `$_retry` as written, in keys and strings.
    pub imperative: Vec<Span>,
    /// The first collection not followed for its depth.
    pub too_deep: Option<Span>,
    /// The first alias not followed because its copy would exceed [`MAX_COPIED`].
    pub too_many: Option<Span>,
    anchors: HashMap<String, Anchor>,
    /// Nodes copied for anchors and aliases so far.
    copied: usize,
}

/// An anchored value, with its size (against [`MAX_COPIED`]) and height (against
/// [`MAX_DEPTH`]); `None` when keeping it would have exceeded the budget.
struct Anchor {
    value: Option<Node>,
    size: usize,
    height: usize,
}

/// A tree's size (nodes, a string a node per 64 bytes) and height (collections on the
/// longest path). The tree is bounded by [`MAX_DEPTH`], and so is the recursion.
fn measure(node: &Node) -> (usize, usize) {
    match &node.kind {
        Kind::Map(entries) => entries.iter().fold((1, 1), |(size, height), entry| {
            let (s, h) = measure(&entry.value);
            (size + 1 + entry.key.len() / 64 + s, height.max(h + 1))
        }),
        Kind::Seq(items) => items.iter().fold((1, 1), |(size, height), item| {
            let (s, h) = measure(item);
            (size + s, height.max(h + 1))
        }),
        Kind::Str(text) => (1 + text.len() / 64, 0),
        _ => (1, 0),
    }
}

const IMPERATIVE: &[u8] = b"$_retry";

impl<'t> Converter<'t> {
    pub fn new(text: &'t [u8]) -> Converter<'t> {
        Converter {
            text,
            imperative: Vec::new(),
            too_deep: None,
            too_many: None,
            anchors: HashMap::new(),
            copied: 0,
        }
    }

    /// A collection at `depth` (0 for the document's own value) is followed only within
    /// [`MAX_DEPTH`]; past it, the node is `Opaque` and the first such place is kept.
    fn too_deep(&mut self, node: TsNode, depth: usize) -> bool {
        if depth < MAX_DEPTH {
            return false;
        }
        self.too_deep.get_or_insert(span_of(node));
        true
    }

    fn raw(&self, node: TsNode) -> &'t str {
        std::str::from_utf8(&self.text[node.byte_range()]).unwrap_or("")
    }

    /// Records every `$_retry` (not the start of a longer name) in a key or string.
    fn scan_imperative(&mut self, node: TsNode) {
        let range = node.byte_range();
        let bytes = &self.text[range.clone()];
        for at in memchr::memmem::find_iter(bytes, IMPERATIVE) {
            let end = at + IMPERATIVE.len();
            if bytes.get(end).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                continue;
            }
            self.imperative.push(Span::new(range.start + at, range.start + end));
        }
    }

    // ------------------------------------------------------------------ JSON

    /// The document's one value; `None` for an empty document or several values.
    pub fn json_document(&mut self, root: TsNode) -> Option<Node> {
        let mut cursor = root.walk();
        let values: Vec<TsNode> = root
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        match values.as_slice() {
            [value] => Some(self.json(*value, 0)),
            _ => None,
        }
    }

    fn json(&mut self, node: TsNode, depth: usize) -> Node {
        let kind = match node.kind() {
            "object" | "array" if self.too_deep(node, depth) => Kind::Opaque,
            "object" => {
                let mut entries = Vec::new();
                let mut cursor = node.walk();
                for pair in node.named_children(&mut cursor).filter(|c| c.kind() == "pair") {
                    let (Some(key), Some(value)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value"))
                    else {
                        continue;
                    };
                    self.scan_imperative(key);
                    let key_text = match key.kind() {
                        "string" => json_string(self.raw(key)),
                        _ => self.raw(key).to_string(),
                    };
                    entries.push(Entry {
                        key: key_text,
                        key_span: span_of(key),
                        value: self.json(value, depth + 1),
                        span: span_of(pair),
                    });
                }
                Kind::Map(entries)
            }
            "array" => {
                let mut cursor = node.walk();
                let items: Vec<TsNode> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .collect();
                Kind::Seq(items.into_iter().map(|item| self.json(item, depth + 1)).collect())
            }
            "string" => {
                self.scan_imperative(node);
                Kind::Str(json_string(self.raw(node)))
            }
            "number" => self.raw(node).parse().map_or(Kind::Opaque, Kind::Num),
            "true" => Kind::Bool(true),
            "false" => Kind::Bool(false),
            "null" => Kind::Null,
            _ => Kind::Opaque,
        };
        Node::new(kind, node)
    }

    // ------------------------------------------------------------------ YAML

    /// The stream's one document; `None` for an empty stream or several documents (a
    /// multi-document stream is a Kubernetes manifest or the like, never RS2 configuration).
    pub fn yaml_stream(&mut self, root: TsNode) -> Option<Node> {
        let mut cursor = root.walk();
        let documents: Vec<TsNode> = root
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "document")
            .collect();
        let [document] = documents.as_slice() else {
            return None;
        };
        let mut cursor = document.walk();
        let content = document
            .named_children(&mut cursor)
            .find(|c| matches!(c.kind(), "block_node" | "flow_node"))?;
        Some(self.yaml(content, 0))
    }

    /// One YAML node at `depth` (the number of collections around it).
    fn yaml(&mut self, node: TsNode, depth: usize) -> Node {
        let kind = match node.kind() {
            "block_node" | "flow_node" => {
                // Properties (an anchor, a tag) precede the content.
                let mut anchor = None;
                let mut content = None;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "anchor" => {
                            anchor = child
                                .named_child(0)
                                .filter(|n| n.kind() == "anchor_name")
                                .map(|n| self.raw(n).to_string())
                        }
                        "tag" | "comment" => {}
                        _ => content = Some(child),
                    }
                }
                let value = match content {
                    Some(content) => self.yaml(content, depth),
                    None => Node::new(Kind::Null, node),
                };
                if let Some(name) = anchor {
                    // The copy kept for the aliases counts against the budget too: anchors
                    // nested in anchors would otherwise copy a large value once per level.
                    let (size, height) = measure(&value);
                    let kept = (self.copied + size <= MAX_COPIED).then(|| value.clone());
                    self.copied += if kept.is_some() { size } else { 0 };
                    let anchor = Anchor {
                        value: kept,
                        size,
                        height,
                    };
                    self.anchors.insert(name, anchor);
                }
                return value;
            }
            "alias" => return self.alias(node, depth),
            "block_mapping" | "flow_mapping" | "block_sequence" | "flow_sequence" if self.too_deep(node, depth) => {
                Kind::Opaque
            }
            "block_mapping" | "flow_mapping" => self.yaml_mapping(node, depth + 1),
            "block_sequence" | "flow_sequence" => {
                let mut items = Vec::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "block_sequence_item" => {
                            let mut inner = child.walk();
                            let value = child
                                .named_children(&mut inner)
                                .find(|c| matches!(c.kind(), "block_node" | "flow_node"));
                            items.push(match value {
                                Some(value) => self.yaml(value, depth + 1),
                                None => Node::new(Kind::Null, child),
                            });
                        }
                        "flow_node" => items.push(self.yaml(child, depth + 1)),
                        "flow_pair" if self.too_deep(child, depth + 1) => items.push(Node::new(Kind::Opaque, child)),
                        "flow_pair" => {
                            let entries = self.yaml_pair(child, depth + 2).into_iter().collect();
                            items.push(Node::new(Kind::Map(entries), child));
                        }
                        _ => {}
                    }
                }
                Kind::Seq(items)
            }
            "plain_scalar" => {
                self.scan_imperative(node);
                let raw = self.raw(node);
                match node.named_child(0).map(|c| c.kind()) {
                    Some("integer_scalar") => yaml_integer(raw).map_or(Kind::Opaque, Kind::Num),
                    Some("float_scalar") => raw.parse().map_or(Kind::Opaque, Kind::Num),
                    Some("boolean_scalar") => Kind::Bool(raw.eq_ignore_ascii_case("true")),
                    Some("null_scalar") => Kind::Null,
                    _ => Kind::Str(raw.to_string()),
                }
            }
            "double_quote_scalar" => {
                self.scan_imperative(node);
                Kind::Str(json_string(self.raw(node)))
            }
            "single_quote_scalar" => {
                self.scan_imperative(node);
                let raw = self.raw(node);
                let inner = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).unwrap_or(raw);
                Kind::Str(inner.replace("''", "'"))
            }
            "block_scalar" => {
                self.scan_imperative(node);
                // The header (`|`, `>-`) and the indentation are kept: only `$_retry` matters here.
                Kind::Str(self.raw(node).to_string())
            }
            _ => Kind::Opaque,
        };
        Node::new(kind, node)
    }

    /// An alias at `depth`: a copy of its anchor's value, when the copy stays within
    /// [`MAX_DEPTH`] and [`MAX_COPIED`].
    fn alias(&mut self, node: TsNode, depth: usize) -> Node {
        let name = node.named_child(0).map(|n| self.raw(n)).unwrap_or_default();
        let Some(anchor) = self.anchors.get(name) else {
            return Node::new(Kind::Opaque, node);
        };
        let (size, height) = (anchor.size, anchor.height);
        // The copy's deepest collection is `height - 1` levels below `depth`.
        if depth + height > MAX_DEPTH {
            self.too_deep.get_or_insert(span_of(node));
            return Node::new(Kind::Opaque, node);
        }
        let value = anchor.value.as_ref().filter(|_| self.copied + size <= MAX_COPIED);
        let Some(copy) = value.cloned() else {
            self.too_many.get_or_insert(span_of(node));
            return Node::new(Kind::Opaque, node);
        };
        self.copied += size;
        copy
    }

    /// The pairs of a mapping whose values are at `depth`.
    fn yaml_mapping(&mut self, node: TsNode, depth: usize) -> Kind {
        let mut entries: Vec<Entry> = Vec::new();
        let mut merged: Vec<Entry> = Vec::new();
        let mut cursor = node.walk();
        for pair in node.named_children(&mut cursor) {
            if !matches!(pair.kind(), "block_mapping_pair" | "flow_pair") {
                continue;
            }
            let Some(entry) = self.yaml_pair(pair, depth) else {
                continue;
            };
            if entry.key == "<<" {
                // `<<: *defaults` or `<<: [*a, *b]`: the keys not written here come from there,
                // the first merged mapping winning.
                match entry.value.kind {
                    Kind::Map(from) => merged.extend(from),
                    Kind::Seq(maps) => {
                        for map in maps {
                            if let Kind::Map(from) = map.kind {
                                merged.extend(from);
                            }
                        }
                    }
                    kind => entries.push(Entry {
                        value: Node {
                            kind,
                            span: entry.value.span,
                        },
                        ..entry
                    }),
                }
                continue;
            }
            entries.push(entry);
        }
        if !merged.is_empty() {
            let mut seen: HashSet<String> = entries.iter().map(|e| e.key.clone()).collect();
            for entry in merged {
                if seen.insert(entry.key.clone()) {
                    entries.push(entry);
                }
            }
        }
        Kind::Map(entries)
    }

    fn yaml_pair(&mut self, pair: TsNode, depth: usize) -> Option<Entry> {
        let key = pair.child_by_field_name("key")?;
        let key_value = self.yaml(key, depth);
        let key_text = match key_value.kind {
            Kind::Str(text) => text,
            _ => self.raw(key).to_string(),
        };
        let value = match pair.child_by_field_name("value") {
            Some(value) => self.yaml(value, depth),
            None => Node {
                kind: Kind::Null,
                span: Span::at(span_of(pair).end),
            },
        };
        Some(Entry {
            key: key_text,
            key_span: span_of(key),
            value,
            span: span_of(pair),
        })
    }
}

/// A JSON (or YAML double-quoted) string's value, from its text with the quotes.
fn json_string(raw: &str) -> String {
    let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(raw);
    if !inner.contains('\\') {
        return inner.to_string();
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(c);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// A YAML 1.2 integer: decimal, `0x…`, `0o…`.
fn yaml_integer(raw: &str) -> Option<f64> {
    let (sign, digits) = match raw.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, raw.strip_prefix('+').unwrap_or(raw)),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(octal) = digits.strip_prefix("0o") {
        i64::from_str_radix(octal, 8).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(sign * value as f64)
}
