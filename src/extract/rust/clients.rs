//! reqwest-retry clients (issue 16.2): a `ClientWithMiddleware` built with
//! `RetryTransientMiddleware` retries every request it sends on transient failures, so a POST
//! or PATCH through it needs an `Idempotency-Key`. The client is found where the middleware is
//! built — a `let` binding, a struct field initialised in a constructor (`Self { http: … }`),
//! or a function returning it — and its requests where that name sends one
//! (`client.post(url)`, `self.http.patch(url)`, `payments().post(url)`), in the same file.

use super::units::HTTP_METHODS;
use super::*;
use crate::facts::ClientRequest;

/// How a retrying client is named, and where that name means it.
enum Name<'t> {
    /// `let client = …;`: in the block after the binding.
    Let {
        name: String,
        block: Node<'t>,
        after: usize,
    },
    /// `Self { http: … }`: `self.http` anywhere in the file.
    Field(String),
    /// `fn payments() -> ClientWithMiddleware { … }`: a call `payments()`.
    Function(String),
}

impl<'t> Rx<'t> {
    pub(super) fn retrying_clients(&self, facts: &mut FileFacts, root: Node<'t>) {
        let mut names = Vec::new();
        for site in &facts.retry_sites {
            if site.library != Library::ReqwestRetry {
                continue;
            }
            let Some(node) = root.descendant_for_byte_range(site.span.start as usize, site.span.end as usize) else {
                continue;
            };
            if let Some((name, at)) = self.client_name(node) {
                facts.retrying_clients.push((self.shown(&name), at));
                names.push(name);
            }
        }
        if names.is_empty() {
            return;
        }
        let mut cursor = root.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind_str() == "call_expression" {
                if let Some(request) = self.request(node, &names) {
                    facts.client_requests.push(request);
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }

    /// The name the client a middleware call builds goes by: the nearest `let`, struct field
    /// or function whose value it is.
    fn client_name(&self, node: Node<'t>) -> Option<(Name<'t>, Span)> {
        let mut current = node;
        while let Some(parent) = self.parents.of(current) {
            match parent.kind_str() {
                "let_declaration" => {
                    let pattern = parent.field("pattern").filter(|p| p.kind_str() == "identifier")?;
                    let block = self.parents.of(parent)?;
                    return Some((
                        Name::Let {
                            name: self.text_of(pattern).to_string(),
                            block,
                            after: parent.end_byte(),
                        },
                        span(pattern),
                    ));
                }
                "field_initializer" => {
                    let field = parent.field("field")?;
                    return Some((Name::Field(self.text_of(field).to_string()), span(field)));
                }
                "function_item" => {
                    // Only when the client is what the function returns.
                    let body = parent.field("body")?;
                    let value = tail(body)?;
                    if !(value.start_byte() <= node.start_byte() && node.end_byte() <= value.end_byte()) {
                        return None;
                    }
                    let name = parent.field("name")?;
                    return Some((Name::Function(self.text_of(name).to_string()), span(name)));
                }
                "closure_expression" | "impl_item" | "mod_item" => return None,
                _ => {}
            }
            current = parent;
        }
        None
    }

    fn shown(&self, name: &Name) -> String {
        match name {
            Name::Let { name, .. } => name.clone(),
            Name::Field(field) => format!("self.{field}"),
            Name::Function(function) => format!("{function}()"),
        }
    }

    /// `client.post(url)…`: a request through one of the retrying clients.
    fn request(&self, call: Node<'t>, names: &[Name<'t>]) -> Option<ClientRequest> {
        let function = call.field("function")?;
        if function.kind_str() != "field_expression" || self.args(call).len() != 1 {
            return None;
        }
        let method = self.text_of(function.field("field")?);
        if !HTTP_METHODS.contains(&method) {
            return None;
        }
        let receiver = function.field("value")?;
        let client = names.iter().find(|name| match name {
            Name::Let { name, block, after } => {
                receiver.kind_str() == "identifier"
                    && self.text_of(receiver) == name
                    && call.start_byte() >= *after
                    && block.start_byte() <= call.start_byte()
                    && call.end_byte() <= block.end_byte()
            }
            Name::Field(field) => {
                receiver.kind_str() == "field_expression"
                    && receiver.field("value").is_some_and(|v| self.text_of(v) == "self")
                    && receiver.field("field").is_some_and(|f| self.text_of(f) == field)
            }
            Name::Function(function) => {
                receiver.kind_str() == "call_expression"
                    && self.args(receiver).is_empty()
                    && receiver
                        .field("function")
                        .is_some_and(|f| self.segments(f).last().is_some_and(|last| last == function))
            }
        })?;
        Some(ClientRequest {
            client: self.shown(client),
            method: Some(method.to_string()),
            idempotency_key: self.chain_sets_idempotency_key(call),
            span: span(call),
        })
    }
}
