//! Units of work: what a retried effect does, read off its syntax tree while the tree is
//! alive. A unit is a list of operations in source order — calls (classified later by the
//! rules, whose verbs are configurable), SQL statements, HTTP requests and transactions.

use super::FieldExt;
use tree_sitter::Node;

use crate::extract::sql::classify_sql;
use crate::facts::{ClientRequest, OpKind, Unit, UnitOp};
use crate::source::Span;

/// Operations kept per unit: enough for any real unit, bounded for generated code.
const MAX_OPS: usize = 256;
/// Named units kept per file.
const MAX_UNITS: usize = 512;

const HTTP_METHODS: &[&str] = &["get", "post", "put", "patch", "del", "delete", "head", "options"];

fn text<'t>(source: &'t [u8], node: Node) -> &'t str {
    std::str::from_utf8(&source[node.byte_range()]).unwrap_or("")
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// The unit `node` stands for: every operation in its subtree.
pub fn unit(source: &[u8], node: Node, name: Option<String>) -> Unit {
    let mut ops = Vec::new();
    let mut cursor = node.walk();
    'walk: loop {
        let current = cursor.node();
        let descend = match current.kind_str() {
            "comment" | "string" | "type_annotation" | "type_arguments" => false,
            "call_expression" => {
                if let Some(op) = operation(source, current) {
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
    }
}

/// One call as a unit operation.
fn operation(source: &[u8], call: Node) -> Option<UnitOp> {
    let callee = call.field("function")?;
    let arguments = call.field("arguments")?;
    if arguments.kind_str() == "template_string" {
        // sql`…`, this.sql`…`, tx.sql`…`
        let tag = text(source, callee);
        if tag == "sql" || tag.ends_with(".sql") {
            return Some(UnitOp {
                span: span(call),
                kind: OpKind::Sql(classify_sql(text(source, arguments))),
            });
        }
        return None;
    }
    let kind = match callee.kind_str() {
        "member_expression" => {
            let object = callee.field("object")?;
            let method = text(source, callee.field("property")?).to_string();
            if method == "withTransaction" {
                OpKind::Transaction
            } else if text(source, object) == "HttpClientRequest" && HTTP_METHODS.contains(&method.as_str()) {
                OpKind::Http {
                    method,
                    idempotency_key: chain_sets_idempotency_key(source, call),
                }
            } else {
                let receiver = text(source, object);
                OpKind::Call {
                    receiver: (receiver.len() <= 80 && !receiver.contains('\n')).then(|| receiver.to_string()),
                    method,
                    client_id: first_argument_has_client_id(source, arguments),
                }
            }
        }
        "identifier" => OpKind::Call {
            receiver: None,
            method: text(source, callee).to_string(),
            client_id: first_argument_has_client_id(source, arguments),
        },
        _ => return None,
    };
    Some(UnitOp { span: span(call), kind })
}

/// `{ id: …, … }` or `{ orderId: … }` as the first argument: a create by client id.
/// `None` when the first argument is not an object literal (the analysis cannot see it).
fn first_argument_has_client_id(source: &[u8], arguments: Node) -> Option<bool> {
    let first = arguments.named_child(0)?;
    if first.kind_str() != "object" {
        return None;
    }
    let mut cursor = first.walk();
    let found = first.named_children(&mut cursor).any(|property| {
        let key = match property.kind_str() {
            "pair" => property.field("key").map(|k| text(source, k)),
            "shorthand_property_identifier" => Some(text(source, property)),
            _ => None,
        };
        key.is_some_and(|k| k == "id" || k.ends_with("Id") || k == "idempotencyKey")
    });
    Some(found)
}

/// Whether the request chain around `node` sets an `Idempotency-Key` header. The chain is the
/// expression the call belongs to: `HttpClientRequest.post(url).pipe(setHeader(…))`.
pub fn chain_sets_idempotency_key(source: &[u8], node: Node) -> bool {
    let mut top = node;
    for _ in 0..8 {
        match top.parent() {
            Some(parent)
                if matches!(
                    parent.kind_str(),
                    "member_expression" | "call_expression" | "arguments" | "parenthesized_expression"
                ) =>
            {
                top = parent
            }
            _ => break,
        }
    }
    let chain = &source[top.byte_range()];
    contains_ignoring_case(chain, b"idempotency-key") || memchr::memmem::find(chain, b"idempotencyKey").is_some()
}

/// The expression a retry call replays, and the unit name it carries when it is an
/// `Effect.fn` pipeable. `policy_index` says which argument is the policy (1: data-first).
pub fn retried_target<'t>(
    source: &[u8],
    call: Node<'t>,
    args: &[Node<'t>],
    policy_index: Option<usize>,
) -> Option<(Node<'t>, Option<String>)> {
    if policy_index == Some(1) && args.len() >= 2 {
        return Some((args[0], None));
    }
    let arguments = call.parent().filter(|p| p.kind_str() == "arguments")?;
    let outer = arguments.parent().filter(|p| p.kind_str() == "call_expression")?;
    let callee = outer.field("function")?;
    match callee.kind_str() {
        // x.pipe(…, Effect.retry(…))
        "member_expression" if callee.field("property").is_some_and(|p| text(source, p) == "pipe") => {
            Some((callee.field("object")?, None))
        }
        // pipe(x, …, Effect.retry(…))
        "identifier" if text(source, callee) == "pipe" => {
            let first = arguments.named_child(0)?;
            (first != call).then_some((first, None))
        }
        // Effect.fn("name")(function* () {…}, …, Effect.retry(…))
        "call_expression" => {
            let inner = callee.field("function")?;
            let inner_text = text(source, inner);
            if !(inner_text.ends_with(".fn") || inner_text == "fn" || inner_text.ends_with(".fnUntraced")) {
                return None;
            }
            let name = callee
                .field("arguments")
                .and_then(|a| a.named_child(0))
                .filter(|n| n.kind_str() == "string")
                .map(|n| text(source, n).trim_matches(['"', '\'', '`']).to_string());
            let body = arguments.named_child(0)?;
            (body != call).then_some((body, name))
        }
        _ => None,
    }
}

/// The local name a `HttpClient.retryTransient` client is bound to:
/// `const retrying = base.pipe(HttpClient.retryTransient(…))` or the data-first form.
pub fn bound_client_name(source: &[u8], call: Node) -> Option<(String, Span)> {
    let mut node = call;
    for _ in 0..4 {
        let parent = node.parent()?;
        match parent.kind_str() {
            "variable_declarator" => {
                let name = parent.field("name").filter(|n| n.kind_str() == "identifier")?;
                return Some((text(source, name).to_string(), span(name)));
            }
            "arguments" | "call_expression" | "member_expression" | "parenthesized_expression" => node = parent,
            _ => return None,
        }
    }
    None
}

/// `client.execute(HttpClientRequest.post(…))` or `client.post(…)` on a named client.
pub fn client_request(source: &[u8], call: Node) -> Option<ClientRequest> {
    let callee = call.field("function").filter(|c| c.kind_str() == "member_expression")?;
    let object = callee.field("object").filter(|o| o.kind_str() == "identifier")?;
    let method = text(source, callee.field("property")?);
    let client = text(source, object);
    if client == "HttpClientRequest" || client == "HttpClient" {
        return None;
    }
    let arguments = call.field("arguments")?;
    let http_method = if method == "execute" {
        // The request's method, when it is built right there: `HttpClientRequest.post(`.
        let request = &source[arguments.byte_range()];
        memchr::memmem::find_iter(request, b"HttpClientRequest.").find_map(|at| {
            let rest = &request[at + b"HttpClientRequest.".len()..];
            HTTP_METHODS
                .iter()
                .find(|m| rest.starts_with(m.as_bytes()) && rest.get(m.len()) == Some(&b'('))
                .map(|m| m.to_string())
        })
    } else if HTTP_METHODS.contains(&method) {
        Some(method.to_string())
    } else {
        return None;
    };
    // Only an unsafe method's key matters (`retrying-client-unsafe-method`); most `.get(…)`
    // calls are not requests at all, and their chains are not searched.
    let unsafe_method = matches!(http_method.as_deref(), Some("post" | "patch"));
    Some(ClientRequest {
        client: client.to_string(),
        method: http_method,
        idempotency_key: unsafe_method
            && (chain_sets_idempotency_key(source, call)
                || contains_ignoring_case(&source[arguments.byte_range()], b"idempotency-key")),
        span: span(call),
    })
}

/// Whether `haystack` holds `needle` (lowercase ASCII) in any letter case.
fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.len() >= needle.len()
        && haystack
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle))
}

/// Every named function-like value of the file: what calls inside a retried unit can reach.
pub fn named_units(source: &[u8], root: Node) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        let named = match node.kind_str() {
            "variable_declarator" => node
                .field("name")
                .filter(|n| n.kind_str() == "identifier")
                .zip(node.field("value").filter(|v| is_unit_value(source, *v))),
            "pair" => node
                .field("key")
                .filter(|k| k.kind_str() == "property_identifier")
                .zip(node.field("value").filter(|v| is_unit_value(source, *v))),
            "function_declaration" | "generator_function_declaration" | "method_definition" => {
                node.field("name").zip(node.field("body"))
            }
            _ => None,
        };
        if let Some((name, body)) = named {
            let name = text(source, name).to_string();
            if !units.iter().any(|u| u.name.as_deref() == Some(name.as_str())) {
                units.push(unit(source, body, Some(name)));
                if units.len() >= MAX_UNITS {
                    break 'walk;
                }
            }
        }
        if node.kind_str() != "comment" && node.kind_str() != "string" && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    units
}

/// Functions, generators and `Effect.fn(…)(…)` / `Effect.gen(…)` values.
fn is_unit_value(source: &[u8], value: Node) -> bool {
    match value.kind_str() {
        "arrow_function" | "function_expression" | "generator_function" | "function" => true,
        "call_expression" => {
            let callee = value.field("function");
            callee.is_some_and(|c| {
                let t = text(source, c);
                t.starts_with("Effect.fn") || t.ends_with(".gen") || t == "gen" || c.kind_str() == "call_expression"
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::SqlClass;

    #[test]
    fn classifies_sql_by_what_a_replay_does() {
        assert_eq!(
            classify_sql("`INSERT INTO orders (id) VALUES (${id})`"),
            SqlClass::Insert
        );
        assert_eq!(
            classify_sql("`INSERT INTO orders (id) VALUES (${id}) ON CONFLICT (id) DO NOTHING`"),
            SqlClass::Upsert
        );
        assert_eq!(
            classify_sql("`\n  update rules set active = 1 where id = ${id}`"),
            SqlClass::Update
        );
        assert_eq!(classify_sql("`SELECT * FROM orders`"), SqlClass::Select);
        assert_eq!(
            classify_sql("`DELETE FROM sessions WHERE expires_at < now()`"),
            SqlClass::Delete
        );
    }
}
