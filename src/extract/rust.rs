//! Rust extraction: the retry sites of backon, tokio-retry, backoff and reqwest-retry, the
//! builder chains they are given (followed through local `let`s and same-file helper
//! functions), the file's named policies (`fn`/`const`/`static` items whose value is a
//! builder), and the scopes around each site (impl blocks, traits, modules, functions).
//!
//! A site is recognised only when its names come from the library: `use` declarations (and
//! glob imports of the library) are applied to every path, so a home-grown `Retry` enum, a
//! `retry` field or a `.retry()` method of another type is not a retry. A builder chain is
//! kept as its base (a library constructor, or a path naming a policy) plus the methods
//! applied to it; `schedule::rust` gives them meaning and the index resolves paths across
//! the crate's files.

use std::collections::HashMap;

use tree_sitter::{Node, Tree};

use crate::facts::{
    Container, ContainerKind, FileFacts, PolicyArg, Predicate, Retried, RetrySite, RustBase, RustChain, RustOp,
    RustPath, RustPolicy, RustPolicyArg,
};
use crate::schedule::rust::{self as model, Arg};
use crate::schedule::Library;
use crate::source::Span;

/// How deep expressions and helper calls are followed.
const MAX_DEPTH: usize = 24;

/// Tokens that make an unparsed region worth a note: a retry may hide there.
const ERROR_REGION_TOKENS: &[&[u8]] = &[b"retry", b"Retry", b"backoff", b"Backoff", b"backon"];

/// First path segments that name a crate, not a child module of the current one.
const EXTERN_ROOTS: &[&str] = &[
    "backon",
    "tokio_retry",
    "backoff",
    "reqwest_retry",
    "retry_policies",
    "reqwest_middleware",
    "std",
    "core",
    "alloc",
    "tokio",
    "reqwest",
];

/// backon's retry traits: `.retry(builder)` is theirs only when one is in scope.
const BACKON_TRAITS: &[&str] = &[
    "Retryable",
    "BlockingRetryable",
    "RetryableWithContext",
    "BlockingRetryableWithContext",
];

/// The names a glob import of a library path brings into scope.
fn glob_names(prefix: &[String]) -> &'static [&'static str] {
    let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
    match prefix.as_slice() {
        ["backon"] => &[
            "ExponentialBuilder",
            "ConstantBuilder",
            "FibonacciBuilder",
            "Retryable",
            "BlockingRetryable",
            "RetryableWithContext",
            "BlockingRetryableWithContext",
        ],
        ["tokio_retry", "strategy"] => &["ExponentialBackoff", "FibonacciBackoff", "FixedInterval", "jitter"],
        ["tokio_retry"] => &["Retry", "RetryIf", "strategy"],
        ["backoff"] => &[
            "ExponentialBackoff",
            "ExponentialBackoffBuilder",
            "retry",
            "retry_notify",
            "future",
            "Error",
        ],
        ["backoff", "backoff"] => &["Constant", "Zero", "Stop"],
        ["backoff", "future"] => &["retry", "retry_notify"],
        ["reqwest_retry"] => &["RetryTransientMiddleware", "Jitter", "policies"],
        ["reqwest_retry", "policies"] | ["retry_policies", "policies"] => &["ExponentialBackoff"],
        ["retry_policies"] => &["ExponentialBackoff", "Jitter", "policies"],
        _ => &[],
    }
}

pub(super) fn extract(facts: &mut FileFacts, text: &[u8], tree: &Tree) {
    let root = tree.root_node();
    let mut rx = Rx {
        text,
        uses: HashMap::new(),
        globs: Vec::new(),
        items: Vec::new(),
        modules: Vec::new(),
    };
    rx.collect_uses(root);
    rx.collect_items(root, &mut Vec::new());
    let mut walk = Walk {
        rx: &rx,
        facts,
        containers: Vec::new(),
        module: Vec::new(),
    };
    walk.node(root, 0);
    // Named policies: items without parameters whose value is a builder.
    for item in &rx.items {
        let Some(value) = item.value else { continue };
        if item.has_params {
            continue;
        }
        let Some(chain) = rx.chain(rx.eval(value, &item.module, None, 0)) else {
            continue;
        };
        if matches!(chain.base, RustBase::Unknown) {
            continue;
        }
        facts.rust_policies.push(RustPolicy {
            name: item.name.clone(),
            module: item.module.clone(),
            public: item.public,
            name_span: item.name_span,
            item: span(item.node),
            value: chain,
        });
    }
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// Source text with whitespace collapsed, for messages: `ExponentialBuilder::default().with_jitter()`.
fn collapse(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(joined.len());
    let mut chars = joined.chars().peekable();
    while let Some(c) = chars.next() {
        // A method on its own line: `builder\n    .with_jitter()` reads `builder.with_jitter()`.
        let method_dot = c == ' ' && chars.peek() == Some(&'.') && !out.ends_with(',') && !out.ends_with('{');
        let inside_parens = c == ' ' && (out.ends_with('(') || chars.peek() == Some(&')'));
        if !(method_dot || inside_parens) {
            out.push(c);
        }
    }
    out
}

/// The named children of `node` that are not comments or attributes.
fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| !matches!(c.kind(), "line_comment" | "block_comment" | "attribute_item"))
        .collect()
}

/// A top-level (or inline-`mod`) `fn`, `const` or `static`.
struct Item<'t> {
    name: String,
    name_span: Span,
    module: Vec<String>,
    node: Node<'t>,
    /// The value: a const's initializer, a function body's tail expression.
    value: Option<Node<'t>>,
    /// The function's body, for searching (the predicate of a `backoff` operation).
    body: Option<Node<'t>>,
    params: Vec<String>,
    has_params: bool,
    public: bool,
}

/// A value during evaluation.
#[derive(Debug, Clone)]
enum Val {
    Arg(Arg),
    /// A path that is not a local: a policy when a builder is expected, a plain path
    /// (`Jitter::Full`, `jitter`) when an argument is.
    Path(RustPath, String),
    Chain(RustChain),
    Unknown,
}

enum Local<'t> {
    /// `let name = value;` before the use, in an enclosing block.
    Let {
        value: Node<'t>,
        pattern: Span,
    },
    /// A parameter of the enclosing function or closure, or a pattern binding.
    Param,
    None,
}

struct Rx<'t> {
    text: &'t [u8],
    /// `use` declarations: local name → full path.
    uses: HashMap<String, Vec<String>>,
    /// `use path::*` prefixes.
    globs: Vec<Vec<String>>,
    items: Vec<Item<'t>>,
    /// Modules this file declares (`mod retry;`, `mod jobs { … }`): a path through one of
    /// them stays in the crate.
    modules: Vec<String>,
}

impl<'t> Rx<'t> {
    fn text_of(&self, node: Node) -> &'t str {
        std::str::from_utf8(&self.text[node.byte_range()]).unwrap_or("")
    }

    // ------------------------------------------------------------------ use declarations

    fn collect_uses(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind() == "use_declaration" {
                if let Some(argument) = node.child_by_field_name("argument") {
                    self.use_tree(argument, &[]);
                }
            } else if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }

    fn use_tree(&mut self, node: Node<'t>, prefix: &[String]) {
        match node.kind() {
            "identifier" | "crate" | "super" | "self" | "scoped_identifier" => {
                let mut path = prefix.to_vec();
                path.extend(self.segments(node));
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                if let Some(local) = path.last().cloned() {
                    self.uses.insert(local, path);
                }
            }
            "use_as_clause" => {
                let (Some(target), Some(alias)) = (node.child_by_field_name("path"), node.child_by_field_name("alias"))
                else {
                    return;
                };
                let mut path = prefix.to_vec();
                path.extend(self.segments(target));
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                let alias = self.text_of(alias).to_string();
                // `use backon::Retryable as _` brings the trait into scope without a name.
                let key = if alias == "_" {
                    format!("_{}", path.join("::"))
                } else {
                    alias
                };
                self.uses.insert(key, path);
            }
            "scoped_use_list" => {
                let mut next = prefix.to_vec();
                if let Some(path) = node.child_by_field_name("path") {
                    next.extend(self.segments(path));
                }
                if let Some(list) = node.child_by_field_name("list") {
                    self.use_tree(list, &next);
                }
            }
            "use_list" => {
                for child in named_children(node) {
                    self.use_tree(child, prefix);
                }
            }
            "use_wildcard" => {
                let mut path = prefix.to_vec();
                if let Some(inner) = named_children(node).first() {
                    path.extend(self.segments(*inner));
                }
                self.globs.push(path);
            }
            _ => {}
        }
    }

    /// `a::b::c` as `["a", "b", "c"]`.
    fn segments(&self, node: Node) -> Vec<String> {
        match node.kind() {
            "scoped_identifier" | "scoped_type_identifier" => {
                let mut out = node
                    .child_by_field_name("path")
                    .map(|p| self.segments(p))
                    .unwrap_or_default();
                if let Some(name) = node.child_by_field_name("name") {
                    out.push(self.text_of(name).to_string());
                }
                out
            }
            "generic_type" => node
                .child_by_field_name("type")
                .map(|t| self.segments(t))
                .unwrap_or_default(),
            _ => vec![self.text_of(node).to_string()],
        }
    }

    /// A path as written, with `use` declarations and glob imports applied.
    fn expand(&self, segments: Vec<String>) -> Vec<String> {
        let Some(first) = segments.first() else {
            return segments;
        };
        if matches!(first.as_str(), "crate" | "self" | "super") {
            return segments;
        }
        if let Some(full) = self.uses.get(first) {
            let mut out = full.clone();
            out.extend(segments[1..].iter().cloned());
            return out;
        }
        if EXTERN_ROOTS.contains(&first.as_str()) {
            return segments;
        }
        for glob in &self.globs {
            if glob_names(glob).contains(&first.as_str()) {
                let mut out = glob.clone();
                out.extend(segments.iter().cloned());
                return out;
            }
        }
        // A child module or an item of this module.
        let mut out = vec!["self".to_string()];
        out.extend(segments);
        out
    }

    /// Whether an (unresolved) path leads into this crate: `crate::…`, `super::…`, or a
    /// module this file declares. Other paths are taken to name external crates.
    fn in_crate(&self, path: &[String]) -> bool {
        match path {
            [first, ..] if first == "crate" || first == "super" => true,
            [first, module, _, ..] if first == "self" => self.modules.contains(module),
            _ => false,
        }
    }

    /// Whether one of backon's retry traits is in scope (`.retry(builder)` needs it).
    fn backon_in_scope(&self) -> bool {
        self.uses.values().any(|path| {
            path.first().is_some_and(|c| c == "backon")
                && path.last().is_some_and(|t| BACKON_TRAITS.contains(&t.as_str()))
        }) || self.globs.iter().any(|g| g.len() == 1 && g[0] == "backon")
    }

    // ------------------------------------------------------------------ items

    fn collect_items(&mut self, container: Node<'t>, module: &mut Vec<String>) {
        for item in named_children(container) {
            let public = named_children(item).iter().any(|c| c.kind() == "visibility_modifier");
            match item.kind() {
                "function_item" => {
                    let (Some(name), Some(body)) = (item.child_by_field_name("name"), item.child_by_field_name("body"))
                    else {
                        continue;
                    };
                    let params: Vec<String> = item
                        .child_by_field_name("parameters")
                        .map(|p| {
                            named_children(p)
                                .into_iter()
                                .filter_map(|param| param.child_by_field_name("pattern"))
                                .map(|pattern| {
                                    let mut names = Vec::new();
                                    self.pattern_names(pattern, &mut names);
                                    names.into_iter().next().unwrap_or_default()
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let has_params = item
                        .child_by_field_name("parameters")
                        .is_some_and(|p| !named_children(p).is_empty());
                    self.items.push(Item {
                        name: self.text_of(name).to_string(),
                        name_span: span(name),
                        module: module.clone(),
                        node: item,
                        value: tail(body),
                        body: Some(body),
                        params,
                        has_params,
                        public,
                    });
                }
                "const_item" | "static_item" => {
                    let Some(name) = item.child_by_field_name("name") else {
                        continue;
                    };
                    self.items.push(Item {
                        name: self.text_of(name).to_string(),
                        name_span: span(name),
                        module: module.clone(),
                        node: item,
                        value: item.child_by_field_name("value"),
                        body: None,
                        params: Vec::new(),
                        has_params: false,
                        public,
                    });
                }
                "mod_item" => {
                    if let Some(name) = item.child_by_field_name("name") {
                        self.modules.push(self.text_of(name).to_string());
                    }
                    let (Some(name), Some(body)) = (item.child_by_field_name("name"), item.child_by_field_name("body"))
                    else {
                        continue;
                    };
                    module.push(self.text_of(name).to_string());
                    self.collect_items(body, module);
                    module.pop();
                }
                _ => {}
            }
        }
    }

    fn item(&self, module: &[String], name: &str) -> Option<&Item<'t>> {
        self.items.iter().find(|i| i.module == module && i.name == name)
    }

    /// The same-file item a path names: `name`, `self::name`.
    fn item_of_path(&self, path: &[String], module: &[String]) -> Option<&Item<'t>> {
        match path {
            [first, name] if first == "self" => self.item(module, name),
            _ => None,
        }
    }

    fn pattern_names(&self, pattern: Node, out: &mut Vec<String>) {
        if pattern.kind() == "identifier" {
            out.push(self.text_of(pattern).to_string());
            return;
        }
        for child in named_children(pattern) {
            // `Point { x, .. }`: field names are bindings, type names are not.
            if matches!(
                child.kind(),
                "type_identifier" | "scoped_type_identifier" | "scoped_identifier"
            ) {
                continue;
            }
            self.pattern_names(child, out);
        }
    }

    // ------------------------------------------------------------------ locals

    /// What `name`, used at `at`, is bound to: the nearest earlier `let` of an enclosing
    /// block, or a parameter of the enclosing closure or function.
    fn local(&self, at: Node<'t>, name: &str) -> Local<'t> {
        let position = at.start_byte();
        let mut current = at.parent();
        while let Some(node) = current {
            match node.kind() {
                "block" => {
                    let found = named_children(node)
                        .into_iter()
                        .rev()
                        .filter(|c| c.kind() == "let_declaration" && c.end_byte() <= position)
                        .find(|c| {
                            let mut names = Vec::new();
                            if let Some(pattern) = c.child_by_field_name("pattern") {
                                self.pattern_names(pattern, &mut names);
                            }
                            names.iter().any(|n| n == name)
                        });
                    if let Some(declaration) = found {
                        let pattern = declaration.child_by_field_name("pattern");
                        return match (declaration.child_by_field_name("value"), pattern) {
                            (Some(value), Some(pattern)) if pattern.kind() == "identifier" => Local::Let {
                                value,
                                pattern: span(pattern),
                            },
                            _ => Local::Param,
                        };
                    }
                }
                "closure_expression" => {
                    let mut names = Vec::new();
                    if let Some(params) = node.child_by_field_name("parameters") {
                        self.pattern_names(params, &mut names);
                    }
                    if names.iter().any(|n| n == name) {
                        return Local::Param;
                    }
                }
                "match_arm" | "for_expression" | "let_condition" | "if_let_expression" => {
                    let mut names = Vec::new();
                    if let Some(pattern) = node.child_by_field_name("pattern") {
                        self.pattern_names(pattern, &mut names);
                    }
                    if names.iter().any(|n| n == name) {
                        return Local::Param;
                    }
                }
                "function_item" => {
                    let mut names = Vec::new();
                    if let Some(params) = node.child_by_field_name("parameters") {
                        self.pattern_names(params, &mut names);
                    }
                    return if names.iter().any(|n| n == name) {
                        Local::Param
                    } else {
                        Local::None
                    };
                }
                _ => {}
            }
            current = node.parent();
        }
        Local::None
    }

    // ------------------------------------------------------------------ evaluation

    fn path(&self, segments: Vec<String>, module: &[String], node: Node) -> Val {
        Val::Path(
            RustPath {
                segments: self.expand(segments),
                module: module.to_vec(),
                span: span(node),
            },
            collapse(self.text_of(node)),
        )
    }

    /// A value as a builder chain: a chain, or a path naming a policy.
    fn chain(&self, val: Val) -> Option<RustChain> {
        match val {
            Val::Chain(chain) => Some(chain),
            Val::Path(path, text) => Some(RustChain {
                span: path.span,
                base: RustBase::Named(path),
                ops: Vec::new(),
                text,
            }),
            Val::Arg(_) | Val::Unknown => None,
        }
    }

    fn arg(&self, val: Val) -> Arg {
        match val {
            Val::Arg(arg) => arg,
            Val::Path(path, _) => Arg::Path(path.segments),
            Val::Chain(_) | Val::Unknown => Arg::Unknown,
        }
    }

    fn eval(&self, node: Node<'t>, module: &[String], env: Option<&HashMap<String, Val>>, depth: usize) -> Val {
        if depth > MAX_DEPTH || node.is_error() || node.is_missing() {
            return Val::Unknown;
        }
        let next = depth + 1;
        match node.kind() {
            "parenthesized_expression" => match named_children(node).first() {
                Some(inner) => self.eval(*inner, module, env, next),
                None => Val::Unknown,
            },
            "reference_expression" | "type_cast_expression" => match node.child_by_field_name("value") {
                Some(inner) => self.eval(inner, module, env, next),
                None => Val::Unknown,
            },
            "integer_literal" | "float_literal" => {
                parse_number(self.text_of(node)).map_or(Val::Unknown, |n| Val::Arg(Arg::Num(n)))
            }
            "boolean_literal" => Val::Arg(Arg::Bool(self.text_of(node) == "true")),
            "binary_expression" => self.binary(node, module, env, next),
            "block" => match tail(node) {
                Some(value) => self.eval(value, module, env, next),
                None => Val::Unknown,
            },
            "identifier" => self.identifier(node, module, env, next),
            "scoped_identifier" => {
                let segments = self.segments(node);
                match segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                    [.., "Duration", "ZERO"] => Val::Arg(Arg::Ms(0.0)),
                    [.., "Duration", _] => Val::Unknown,
                    _ => self.path(segments, module, node),
                }
            }
            "call_expression" => self.call(node, module, env, next),
            "struct_expression" => self.struct_literal(node, module, env, next),
            _ => Val::Unknown,
        }
    }

    fn identifier(&self, node: Node<'t>, module: &[String], env: Option<&HashMap<String, Val>>, depth: usize) -> Val {
        let name = self.text_of(node);
        if name == "None" {
            return Val::Arg(Arg::None);
        }
        match self.local(node, name) {
            Local::Let { value, .. } => return self.eval(value, module, env, depth),
            Local::Param => {
                return env.and_then(|e| e.get(name)).cloned().unwrap_or(Val::Unknown);
            }
            Local::None => {}
        }
        // A same-file `const`/`static`: a number is used as one, a builder is a named policy.
        if let Some(item) = self.item(module, name) {
            if item.body.is_none() {
                if let Some(value) = item.value {
                    if let Val::Arg(arg) = self.eval(value, &item.module, None, depth) {
                        return Val::Arg(arg);
                    }
                }
            }
        }
        self.path(vec![name.to_string()], module, node)
    }

    fn binary(&self, node: Node<'t>, module: &[String], env: Option<&HashMap<String, Val>>, depth: usize) -> Val {
        let (Some(left), Some(right), Some(op)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
            node.child_by_field_name("operator"),
        ) else {
            return Val::Unknown;
        };
        let left = self.arg(self.eval(left, module, env, depth));
        let right = self.arg(self.eval(right, module, env, depth));
        let value = match (self.text_of(op), left, right) {
            ("+", Arg::Num(a), Arg::Num(b)) => Arg::Num(a + b),
            ("-", Arg::Num(a), Arg::Num(b)) => Arg::Num(a - b),
            ("*", Arg::Num(a), Arg::Num(b)) => Arg::Num(a * b),
            ("/", Arg::Num(a), Arg::Num(b)) if b != 0.0 => Arg::Num(a / b),
            ("+", Arg::Ms(a), Arg::Ms(b)) => Arg::Ms(a + b),
            ("-", Arg::Ms(a), Arg::Ms(b)) => Arg::Ms(a - b),
            ("*", Arg::Ms(a), Arg::Num(b)) | ("*", Arg::Num(b), Arg::Ms(a)) => Arg::Ms(a * b),
            ("/", Arg::Ms(a), Arg::Num(b)) if b != 0.0 => Arg::Ms(a / b),
            _ => return Val::Unknown,
        };
        Val::Arg(value)
    }

    fn args(&self, call: Node<'t>) -> Vec<Node<'t>> {
        call.child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
    }

    fn call(&self, node: Node<'t>, module: &[String], env: Option<&HashMap<String, Val>>, depth: usize) -> Val {
        let Some(function) = node.child_by_field_name("function") else {
            return Val::Unknown;
        };
        let args = self.args(node);
        let eval_args = || -> Vec<Arg> {
            args.iter()
                .map(|a| self.arg(self.eval(*a, module, env, depth)))
                .collect()
        };
        match function.kind() {
            "field_expression" => {
                let (Some(receiver), Some(field)) = (
                    function.child_by_field_name("value"),
                    function.child_by_field_name("field"),
                ) else {
                    return Val::Unknown;
                };
                let method = self.text_of(field);
                let receiver = self.eval(receiver, module, env, depth);
                if let Val::Arg(arg) = &receiver {
                    // `Duration::from_secs(2).into()`, `n.clone()`.
                    return match method {
                        "into" | "clone" | "to_owned" => Val::Arg(arg.clone()),
                        _ => Val::Unknown,
                    };
                }
                let Some(mut chain) = self.chain(receiver) else {
                    return Val::Unknown;
                };
                chain.ops.push(RustOp {
                    method: method.to_string(),
                    args: eval_args(),
                    span: span(node),
                });
                chain.span = span(node);
                chain.text = collapse(self.text_of(node));
                Val::Chain(chain)
            }
            "identifier" | "scoped_identifier" => {
                let segments = self.segments(function);
                let names: Vec<&str> = segments.iter().map(String::as_str).collect();
                if names == ["Some"] {
                    let inner = args
                        .first()
                        .map(|a| self.arg(self.eval(*a, module, env, depth)))
                        .unwrap_or(Arg::Unknown);
                    return Val::Arg(Arg::Some(Box::new(inner)));
                }
                if let [.., "Duration", unit] = names.as_slice() {
                    return duration(unit, &eval_args()).map_or(Val::Unknown, |ms| Val::Arg(Arg::Ms(ms)));
                }
                let path = self.expand(segments.clone());
                let values = eval_args();
                if let Some((ctor, state)) = model::constructor(&path, &values) {
                    return Val::Chain(RustChain {
                        base: RustBase::New { ctor, state, via: None },
                        ops: Vec::new(),
                        span: span(node),
                        text: collapse(self.text_of(node)),
                    });
                }
                // A same-file helper with parameters is called with its arguments.
                if let Some(item) = self.item_of_path(&path, module) {
                    if item.has_params && item.params.len() == args.len() && item.body.is_some() {
                        let Some(value) = item.value else { return Val::Unknown };
                        let mut bound = HashMap::new();
                        for (param, arg) in item.params.iter().zip(&args) {
                            bound.insert(param.clone(), self.eval(*arg, module, env, depth));
                        }
                        return match self.eval(value, &item.module, Some(&bound), depth) {
                            Val::Chain(mut chain) => {
                                if let RustBase::New { via, .. } = &mut chain.base {
                                    via.get_or_insert_with(|| item.name.clone());
                                }
                                chain.span = span(node);
                                chain.text = collapse(self.text_of(node));
                                Val::Chain(chain)
                            }
                            other => other,
                        };
                    }
                }
                if args.is_empty() {
                    // `retry::transient()`: a named policy.
                    self.path(segments, module, function)
                        .with_span(span(node), collapse(self.text_of(node)))
                } else {
                    Val::Unknown
                }
            }
            _ => Val::Unknown,
        }
    }

    fn struct_literal(
        &self,
        node: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        let Some(name) = node.child_by_field_name("name") else {
            return Val::Unknown;
        };
        let path = self.expand(self.segments(name));
        let Some((ctor, state)) = model::struct_literal(&path) else {
            return Val::Unknown;
        };
        let mut ops = Vec::new();
        if let Some(body) = node.child_by_field_name("body") {
            for field in named_children(body) {
                match field.kind() {
                    "field_initializer" => {
                        let (Some(key), Some(value)) =
                            (field.child_by_field_name("field"), field.child_by_field_name("value"))
                        else {
                            return Val::Unknown;
                        };
                        ops.push(RustOp {
                            method: format!("={}", self.text_of(key)),
                            args: vec![self.arg(self.eval(value, module, env, depth))],
                            span: span(field),
                        });
                    }
                    "shorthand_field_initializer" => {
                        let Some(key) = named_children(field).first().copied() else {
                            return Val::Unknown;
                        };
                        ops.push(RustOp {
                            method: format!("={}", self.text_of(key)),
                            args: vec![self.arg(self.eval(key, module, env, depth))],
                            span: span(field),
                        });
                    }
                    // `..Default::default()` / `..ExponentialBackoff::default()`: the defaults.
                    "base_field_initializer" => {
                        let text = self.text_of(field);
                        if !(text.ends_with("Default::default()") || text.ends_with("::default()")) {
                            return Val::Unknown;
                        }
                    }
                    _ => {}
                }
            }
        }
        Val::Chain(RustChain {
            base: RustBase::New { ctor, state, via: None },
            ops,
            span: span(node),
            text: collapse(self.text_of(node)),
        })
    }
}

impl Val {
    fn with_span(self, at: Span, text: String) -> Val {
        match self {
            Val::Path(mut path, _) => {
                path.span = at;
                Val::Path(path, text)
            }
            other => other,
        }
    }
}

/// The value of a block: its tail expression, or a lone `return expr;`.
fn tail(block: Node) -> Option<Node> {
    let last = *named_children(block).last()?;
    match last.kind() {
        "expression_statement" => {
            let inner = *named_children(last).first()?;
            if inner.kind() == "return_expression" {
                named_children(inner).first().copied()
            } else {
                None
            }
        }
        "let_declaration" | "function_item" | "const_item" | "static_item" | "use_declaration" => None,
        _ => Some(last),
    }
}

/// `1_000`, `50u64`, `0.5`, `1.5f32`, `0x10`.
fn parse_number(text: &str) -> Option<f64> {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let (digits, radix) = if let Some(hex) = cleaned.strip_prefix("0x") {
        (hex.to_string(), 16)
    } else if let Some(bin) = cleaned.strip_prefix("0b") {
        (bin.to_string(), 2)
    } else if let Some(oct) = cleaned.strip_prefix("0o") {
        (oct.to_string(), 8)
    } else {
        (cleaned, 10)
    };
    let suffixes = [
        "u128", "i128", "usize", "isize", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8", "f64", "f32",
    ];
    let trimmed = suffixes.iter().find_map(|s| digits.strip_suffix(s)).unwrap_or(&digits);
    if radix == 10 {
        trimmed.parse().ok()
    } else {
        u64::from_str_radix(trimmed, radix).ok().map(|n| n as f64)
    }
}

/// `Duration::from_millis(50)` and friends, in milliseconds.
fn duration(unit: &str, args: &[Arg]) -> Option<f64> {
    let n = |i: usize| match args.get(i) {
        Some(Arg::Num(n)) if n.is_finite() && *n >= 0.0 => Some(*n),
        _ => None,
    };
    Some(match unit {
        "from_millis" => n(0)?,
        "from_secs" | "from_secs_f64" | "from_secs_f32" => n(0)? * 1000.0,
        "from_micros" => n(0)? / 1000.0,
        "from_nanos" => n(0)? / 1_000_000.0,
        "from_mins" => n(0)? * 60_000.0,
        "from_hours" => n(0)? * 3_600_000.0,
        "new" => n(0)? * 1000.0 + n(1)? / 1_000_000.0,
        _ => return None,
    })
}

/// The walk over the tree that finds retry sites, with the scopes around them.
struct Walk<'a, 't, 'f> {
    rx: &'a Rx<'t>,
    facts: &'f mut FileFacts,
    containers: Vec<Container>,
    module: Vec<String>,
}

impl<'t> Walk<'_, 't, '_> {
    fn node(&mut self, node: Node<'t>, depth: usize) {
        if depth > 400 {
            return;
        }
        if node.is_error() {
            self.note_error_region(node);
            return;
        }
        let pushed = self.enter(node);
        if node.kind() == "call_expression" {
            self.call(node);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.node(child, depth + 1);
        }
        for _ in 0..pushed.0 {
            self.containers.pop();
        }
        if pushed.1 {
            self.module.pop();
        }
    }

    /// Pushes the scopes `node` opens: (containers pushed, module pushed).
    fn enter(&mut self, node: Node<'t>) -> (usize, bool) {
        let rx = self.rx;
        let type_name = |n: Node| rx.segments(n).last().cloned();
        match node.kind() {
            "impl_item" => {
                let mut pushed = 0;
                for field in ["trait", "type"] {
                    if let Some(name) = node.child_by_field_name(field).and_then(type_name) {
                        self.containers.push(Container {
                            kind: ContainerKind::Impl,
                            name,
                        });
                        pushed += 1;
                    }
                }
                (pushed, false)
            }
            "trait_item" | "function_item" | "mod_item" => {
                let Some(name) = node.child_by_field_name("name").map(|n| rx.text_of(n).to_string()) else {
                    return (0, false);
                };
                let kind = match node.kind() {
                    "trait_item" => ContainerKind::Class,
                    "function_item" => ContainerKind::Function,
                    _ => ContainerKind::Module,
                };
                let module = kind == ContainerKind::Module && node.child_by_field_name("body").is_some();
                if module {
                    self.module.push(name.clone());
                }
                self.containers.push(Container { kind, name });
                (1, module)
            }
            _ => (0, false),
        }
    }

    fn call(&mut self, node: Node<'t>) {
        let rx = self.rx;
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        let args = rx.args(node);
        let (lib, callee, callee_span, policy_arg, has_predicate) = match function.kind() {
            "field_expression" => {
                let Some(field) = function.child_by_field_name("field") else {
                    return;
                };
                if rx.text_of(field) != "retry" || args.len() != 1 || !rx.backon_in_scope() {
                    return;
                }
                (
                    Library::Backon,
                    ".retry".to_string(),
                    span(field),
                    args[0],
                    Some(backon_when(rx, node)),
                )
            }
            "identifier" | "scoped_identifier" => {
                let path = rx.expand(rx.segments(function));
                let names: Vec<&str> = path.iter().map(String::as_str).collect();
                let callee = collapse(rx.text_of(function));
                match names.as_slice() {
                    ["tokio_retry", .., ty @ ("Retry" | "RetryIf"), "spawn" | "start"] if !args.is_empty() => (
                        Library::TokioRetry,
                        callee,
                        span(function),
                        args[0],
                        Some(*ty == "RetryIf"),
                    ),
                    ["backoff", "retry" | "retry_notify"] | ["backoff", "future", "retry" | "retry_notify"]
                        if args.len() >= 2 =>
                    {
                        let predicate = self.backoff_classifies(args[1]);
                        (Library::Backoff, callee, span(function), args[0], predicate)
                    }
                    ["reqwest_retry", .., "RetryTransientMiddleware", "new_with_policy" | "new_with_policy_and_strategy"]
                        if !args.is_empty() =>
                    {
                        // The default strategy retries only transient failures (5xx, 408,
                        // 429, timeouts, connection errors); a custom strategy is a predicate.
                        (Library::ReqwestRetry, callee, span(function), args[0], Some(true))
                    }
                    _ => return,
                }
            }
            _ => return,
        };
        if node.has_error() {
            let (line, column) = self.facts.position(node.start_byte() as u32);
            self.facts.note(
                Some(line),
                format!("not analysed: parse error at {line}:{column} in a call of `{callee}`"),
            );
            return;
        }
        // Follow `&b`, `b.clone()`, `(b)` to a local `let`.
        let mut stripped = policy_arg;
        loop {
            stripped = match stripped.kind() {
                "reference_expression" => match stripped.child_by_field_name("value") {
                    Some(v) => v,
                    None => break,
                },
                "parenthesized_expression" => match named_children(stripped).first() {
                    Some(v) => *v,
                    None => break,
                },
                "call_expression" => {
                    let receiver = stripped
                        .child_by_field_name("function")
                        .filter(|f| f.kind() == "field_expression")
                        .filter(|f| {
                            f.child_by_field_name("field")
                                .is_some_and(|m| matches!(rx.text_of(m), "clone" | "to_owned"))
                        })
                        .and_then(|f| f.child_by_field_name("value"));
                    match receiver {
                        Some(v) if rx.args(stripped).is_empty() => v,
                        _ => break,
                    }
                }
                _ => break,
            };
        }
        let local = match stripped.kind() {
            "identifier" => match rx.local(stripped, rx.text_of(stripped)) {
                Local::Let { pattern, .. } => Some((rx.text_of(stripped).to_string(), pattern)),
                _ => None,
            },
            _ => None,
        };
        let value = rx.eval(policy_arg, &self.module, None, 0);
        // `job.retry(3)`: a number is not a builder, so this is some other `.retry`.
        if lib == Library::Backon && matches!(value, Val::Arg(_)) {
            return;
        }
        let chain = rx.chain(value);
        // `job.retry(n)` with `n` unknown: backon retries a closure or a function; a receiver
        // that is a value (a parameter, a `let` of something else) is some other `.retry`.
        if lib == Library::Backon && chain.is_none() {
            let receiver = function.child_by_field_name("value");
            if !receiver.is_some_and(|r| retryable_receiver(rx, r)) {
                return;
            }
        }
        let predicate = match (lib, has_predicate) {
            // The default strategy retries only transient failures.
            (Library::ReqwestRetry, _) => Predicate::Transient,
            // What a Rust filter tests is not read yet: it filters, by names unknown.
            (_, Some(true)) => Predicate::Filter {
                span: span(node),
                mentions: Vec::new(),
                always: false,
            },
            (_, Some(false)) => Predicate::None,
            (_, None) => Predicate::Unknown,
        };
        let retried = match lib {
            Library::ReqwestRetry => Retried::Client,
            _ => Retried::Operation,
        };
        self.facts.retry_sites.push(RetrySite {
            span: span(node),
            callee_span,
            callee,
            library: lib,
            retried,
            policy: PolicyArg::Rust(RustPolicyArg {
                arg: span(policy_arg),
                chain,
                local,
            }),
            predicate,
            containers: self.containers.clone(),
            unit: None,
        });
    }

    /// Whether a `backoff` operation classifies its errors. `?` and `From` make every error
    /// transient (backoff 0.4.0 src/error.rs), so the operation filters only when it returns
    /// `backoff::Error::permanent(…)` / `Error::Permanent(…)` for some errors. An operation
    /// passed by name from elsewhere, or one that calls a function of another module of the
    /// crate (`crate::retry::classify`), is unknown: that function may classify.
    fn backoff_classifies(&self, op: Node<'t>) -> Option<bool> {
        let rx = self.rx;
        let body = match op.kind() {
            "closure_expression" | "async_block" => op,
            "identifier" => rx.item(&self.module, rx.text_of(op))?.body?,
            _ => return None,
        };
        let mentions_permanent = |n: Node| {
            let text = rx.text_of(n);
            text.contains("permanent") || text.contains("Permanent")
        };
        if mentions_permanent(body) {
            return Some(true);
        }
        // Same-file functions the operation calls may classify for it.
        let mut unknown = false;
        let mut found = false;
        let mut cursor = body.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind() == "call_expression" {
                let function = node.child_by_field_name("function");
                // `.map_err(classify)`: a classifier passed by name; `classify(e)`: called.
                let names: Vec<Node> = match function.map(|f| f.kind()) {
                    Some("field_expression")
                        if function
                            .and_then(|f| f.child_by_field_name("field"))
                            .is_some_and(|f| rx.text_of(f) == "map_err") =>
                    {
                        rx.args(node)
                    }
                    Some("identifier" | "scoped_identifier") => function.into_iter().collect(),
                    _ => Vec::new(),
                };
                for name in names {
                    if !matches!(name.kind(), "identifier" | "scoped_identifier") {
                        continue;
                    }
                    let path = rx.expand(rx.segments(name));
                    if path.first().is_some_and(|c| EXTERN_ROOTS.contains(&c.as_str())) {
                        continue;
                    }
                    match rx.item_of_path(&path, &self.module).and_then(|i| i.body) {
                        Some(body) => found |= mentions_permanent(body),
                        None => unknown |= rx.in_crate(&path),
                    }
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() || cursor.node() == body {
                    break 'walk;
                }
            }
        }
        if found {
            Some(true)
        } else if unknown {
            None
        } else {
            Some(false)
        }
    }

    /// Notes an error region that mentions a retry.
    fn note_error_region(&mut self, node: Node<'t>) {
        let text = &self.rx.text[node.byte_range()];
        let Some(token) = ERROR_REGION_TOKENS
            .iter()
            .find(|t| memchr::memmem::find(text, t).is_some())
        else {
            return;
        };
        let (line, column) = self.facts.position(node.start_byte() as u32);
        self.facts.note(
            Some(line),
            format!(
                "not analysed: parse error at {line}:{column} in code mentioning `{}`",
                String::from_utf8_lossy(token)
            ),
        );
    }
}

/// Whether a `.retry(…)` receiver can be what backon retries: a closure, a function named by
/// path, or a `let` bound to a closure.
fn retryable_receiver<'t>(rx: &Rx<'t>, receiver: Node<'t>) -> bool {
    match receiver.kind() {
        "closure_expression" | "scoped_identifier" => true,
        "parenthesized_expression" => named_children(receiver)
            .first()
            .is_some_and(|inner| retryable_receiver(rx, *inner)),
        "identifier" => match rx.local(receiver, rx.text_of(receiver)) {
            Local::Let { value, .. } => retryable_receiver(rx, value),
            Local::Param => false,
            Local::None => true,
        },
        _ => false,
    }
}

/// Whether a backon `.retry(…)` is followed, in its method chain, by `.when(…)`.
fn backon_when(rx: &Rx, retry_call: Node) -> bool {
    let mut current = retry_call;
    while let Some(parent) = current.parent() {
        match parent.kind() {
            "field_expression" if parent.child_by_field_name("value") == Some(current) => {
                let Some(call) = parent.parent().filter(|g| g.kind() == "call_expression") else {
                    return false;
                };
                if parent
                    .child_by_field_name("field")
                    .is_some_and(|f| rx.text_of(f) == "when")
                {
                    return true;
                }
                current = call;
            }
            "await_expression" | "try_expression" | "parenthesized_expression" => current = parent,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::rust::Backoff;
    use crate::source::Language;

    fn facts(text: &str) -> FileFacts {
        crate::extract::extract_file(Language::Rust, text.as_bytes())
    }

    fn rust(site: &RetrySite) -> &RustPolicyArg {
        match &site.policy {
            PolicyArg::Rust(arg) => arg,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backon_site_with_inline_builder() {
        let f = facts(
            "use backon::{ExponentialBuilder, Retryable};\nuse std::time::Duration;\n\
             async fn run() { let r = fetch.retry(ExponentialBuilder::default().with_min_delay(Duration::from_millis(1_00)).with_jitter()).when(|e| e.is_x()).await; }\n",
        );
        assert_eq!(f.retry_sites.len(), 1);
        assert_eq!(f.retry_sites[0].library, Library::Backon);
        assert!(matches!(f.retry_sites[0].predicate, Predicate::Filter { .. }));
        let chain = rust(&f.retry_sites[0]).chain.as_ref().unwrap();
        assert!(matches!(&chain.base, RustBase::New { ctor, .. } if ctor == "ExponentialBuilder::default"));
        assert_eq!(chain.ops.len(), 2);
        assert_eq!(chain.ops[0].args, vec![Arg::Ms(100.0)]);
    }

    #[test]
    fn traps_are_not_sites() {
        let f = facts(
            "enum Retry { Now }\nstruct Job { retry: u32 }\n\
             fn f(job: Job) { let n = job.retry; job.retry(); Retry::spawn(1, 2); let v: Vec<_> = [1, 2].iter().take(1).collect(); }\n",
        );
        assert!(f.retry_sites.is_empty(), "{:?}", f.retry_sites);
        // `.retry(x)` without backon's trait in scope is some other method.
        let f = facts("use backon::ExponentialBuilder;\nfn f() { job.retry(ExponentialBuilder::default()); }\n");
        assert!(f.retry_sites.is_empty());
        let f = facts("use backon::Retryable;\nfn f() { job.retry(3); }\n");
        assert!(f.retry_sites.is_empty());
        let f = facts(
            "use backon::Retryable;\nfn f(job: Job, n: u32) { job.retry(n); let op = || async { 1 }; op.retry(n); }\n",
        );
        assert_eq!(f.retry_sites.len(), 1, "only the closure is retried");
    }

    #[test]
    fn named_policies_and_helpers() {
        let f = facts(
            "use backon::ExponentialBuilder;\nuse std::time::Duration;\n\
             fn capped(base_ms: u64, retries: usize) -> ExponentialBuilder {\n  ExponentialBuilder::default().with_min_delay(Duration::from_millis(base_ms)).with_max_times(retries).with_jitter()\n}\n\
             pub fn transient() -> ExponentialBuilder { capped(200, 3) }\n\
             pub const CONTENTION: ExponentialBuilder = ExponentialBuilder::new().with_max_times(3);\n",
        );
        let names: Vec<&str> = f.rust_policies.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["transient", "CONTENTION"]);
        let RustBase::New { state, via, .. } = &f.rust_policies[0].value.base else {
            panic!("{:?}", f.rust_policies[0].value)
        };
        assert_eq!(via.as_deref(), Some("capped"));
        assert!(matches!(state, Backoff::Backon { .. }));
        assert_eq!(f.rust_policies[0].value.ops[0].args, vec![Arg::Ms(200.0)]);
    }

    #[test]
    fn tokio_retry_and_local_bindings() {
        let f = facts(
            "use tokio_retry::{Retry, strategy::{ExponentialBackoff, jitter}};\n\
             async fn f() { let s = ExponentialBackoff::from_millis(10).map(jitter).take(3);\n  Retry::spawn(s.clone(), action).await; }\n",
        );
        assert_eq!(f.retry_sites.len(), 1);
        let arg = rust(&f.retry_sites[0]);
        assert_eq!(arg.local.as_ref().map(|l| l.0.as_str()), Some("s"));
        assert_eq!(f.retry_sites[0].predicate, Predicate::None);
        let chain = arg.chain.as_ref().unwrap();
        assert_eq!(
            chain.ops[0].args,
            vec![Arg::Path(vec![
                "tokio_retry".into(),
                "strategy".into(),
                "jitter".into()
            ])]
        );
    }

    #[test]
    fn backoff_operation_classification() {
        let f = facts(
            "use crate::retry;\nasync fn f() {\n  backoff::future::retry(backoff::ExponentialBackoff::default(), || async { Ok(op().await?) }).await;\n\
             backoff::future::retry(backoff::ExponentialBackoff::default(), || async { op().await.map_err(retry::classify) }).await;\n\
             backoff::future::retry(backoff::ExponentialBackoff::default(), || async { op().await.map_err(|e| if e.fatal() { backoff::Error::permanent(e) } else { backoff::Error::transient(e) }) }).await;\n}\n",
        );
        let predicates: Vec<&str> = f
            .retry_sites
            .iter()
            .map(|s| match s.predicate {
                Predicate::None => "none",
                Predicate::Unknown => "unknown",
                Predicate::Filter { .. } => "filter",
                Predicate::Transient => "transient",
            })
            .collect();
        assert_eq!(predicates, ["none", "unknown", "filter"]);
    }
}
