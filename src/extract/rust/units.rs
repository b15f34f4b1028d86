//! Units of work of Rust retries: what the retried closure, async block or function does, in
//! the same neutral operations as TypeScript's (`facts::Unit`) — method and function calls,
//! SQL through sqlx (`query(…)`, `query!(…)`), HTTP requests through reqwest
//! (`client.post(url)…send()`), and the transaction between `begin()` and `commit()`.

use super::*;
use crate::extract::sql::classify_sql;
use crate::facts::{OpKind, Unit, UnitOp};

/// Operations kept per unit: enough for any real unit, bounded for generated code.
const MAX_OPS: usize = 256;
/// Named units kept per file.
const MAX_UNITS: usize = 512;

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
            "identifier" | "scoped_identifier" => {
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
        let mut begin: Option<u32> = None;
        let mut cursor = node.walk();
        'walk: loop {
            let current = cursor.node();
            let descend = match current.kind_str() {
                "line_comment" | "block_comment" | "string_literal" | "raw_string_literal" => false,
                // A nested closure is its own unit only when something runs it; its calls
                // still run when it does, so they are kept.
                "call_expression" | "macro_invocation" => {
                    if let Some(op) = self.operation(current, &mut begin, node) {
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
        }
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
                    m if HTTP_METHODS.contains(&m) && self.args(call).len() == 1 => OpKind::Http {
                        method,
                        idempotency_key: self.chain_sets_idempotency_key(call),
                    },
                    // reqwest's `send` sends the request the chain built: the request is the op.
                    "send" if self.chain_has_http_method(receiver) => return None,
                    _ => {
                        let text = collapse(self.text_of(receiver));
                        OpKind::Call {
                            receiver: (text.len() <= 80).then_some(text),
                            method,
                            client_id: None,
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
                    client_id: None,
                }
            }
            _ => return None,
        };
        Some(UnitOp { span: span(call), kind })
    }

    /// The first string literal among a call's or macro's arguments.
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

    /// Whether the method chain `node` ends holds a reqwest request builder (`.post(url)`).
    fn chain_has_http_method(&self, node: Node<'t>) -> bool {
        let mut current = node;
        for _ in 0..32 {
            let next = match current.kind_str() {
                "call_expression" => {
                    let Some(function) = current.field("function") else {
                        return false;
                    };
                    if function.kind_str() == "field_expression" {
                        let method = function.field("field").map(|f| self.text_of(f));
                        if method.is_some_and(|m| HTTP_METHODS.contains(&m)) && self.args(current).len() == 1 {
                            return true;
                        }
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
        self.items
            .iter()
            .filter(|item| !item.associated)
            .filter_map(|item| Some(self.unit(item.body?, Some(item.name.clone()))))
            .take(MAX_UNITS)
            .collect()
    }
}
