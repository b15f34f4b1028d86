//! JSON and YAML trees (tree-sitter-json, tree-sitter-yaml) as one small owned value tree
//! with byte spans: what recognition reads. YAML anchors, aliases and `<<` merge keys are
//! followed within the document; what cannot be read (an error region, an unknown alias) is
//! `Opaque`. Every `$_retry` written in a key or a string is collected on the way.

use std::collections::HashMap;

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

/// What a conversion collects besides the tree.
pub(super) struct Converter<'t> {
    text: &'t [u8],
    /// `$_retry` as written, in keys and strings.
    pub imperative: Vec<Span>,
    anchors: HashMap<String, Node>,
}

const IMPERATIVE: &[u8] = b"$_retry";

impl<'t> Converter<'t> {
    pub fn new(text: &'t [u8]) -> Converter<'t> {
        Converter {
            text,
            imperative: Vec::new(),
            anchors: HashMap::new(),
        }
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
            [value] => Some(self.json(*value)),
            _ => None,
        }
    }

    fn json(&mut self, node: TsNode) -> Node {
        let kind = match node.kind() {
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
                        value: self.json(value),
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
                Kind::Seq(items.into_iter().map(|item| self.json(item)).collect())
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
        Some(self.yaml(content))
    }

    fn yaml(&mut self, node: TsNode) -> Node {
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
                    Some(content) => self.yaml(content),
                    None => Node::new(Kind::Null, node),
                };
                if let Some(name) = anchor {
                    self.anchors.insert(name, value.clone());
                }
                return value;
            }
            "alias" => {
                let name = node.named_child(0).map(|n| self.raw(n).to_string()).unwrap_or_default();
                return match self.anchors.get(&name) {
                    Some(value) => value.clone(),
                    None => Node::new(Kind::Opaque, node),
                };
            }
            "block_mapping" | "flow_mapping" => self.yaml_mapping(node),
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
                                Some(value) => self.yaml(value),
                                None => Node::new(Kind::Null, child),
                            });
                        }
                        "flow_node" => items.push(self.yaml(child)),
                        "flow_pair" => {
                            let entries = self.yaml_pair(child).into_iter().collect();
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

    fn yaml_mapping(&mut self, node: TsNode) -> Kind {
        let mut entries: Vec<Entry> = Vec::new();
        let mut merged: Vec<Entry> = Vec::new();
        let mut cursor = node.walk();
        for pair in node.named_children(&mut cursor) {
            if !matches!(pair.kind(), "block_mapping_pair" | "flow_pair") {
                continue;
            }
            let Some(entry) = self.yaml_pair(pair) else { continue };
            if entry.key == "<<" {
                // `<<: *defaults` or `<<: [*a, *b]`: the keys not written here come from there,
                // the first merged mapping winning.
                match &entry.value.kind {
                    Kind::Map(from) => merged.extend(from.iter().cloned()),
                    Kind::Seq(maps) => {
                        for map in maps {
                            merged.extend(map.entries().iter().cloned());
                        }
                    }
                    _ => entries.push(entry),
                }
                continue;
            }
            entries.push(entry);
        }
        for entry in merged {
            if !entries.iter().any(|e| e.key == entry.key) {
                entries.push(entry);
            }
        }
        Kind::Map(entries)
    }

    fn yaml_pair(&mut self, pair: TsNode) -> Option<Entry> {
        let key = pair.child_by_field_name("key")?;
        let key_value = self.yaml(key);
        let key_text = match key_value.kind {
            Kind::Str(text) => text,
            _ => self.raw(key).to_string(),
        };
        let value = match pair.child_by_field_name("value") {
            Some(value) => self.yaml(value),
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
