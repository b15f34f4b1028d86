//! TypeScript / TSX extraction: imports, exports, top-level bindings and retry sites.

use tree_sitter::{Node, Tree};

use super::{count_errors, parse, units};

mod jobs;
use crate::facts::{
    is_effect_source, Binding, Container, ContainerKind, Export, Expr, FileFacts, Import, ImportKind, PolicyArg,
    Predicate, Property, Retried, RetrySite,
};
use crate::schedule::Library;
use crate::source::{Language, Span};

/// Which Effect retry a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RetryKind {
    /// `Effect.retry`
    EffectRetry,
    /// `Effect.retryOrElse`
    EffectRetryOrElse,
    /// `Stream.retry`
    StreamRetry,
    /// `HttpClient.retryTransient`
    HttpRetryTransient,
}

impl RetryKind {
    fn callee(self) -> &'static str {
        match self {
            RetryKind::EffectRetry => "Effect.retry",
            RetryKind::EffectRetryOrElse => "Effect.retryOrElse",
            RetryKind::StreamRetry => "Stream.retry",
            RetryKind::HttpRetryTransient => "HttpClient.retryTransient",
        }
    }
}

/// How deep an expression is converted before the rest becomes opaque. Policies are shallow;
/// this only bounds the work on pathological input.
const MAX_EXPR_DEPTH: usize = 40;

/// Tokens that make an unparsed region worth a note: a retry or schedule may hide there.
const ERROR_REGION_TOKENS: &[&[u8]] = &[b"retry", b"Schedule", b"lease", b"Jobs"];

pub(super) fn extract(facts: &mut FileFacts, text: &[u8]) {
    let Some(tree) = parse_with_recovery(facts.language, text) else {
        facts.note(None, "skipped: the parser gave up on this file");
        return;
    };
    let mut extractor = Extractor {
        text,
        facts,
        scopes: Vec::new(),
        containers: Vec::new(),
        frames: Vec::new(),
        shadowed: Default::default(),
    };
    let root = tree.root_node();
    extractor.module_items(root);
    extractor.walk(root);
    // Calls inside a retried unit are followed into the file's named units; a file that
    // retries nothing needs none.
    if !extractor.facts.retry_sites.is_empty() {
        extractor.facts.units = units::named_units(text, root);
    }
}

/// Parses the file; when the tree has errors, retries once with TypeScript constructs that
/// tree-sitter-typescript 0.23 does not know (variance annotations `<in out A>`, `const` type
/// parameters) blanked out. Blanking keeps every byte offset, so spans stay true to the file.
pub(super) fn parse_with_recovery(language: Language, text: &[u8]) -> Option<Tree> {
    let tree = parse(language, text)?;
    if !tree.root_node().has_error() {
        return Some(tree);
    }
    let modifiers = blank_type_parameter_modifiers(text);
    let lists = blank_unparsed_type_lists(modifiers.as_deref().unwrap_or(text), language == Language::Tsx);
    let Some(blanked) = lists.or(modifiers) else {
        return Some(tree);
    };
    let retried = parse(language, &blanked)?;
    if count_errors(&retried) < count_errors(&tree) {
        Some(retried)
    } else {
        Some(tree)
    }
}

/// Blanks type parameter and argument lists that tree-sitter-typescript 0.23 trips over, all
/// of which carry no fact the rules read:
/// - type arguments of a tagged template, ``sql<{ id: number }>`SELECT …` ``;
/// - type parameters of a generic function type in return position, `(a: A): <B>(b: B) => B`;
/// - type parameters opening a call signature line in a type literal, `<A>(a: A): A`
///   (not in TSX, where a line may open with a JSX tag).
fn blank_unparsed_type_lists(text: &[u8], tsx: bool) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'<', &text[i..]) {
        let open = i + offset;
        i = open + 1;
        let Some(close) = matching_angle(text, open) else {
            continue;
        };
        let after = text[close + 1..]
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .map(|p| close + 1 + p);
        let before = text[..open].iter().rposition(|c| *c != b' ' && *c != b'\t');
        let starts_identifier = text[open + 1..]
            .iter()
            .find(|c| !c.is_ascii_whitespace())
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'$' || *c == b'{');
        let blank = match after.map(|a| text[a]) {
            Some(b'`') => before.is_some_and(|b| text[b].is_ascii_alphanumeric() || text[b] == b'_'),
            Some(b'(') if starts_identifier => match before.map(|b| text[b]) {
                Some(b':') => true,
                Some(b'\n') | None => !tsx,
                _ => false,
            },
            _ => false,
        };
        if blank {
            out.get_or_insert_with(|| text.to_vec())[open..=close].fill(b' ');
            i = close + 1;
        }
    }
    out
}

/// The `>` closing the `<` at `open`, skipping nested brackets and `=>`; `None` when the list
/// is not a plausible type list (too long, or a `;` or `)` at its own level).
fn matching_angle(text: &[u8], open: usize) -> Option<usize> {
    let mut angle = 0usize;
    let mut bracket = 0usize;
    for (k, &c) in text.iter().enumerate().skip(open).take(600) {
        match c {
            b'<' => angle += 1,
            b'>' if k > 0 && text[k - 1] == b'=' => {}
            b'>' => {
                angle -= 1;
                if angle == 0 {
                    return (bracket == 0).then_some(k);
                }
            }
            b'(' | b'[' | b'{' => bracket += 1,
            b')' | b']' | b'}' => {
                if bracket == 0 {
                    return None;
                }
                bracket -= 1;
            }
            b';' if bracket == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Replaces `in`, `out` and `const` modifiers directly after `<` or `,` (a type parameter
/// position) with spaces. Returns `None` when there is nothing to blank.
fn blank_type_parameter_modifiers(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'<' || text[i] == b',' {
            let mut j = i + 1;
            loop {
                while j < text.len() && (text[j] == b' ' || text[j] == b'\n' || text[j] == b'\t') {
                    j += 1;
                }
                let rest = &text[j..];
                let keyword = [&b"in"[..], b"out", b"const"].into_iter().find(|k| {
                    rest.starts_with(k)
                        && rest.get(k.len()).is_some_and(|c| c.is_ascii_whitespace())
                        && rest[k.len()..]
                            .iter()
                            .find(|c| !c.is_ascii_whitespace())
                            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'$')
                });
                let Some(keyword) = keyword else { break };
                let buffer = out.get_or_insert_with(|| text.to_vec());
                buffer[j..j + keyword.len()].fill(b' ');
                j += keyword.len();
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// What entering a node pushed, popped again when the walk leaves it.
#[derive(Default)]
struct Frame {
    scope: bool,
    container: bool,
}

/// A local name: `Some(node)` for a `const`/`let` with an initializer, `None` for a parameter
/// or anything else whose value the model does not know.
type ScopeEntry<'t> = (String, Option<Node<'t>>, Span);

struct Extractor<'t, 'f> {
    text: &'t [u8],
    facts: &'f mut FileFacts,
    scopes: Vec<Vec<ScopeEntry<'t>>>,
    containers: Vec<Container>,
    frames: Vec<Frame>,
    /// Parameter names shadowed while a function body is converted to an `Expr`.
    shadowed: std::cell::RefCell<Vec<Vec<String>>>,
}

impl<'t> Extractor<'t, '_> {
    fn text_of(&self, node: Node) -> &'t str {
        // The caller checked the file is UTF-8 and nodes end on character boundaries.
        std::str::from_utf8(&self.text[node.byte_range()]).unwrap_or("")
    }

    fn span(node: Node) -> Span {
        Span::new(node.start_byte(), node.end_byte())
    }

    // ---------------------------------------------------------------- module items

    fn module_items(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        for item in root.named_children(&mut cursor) {
            match item.kind() {
                "import_statement" => self.import_statement(item),
                "export_statement" => self.export_statement(item),
                _ => {
                    self.declaration(item);
                }
            }
        }
        self.facts.uses_effect = self.facts.imports.iter().any(|i| is_effect_source(&i.source));
    }

    fn import_statement(&mut self, node: Node<'t>) {
        let Some(source) = node
            .child_by_field_name("source")
            .map(|s| string_value(self.text_of(s)))
        else {
            return;
        };
        let type_only = has_token_child(node, "type");
        let mut cursor = node.walk();
        for clause in node.named_children(&mut cursor) {
            if clause.kind() != "import_clause" {
                continue;
            }
            let mut inner = clause.walk();
            for part in clause.named_children(&mut inner) {
                match part.kind() {
                    "identifier" => self.push_import(self.text_of(part), ImportKind::Default, &source, type_only, part),
                    "namespace_import" => {
                        if let Some(name) = first_named_child_of_kind(part, "identifier") {
                            self.push_import(self.text_of(name), ImportKind::Namespace, &source, type_only, part);
                        }
                    }
                    "named_imports" => {
                        let mut specs = part.walk();
                        for spec in part.named_children(&mut specs) {
                            if spec.kind() != "import_specifier" {
                                continue;
                            }
                            let Some(name) = spec.child_by_field_name("name") else {
                                continue;
                            };
                            let imported = string_value(self.text_of(name));
                            let local = spec
                                .child_by_field_name("alias")
                                .map(|a| self.text_of(a).to_string())
                                .unwrap_or_else(|| imported.clone());
                            let spec_type_only = type_only || has_token_child(spec, "type");
                            self.push_import(&local, ImportKind::Named(imported), &source, spec_type_only, spec);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn push_import(&mut self, local: &str, kind: ImportKind, source: &str, type_only: bool, node: Node) {
        self.facts.imports.push(Import {
            local: local.to_string(),
            kind,
            source: source.to_string(),
            type_only,
            span: Self::span(node),
        });
    }

    fn export_statement(&mut self, node: Node<'t>) {
        let source = node
            .child_by_field_name("source")
            .map(|s| string_value(self.text_of(s)));
        if let Some(declaration) = node.child_by_field_name("declaration") {
            for name in self.declaration(declaration) {
                self.facts.exports.push(Export::Local {
                    name: name.clone(),
                    local: name,
                });
            }
            return;
        }
        if let Some(value) = node.child_by_field_name("value") {
            let value = self.expr(value, 0);
            self.facts.bindings.push(Binding {
                name: "default".into(),
                span: Self::span(node),
                value,
            });
            self.facts.exports.push(Export::Local {
                name: "default".into(),
                local: "default".into(),
            });
            return;
        }
        let mut cursor = node.walk();
        let mut saw_clause = false;
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "export_clause" => {
                    saw_clause = true;
                    let mut specs = child.walk();
                    for spec in child.named_children(&mut specs) {
                        let Some(name) = spec.child_by_field_name("name") else {
                            continue;
                        };
                        let local = string_value(self.text_of(name));
                        let exported = spec
                            .child_by_field_name("alias")
                            .map(|a| string_value(self.text_of(a)))
                            .unwrap_or_else(|| local.clone());
                        self.facts.exports.push(match &source {
                            Some(source) => Export::Named {
                                name: exported,
                                imported: local,
                                source: source.clone(),
                            },
                            None => Export::Local { name: exported, local },
                        });
                    }
                }
                "namespace_export" => {
                    saw_clause = true;
                    if let (Some(source), Some(name)) = (&source, child.named_child(0)) {
                        self.facts.exports.push(Export::Namespace {
                            name: string_value(self.text_of(name)),
                            source: source.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        if !saw_clause {
            if let Some(source) = source {
                self.facts.exports.push(Export::Star { source });
            }
        }
    }

    /// Records the top-level bindings a declaration introduces; returns their names.
    fn declaration(&mut self, node: Node<'t>) -> Vec<String> {
        let mut names = Vec::new();
        match node.kind() {
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = node.walk();
                for declarator in node.named_children(&mut cursor) {
                    if declarator.kind() != "variable_declarator" {
                        continue;
                    }
                    let Some(name) = declarator.child_by_field_name("name") else {
                        continue;
                    };
                    if name.kind() != "identifier" {
                        continue;
                    }
                    let value = match declarator.child_by_field_name("value") {
                        Some(value) => self.expr(value, 0),
                        None => Expr::Opaque(Self::span(declarator)),
                    };
                    let name = self.text_of(name).to_string();
                    self.facts.bindings.push(Binding {
                        name: name.clone(),
                        span: Self::span(declarator),
                        value,
                    });
                    names.push(name);
                }
            }
            "function_declaration" | "generator_function_declaration" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let value = self.function(node, 0);
                    let name = self.text_of(name).to_string();
                    self.facts.bindings.push(Binding {
                        name: name.clone(),
                        span: Self::span(node),
                        value,
                    });
                    names.push(name);
                }
            }
            "class_declaration" | "abstract_class_declaration" | "enum_declaration" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let name = self.text_of(name).to_string();
                    self.facts.bindings.push(Binding {
                        name: name.clone(),
                        span: Self::span(node),
                        value: Expr::Opaque(Self::span(node)),
                    });
                    names.push(name);
                }
            }
            _ => {}
        }
        names
    }

    // ---------------------------------------------------------------- expressions

    fn expr(&self, node: Node<'t>, depth: usize) -> Expr {
        let span = Self::span(node);
        if depth > MAX_EXPR_DEPTH || node.is_error() || node.is_missing() {
            return Expr::Opaque(span);
        }
        match node.kind() {
            "identifier" | "undefined" => {
                let name = self.text_of(node);
                match self.lookup_local(name) {
                    Some((def, Some(value))) => Expr::Local {
                        name: name.to_string(),
                        def,
                        value: Box::new(self.expr(value, depth + 1)),
                        span,
                    },
                    // A parameter or an uninitialised local: it shadows any import.
                    Some((_, None)) => Expr::Param(name.to_string(), span),
                    None => Expr::Ident(name.to_string(), span),
                }
            }
            "member_expression" => {
                let (Some(object), Some(property)) =
                    (node.child_by_field_name("object"), node.child_by_field_name("property"))
                else {
                    return Expr::Opaque(span);
                };
                Expr::Member(
                    Box::new(self.expr(object, depth + 1)),
                    self.text_of(property).to_string(),
                    span,
                )
            }
            "call_expression" => {
                let (Some(callee), Some(arguments)) = (
                    node.child_by_field_name("function"),
                    node.child_by_field_name("arguments"),
                ) else {
                    return Expr::Opaque(span);
                };
                if arguments.kind() != "arguments" {
                    // A tagged template (sql`…`): not a policy.
                    return Expr::Opaque(span);
                }
                let mut cursor = arguments.walk();
                let args = arguments
                    .named_children(&mut cursor)
                    .filter(|a| a.kind() != "comment")
                    .map(|a| self.expr(a, depth + 1))
                    .collect();
                Expr::Call {
                    callee: Box::new(self.expr(callee, depth + 1)),
                    args,
                    span,
                }
            }
            "string" => Expr::Str(string_value(self.text_of(node)), span),
            "template_string" => {
                let mut cursor = node.walk();
                let has_holes = node
                    .named_children(&mut cursor)
                    .any(|c| c.kind() == "template_substitution");
                if has_holes {
                    Expr::Opaque(span)
                } else {
                    Expr::Str(string_value(self.text_of(node)), span)
                }
            }
            "number" => match parse_number(self.text_of(node)) {
                Some(n) => Expr::Num(n, span),
                None => Expr::Opaque(span),
            },
            "true" => Expr::Bool(true, span),
            "false" => Expr::Bool(false, span),
            "unary_expression" => {
                let operator = node.child_by_field_name("operator").map(|o| o.kind());
                match (
                    operator,
                    node.child_by_field_name("argument").map(|a| self.expr(a, depth + 1)),
                ) {
                    (Some("-"), Some(Expr::Num(n, _))) => Expr::Num(-n, span),
                    (Some("+"), Some(Expr::Num(n, _))) => Expr::Num(n, span),
                    _ => Expr::Opaque(span),
                }
            }
            "binary_expression" => {
                let (Some(left), Some(right), Some(op)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    node.child_by_field_name("operator"),
                ) else {
                    return Expr::Opaque(span);
                };
                Expr::Binary {
                    op: op.kind().to_string(),
                    left: Box::new(self.expr(left, depth + 1)),
                    right: Box::new(self.expr(right, depth + 1)),
                    span,
                }
            }
            "parenthesized_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
            | "type_assertion" => {
                let mut cursor = node.walk();
                let inner = node
                    .named_children(&mut cursor)
                    .find(|c| !c.kind().starts_with("type") && c.kind() != "comment");
                match inner {
                    Some(inner) => self.expr(inner, depth + 1),
                    None => Expr::Opaque(span),
                }
            }
            "object" => {
                let mut props = Vec::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "pair" => {
                            let (Some(key), Some(value)) =
                                (child.child_by_field_name("key"), child.child_by_field_name("value"))
                            else {
                                continue;
                            };
                            let key_text = match key.kind() {
                                "property_identifier" | "number" => self.text_of(key).to_string(),
                                "string" => string_value(self.text_of(key)),
                                // A computed key: the object's shape is unknown.
                                _ => "...".to_string(),
                            };
                            props.push(Property {
                                key: key_text,
                                key_span: Self::span(key),
                                value: self.expr(value, depth + 1),
                            });
                        }
                        "shorthand_property_identifier" => {
                            let name = self.text_of(child);
                            let value = match self.lookup_local(name) {
                                Some((def, Some(value))) => Expr::Local {
                                    name: name.to_string(),
                                    def,
                                    value: Box::new(self.expr(value, depth + 1)),
                                    span: Self::span(child),
                                },
                                Some((_, None)) => Expr::Param(name.to_string(), Self::span(child)),
                                None => Expr::Ident(name.to_string(), Self::span(child)),
                            };
                            props.push(Property {
                                key: name.to_string(),
                                key_span: Self::span(child),
                                value,
                            });
                        }
                        "method_definition" => {
                            if let Some(name) = child.child_by_field_name("name") {
                                props.push(Property {
                                    key: self.text_of(name).to_string(),
                                    key_span: Self::span(name),
                                    value: self.function(child, depth + 1),
                                });
                            }
                        }
                        "spread_element" => props.push(Property {
                            key: "...".into(),
                            key_span: Self::span(child),
                            value: Expr::Opaque(Self::span(child)),
                        }),
                        _ => {}
                    }
                }
                Expr::Object(props, span)
            }
            "array" => {
                let mut cursor = node.walk();
                let items = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .map(|c| {
                        if c.kind() == "spread_element" {
                            Expr::Opaque(Self::span(c))
                        } else {
                            self.expr(c, depth + 1)
                        }
                    })
                    .collect();
                Expr::Array(items, span)
            }
            "arrow_function" | "function_expression" | "function" | "generator_function" => self.function(node, depth),
            _ => Expr::Opaque(span),
        }
    }

    /// A function as a value: its parameter names and, when it is a single expression, its body.
    fn function(&self, node: Node<'t>, depth: usize) -> Expr {
        let span = Self::span(node);
        let mut params = Vec::new();
        if let Some(param) = node.child_by_field_name("parameter") {
            params.push(self.text_of(param).to_string());
        }
        if let Some(list) = node.child_by_field_name("parameters") {
            let mut cursor = list.walk();
            for param in list.named_children(&mut cursor) {
                let name = param
                    .child_by_field_name("pattern")
                    .or_else(|| param.child_by_field_name("name"))
                    .map(|p| self.text_of(p).to_string())
                    .unwrap_or_default();
                params.push(name);
            }
        }
        let body = node.child_by_field_name("body").and_then(|body| {
            if body.kind() == "statement_block" {
                // Only `{ return expr }` has a value the model can follow.
                let mut cursor = body.walk();
                let statements: Vec<Node> = body
                    .named_children(&mut cursor)
                    .filter(|s| s.kind() != "comment")
                    .collect();
                match statements.as_slice() {
                    [only] if only.kind() == "return_statement" => only.named_child(0),
                    _ => None,
                }
            } else {
                Some(body)
            }
        });
        // Parameters shadow everything outside while the body is converted.
        let body = body.map(|b| Box::new(self.with_params(&params, |this| this.expr(b, depth + 1))));
        Expr::Function { params, body, span }
    }

    fn with_params(&self, params: &[String], convert: impl FnOnce(&Self) -> Expr) -> Expr {
        self.shadowed.borrow_mut().push(params.to_vec());
        let result = convert(self);
        self.shadowed.borrow_mut().pop();
        result
    }

    fn lookup_local(&self, name: &str) -> Option<(Span, Option<Node<'t>>)> {
        let shadowed = self
            .shadowed
            .borrow()
            .iter()
            .any(|params| params.iter().any(|p| p == name));
        if shadowed {
            return Some((Span::default(), None));
        }
        {
            self.scopes
                .iter()
                .rev()
                .find_map(|scope| scope.iter().rev().find(|(n, _, _)| n == name))
                .map(|(_, value, def)| (*def, *value))
        }
    }

    // ---------------------------------------------------------------- the walk

    fn walk(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let descend = self.enter(node);
            if descend && cursor.goto_first_child() {
                continue;
            }
            self.leave();
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                self.leave();
            }
        }
    }

    fn leave(&mut self) {
        let frame = self.frames.pop().unwrap_or_default();
        if frame.scope {
            self.scopes.pop();
        }
        if frame.container {
            self.containers.pop();
        }
    }

    /// Called before a node's children; returns whether to visit them.
    fn enter(&mut self, node: Node<'t>) -> bool {
        let mut frame = Frame::default();
        let mut descend = true;
        self.job_and_sql_facts(node);
        match node.kind() {
            // Clean subtrees inside an error node are still code and are walked; only the
            // tokens the parser could not place are "not analysed".
            "ERROR" => self.note_error_region(node),
            "comment"
            | "string"
            | "template_string"
            | "import_statement"
            | "type_annotation"
            | "interface_declaration"
            | "type_alias_declaration" => descend = false,
            "statement_block" | "class_body" => {
                self.scopes.push(Vec::new());
                frame.scope = true;
            }
            "arrow_function"
            | "function_expression"
            | "generator_function"
            | "function_declaration"
            | "generator_function_declaration"
            | "method_definition" => {
                let params = self.param_names(node);
                self.scopes.push(params);
                frame.scope = true;
                if let Some(name) = node
                    .child_by_field_name("name")
                    .filter(|_| node.kind() != "arrow_function")
                {
                    if !node.kind().ends_with("expression") && node.kind() != "generator_function" {
                        self.containers.push(Container {
                            kind: ContainerKind::Function,
                            name: self.text_of(name).to_string(),
                        });
                        frame.container = true;
                    }
                }
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.containers.push(Container {
                        kind: ContainerKind::Class,
                        name: self.text_of(name).to_string(),
                    });
                    frame.container = true;
                }
            }
            "variable_declarator" => {
                if let Some(name) = node.child_by_field_name("name").filter(|n| n.kind() == "identifier") {
                    let name_text = self.text_of(name).to_string();
                    // Locals (not top-level bindings, which the module pass recorded) join the scope.
                    let local = node
                        .parent()
                        .and_then(|p| p.parent())
                        .is_some_and(|scope| scope.kind() != "program" && scope.kind() != "export_statement");
                    if local {
                        if let Some(scope) = self.scopes.last_mut() {
                            let is_const = node
                                .parent()
                                .is_some_and(|decl| decl.child(0).is_some_and(|kw| kw.kind() == "const"));
                            let value = node.child_by_field_name("value").filter(|_| is_const);
                            scope.push((name_text.clone(), value, Self::span(node)));
                        }
                    }
                    self.containers.push(Container {
                        kind: ContainerKind::Variable,
                        name: name_text,
                    });
                    frame.container = true;
                }
            }
            "call_expression" => {
                if let Some(container) = self.call_container(node) {
                    self.containers.push(container);
                    frame.container = true;
                }
                if let Some(request) = units::client_request(self.text, node) {
                    self.facts.client_requests.push(request);
                }
                self.retry_site(node);
            }
            // `queue: async (batch, env) => …` in a Workers handler object.
            "pair" => {
                let key = node
                    .child_by_field_name("key")
                    .filter(|k| k.kind() == "property_identifier");
                let is_function = node
                    .child_by_field_name("value")
                    .is_some_and(|v| matches!(v.kind(), "arrow_function" | "function_expression" | "function"));
                if let (Some(key), true) = (key, is_function) {
                    self.containers.push(Container {
                        kind: ContainerKind::Function,
                        name: self.text_of(key).to_string(),
                    });
                    frame.container = true;
                }
            }
            _ => {}
        }
        self.frames.push(frame);
        descend
    }

    fn param_names(&self, node: Node<'t>) -> Vec<ScopeEntry<'t>> {
        let mut out = Vec::new();
        if let Some(param) = node.child_by_field_name("parameter") {
            out.push((self.text_of(param).to_string(), None, Self::span(param)));
        }
        if let Some(list) = node.child_by_field_name("parameters") {
            let mut cursor = list.walk();
            for param in list.named_children(&mut cursor) {
                if let Some(pattern) = param.child_by_field_name("pattern") {
                    collect_pattern_names(pattern, self.text, &mut out);
                }
            }
        }
        out
    }

    /// `Layer.effect(UserRepository, …)` names the layer after its tag; `Effect.fn("name")(…)`
    /// names the unit; a call that registers a handler (`Outbox.subscribe(…, handler)`) is
    /// named by its callee, so rules can tell code that runs under a durable retrier.
    fn call_container(&self, node: Node<'t>) -> Option<Container> {
        let callee = node.child_by_field_name("function")?;
        let arguments = node.child_by_field_name("arguments")?;
        if callee.kind() == "member_expression" {
            let mut cursor = arguments.walk();
            let takes_handler = arguments.named_children(&mut cursor).any(|a| {
                matches!(
                    a.kind(),
                    "arrow_function" | "function_expression" | "generator_function" | "call_expression"
                ) && (a.kind() != "call_expression" || self.text_of(a).starts_with("Effect.fn"))
            });
            let callee_text = self.text_of(callee);
            if takes_handler && callee_text.len() <= 80 && !callee_text.contains('\n') {
                return Some(Container {
                    kind: ContainerKind::Registration,
                    name: callee_text.to_string(),
                });
            }
        }
        let callee_expr = self.expr(callee, MAX_EXPR_DEPTH - 3);
        if let Some(("Layer", member)) = self.facts.effect_member(&callee_expr) {
            if matches!(member, "effect" | "succeed" | "scoped" | "sync" | "function") {
                let tag = arguments.named_child(0)?;
                let name = self.expr(tag, MAX_EXPR_DEPTH - 3).path()?.join(".");
                return Some(Container {
                    kind: ContainerKind::Layer,
                    name,
                });
            }
        }
        // `Effect.fn("name")(body, …pipeables)`: the callee is itself the call `Effect.fn("name")`.
        if callee.kind() == "call_expression" {
            let inner_callee = self.expr(callee.child_by_field_name("function")?, MAX_EXPR_DEPTH - 3);
            if let Some(("Effect", "fn" | "fnUntraced")) = self.facts.effect_member(&inner_callee) {
                let name_arg = callee.child_by_field_name("arguments")?.named_child(0)?;
                if let Expr::Str(name, _) = self.expr(name_arg, 0) {
                    return Some(Container {
                        kind: ContainerKind::EffectFn,
                        name,
                    });
                }
            }
        }
        None
    }

    fn retry_site(&mut self, node: Node<'t>) {
        let Some(callee) = node.child_by_field_name("function") else {
            return;
        };
        if !matches!(callee.kind(), "member_expression" | "identifier") {
            return;
        }
        let callee_expr = self.expr(callee, MAX_EXPR_DEPTH - 3);
        let kind = match self.facts.effect_member(&callee_expr) {
            Some(("Effect", "retry")) => RetryKind::EffectRetry,
            Some(("Effect", "retryOrElse")) => RetryKind::EffectRetryOrElse,
            Some(("Stream", "retry")) => RetryKind::StreamRetry,
            Some(("HttpClient", "retryTransient")) => RetryKind::HttpRetryTransient,
            _ => return,
        };
        if node.has_error() {
            // A retry whose own arguments did not parse: say so rather than guess its policy.
            self.note_unanalysed(node, &format!("a call of `{}`", kind.callee()));
            return;
        }
        let Some(arguments) = node
            .child_by_field_name("arguments")
            .filter(|a| a.kind() == "arguments")
        else {
            return;
        };
        let mut cursor = arguments.walk();
        let args: Vec<Node> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind() != "comment")
            .collect();
        // Data-last `retry(policy)` or data-first `retry(effect, policy)`; `retryOrElse` has
        // one more argument, the fallback.
        let policy_index = match (kind, args.len()) {
            (RetryKind::EffectRetryOrElse, 3) => Some(1),
            (RetryKind::EffectRetryOrElse, 2) => Some(0),
            (RetryKind::EffectRetryOrElse, _) => None,
            (_, 1) => Some(0),
            (_, 2) => Some(1),
            _ => None,
        };
        let policy = policy_index.map(|i| self.expr(args[i], 0));
        let target = units::retried_target(self.text, node, &args, policy_index)
            .map(|(target, name)| units::unit(self.text, target, name));
        if kind == RetryKind::HttpRetryTransient {
            if let Some(client) = units::bound_client_name(self.text, node) {
                self.facts.retrying_clients.push(client);
            }
        }
        let predicate = match (&policy, kind) {
            (_, RetryKind::HttpRetryTransient) => Predicate::Transient,
            (None, _) => Predicate::Unknown,
            (Some(policy), _) => self.predicate(policy),
        };
        let retried = match kind {
            RetryKind::StreamRetry => Retried::Stream,
            RetryKind::HttpRetryTransient => Retried::Client,
            RetryKind::EffectRetry | RetryKind::EffectRetryOrElse => Retried::Operation,
        };
        self.facts.retry_sites.push(RetrySite {
            span: Self::span(node),
            callee_span: Self::span(callee),
            callee: kind.callee().to_string(),
            library: Library::Effect,
            retried,
            policy: match policy {
                Some(policy) => PolicyArg::Effect(policy),
                None if kind == RetryKind::HttpRetryTransient => PolicyArg::Default,
                None => PolicyArg::Unknown,
            },
            predicate,
            containers: self.containers.clone(),
            unit: target,
        });
    }

    /// Which failures an Effect retry replays: its `while`/`until` option, or a bare schedule
    /// that reads its input (`Schedule.whileInput(isContention)`). A spread of options may
    /// carry a predicate: unknown.
    fn predicate(&self, policy: &Expr) -> Predicate {
        if let Expr::Object(props, _) = policy {
            if props.iter().any(|p| p.key == "...") {
                return Predicate::Unknown;
            }
            let filter = props
                .iter()
                .rev()
                .find(|p| matches!(p.key.as_str(), "while" | "until"))
                .map(|p| &p.value);
            return match filter {
                Some(filter) => Predicate::Filter {
                    span: filter.span(),
                    mentions: filter.mentions(),
                    always: matches!(filter, Expr::Function { body: Some(body), .. } if matches!(**body, Expr::Bool(true, _))),
                },
                None => Predicate::None,
            };
        }
        let mut filtered = false;
        policy.walk(&mut |e| {
            if let Some(("Schedule", member)) = self.facts.effect_member(e) {
                filtered |= member.contains("Input") || member == "check" || member == "checkEffect";
            }
        });
        if filtered {
            Predicate::Filter {
                span: policy.span(),
                mentions: policy.mentions(),
                always: false,
            }
        } else {
            Predicate::None
        }
    }

    /// Notes an error region when a token the rules care about is among the pieces the
    /// parser could not place (its direct leaf children).
    fn note_error_region(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let unplaced = node
            .children(&mut cursor)
            .filter(|c| c.child_count() == 0 && c.kind() != "comment")
            .find_map(|leaf| {
                let text = &self.text[leaf.byte_range()];
                ERROR_REGION_TOKENS
                    .iter()
                    .find(|t| memchr::memmem::find(text, t).is_some())
            });
        if let Some(token) = unplaced {
            self.note_unanalysed(node, &format!("code mentioning `{}`", String::from_utf8_lossy(token)));
        }
    }

    fn note_unanalysed(&mut self, node: Node<'t>, what: &str) {
        let (line, column) = self.facts.position(node.start_byte() as u32);
        self.facts.note(
            Some(line),
            format!("not analysed: parse error at {line}:{column} in {what}"),
        );
    }
}

fn collect_pattern_names<'t>(pattern: Node<'t>, text: &[u8], out: &mut Vec<ScopeEntry<'t>>) {
    if pattern.kind() == "identifier" {
        let name = std::str::from_utf8(&text[pattern.byte_range()]).unwrap_or("");
        out.push((name.to_string(), None, Extractor::span(pattern)));
        return;
    }
    let mut cursor = pattern.walk();
    for child in pattern.named_children(&mut cursor) {
        if matches!(
            child.kind(),
            "identifier"
                | "shorthand_property_identifier_pattern"
                | "object_pattern"
                | "array_pattern"
                | "pair_pattern"
                | "assignment_pattern"
                | "rest_pattern"
        ) {
            if child.kind() == "shorthand_property_identifier_pattern" {
                let name = std::str::from_utf8(&text[child.byte_range()]).unwrap_or("");
                out.push((name.to_string(), None, Extractor::span(child)));
            } else {
                collect_pattern_names(child, text, out);
            }
        }
    }
}

fn has_token_child(node: Node, token: &str) -> bool {
    let mut cursor = node.walk();
    let found = node.children(&mut cursor).any(|c| !c.is_named() && c.kind() == token);
    found
}

fn first_named_child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find(|c| c.kind() == kind);
    found
}

/// The value of a string literal's source text: quotes removed, common escapes decoded.
fn string_value(literal: &str) -> String {
    let inner = literal
        .strip_prefix(['"', '\'', '`'])
        .and_then(|s| s.strip_suffix(['"', '\'', '`']))
        .unwrap_or(literal);
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
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn parse_number(text: &str) -> Option<f64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let clean = clean.trim_end_matches('n');
    if let Some(hex) = clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok().map(|v| v as f64);
    }
    clean.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_variance_annotations_without_moving_bytes() {
        let text = b"interface Foo<in out A, out E> { a: A }\nfor (const k in obj) {}";
        let blanked = blank_type_parameter_modifiers(text).unwrap();
        assert_eq!(blanked.len(), text.len());
        assert_eq!(&blanked[..30], b"interface Foo<       A,     E>");
        assert!(blanked.ends_with(b"for (const k in obj) {}"));
    }

    #[test]
    fn blanks_type_lists_the_grammar_cannot_parse() {
        let text = b"const r = sql<{ id: number }>`SELECT 1`\ntype F = {\n  (a: string): <A, E>(self: E) => A\n  <A>(a: A): A\n}\nconst lt = a < b && c > (d)\n";
        let blanked = blank_unparsed_type_lists(text, false).unwrap();
        let blanked = String::from_utf8(blanked).unwrap();
        assert!(
            blanked.starts_with("const r = sql") && blanked.contains("  `SELECT 1`"),
            "{blanked}"
        );
        assert!(!blanked.contains("<{") && !blanked.contains("<A, E>"), "{blanked}");
        assert!(blanked.contains("\n     (a: A): A\n"), "{blanked}");
        assert!(
            blanked.ends_with("const lt = a < b && c > (d)\n"),
            "comparisons stay: {blanked}"
        );
        assert_eq!(blanked.len(), text.len());
    }

    #[test]
    fn string_values_decode_quotes_and_escapes() {
        assert_eq!(string_value("\"100 millis\""), "100 millis");
        assert_eq!(string_value("'a\\'b'"), "a'b");
    }
}
