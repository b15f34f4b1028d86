//! The project's own retry helpers (issue 25.3): a function whose retry takes its strategy,
//! its operation or its predicate from its parameters
//! (`retry_async(strategy, op, should_retry)` over `Retry::spawn`) is summarised once
//! ([`RustHelper`]: which parameter is which), and every call of a function of the crate that
//! may be one is kept with its arguments read in each role ([`RustHelperCall`]). The index
//! makes each call of a helper a retry site of its own (`Index::expand_rust_helpers`): the
//! strategy given at the call is judged there, `|_| true` is no predicate, and the operation
//! is the retried unit.

use super::sites::predicate_mentions;
use super::*;
use crate::facts::{RustChain, RustHelper, RustHelperArg, RustHelperCall, RustWithin};
use crate::schedule::rust::Arg;

/// Calls of the crate's functions kept per file, at most: a bound for generated code.
const MAX_HELPER_CALLS: usize = 256;

impl<'t> Walk<'_, 't, '_> {
    /// Summarises the function around the retry site just pushed, when its parameters feed
    /// the retry: `policy_arg` is the site's strategy, `operation` what it replays, `filter`
    /// its written predicate.
    pub(super) fn summarise_helper(
        &mut self,
        site: Node<'t>,
        policy_arg: Node<'t>,
        operation: Option<Node<'t>>,
        filter: Option<Node<'t>>,
        library: Library,
    ) {
        let rx = self.rx;
        let Some(function) = rx.parents.ancestors(site).find(|n| n.kind_str() == "function_item") else {
            return;
        };
        let Some(item) = rx.items.iter().find(|i| i.node == function) else {
            return;
        };
        if item.associated || item.params.is_empty() || item.params.len() > 8 {
            return;
        }
        let Some(body) = item.body else { return };
        let param = |node: Node<'t>| -> Option<usize> {
            let node = strip(rx, node);
            if node.kind_str() != "identifier" {
                return None;
            }
            let name = rx.text_of(node);
            matches!(rx.local(node, name), Local::Param)
                .then(|| item.params.iter().position(|p| p == name))
                .flatten()
        };
        let strategy = param(policy_arg);
        // A strategy built in the body from the parameters: evaluated at each call.
        let built = if strategy.is_none() {
            let env: HashMap<String, Val> = item
                .params
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), Val::Arg(Arg::Param(i))))
                .collect();
            rx.chain(rx.eval(policy_arg, item.scope(), Some(&env), 0))
                .filter(|c| matches!(c.base, RustBase::New { .. } | RustBase::Deferred { .. }))
                .filter(RustChain::has_param)
        } else {
            None
        };
        let mut op_direct = false;
        let mut op = None;
        if let Some(operation) = operation {
            if let Some(index) = param(operation) {
                op = Some(index);
                op_direct = true;
            } else {
                // The action is a closure (or a `let` of one) that runs a parameter: `op()`.
                let action = match strip(rx, operation) {
                    n if n.kind_str() == "identifier" => match rx.local(n, rx.text_of(n)) {
                        Local::Let { value, .. } => Some(value),
                        _ => None,
                    },
                    n if matches!(n.kind_str(), "closure_expression" | "async_block") => Some(n),
                    _ => None,
                };
                // A parameter called without arguments first (`op()`), else with some: the
                // operation of a crawl loop is given the item (`f(index)`), and is no predicate.
                op = action.and_then(|a| {
                    called_param(rx, a, &item.params, |n| n == 0, &[strategy], false)
                        .or_else(|| called_param(rx, a, &item.params, |_| true, &[strategy], false))
                });
            }
        }
        // The predicate: a parameter applied to the error (`should_retry(&e)`) whose answer is
        // used, or the filter. A callback whose result is dropped (`notify(error, count,
        // elapsed);` in a `retry_notify` wrapper) is told of a failure, it does not decide.
        let predicate = filter
            .and_then(param)
            .or_else(|| called_param(rx, body, &item.params, |n| n >= 1, &[strategy, op], true));
        if strategy.is_none() && op.is_none() && predicate.is_none() && built.is_none() {
            return;
        }
        // Its own retry decides which errors are replayed, when no parameter does.
        let replays = match (predicate, op_direct) {
            (None, false) => match self.facts.retry_sites.last().map(|s| s.predicate.clone()) {
                // backoff's operation classifies: by the names the operation is written with.
                Some(Predicate::Filter { span, mentions, always }) if mentions.is_empty() => Some(Predicate::Filter {
                    span,
                    mentions: operation.map(|o| predicate_mentions(rx, o)).unwrap_or_default(),
                    always,
                }),
                other => other,
            },
            _ => None,
        };
        // The caller's predicate decides: the helper's own retry is not one without.
        if predicate.is_some() {
            if let Some(last) = self.facts.retry_sites.last_mut() {
                if last.predicate == Predicate::None {
                    last.predicate = Predicate::Unknown;
                }
            }
        }
        self.facts.rust_helpers.push(RustHelper {
            name: item.name.clone(),
            module: item.module.clone(),
            name_span: item.name_span,
            library,
            arity: item.params.len(),
            strategy,
            op,
            op_direct,
            predicate,
            built,
            method: false,
            replays,
        });
    }

    /// Keeps a call of a function of the crate (or of a workspace crate) with its arguments
    /// read as a strategy, an operation and a predicate, in case the callee is a helper.
    pub(super) fn helper_call(&mut self, node: Node<'t>) {
        let rx = self.rx;
        if self.facts.rust_helper_calls.len() >= MAX_HELPER_CALLS || node.has_error() {
            return;
        }
        let Some(function) = node.field("function") else { return };
        if function.kind_str() == "field_expression" {
            self.method_helper_call(node, function);
            return;
        }
        if !matches!(function.kind_str(), "identifier" | "scoped_identifier") {
            return;
        }
        let segments = rx.segments(function);
        // A type's function (`Foo::new`, `Some`) is not a free function of the crate.
        if segments
            .iter()
            .any(|s| s.starts_with(|c: char| c.is_ascii_uppercase()) || s.is_empty())
        {
            return;
        }
        let path = rx.expand(segments);
        let Some(first) = path.first() else { return };
        if EXTERN_ROOTS.contains(&first.as_str()) {
            return;
        }
        let args = rx.args(node);
        let callable = |a: &Node| matches!(a.kind_str(), "closure_expression" | "async_block" | "identifier");
        if args.is_empty() || args.len() > 8 || !args.iter().any(callable) {
            return;
        }
        let path = RustPath {
            segments: path,
            module: self.module.clone(),
            span: span(function),
        };
        if self.unread {
            let callee = collapse(rx.text_of(function));
            let call = RustHelperCall::unread(path, span(node), span(function), callee, args.len(), None);
            self.facts.rust_helper_calls.push(call);
            return;
        }
        let within = within(rx, node, &self.module);
        let env = within.as_ref().map(|(_, env)| env);
        let args = args.iter().map(|arg| self.helper_arg(*arg, env)).collect();
        self.facts.rust_helper_calls.push(RustHelperCall {
            path,
            span: span(node),
            callee_span: span(function),
            callee: collapse(rx.text_of(function)),
            args,
            containers: self.containers.clone(),
            method: None,
            within: within.map(|(w, _)| w),
            unread: None,
        });
    }

    /// A method call `x.name(op, …)` given a closure or a name, kept in case the project has
    /// one retry helper method of that name (a trait's `with_retry(op, what)`).
    fn method_helper_call(&mut self, node: Node<'t>, function: Node<'t>) {
        let rx = self.rx;
        let methods = self
            .facts
            .rust_helper_calls
            .iter()
            .filter(|c| c.method.is_some())
            .count();
        if methods >= MAX_HELPER_CALLS {
            return;
        }
        let Some(field) = function.field("field") else { return };
        let name = rx.text_of(field);
        // The standard library's and the common crates' combinators take closures too.
        if COMBINATORS.contains(&name) || name.is_empty() {
            return;
        }
        let args = rx.args(node);
        let callable = |a: &Node<'t>| {
            matches!(
                strip(rx, *a).kind_str(),
                "closure_expression" | "async_block" | "identifier"
            )
        };
        if args.is_empty() || args.len() > 8 || !args.iter().any(callable) {
            return;
        }
        let path = RustPath {
            segments: vec![name.to_string()],
            module: self.module.clone(),
            span: span(field),
        };
        if self.unread {
            let callee = collapse(rx.text_of(function));
            let method = Some(name.to_string());
            let call = RustHelperCall::unread(path, span(node), span(field), callee, args.len(), method);
            self.facts.rust_helper_calls.push(call);
            return;
        }
        let within = within(rx, node, &self.module);
        let env = within.as_ref().map(|(_, env)| env);
        let args = args.iter().map(|arg| self.helper_arg(*arg, env)).collect();
        self.facts.rust_helper_calls.push(RustHelperCall {
            path,
            span: span(node),
            callee_span: span(field),
            callee: collapse(rx.text_of(function)),
            args,
            containers: self.containers.clone(),
            method: Some(name.to_string()),
            within: within.map(|(w, _)| w),
            unread: None,
        });
    }

    fn helper_arg(&self, arg: Node<'t>, env: Option<&HashMap<String, Val>>) -> RustHelperArg {
        let rx = self.rx;
        let stripped = strip(rx, arg);
        let closure = matches!(stripped.kind_str(), "closure_expression" | "async_block");
        let chain = if closure {
            None
        } else {
            rx.chain(rx.eval(arg, &self.module, None, 0))
        };
        let local = match stripped.kind_str() {
            "identifier" => match rx.local(stripped, rx.text_of(stripped)) {
                Local::Let { pattern, .. } => Some((rx.text_of(stripped).to_string(), pattern)),
                _ => None,
            },
            _ => None,
        };
        let unit = (closure || stripped.kind_str() == "identifier")
            .then(|| rx.unit_of(stripped, &self.module))
            .flatten();
        // The two libraries' actions classify alike: `?` is `From<E>`, a transient error.
        let classifies = match self.backoff_classifies(stripped) {
            Some(true) => filter(rx, stripped, false),
            Some(false) => Predicate::None,
            None => Predicate::Unknown,
        };
        let reconnects = unit.as_ref().is_some_and(|unit| super::sites::reconnects(rx, unit));
        // As a value, with the calling function's parameters standing for what its callers give.
        let value = match env {
            // A path (a `const` of another file) is read where it is defined, by the index.
            Some(env) if !closure => match rx.eval(arg, &self.module, Some(env), 0) {
                v @ (Val::Arg(_) | Val::Path(..)) => Some(rx.arg(v)),
                _ => None,
            },
            _ => None,
        };
        let param = match (stripped.kind_str(), env) {
            ("identifier", Some(env)) if matches!(rx.local(stripped, rx.text_of(stripped)), Local::Param) => {
                match env.get(rx.text_of(stripped)) {
                    Some(Val::Arg(Arg::Param(i))) => Some(*i),
                    _ => None,
                }
            }
            _ => None,
        };
        RustHelperArg {
            value,
            param,
            reconnects,
            span: span(arg),
            chain,
            local,
            predicate: predicate_arg(rx, stripped, 0),
            unit,
            classifies: [classifies.clone(), classifies],
        }
    }
}

/// Methods that take a closure and are no project's retry helper.
const COMBINATORS: &[&str] = &[
    "map",
    "map_err",
    "and_then",
    "or_else",
    "then",
    "filter",
    "filter_map",
    "for_each",
    "find",
    "any",
    "all",
    "position",
    "fold",
    "unwrap_or_else",
    "map_or",
    "map_or_else",
    "ok_or_else",
    "get_or_init",
    "get_or_insert_with",
    "or_insert_with",
    "retain",
    "sort_by",
    "sort_by_key",
    "flat_map",
    "take_while",
    "skip_while",
    "inspect",
    "zip",
    "spawn",
    "spawn_blocking",
    "with_context",
    "context",
    "entry",
    "max_by_key",
    "min_by_key",
    "try_for_each",
    "for_each_concurrent",
    "try_fold",
    "scan",
    "is_some_and",
    "is_none_or",
    "unwrap_or",
    "push",
    "insert",
    "extend",
];

/// The function a node is written in, and its parameters (`self` not counted) standing for
/// what its callers give ([`Arg::Param`]).
fn within<'t>(rx: &Rx<'t>, node: Node<'t>, module: &[String]) -> Option<(RustWithin, HashMap<String, Val>)> {
    let function = rx.parents.ancestors(node).find(|n| n.kind_str() == "function_item")?;
    let name = function.field("name")?;
    let parameters = function.field("parameters")?;
    let mut method = false;
    let mut params = Vec::new();
    for param in named_children(parameters) {
        match param.kind_str() {
            "self_parameter" => method = true,
            _ => {
                let mut names = Vec::new();
                if let Some(pattern) = param.field("pattern") {
                    rx.pattern_names(pattern, &mut names);
                }
                params.push(names.into_iter().next().unwrap_or_default());
            }
        }
    }
    if params.len() > 8 {
        return None;
    }
    let env = params
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .map(|(i, n)| (n.clone(), Val::Arg(Arg::Param(i))))
        .collect();
    Some((
        RustWithin {
            name: rx.text_of(name).to_string(),
            module: module.to_vec(),
            name_span: span(name),
            arity: params.len(),
            method,
        },
        env,
    ))
}

/// `&x`, `(x)`, `x.clone()`, `x.into_iter()`: `x`.
fn strip<'t>(rx: &Rx<'t>, mut node: Node<'t>) -> Node<'t> {
    for _ in 0..MAX_DEPTH {
        node = match node.kind_str() {
            "reference_expression" => match node.field("value") {
                Some(v) => v,
                None => break,
            },
            "parenthesized_expression" => match named_children(node).first() {
                Some(v) => *v,
                None => break,
            },
            "call_expression" if rx.args(node).is_empty() => {
                let receiver = node
                    .field("function")
                    .filter(|f| f.kind_str() == "field_expression")
                    .filter(|f| {
                        f.field("field")
                            .is_some_and(|m| matches!(rx.text_of(m), "clone" | "to_owned" | "into_iter" | "into"))
                    })
                    .and_then(|f| f.field("value"));
                match receiver {
                    Some(v) => v,
                    None => break,
                }
            }
            _ => break,
        };
    }
    node
}

/// The first parameter of `params` called inside `within` with a number of arguments `arity`
/// accepts, other than those in `except`; with `answered`, only a call whose result is used
/// (not a statement of its own).
fn called_param<'t>(
    rx: &Rx<'t>,
    within: Node<'t>,
    params: &[String],
    arity: impl Fn(usize) -> bool,
    except: &[Option<usize>],
    answered: bool,
) -> Option<usize> {
    let mut cursor = within.walk();
    let mut steps = 0usize;
    loop {
        let node = cursor.node();
        steps += 1;
        if steps > 20_000 {
            return None;
        }
        if node.kind_str() == "call_expression" {
            if let Some(function) = node.field("function").filter(|f| f.kind_str() == "identifier") {
                let name = rx.text_of(function);
                if let Some(index) = params.iter().position(|p| p == name) {
                    let dropped = answered
                        && rx
                            .parents
                            .of(node)
                            .is_some_and(|p| p.kind_str() == "expression_statement");
                    if arity(rx.args(node).len()) && !except.contains(&Some(index)) && !dropped {
                        return Some(index);
                    }
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, within) {
            return None;
        }
    }
}

fn filter<'t>(rx: &Rx<'t>, node: Node<'t>, always: bool) -> Predicate {
    Predicate::Filter {
        span: span(node),
        mentions: predicate_mentions(rx, node),
        always,
    }
}

/// `match err { FetchError::Cancelled => false, _ => true }` (issue 25.6): a condition that
/// refuses only the caller's own cancellation or shutdown sentinel retries every error the
/// operation can meet.
pub(super) fn refuses_only_cancellation(rx: &Rx, closure: Node) -> bool {
    let Some(body) = closure
        .field("body")
        .filter(|_| closure.kind_str() == "closure_expression")
    else {
        return false;
    };
    // A block's last statement: a trailing `match` is an expression statement of its own.
    let value = match body.kind_str() {
        "block" => match named_children(body)
            .into_iter()
            .rev()
            .find(|n| !matches!(n.kind_str(), "line_comment" | "block_comment"))
        {
            Some(last) if !rx.text_of(last).trim_end().ends_with(';') => last,
            _ => return false,
        },
        _ => body,
    };
    let value = match value.kind_str() {
        "expression_statement" => match named_children(value).first() {
            Some(inner) => *inner,
            None => return false,
        },
        _ => value,
    };
    if value.kind_str() != "match_expression" {
        return false;
    }
    let Some(arms) = value.field("body").map(named_children) else {
        return false;
    };
    let (mut refused, mut rest) = (0, 0);
    for arm in arms.iter().filter(|a| a.kind_str() == "match_arm") {
        let (Some(pattern), Some(answer)) = (arm.field("pattern"), arm.field("value")) else {
            return false;
        };
        let pattern = rx.text_of(pattern).trim();
        match rx.text_of(answer).trim() {
            "true" if pattern == "_" => rest += 1,
            "false" => {
                let variant = pattern.rsplit("::").next().unwrap_or(pattern).to_ascii_lowercase();
                let sentinel = ["cancel", "shutdown", "shuttingdown", "aborted"]
                    .iter()
                    .any(|w| variant.starts_with(w) || variant.ends_with(w) || variant.ends_with("cancelled"));
                if !sentinel || variant.contains(['(', '{', '|']) {
                    return false;
                }
                refused += 1;
            }
            _ => return false,
        }
    }
    refused > 0 && rest == 1
}

/// An argument read as a predicate of the error: `|_| true` and a closure that ignores its
/// error accept every error (none); a closure that reads it, or a function, is a filter.
fn predicate_arg<'t>(rx: &Rx<'t>, node: Node<'t>, depth: usize) -> Predicate {
    if depth > 4 {
        return Predicate::Unknown;
    }
    match node.kind_str() {
        "closure_expression" => {
            let Some(body) = node.field("body") else {
                return Predicate::Unknown;
            };
            let value = match body.kind_str() {
                "block" => tail(body).unwrap_or(body),
                _ => body,
            };
            if refuses_only_cancellation(rx, node) {
                return Predicate::None;
            }
            match rx.text_of(value).trim() {
                "true" => return Predicate::None,
                // Retries nothing: no replay to judge.
                "false" => return filter(rx, node, false),
                _ => {}
            }
            let mut names = Vec::new();
            if let Some(parameters) = node.field("parameters") {
                rx.pattern_names(parameters, &mut names);
            }
            let used = names
                .iter()
                .filter(|n| !n.starts_with('_'))
                .any(|n| predicate_mentions(rx, body).iter().any(|m| m == n));
            if used {
                filter(rx, node, false)
            } else {
                Predicate::None
            }
        }
        "identifier" => match rx.local(node, rx.text_of(node)) {
            Local::Let { value, .. } => predicate_arg(rx, strip(rx, value), depth + 1),
            Local::Param => Predicate::Unknown,
            Local::None => filter(rx, node, false),
        },
        "scoped_identifier" => filter(rx, node, false),
        _ => Predicate::Unknown,
    }
}

/// The backoff crate's retry functions a file re-exports (`pub use ::backoff::future::{retry,
/// retry_notify};` in a project's `backoff` module, or `pub use backoff::future::*`), as retry
/// helpers of the file: a call through the re-export (`omicron_common::backoff::retry_notify(
/// policy, op, notify)`) is backoff's own, its strategy the first argument and its operation the
/// second. Only the file's own `pub use`s (not those of an inline `mod`, nor a test module's).
pub(super) fn reexported_retries(rx: &Rx, root: Node, facts: &mut FileFacts) {
    let mut found: Vec<(String, Vec<String>, Span)> = Vec::new();
    for child in named_children(root) {
        if child.kind_str() != "use_declaration" {
            continue;
        }
        let public = named_children(child)
            .iter()
            .any(|c| c.kind_str() == "visibility_modifier" && rx.text_of(*c).starts_with("pub"));
        if !public {
            continue;
        }
        if let Some(argument) = child.field("argument") {
            reexports(rx, argument, &[], span(child), &mut found);
        }
    }
    for (name, path, at) in found {
        let names: Vec<&str> = path.iter().map(String::as_str).collect();
        let arity = match names.as_slice() {
            ["backoff", "future", "retry"] | ["backoff", "retry"] => 2,
            ["backoff", "future", "retry_notify"] | ["backoff", "retry_notify"] => 3,
            _ => continue,
        };
        if facts.rust_helpers.iter().any(|h| h.module.is_empty() && h.name == name) {
            continue;
        }
        facts.rust_helpers.push(RustHelper {
            name,
            module: Vec::new(),
            name_span: at,
            library: Library::Backoff,
            arity,
            strategy: Some(0),
            op: Some(1),
            op_direct: true,
            predicate: None,
            built: None,
            method: false,
            replays: None,
        });
    }
}

/// The `(name, path)` pairs a `use` tree brings in, a glob of backoff's retry functions'
/// modules as each of them.
fn reexports(rx: &Rx, node: Node, prefix: &[String], at: Span, out: &mut Vec<(String, Vec<String>, Span)>) {
    match node.kind_str() {
        "identifier" | "scoped_identifier" => {
            let mut path = prefix.to_vec();
            path.extend(rx.segments(node));
            if let Some(name) = path.last().cloned() {
                out.push((name, path, at));
            }
        }
        "use_as_clause" => {
            let (Some(target), Some(alias)) = (node.field("path"), node.field("alias")) else {
                return;
            };
            let mut path = prefix.to_vec();
            path.extend(rx.segments(target));
            out.push((rx.text_of(alias).to_string(), path, at));
        }
        "scoped_use_list" => {
            let mut next = prefix.to_vec();
            if let Some(path) = node.field("path") {
                next.extend(rx.segments(path));
            }
            if let Some(list) = node.field("list") {
                reexports(rx, list, &next, at, out);
            }
        }
        "use_list" => {
            for child in named_children(node) {
                reexports(rx, child, prefix, at, out);
            }
        }
        "use_wildcard" => {
            let mut path = prefix.to_vec();
            if let Some(inner) = named_children(node).first() {
                path.extend(rx.segments(*inner));
            }
            let names: Vec<&str> = path.iter().map(String::as_str).collect();
            if matches!(names.as_slice(), ["backoff", "future"] | ["backoff"]) {
                for name in ["retry", "retry_notify"] {
                    let mut full = path.clone();
                    full.push(name.to_string());
                    out.push((name.to_string(), full, at));
                }
            }
        }
        _ => {}
    }
}
