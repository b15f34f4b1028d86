//! reqwest-retry clients (issue 16.2, 25.6): a `ClientWithMiddleware` built with
//! `RetryTransientMiddleware` retries every request it sends on transient failures, so a POST
//! or PATCH through it needs an `Idempotency-Key`. The client is found where the middleware is
//! built, and followed as a value through the file: a `let` binding (`let mw = …;` then
//! `.with(mw)`), a reassignment (`builder = builder.with(mw)`), a struct field set in a
//! constructor (`Self { http: … }`, `Self { client }`, `self.client = Some(…)`), a function
//! returning it (`fn http_client(cfg: &Config) -> ClientWithMiddleware`, with or without
//! parameters, or a method `self.build_client()`); its requests are where one of those names
//! sends one (`client.post(url)`, `self.http.patch(url)`, `payments().post(url)`), in the same
//! file. A field is the struct's own: `self.http` in an impl of another type is not it.

use std::collections::HashSet;

use super::units::HTTP_METHODS;
use super::*;
use crate::facts::ClientRequest;

/// How many names one file's clients may go by (each costs a scan of its scope).
const MAX_NAMES: usize = 64;

/// The methods of `reqwest_middleware::ClientBuilder` (and `Clone`) that keep a client a
/// client: `.with(mw)` adds a middleware, `.build()` ends the builder.
const BUILDER_METHODS: &[&str] = &["with", "with_arc", "with_init", "with_arc_init", "build", "clone"];

/// Wrappers whose value is the client they are given.
const WRAPPERS: &[&str] = &["Ok", "Some", "Arc::new", "std::sync::Arc::new", "Box::new"];

/// A method of the project's that sends the method its caller gives through a retrying
/// client (see `Rx::sender`).
struct Sender {
    /// The impl's type and the method's name.
    owner: String,
    name: String,
    /// The parameter (after `self`) that is the HTTP method, and one of type `HeaderMap`.
    method: usize,
    headers: Option<usize>,
    /// The client, as shown.
    client: String,
    /// The method sets an `Idempotency-Key` itself.
    keyed: bool,
}

/// How a retrying client is named, and where that name means it.
enum Name<'t> {
    /// `let client = …;` (or `client = …;`): in the block after the binding.
    Let {
        name: String,
        block: Node<'t>,
        after: usize,
    },
    /// `Self { http: … }`: `self.http` in the impls of the struct (`owner`, when known).
    Field { field: String, owner: Option<String> },
    /// `fn payments() -> ClientWithMiddleware { … }`: a call `payments()`, `self.payments(…)`.
    Function(String),
}

impl<'t> Rx<'t> {
    pub(super) fn retrying_clients(&self, facts: &mut FileFacts, root: Node<'t>) {
        let mut names: Vec<Name<'t>> = Vec::new();
        let mut seen = HashSet::new();
        // Nodes whose value is a retrying client (or its middleware), and whether the walk up
        // from them may pass any expression (the middleware call itself) or only those that
        // keep the client a client (a use of a name already known).
        let mut work: Vec<(Node<'t>, bool)> = Vec::new();
        for site in &facts.retry_sites {
            if site.library != Library::ReqwestRetry {
                continue;
            }
            if let Some(node) = root.descendant_for_byte_range(site.span.start as usize, site.span.end as usize) {
                work.push((node, true));
            }
        }
        while let Some((node, loose)) = work.pop() {
            if names.len() >= MAX_NAMES {
                break;
            }
            let Some((name, at)) = self.client_name(node, loose) else {
                continue;
            };
            if !seen.insert((self.key(&name), at.start)) {
                continue;
            }
            match &name {
                Name::Let { name, block, after } => {
                    work.extend(self.uses(*block, *after, name).into_iter().map(|n| (n, false)));
                }
                Name::Function(function) => {
                    work.extend(self.calls_of(root, function).into_iter().map(|n| (n, false)));
                }
                Name::Field { .. } => {}
            }
            facts.retrying_clients.push((self.shown(&name), at));
            names.push(name);
        }
        if names.is_empty() {
            return;
        }
        let mut senders: Vec<Sender> = Vec::new();
        let mut cursor = root.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind_str() == "call_expression" {
                if let Some(request) = self.request(node, &names) {
                    facts.client_requests.push(request);
                } else if let Some(sender) = self.sender(node, &names) {
                    senders.push(sender);
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
        if !senders.is_empty() {
            self.each_descendant(root, |node| {
                if node.kind_str() == "call_expression" {
                    if let Some(request) = self.sender_call(node, &senders) {
                        facts.client_requests.push(request);
                    }
                }
            });
        }
    }

    /// A method of the project's transport that sends whatever method its caller gives through
    /// a retrying client (`fn send(&self, method: Method, …)` whose body is
    /// `self.client.request(method, url)…`): its callers' methods are the requests.
    fn sender(&self, call: Node<'t>, names: &[Name<'t>]) -> Option<Sender> {
        let function = call.field("function").filter(|f| f.kind_str() == "field_expression")?;
        if function.field("field").is_none_or(|f| self.text_of(f) != "request") {
            return None;
        }
        let args = self.args(call);
        let [verb, _] = args.as_slice() else { return None };
        if verb.kind_str() != "identifier" || !matches!(self.local(*verb, self.text_of(*verb)), Local::Param) {
            return None;
        }
        let client = self.client_of(call, function.field("value")?, names)?;
        let item = self.parents.ancestors(call).find(|n| n.kind_str() == "function_item")?;
        let owner = self.impl_type(item)?;
        // The parameters after `self`, by position, as a caller passes them.
        let params: Vec<Node<'t>> = named_children(item.field("parameters")?)
            .into_iter()
            .filter(|p| p.kind_str() == "parameter")
            .collect();
        let name_of = |p: &Node<'t>| p.field("pattern").map(|pattern| self.text_of(pattern).to_string());
        let method = params
            .iter()
            .position(|p| name_of(p).as_deref() == Some(self.text_of(*verb)))?;
        // A parameter the request's headers come from may carry the caller's key.
        let headers = params
            .iter()
            .position(|p| p.field("type").is_some_and(|t| self.text_of(t).contains("HeaderMap")));
        Some(Sender {
            owner,
            name: self.text_of(item.field("name")?).to_string(),
            method,
            headers,
            client: self.shown(client),
            keyed: self.text_of(item).to_ascii_lowercase().contains("idempotency-key"),
        })
    }

    /// A call of a [`Sender`] with a method that is not safe to replay: `self.send(Method::POST,
    /// …)` in the transport's impl, or `self.transport.send(Method::POST, …)` where the field
    /// `transport` is declared of the transport's type.
    fn sender_call(&self, call: Node<'t>, senders: &[Sender]) -> Option<ClientRequest> {
        let function = call.field("function").filter(|f| f.kind_str() == "field_expression")?;
        let called = self.text_of(function.field("field")?);
        let receiver = function.field("value")?;
        let owner = match receiver.kind_str() {
            "self" => self.impl_type(call)?,
            "field_expression" if receiver.field("value").is_some_and(|v| v.kind_str() == "self") => {
                let field = self.text_of(receiver.field("field")?);
                self.field_type(&self.impl_type(call)?, field)?
            }
            _ => return None,
        };
        let sender = senders.iter().find(|s| s.name == called && s.owner == owner)?;
        let args = self.args(call);
        let verb = args
            .get(sender.method)
            .filter(|v| v.kind_str() == "scoped_identifier")?;
        let path = self.segments(*verb);
        let [.., ty, name] = path.as_slice() else { return None };
        let method = name.to_ascii_lowercase();
        if ty != "Method" || !HTTP_METHODS.contains(&method.as_str()) {
            return None;
        }
        // Headers the caller gives may hold a key: only `None` is known to hold none.
        if sender
            .headers
            .is_some_and(|h| args.get(h).is_none_or(|a| self.text_of(*a) != "None"))
        {
            return None;
        }
        Some(ClientRequest {
            client: sender.client.clone(),
            method: Some(method),
            idempotency_key: sender.keyed,
            span: span(*verb),
        })
    }

    /// The retrying client a request's receiver is.
    fn client_of<'n>(&self, call: Node<'t>, receiver: Node<'t>, names: &'n [Name<'t>]) -> Option<&'n Name<'t>> {
        names.iter().find(|name| match name {
            Name::Let { name, block, after } => {
                receiver.kind_str() == "identifier"
                    && self.text_of(receiver) == name
                    && call.start_byte() >= *after
                    && block.start_byte() <= call.start_byte()
                    && call.end_byte() <= block.end_byte()
            }
            Name::Field { field, owner } => {
                (self.self_field(receiver).is_some_and(|f| f == *field)
                    && (owner.is_none() || self.impl_type(call).is_none_or(|t| Some(t) == *owner)))
                    || self
                        .destructured_field(receiver)
                        .is_some_and(|(o, f)| f == *field && (owner.is_none() || Some(o) == *owner))
            }
            Name::Function(function) => receiver.kind_str() == "call_expression" && self.calls(receiver, function),
        })
    }

    /// The name the client a node's value is goes by: the nearest `let`, assignment, struct
    /// field or function whose value it is. From the middleware call (`loose`) any expression
    /// in between counts (`ClientBuilder::new(c).with(mw).build()`); from a use of a known name
    /// only the builder's methods, `.with(…)`'s argument, `?`, `.await` and wrappers like
    /// `Ok(…)` do (`send(client)` or `client.post(url)` are not the client).
    fn client_name(&self, node: Node<'t>, loose: bool) -> Option<(Name<'t>, Span)> {
        let mut current = node;
        while let Some(parent) = self.parents.of(current) {
            match parent.kind_str() {
                "let_declaration" => {
                    if parent.field("value").is_none_or(|v| v.id() != current.id()) {
                        return None;
                    }
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
                "assignment_expression" => {
                    let left = parent.field("left")?;
                    if parent.field("right").is_none_or(|r| r.id() != current.id()) {
                        return None;
                    }
                    if let Some(field) = self.self_field(left) {
                        let owner = self.impl_type(parent);
                        return Some((Name::Field { field, owner }, span(left)));
                    }
                    if left.kind_str() != "identifier" {
                        return None;
                    }
                    // `builder = builder.with(mw);`: the name holds the client after it, in the
                    // function (the binding may be a block out, as around an `if`).
                    let body = self
                        .parents
                        .ancestors(parent)
                        .find(|a| matches!(a.kind_str(), "function_item" | "closure_expression"))
                        .and_then(|f| f.field("body"))?;
                    return Some((
                        Name::Let {
                            name: self.text_of(left).to_string(),
                            block: body,
                            after: parent.end_byte(),
                        },
                        span(left),
                    ));
                }
                "field_initializer" => {
                    if parent.field("value").is_none_or(|v| v.id() != current.id()) {
                        return None;
                    }
                    let field = parent.field("field")?;
                    let owner = self.struct_owner(parent);
                    return Some((
                        Name::Field {
                            field: self.text_of(field).to_string(),
                            owner,
                        },
                        span(field),
                    ));
                }
                "shorthand_field_initializer" => {
                    let owner = self.struct_owner(parent);
                    return Some((
                        Name::Field {
                            field: self.text_of(current).to_string(),
                            owner,
                        },
                        span(current),
                    ));
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
                _ if loose => {}
                "try_expression" | "await_expression" | "parenthesized_expression" | "block" => {}
                "return_expression" => {
                    // `return Ok(client);`: what the function returns.
                    let function = self
                        .parents
                        .ancestors(parent)
                        .find(|a| matches!(a.kind_str(), "function_item" | "closure_expression"))
                        .filter(|f| f.kind_str() == "function_item")?;
                    let name = function.field("name")?;
                    return Some((Name::Function(self.text_of(name).to_string()), span(name)));
                }
                "field_expression" => {
                    // `client.with(…)` / `client.build()`: the method's call is the value.
                    let call = self.parents.of(parent).filter(|c| c.kind_str() == "call_expression")?;
                    let method = parent.field("field").map(|f| self.text_of(f))?;
                    if call.field("function").is_none_or(|f| f.id() != parent.id())
                        || !BUILDER_METHODS.contains(&method)
                    {
                        return None;
                    }
                    current = call;
                    continue;
                }
                "arguments" => {
                    // `builder.with(mw)`, `Ok(client)`, `Arc::new(client)`.
                    let call = self.parents.of(parent).filter(|c| c.kind_str() == "call_expression")?;
                    let function = call.field("function")?;
                    let carries = match function.kind_str() {
                        "field_expression" => function
                            .field("field")
                            .is_some_and(|f| matches!(self.text_of(f), "with" | "with_arc")),
                        _ => WRAPPERS.contains(&self.text_of(function)),
                    };
                    if !carries {
                        return None;
                    }
                    current = call;
                    continue;
                }
                _ => return None,
            }
            current = parent;
        }
        None
    }

    /// `match self { Self::Real { client, .. } => client.post(…) }` (issue 25.5): the type (an
    /// enum variant's name, or the struct's) and field of `self` that the pattern of an
    /// enclosing arm, `if let` or `let` binds the identifier `receiver` to.
    fn destructured_field(&self, receiver: Node<'t>) -> Option<(String, String)> {
        if receiver.kind_str() != "identifier" {
            return None;
        }
        let name = self.text_of(receiver);
        for node in self.parents.ancestors(receiver) {
            let (pattern, scrutinee) = match node.kind_str() {
                "match_arm" => {
                    let scrutinee = self
                        .parents
                        .ancestors(node)
                        .find(|a| a.kind_str() == "match_expression")?
                        .field("value")?;
                    (node.field("pattern")?, scrutinee)
                }
                "let_condition" | "let_declaration" => (node.field("pattern")?, node.field("value")?),
                "function_item" | "closure_expression" => return None,
                _ => continue,
            };
            let Some((ty, field)) = self.field_binding(pattern, name) else {
                // A binding of this pattern by another name, or none: look further out.
                let mut names = Vec::new();
                self.pattern_names(pattern, &mut names);
                if names.iter().any(|n| n == name) {
                    return None;
                }
                continue;
            };
            // A `let` nearer than the pattern shadows it.
            if let Local::Let { pattern: at, .. } = self.local(receiver, name) {
                if at.start as usize > pattern.start_byte() {
                    return None;
                }
            }
            let mut scrutinee = scrutinee;
            while matches!(
                scrutinee.kind_str(),
                "reference_expression" | "unary_expression" | "parenthesized_expression"
            ) {
                scrutinee = *named_children(scrutinee).last()?;
            }
            if scrutinee.kind_str() != "self" {
                return None;
            }
            let ty = if ty == "Self" { self.impl_type(node)? } else { ty };
            return Some((ty, field));
        }
        None
    }

    /// In `pattern`, the struct pattern field binding `name` as it is (`Real { client, .. }`,
    /// `Real { client: name, .. }`): the pattern type's last segment and the field.
    fn field_binding(&self, pattern: Node<'t>, name: &str) -> Option<(String, String)> {
        if pattern.kind_str() == "struct_pattern" {
            for field in named_children(pattern) {
                if field.kind_str() != "field_pattern" {
                    continue;
                }
                let Some(key) = field.field("name") else { continue };
                let bound = match field.field("pattern") {
                    None => self.text_of(key) == name,
                    Some(p) => p.kind_str() == "identifier" && self.text_of(p) == name,
                };
                if bound {
                    let ty = self.segments(pattern.field("type")?).pop()?;
                    return Some((ty, self.text_of(key).to_string()));
                }
            }
            return None;
        }
        named_children(pattern)
            .into_iter()
            .find_map(|child| self.field_binding(child, name))
    }

    /// `self.field` as the field's name.
    fn self_field(&self, node: Node<'t>) -> Option<String> {
        if node.kind_str() != "field_expression" || node.field("value").is_none_or(|v| self.text_of(v) != "self") {
            return None;
        }
        node.field("field").map(|f| self.text_of(f).to_string())
    }

    /// The type a struct expression builds: its name, or the impl's type for `Self`.
    fn struct_owner(&self, initializer: Node<'t>) -> Option<String> {
        let expression = self
            .parents
            .ancestors(initializer)
            .find(|a| a.kind_str() == "struct_expression")?;
        let name = expression.field("name")?;
        let last = self.segments(name).pop()?;
        if last == "Self" {
            self.impl_type(expression)
        } else {
            Some(last)
        }
    }

    /// The identifiers `name` in `block` after byte `after`.
    fn uses(&self, block: Node<'t>, after: usize, name: &str) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        self.each_descendant(block, |node| {
            if node.start_byte() >= after && node.kind_str() == "identifier" && self.text_of(node) == name {
                out.push(node);
            }
        });
        out
    }

    /// The calls of the file's function (or method) `function`.
    fn calls_of(&self, root: Node<'t>, function: &str) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        self.each_descendant(root, |node| {
            if node.kind_str() == "call_expression" && self.calls(node, function) {
                out.push(node);
            }
        });
        out
    }

    /// Whether a call is `function(…)`, `path::function(…)` or `self.function(…)`.
    fn calls(&self, call: Node<'t>, function: &str) -> bool {
        let Some(callee) = call.field("function") else {
            return false;
        };
        match callee.kind_str() {
            "field_expression" => {
                callee.field("value").is_some_and(|v| self.text_of(v) == "self")
                    && callee.field("field").is_some_and(|f| self.text_of(f) == function)
            }
            "identifier" | "scoped_identifier" => self.segments(callee).last().is_some_and(|last| last == function),
            _ => false,
        }
    }

    fn each_descendant(&self, node: Node<'t>, mut visit: impl FnMut(Node<'t>)) {
        let mut cursor = node.walk();
        'walk: loop {
            visit(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node().id() == node.id() {
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
    }

    /// A name's identity, for not following it twice.
    fn key(&self, name: &Name) -> String {
        match name {
            Name::Let { name, block, .. } => format!("let {name} {}", block.id()),
            Name::Field { field, owner } => format!("field {field} {owner:?}"),
            Name::Function(function) => format!("fn {function}"),
        }
    }

    fn shown(&self, name: &Name) -> String {
        match name {
            Name::Let { name, .. } => name.clone(),
            Name::Field { field, .. } => format!("self.{field}"),
            Name::Function(function) => format!("{function}()"),
        }
    }

    /// `client.post(url)…`: a request through one of the retrying clients.
    fn request(&self, call: Node<'t>, names: &[Name<'t>]) -> Option<ClientRequest> {
        let function = call.field("function")?;
        let method = self.http_method(call)?;
        let receiver = function.field("value")?;
        let client = self.client_of(call, receiver, names)?;
        Some(ClientRequest {
            client: self.shown(client),
            method: Some(method),
            idempotency_key: self.chain_sets_idempotency_key(call),
            span: span(call),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::facts::FileFacts;
    use crate::source::Language;

    fn facts(text: &str) -> FileFacts {
        crate::extract::extract_file(Language::Rust, text.as_bytes())
    }

    /// The requests through a retrying client: (client, method, keyed).
    fn requests(f: &FileFacts) -> Vec<(&str, &str, bool)> {
        f.client_requests
            .iter()
            .map(|r| (r.client.as_str(), r.method.as_deref().unwrap_or(""), r.idempotency_key))
            .collect()
    }

    const USES: &str = "use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};\n\
                        use reqwest_retry::{RetryTransientMiddleware, policies::ExponentialBackoff};\n";

    #[test]
    fn a_middleware_bound_then_added_to_a_reassigned_builder_reaches_the_field() {
        let f = facts(&format!(
            "{USES}pub struct Provider {{ client: ClientWithMiddleware }}\n\
             impl Provider {{\n\
               pub fn new(retry: &RetryConfig) -> Result<Self, E> {{\n\
                 let mut with_middleware = ClientBuilder::new(reqwest::Client::new());\n\
                 if retry.enabled {{\n\
                   let policy = ExponentialBackoff::builder().build_with_max_retries(retry.max_attempts);\n\
                   let mw = RetryTransientMiddleware::new_with_policy(policy);\n\
                   with_middleware = with_middleware.with(mw);\n\
                 }}\n\
                 let final_client = with_middleware.build();\n\
                 Ok(Self {{ client: final_client }})\n\
               }}\n\
               async fn create(&self, url: &str) {{ self.client.post(url).json(&1).send().await; }}\n\
               async fn read(&self, url: &str) {{ self.client.get(url).send().await; }}\n\
             }}\n"
        ));
        assert_eq!(
            requests(&f),
            [("self.client", "post", false), ("self.client", "get", false)]
        );
    }

    #[test]
    fn a_method_building_the_client_assigned_to_an_option_field() {
        let f = facts(&format!(
            "{USES}impl Sink {{\n\
               fn build_client(&self) -> Result<ClientWithMiddleware, E> {{\n\
                 let retry_middleware = RetryTransientMiddleware::new_with_policy(self.policy());\n\
                 Ok(ClientBuilder::new(reqwest::Client::new()).with(retry_middleware).build())\n\
               }}\n\
               fn open(&mut self) -> Result<(), E> {{ self.client = Some(self.build_client()?); Ok(()) }}\n\
               async fn now(&self) {{ self.build_client().unwrap().put(\"u\").send().await; }}\n\
             }}\n"
        ));
        let shown: Vec<&str> = f.retrying_clients.iter().map(|(name, _)| name.as_str()).collect();
        assert!(
            shown.contains(&"self.client") && shown.contains(&"build_client()"),
            "{shown:?}"
        );
    }

    #[test]
    fn a_use_of_the_client_is_not_a_client() {
        // Passed to a function, sent, or a field of another type: none is the retrying client.
        let f = facts(&format!(
            "{USES}struct A {{ http: ClientWithMiddleware }}\nstruct B {{ http: reqwest::Client }}\n\
             impl A {{\n\
               fn new() -> Self {{\n\
                 let client = ClientBuilder::new(reqwest::Client::new()).with(RetryTransientMiddleware::new_with_policy(p())).build();\n\
                 let wrapped = wrap(client.clone());\n\
                 let response = client.get(\"u\");\n\
                 wrapped.post(\"u\");\n\
                 response.post(\"u\");\n\
                 Self {{ http: client }}\n\
               }}\n\
             }}\n\
             impl B {{ async fn f(&self) {{ self.http.post(\"u\").send().await; }} }}\n"
        ));
        assert_eq!(requests(&f), [("client", "get", false)]);
    }
}
