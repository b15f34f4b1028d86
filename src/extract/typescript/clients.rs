//! HTTP requests and the clients that send them: `client.post(…)`,
//! `client.execute(HttpClientRequest.post(…))`, a retrying client bound to a name, and
//! whether a request carries an idempotency key.

use super::FieldExt;
use super::Lineage;
use tree_sitter::Node;

use super::units::{span, text, HTTP_METHODS};

use crate::facts::ClientRequest;
use crate::source::Span;

/// Whether a call's text names an idempotency key, in any spelling: `Idempotency-Key`,
/// `idempotencyKey`, `idempotency_key`.
pub(super) fn mentions_idempotency_key(call: &[u8]) -> bool {
    ["idempotency-key", "idempotencykey", "idempotency_key"]
        .iter()
        .any(|needle| contains_ignoring_case(call, needle.as_bytes()))
}

/// Whether the request chain around `node` sets an `Idempotency-Key` header. The chain is the
/// expression the call belongs to: `HttpClientRequest.post(url).pipe(setHeader(…))`.
pub fn chain_sets_idempotency_key<'t>(source: &[u8], node: Node<'t>, lineage: &Lineage<'_, 't>) -> bool {
    let mut top = node;
    for _ in 0..8 {
        match lineage.parent(top) {
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

/// The local name a `HttpClient.retryTransient` client is bound to:
/// `const retrying = base.pipe(HttpClient.retryTransient(…))` or the data-first form.
pub fn bound_client_name<'t>(source: &[u8], call: Node<'t>, lineage: &Lineage<'_, 't>) -> Option<(String, Span)> {
    let mut node = call;
    for _ in 0..4 {
        let parent = lineage.parent(node)?;
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
pub fn client_request<'t>(source: &[u8], call: Node<'t>, lineage: &Lineage<'_, 't>) -> Option<ClientRequest> {
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
            && (chain_sets_idempotency_key(source, call, lineage)
                || contains_ignoring_case(&source[arguments.byte_range()], b"idempotency-key")),
        span: span(call),
    })
}

/// Requests sent point-free through a named client in a data-first `pipe`:
/// `pipe(HttpClientRequest.post(url), HttpClientRequest.bodyJson(b), client.execute, …)`. The
/// request's method and key are those of the steps before `client.execute`.
pub fn piped_client_requests(source: &[u8], arguments: Node) -> Vec<ClientRequest> {
    let mut out = Vec::new();
    let mut method: Option<String> = None;
    let mut keyed = false;
    let mut cursor = arguments.walk();
    for argument in arguments.named_children(&mut cursor) {
        let execute = (argument.kind_str() == "member_expression")
            .then(|| (argument.field("object"), argument.field("property")))
            .and_then(|(object, property)| Some((object?, property?)))
            .filter(|(object, property)| object.kind_str() == "identifier" && text(source, *property) == "execute")
            .map(|(object, _)| text(source, object))
            .filter(|client| *client != "HttpClient" && *client != "HttpClientRequest");
        match execute {
            Some(client) if method.is_some() => {
                let unsafe_method = matches!(method.as_deref(), Some("post" | "patch"));
                out.push(ClientRequest {
                    client: client.to_string(),
                    method: method.take(),
                    idempotency_key: unsafe_method && keyed,
                    span: span(argument),
                });
                keyed = false;
            }
            _ => {
                let step = &source[argument.byte_range()];
                if let Some(rest) = step.strip_prefix(b"HttpClientRequest.".as_slice()) {
                    if let Some(m) = HTTP_METHODS
                        .iter()
                        .find(|m| rest.starts_with(m.as_bytes()) && rest.get(m.len()) == Some(&b'('))
                    {
                        method = Some(m.to_string());
                    }
                }
                keyed |= contains_ignoring_case(step, b"idempotency-key");
            }
        }
    }
    out
}

/// Whether `haystack` holds `needle` (lowercase ASCII) in any letter case.
fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.len() >= needle.len()
        && haystack
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle))
}
