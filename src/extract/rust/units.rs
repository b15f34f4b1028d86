//! Units of work of Rust retries: what the retried closure, async block or function does, in
//! the same neutral operations as TypeScript's (`facts::Unit`) — method and function calls,
//! SQL through sqlx (`query(…)`, `query!(…)`), HTTP requests through reqwest
//! (`client.post(url)…send()`), and the transaction between `begin()` and `commit()`.

use super::*;
use crate::extract::sql::classify_sql;
use crate::facts::{ArgKey, ArgKeys, OpKind, Unit, UnitOp};

/// Operations kept per unit: enough for any real unit, bounded for generated code.
const MAX_OPS: usize = 256;
/// Named units kept per file.
const MAX_UNITS: usize = 512;
/// How far a result is followed up the tree to where the unit propagates or handles it.
const MAX_FLOW: usize = 64;
/// Struct literal fields kept per call.
const MAX_KEYS: usize = 32;

/// Whether an expression makes a new id: `Uuid::new_v4()`, `Ulid::new()`, `nanoid!()`.
fn makes_id(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    [
        "uuid::new",
        "new_v4",
        "new_v7",
        "now_v7",
        "ulid::new",
        "ulid::generate",
        "nanoid",
        "random",
    ]
    .iter()
    .any(|m| lower.contains(m))
}

/// reqwest's request builders.
pub(super) const HTTP_METHODS: &[&str] = &["get", "post", "put", "patch", "delete", "head"];

/// sqlx and friends: functions and macros whose string argument is a query.
const QUERY_CALLS: &[&str] = &[
    "query",
    "query_as",
    "query_scalar",
    "query_unchecked",
    "query_as_unchecked",
    "query_scalar_unchecked",
];

impl<'t> Rx<'t> {
    /// The unit an operation argument stands for: a closure or async block written in place,
    /// or a same-file function named by path. `None` when the analysis cannot see it.
    pub(super) fn unit_of(&self, operation: Node<'t>, module: &[String]) -> Option<Unit> {
        match operation.kind_str() {
            "parenthesized_expression" => self.unit_of(*named_children(operation).first()?, module),
            "closure_expression" | "async_block" => Some(self.unit(operation, None)),
            "reference_expression" => self.unit_of(operation.field("value")?, module),
            // `let publish = || async { … }; publish.retry(…)`: the closure the local is bound to.
            "identifier" => match self.local(operation, self.text_of(operation)) {
                Local::Let { value, .. } if matches!(value.kind_str(), "closure_expression" | "async_block") => {
                    Some(self.unit(value, Some(self.text_of(operation).to_string())))
                }
                Local::Let { .. } | Local::Param => None,
                Local::None => {
                    let path = self.expand(self.segments(operation));
                    let item = match path.as_slice() {
                        [name] => self.item(module, name),
                        _ => self.item_of_path(&path, module),
                    }?;
                    Some(self.unit(item.body?, Some(item.name.clone())))
                }
            },
            "scoped_identifier" => {
                let path = self.expand(self.segments(operation));
                let item = match path.as_slice() {
                    [name] => self.item(module, name),
                    _ => self.item_of_path(&path, module),
                }?;
                Some(self.unit(item.body?, Some(item.name.clone())))
            }
            _ => None,
        }
    }

    /// Every operation in `node`'s subtree, in source order.
    pub(super) fn unit(&self, node: Node<'t>, name: Option<String>) -> Unit {
        let mut ops = Vec::new();
        let mut handled = Vec::new();
        let mut begin: Option<u32> = None;
        let mut cursor = node.walk();
        'walk: loop {
            let current = cursor.node();
            let descend = match current.kind_str() {
                "line_comment" | "block_comment" | "string_literal" | "raw_string_literal" => false,
                // What a log line formats (`tracing::warn!(error = %e.as_report(), …)`) is not
                // work of the unit.
                "macro_invocation" if self.logs(current) => false,
                // The same, unfolded (`macros`): a log event inside the unit, not one the unit
                // itself is written in (a retry inside `tracing::info!(id = ?op.retry(p))`).
                _ if self.in_log_event(current) && !self.in_log_event(node) => false,
                // A nested closure is its own unit only when something runs it; its calls
                // still run when it does, so they are kept.
                "call_expression" | "macro_invocation" => {
                    if let Some(op) = self.operation(current, &mut begin, node) {
                        if op.kind != OpKind::Transaction && !self.propagates(current, node) {
                            handled.push(op.span);
                        }
                        ops.push(op);
                        if ops.len() >= MAX_OPS {
                            break 'walk;
                        }
                    }
                    true
                }
                _ => true,
            };
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == node {
                    break 'walk;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        Unit {
            name,
            span: span(node),
            ops,
            services: Vec::new(),
            handled,
        }
    }

    /// Whether a failure of `call` fails `unit`: its result reaches a `?` (through `.await`,
    /// `.map_err(…)` and the other methods of its chain, or as an argument of a call that
    /// does), or is the unit's value (its tail, an arm or branch of it, a `return`). A result
    /// bound by a `let`, discarded by a `;`, matched or tested is handled where it is.
    fn propagates(&self, call: Node<'t>, unit: Node<'t>) -> bool {
        let mut current = call;
        for _ in 0..MAX_FLOW {
            let Some(parent) = self.parents.of(current) else {
                return false;
            };
            if parent == unit {
                return true;
            }
            let next = match parent.kind_str() {
                "try_expression" | "return_expression" => return true,
                "await_expression"
                | "parenthesized_expression"
                | "reference_expression"
                | "type_cast_expression"
                | "async_block"
                | "unsafe_block"
                | "else_clause"
                | "match_block"
                | "arguments"
                | "closure_expression"
                | "field_initializer"
                | "field_initializer_list"
                | "struct_expression"
                | "tuple_expression"
                | "array_expression" => parent,
                "field_expression" => match parent.field("value") {
                    Some(value) if value == current => parent,
                    _ => return false,
                },
                "call_expression" => parent,
                // A block's tail expression (a statement is a child of its own kind).
                "block" => match named_children(parent).last() {
                    Some(last) if *last == current && current.kind_str() != "expression_statement" => parent,
                    _ => return false,
                },
                "if_expression" => match parent.field("condition") {
                    Some(condition) if condition == current => return false,
                    _ => parent,
                },
                "match_arm" => match parent.field("value") {
                    Some(value) if value == current => parent,
                    _ => return false,
                },
                "match_expression" => match parent.field("value") {
                    Some(value) if value == current => return false,
                    _ => parent,
                },
                _ => return false,
            };
            current = next;
        }
        false
    }

    /// Whether `node` lies in a log event the unfolding rewrote (the nearest one starting
    /// before it: a binary search, as a file may hold thousands).
    fn in_log_event(&self, node: Node<'t>) -> bool {
        let at = self.logged.partition_point(|&(from, _)| from <= node.start_byte());
        at > 0 && node.end_byte() <= self.logged[at - 1].1
    }

    /// Whether a macro invocation writes a log line or an event (`tracing::warn!`, `info!`,
    /// `log::error!`, `println!`).
    fn logs(&self, call: Node<'t>) -> bool {
        let Some(name) = call.field("macro").map(|m| self.segments(m)) else {
            return false;
        };
        matches!(
            name.last().map(String::as_str),
            Some("trace" | "debug" | "info" | "warn" | "error" | "event" | "println" | "eprintln" | "print" | "eprint")
        ) && (name.len() == 1 || matches!(name[0].as_str(), "tracing" | "log"))
    }

    /// One call (or query macro) as a unit operation. `begin` remembers where an open
    /// transaction started.
    fn operation(&self, call: Node<'t>, begin: &mut Option<u32>, unit: Node<'t>) -> Option<UnitOp> {
        if call.kind_str() == "macro_invocation" {
            let name = self.segments(call.field("macro")?);
            let last = name.last()?;
            if !QUERY_CALLS.contains(&last.as_str()) {
                return None;
            }
            let query = self.first_string(call)?;
            return Some(UnitOp {
                span: span(call),
                kind: OpKind::Sql(classify_sql(&query)),
            });
        }
        let function = call.field("function")?;
        let kind = match function.kind_str() {
            "field_expression" => {
                let receiver = function.field("value")?;
                let method = self.text_of(function.field("field")?).to_string();
                match method.as_str() {
                    "begin" | "begin_transaction" | "transaction" => {
                        begin.get_or_insert(call.start_byte() as u32);
                        return None;
                    }
                    // What ran since the transaction began (or since the unit began) commits.
                    "commit" => {
                        let start = begin.take().unwrap_or(unit.start_byte() as u32);
                        return Some(UnitOp {
                            span: Span {
                                start,
                                end: call.end_byte() as u32,
                            },
                            kind: OpKind::Transaction,
                        });
                    }
                    _ if self.http_method(call).is_some() => OpKind::Http {
                        method: self.http_method(call).unwrap_or(method),
                        idempotency_key: self.chain_sets_idempotency_key(call),
                    },
                    // reqwest's `send` sends the request the chain built: the request is the op.
                    "send" if self.chain_has_http_method(receiver) => return None,
                    // `let req = || client.get(url)…; req().send()`: the request the local
                    // closure builds is the op.
                    "send" if self.called_closure_request(receiver).is_some() => {
                        let (method, key) = self.called_closure_request(receiver)?;
                        OpKind::Http {
                            method,
                            idempotency_key: key || self.chain_sets_idempotency_key(call),
                        }
                    }
                    // A JSON-RPC batch sends the calls added to it
                    // (`batch.add_call("eth_getTransactionReceipt", …)` then `batch.send()`):
                    // it does what they do, named by them.
                    "send" if self.batched_call(receiver, call).is_some() => {
                        let text = collapse(self.text_of(receiver));
                        OpKind::Call {
                            receiver: (text.len() <= 80).then_some(text),
                            method: self.batched_call(receiver, call)?,
                            client_id: self.arg_keys(call, unit),
                        }
                    }
                    _ => {
                        let text = collapse(self.text_of(receiver));
                        OpKind::Call {
                            receiver: (text.len() <= 80).then_some(text),
                            method,
                            client_id: self.arg_keys(call, unit),
                        }
                    }
                }
            }
            "identifier" | "scoped_identifier" | "generic_function" => {
                let callee = match function.kind_str() {
                    "generic_function" => function.field("function")?,
                    _ => function,
                };
                let path = self.segments(callee);
                let last = path.last()?.clone();
                // `Ok(v)`, `Some(x)`, `Event::Created(id)`: a variant or tuple struct built,
                // not a call that does anything.
                if last.starts_with(|c: char| c.is_ascii_uppercase()) {
                    return None;
                }
                if QUERY_CALLS.contains(&last.as_str()) {
                    if let Some(query) = self.first_string(call) {
                        return Some(UnitOp {
                            span: span(call),
                            kind: OpKind::Sql(classify_sql(&query)),
                        });
                    }
                }
                OpKind::Call {
                    receiver: None,
                    method: last,
                    client_id: self.arg_keys(call, unit),
                }
            }
            _ => return None,
        };
        Some(UnitOp { span: span(call), kind })
    }

    /// The fields of the struct literals a call is given (`mailbox.send_proposal(msg)` after
    /// `let msg = Message::Remove { topic, id }.encode()?`): where a client id or an
    /// idempotency key would be, as an object literal's keys are in TypeScript. Followed
    /// through `let`s, `Ok(x)`/`Some(x)` arms of a `match` or `if let`, `?`, `.await`,
    /// wrappers (`Ok(…)`, `Box::new(…)`) and methods without arguments (`.clone()`,
    /// `.encode()`). `None` when no argument is seen to be a struct literal.
    fn arg_keys(&self, call: Node<'t>, unit: Node<'t>) -> Option<ArgKeys> {
        let mut keys = ArgKeys::default();
        let mut seen = false;
        for argument in self.args(call) {
            let Some(literal) = self.struct_literal_of(argument, 0) else {
                continue;
            };
            seen = true;
            let inside = unit.start_byte() <= literal.start_byte() && literal.end_byte() <= unit.end_byte();
            for field in literal.field("body").map(named_children).unwrap_or_default() {
                let (name, value) = match field.kind_str() {
                    "field_initializer" => (field.field("field"), field.field("value")),
                    "shorthand_field_initializer" => (named_children(field).first().copied(), None),
                    _ => {
                        keys.open = true;
                        continue;
                    }
                };
                let Some(name) = name else { continue };
                if keys.keys.len() >= MAX_KEYS {
                    keys.open = true;
                    break;
                }
                keys.keys.push(ArgKey {
                    name: self.text_of(name).to_string(),
                    // An id made in the unit is new on every replay.
                    fresh: inside && value.is_some_and(|v| makes_id(self.text_of(v))),
                });
            }
        }
        seen.then_some(keys)
    }

    /// The struct literal a value is, as far as the file says.
    fn struct_literal_of(&self, node: Node<'t>, depth: usize) -> Option<Node<'t>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let next = depth + 1;
        match node.kind_str() {
            "struct_expression" => Some(node),
            "parenthesized_expression" | "try_expression" | "await_expression" => {
                self.struct_literal_of(*named_children(node).first()?, next)
            }
            "reference_expression" => self.struct_literal_of(node.field("value")?, next),
            "call_expression" => {
                let function = node.field("function")?;
                let args = self.args(node);
                match function.kind_str() {
                    // `.clone()`, `.encode()`, `.into()`: the same value, converted.
                    "field_expression" if args.is_empty() => self.struct_literal_of(function.field("value")?, next),
                    // `Ok(x)`, `Some(x)`, `Box::new(x)`, `Arc::new(x)`.
                    "identifier" | "scoped_identifier" if args.len() == 1 => {
                        let path = self.segments(function);
                        let wrapper = match path.as_slice() {
                            [name] => matches!(name.as_str(), "Ok" | "Some"),
                            [.., ty, ctor] => ctor == "new" && matches!(ty.as_str(), "Box" | "Arc" | "Rc"),
                            _ => false,
                        };
                        wrapper.then(|| self.struct_literal_of(args[0], next)).flatten()
                    }
                    _ => None,
                }
            }
            "identifier" => {
                let name = self.text_of(node);
                match self.local(node, name) {
                    Local::Let { value, .. } => self.struct_literal_of(value, next),
                    Local::Param => self.struct_literal_of(self.unwrapped_binding(node, name)?, next),
                    Local::None => None,
                }
            }
            _ => None,
        }
    }

    /// The value `name` unwraps when it is bound by an `Ok(name)` or `Some(name)` pattern of
    /// a `match` arm or an `if let` around `at`: the matched expression.
    fn unwrapped_binding(&self, at: Node<'t>, name: &str) -> Option<Node<'t>> {
        for node in self.parents.ancestors(at) {
            let (pattern, value) = match node.kind_str() {
                "match_arm" => {
                    let scrutinee = self
                        .parents
                        .of(node)
                        .and_then(|block| self.parents.of(block))
                        .filter(|m| m.kind_str() == "match_expression")
                        .and_then(|m| m.field("value"));
                    (node.field("pattern"), scrutinee)
                }
                "let_condition" => (node.field("pattern"), node.field("value")),
                "closure_expression" => {
                    let mut names = Vec::new();
                    if let Some(parameters) = node.field("parameters") {
                        self.pattern_names(parameters, &mut names);
                    }
                    if names.iter().any(|n| n == name) {
                        return None;
                    }
                    continue;
                }
                "function_item" => return None,
                _ => continue,
            };
            let Some(pattern) = pattern else { continue };
            let mut names = Vec::new();
            self.pattern_names(pattern, &mut names);
            if !names.iter().any(|n| n == name) {
                continue;
            }
            // `Ok(msg)`: the pattern's inner binding is the value, unwrapped.
            let inner = named_children(pattern);
            let pattern = if pattern.kind_str() == "match_pattern" {
                *inner.first()?
            } else {
                pattern
            };
            let unwraps = pattern.kind_str() == "tuple_struct_pattern"
                && pattern
                    .field("type")
                    .is_some_and(|t| matches!(self.text_of(t), "Ok" | "Some"))
                && named_children(pattern)
                    .iter()
                    .filter(|c| c.kind_str() == "identifier")
                    .any(|c| self.text_of(*c) == name);
            return if unwraps { value } else { None };
        }
        None
    }

    /// The first string literal among a call's or macro's arguments.
    /// The one method the calls added to a local batch before `send` name, with a JSON-RPC
    /// namespace dropped (`eth_getTransactionReceipt`: `getTransactionReceipt`): each added
    /// by `receiver.add_call("name", …)` (or `add`) in the function around `send`. `None`
    /// when the batch is not such a local, or its calls are of several methods.
    fn batched_call(&self, receiver: Node<'t>, send: Node<'t>) -> Option<String> {
        if receiver.kind_str() != "identifier" {
            return None;
        }
        let name = self.text_of(receiver);
        if !matches!(self.local(receiver, name), Local::Let { .. }) {
            return None;
        }
        let function = self.parents.ancestors(send).find(|n| n.kind_str() == "function_item")?;
        let mut found: Option<String> = None;
        let mut cursor = function.walk();
        let mut steps = 0usize;
        loop {
            let node = cursor.node();
            steps += 1;
            if steps > 20_000 || node.start_byte() >= send.start_byte() {
                break;
            }
            if node.kind_str() == "call_expression" {
                // `batch.add_call::<(B256,), Receipt>(…)`: the method is in a turbofish.
                let function = node.field("function").and_then(|f| match f.kind_str() {
                    "generic_function" => f.field("function"),
                    _ => Some(f),
                });
                let added = function
                    .filter(|f| f.kind_str() == "field_expression")
                    .filter(|f| {
                        f.field("value")
                            .is_some_and(|v| v.kind_str() == "identifier" && self.text_of(v) == name)
                    })
                    .and_then(|f| f.field("field"))
                    .is_some_and(|m| matches!(self.text_of(m), "add_call" | "add"));
                if added {
                    let first = node.field("arguments").and_then(|a| named_children(a).first().copied());
                    let method = first
                        .filter(|a| a.kind_str() == "string_literal")
                        .map(|a| self.text_of(a).trim_matches('"').to_string())?;
                    let method = match method.split_once('_') {
                        Some((namespace, rest))
                            if !namespace.is_empty() && rest.starts_with(|c: char| c.is_ascii_lowercase()) =>
                        {
                            rest.to_string()
                        }
                        _ => method,
                    };
                    match &found {
                        Some(seen) if *seen != method => return None,
                        _ => found = Some(method),
                    }
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            if !crate::extract::step_past(&mut cursor, function) {
                break;
            }
        }
        found
    }

    fn first_string(&self, call: Node<'t>) -> Option<String> {
        let mut cursor = call.walk();
        'walk: loop {
            let node = cursor.node();
            if matches!(node.kind_str(), "string_literal" | "raw_string_literal") {
                // `"…"`, `r#"…"#`: the query is what is between the quotes.
                let literal = self.text_of(node).trim_start_matches(['r', '#']).trim_end_matches('#');
                return Some(literal.trim_matches('"').to_string());
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == call {
                    break 'walk;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        None
    }

    /// The request a local closure builds when `node` calls it (`req()` after
    /// `let req = || client.get(url).header(…);`): its method, and whether it sets an
    /// `Idempotency-Key` header.
    fn called_closure_request(&self, node: Node<'t>) -> Option<(String, bool)> {
        let node = match node.kind_str() {
            "parenthesized_expression" => node.named_child(0)?,
            _ => node,
        };
        if node.kind_str() != "call_expression" || !self.args(node).is_empty() {
            return None;
        }
        let function = node.field("function").filter(|f| f.kind_str() == "identifier")?;
        let Local::Let { value, .. } = self.local(function, self.text_of(function)) else {
            return None;
        };
        if value.kind_str() != "closure_expression" {
            return None;
        }
        let mut body = value.field("body")?;
        // `|| { client.get(url) }`: the block's tail.
        for _ in 0..4 {
            if body.kind_str() != "block" {
                break;
            }
            body = *named_children(body).last()?;
        }
        let method = self.chain_http_method(body)?;
        let text = self.text_of(body).to_ascii_lowercase();
        Some((
            method,
            text.contains("idempotency-key") || text.contains("idempotency_key"),
        ))
    }

    /// The reqwest method (`post`) of the request builder chain `node`, when it has one.
    fn chain_http_method(&self, node: Node<'t>) -> Option<String> {
        let mut current = node;
        for _ in 0..32 {
            current = match current.kind_str() {
                "call_expression" => {
                    let function = current.field("function")?;
                    if function.kind_str() == "field_expression" {
                        let method = function.field("field").map(|f| self.text_of(f));
                        if let Some(m) = method.filter(|m| HTTP_METHODS.contains(m)) {
                            if self.args(current).len() == 1 {
                                return Some(m.to_string());
                            }
                        }
                    }
                    function
                }
                "field_expression" => current.field("value")?,
                "await_expression" | "try_expression" | "parenthesized_expression" => current.named_child(0)?,
                _ => return None,
            };
        }
        None
    }

    /// Whether the method chain `node` ends holds a reqwest request builder (`.post(url)`).
    /// The HTTP method of a reqwest request builder call, lowercase: `client.post(url)`, or
    /// `client.request(Method::POST, url)` with the method written as a constant.
    pub(super) fn http_method(&self, call: Node<'t>) -> Option<String> {
        let function = call.field("function").filter(|f| f.kind_str() == "field_expression")?;
        let method = self.text_of(function.field("field")?);
        let args = self.args(call);
        match (method, args.as_slice()) {
            (m, [_]) if HTTP_METHODS.contains(&m) => Some(m.to_string()),
            ("request", [verb, _]) if matches!(verb.kind_str(), "scoped_identifier") => {
                let path = self.segments(*verb);
                let [.., ty, name] = path.as_slice() else { return None };
                let lower = name.to_ascii_lowercase();
                (ty == "Method" && HTTP_METHODS.contains(&lower.as_str())).then_some(lower)
            }
            _ => None,
        }
    }

    fn chain_has_http_method(&self, node: Node<'t>) -> bool {
        let mut current = node;
        for _ in 0..32 {
            let next = match current.kind_str() {
                "call_expression" => {
                    let Some(function) = current.field("function") else {
                        return false;
                    };
                    if self.http_method(current).is_some() {
                        return true;
                    }
                    function
                }
                "field_expression" => match current.field("value") {
                    Some(value) => value,
                    None => return false,
                },
                "await_expression" | "try_expression" | "parenthesized_expression" => match current.named_child(0) {
                    Some(inner) => inner,
                    None => return false,
                },
                _ => return false,
            };
            current = next;
        }
        false
    }

    /// Whether the request chain around `call` sets an `Idempotency-Key` header.
    pub(super) fn chain_sets_idempotency_key(&self, call: Node<'t>) -> bool {
        let mut top = call;
        for _ in 0..16 {
            match self.parents.of(top) {
                Some(parent)
                    if matches!(
                        parent.kind_str(),
                        "field_expression" | "call_expression" | "arguments" | "await_expression" | "try_expression"
                    ) =>
                {
                    top = parent
                }
                _ => break,
            }
        }
        let chain = self.text_of(top).to_ascii_lowercase();
        chain.contains("idempotency-key") || chain.contains("idempotency_key")
    }

    /// The file's functions as units, so a retried unit's calls to them are followed.
    pub(super) fn named_units(&self) -> Vec<Unit> {
        // A method of an inherent `impl` is reached as `self.name(…)`: named so, when no other
        // method of the file has its name (which `self` is would be a guess).
        let method_named = |name: &str| self.items.iter().filter(|i| i.associated && i.name == name).count() == 1;
        self.items
            .iter()
            .filter(|item| !item.associated || item.has_params_self && method_named(&item.name))
            .filter_map(|item| {
                let name = match item.associated {
                    true => format!("self.{}", item.name),
                    false => item.name.clone(),
                };
                Some(self.unit(item.body?, Some(name)))
            })
            .take(MAX_UNITS)
            .collect()
    }
}
