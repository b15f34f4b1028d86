//! The walk that finds retry sites — backon's `.retry`, tokio-retry's `Retry::spawn`,
//! backoff's `retry`, reqwest-retry's middleware — with the scopes around them.

use super::*;
use crate::facts::{OpKind, Unit};

/// How many calls deep a `backoff` operation's classification is followed.
const MAX_CLASSIFY_DEPTH: usize = 3;

/// Whether a function body mentions backoff's permanent errors (its own text).
fn mentions_permanent(rx: &Rx, body: Node) -> bool {
    let text = rx.text_of(body);
    text.contains("permanent") || text.contains("Permanent")
}

/// The walk over the tree that finds retry sites, with the scopes around them.
pub(super) struct Walk<'a, 't, 'f> {
    pub(super) rx: &'a Rx<'t>,
    pub(super) facts: &'f mut FileFacts,
    pub(super) containers: Vec<Container>,
    pub(super) module: Vec<String>,
    /// Nodes looked at so far for the uses of stepped policies (`stepped`), bounded per file.
    pub(super) scanned: usize,
    /// The file can name a retry library: only then is each `let`, field and `for` evaluated
    /// for a policy it steps by hand (evaluating every binding of every file was a fifth of
    /// the extraction of a Rust service with every file parsed).
    pub(super) library: bool,
    /// Calls that may be a project helper's (or a retry builder's chain) are kept unread
    /// ([`crate::facts::RustHelperCall::unread`]): their arguments are read only when some
    /// file defines a helper of their name, in a second read of the file. Evaluating every
    /// method call's arguments in every file was an eighth of a check of a Rust service with
    /// every file parsed.
    pub(super) unread: bool,
}

impl<'t> Walk<'_, 't, '_> {
    /// The walk over the tree below `root` (the file's root), one cursor for the whole tree:
    /// each named node is visited in order, the scopes it opens pushed while its subtree is
    /// walked.
    pub(super) fn walk(&mut self, root: Node<'t>) {
        /// How deep the walk goes: a bound for generated code.
        const MAX_WALK_DEPTH: usize = 400;
        let kinds = kinds();
        let mut cursor = root.walk();
        // The nodes on the way down, with the scopes each pushed.
        let mut opened: Vec<(Node<'t>, (usize, bool))> = Vec::new();
        'walk: loop {
            let node = cursor.node();
            // The receiver of a method call (`value` of a `field_expression`): told by the
            // cursor, not by a walk up from the node.
            let receiver = cursor.field_id().is_some_and(|f| f.get() == kinds.value)
                && opened
                    .last()
                    .is_some_and(|(parent, _)| parent.kind_id() == kinds.field_expression);
            let entered = match opened.len() > MAX_WALK_DEPTH {
                true => None,
                false => self.visit(node, receiver),
            };
            if let Some(pushed) = entered {
                if first_named_child(&mut cursor) {
                    opened.push((node, pushed));
                    continue;
                }
                self.leave(pushed);
            }
            // On to the next named node after this subtree, leaving the scopes on the way up.
            while !next_named_sibling(&mut cursor) {
                if !cursor.goto_parent() {
                    break 'walk;
                }
                match opened.pop() {
                    Some((_, pushed)) => self.leave(pushed),
                    None => break 'walk,
                }
            }
        }
    }

    /// Reads one node of the walk, `receiver` when it is the receiver of a method call: the
    /// scopes it opens (`None`: its subtree is not walked).
    fn visit(&mut self, node: Node<'t>, receiver: bool) -> Option<(usize, bool)> {
        let kinds = kinds();
        let kind = node.kind_id();
        if node.is_error() {
            self.note_error_region(node);
            return None;
        }
        // A macro's tokens hold no code the walk reads (the macros that may hold a retry were
        // unfolded into code before, `macros::unfold`); only an error among them is noted.
        if kind == kinds.token_tree && !node.has_error() {
            return None;
        }
        if kinds.items.contains(&kind) && is_test_item(node, self.rx.text) {
            return None;
        }
        let pushed = self.enter(node);
        if kind == kinds.call_expression {
            let sites = self.facts.retry_sites.len();
            self.call(node);
            if self.facts.retry_sites.len() == sites {
                self.helper_call(node);
                // Only a chain's outermost call is a wrapper's call chain.
                if !receiver {
                    self.wrapper_call(node);
                }
            }
        } else if self.library {
            // Policies whose delays the code uses itself (`stepped`).
            if kind == kinds.let_declaration {
                self.stepped_let(node);
            } else if kind == kinds.field_initializer {
                self.stepped_field(node);
            } else if kind == kinds.for_expression {
                self.stepped_for(node);
            }
        }
        Some(pushed)
    }

    /// Pops the scopes [`Self::enter`] pushed.
    fn leave(&mut self, pushed: (usize, bool)) {
        for _ in 0..pushed.0 {
            self.containers.pop();
        }
        if pushed.1 {
            self.module.pop();
        }
    }

    /// Pushes the scopes `node` opens: (containers pushed, module pushed).
    pub(super) fn enter(&mut self, node: Node<'t>) -> (usize, bool) {
        let rx = self.rx;
        let type_name = |n: Node| rx.segments(n).last().cloned();
        match node.kind_str() {
            "impl_item" => {
                let mut pushed = 0;
                for field in ["trait", "type"] {
                    if let Some(name) = node.field(field).and_then(type_name) {
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
                let Some(name) = node.field("name").map(|n| rx.text_of(n).to_string()) else {
                    return (0, false);
                };
                let kind = match node.kind_str() {
                    "trait_item" => ContainerKind::Class,
                    "function_item" => ContainerKind::Function,
                    _ => ContainerKind::Module,
                };
                let module = kind == ContainerKind::Module && node.field("body").is_some();
                if module {
                    self.module.push(name.clone());
                }
                self.containers.push(Container { kind, name });
                (1, module)
            }
            _ => (0, false),
        }
    }

    pub(super) fn call(&mut self, node: Node<'t>) {
        let rx = self.rx;
        let Some(function) = node.field("function") else {
            return;
        };
        let args = rx.args(node);
        // The filter's expression, when one is written: backon's `.when(…)`, `RetryIf`'s condition.
        let mut filter: Option<Node<'t>> = None;
        let (lib, callee, callee_span, policy_arg, has_predicate) = match function.kind_str() {
            "field_expression" => {
                let Some(field) = function.field("field") else {
                    return;
                };
                if rx.text_of(field) != "retry" || args.len() != 1 || !rx.backon_in_scope() {
                    return;
                }
                filter = backon_when(rx, node);
                (
                    Library::Backon,
                    ".retry".to_string(),
                    span(field),
                    args[0],
                    Some(filter.is_some()),
                )
            }
            "identifier" | "scoped_identifier" => {
                let path = rx.expand(rx.segments(function));
                let names: Vec<&str> = path.iter().map(String::as_str).collect();
                let callee = collapse(rx.text_of(function));
                match names.as_slice() {
                    ["tokio_retry", .., ty @ ("Retry" | "RetryIf"), "spawn" | "start"] if !args.is_empty() => {
                        if *ty == "RetryIf" {
                            filter = args.get(2).copied();
                        }
                        (
                            Library::TokioRetry,
                            callee,
                            span(function),
                            args[0],
                            Some(*ty == "RetryIf"),
                        )
                    }
                    // tokio-retry2: the action returns `RetryError::transient`/`permanent`, so
                    // what `Retry::spawn` replays is the action's to say, as backoff's
                    // operation does (`?` is `From<E>`, a transient error).
                    ["tokio_retry2", .., ty @ ("Retry" | "RetryIf"), "spawn" | "spawn_notify"] if args.len() >= 2 => {
                        let condition = *ty == "RetryIf";
                        let predicate = if condition {
                            filter = args.get(2).copied();
                            Some(true)
                        } else {
                            self.backoff_classifies(args[1])
                        };
                        (Library::TokioRetry2, callee, span(function), args[0], predicate)
                    }
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
            stripped = match stripped.kind_str() {
                "reference_expression" => match stripped.field("value") {
                    Some(v) => v,
                    None => break,
                },
                "parenthesized_expression" => match named_children(stripped).first() {
                    Some(v) => *v,
                    None => break,
                },
                "call_expression" => {
                    let receiver = stripped
                        .field("function")
                        .filter(|f| f.kind_str() == "field_expression")
                        .filter(|f| {
                            f.field("field")
                                .is_some_and(|m| matches!(rx.text_of(m), "clone" | "to_owned"))
                        })
                        .and_then(|f| f.field("value"));
                    match receiver {
                        Some(v) if rx.args(stripped).is_empty() => v,
                        _ => break,
                    }
                }
                _ => break,
            };
        }
        let local = match stripped.kind_str() {
            "identifier" => match rx.local(stripped, rx.text_of(stripped)) {
                Local::Let { pattern, .. } => Some((rx.text_of(stripped).to_string(), pattern)),
                _ => None,
            },
            _ => None,
        };
        // A local's policy is the value it is bound to (`b.clone()` is `b`'s builder).
        let value = rx.eval(
            if local.is_some() { stripped } else { policy_arg },
            &self.module,
            None,
            0,
        );
        // `job.retry(3)`: a number is not a builder, so this is some other `.retry`.
        if lib == Library::Backon && matches!(value, Val::Arg(_)) {
            return;
        }
        let chain = rx.chain(value);
        // backon retries a closure or a function (its traits are implemented for them): a
        // receiver that is a value (`charge.retry(Setting::Smart)` on a parameter of a project
        // type, a `let` of a struct, a field) has a `retry` of its own. One the file does not
        // say is taken for backon's only with a policy the analysis can see.
        if lib == Library::Backon {
            match function.field("value").map(|r| receiver_kind(rx, r)) {
                Some(Receiver::Callable) => {}
                Some(Receiver::Unknown) if chain.is_some() => {}
                _ => return,
            }
        }
        let predicate = match (lib, has_predicate) {
            // The default strategy retries only transient failures.
            (Library::ReqwestRetry, _) => Predicate::Transient,
            // A condition refusing only a cancellation sentinel (issue 25.6): none.
            (_, Some(true)) if filter.is_some_and(|f| helpers::refuses_only_cancellation(rx, f)) => Predicate::None,
            // A filter, by the names it is written with.
            (_, Some(true)) => Predicate::Filter {
                span: filter.map_or_else(|| span(node), span),
                mentions: filter.map(|f| self.filter_mentions(f)).unwrap_or_default(),
                always: false,
            },
            (_, Some(false)) => Predicate::None,
            (_, None) => Predicate::Unknown,
        };
        let retried = match lib {
            Library::ReqwestRetry => Retried::Client,
            _ => Retried::Operation,
        };
        // What the retry replays: backon's receiver, tokio-retry's action, backoff's operation.
        let operation = match lib {
            Library::Backon => function.field("value"),
            Library::TokioRetry | Library::TokioRetry2 | Library::Backoff => args.get(1).copied(),
            _ => None,
        };
        let unit = operation.and_then(|op| rx.unit_of(op, &self.module));
        // A retry that is the backoff of a long-running loop (`loop { let next = (|| poll())
        // .retry(backoff).await?; sleep(next).await }`) restarts work rather than serving a
        // caller: judged as a loop (decision 6), as an Effect supervisor is. So is a retry
        // that only (re)establishes a connection (`(|| Client::new(&url)).retry(…)`): a
        // reconnect supervisor, not a request retry.
        let reconnects = unit.as_ref().is_some_and(|unit| reconnects(rx, unit));
        if reconnects || self.in_polling_loop(node) {
            self.facts.polls.push(crate::facts::PollLoop {
                span: callee_span,
                call: callee.clone(),
                kind: crate::facts::PollKind::Retry,
                caught: true,
                retries: false,
                forked: false,
                endless: true,
            });
        }
        self.facts.retry_sites.push(RetrySite {
            span: span(node),
            callee_span,
            callee,
            library: lib,
            retried,
            policy: PolicyArg::Rust(Box::new(RustPolicyArg {
                arg: span(policy_arg),
                chain,
                local,
                shared: false,
                regardless: None,
            })),
            predicate,
            containers: self.containers.clone(),
            unit,
        });
        self.summarise_helper(node, policy_arg, operation, filter, lib);
    }

    /// The names a filter is written with, and those of what it names one level away: the
    /// closure a local is bound to (`let should_retry = |e| …; .when(should_retry)`) or a
    /// function or associated function of this file (`.when(Error::is_ephemeral)`), whose
    /// body says what it lets through.
    fn filter_mentions(&self, filter: Node<'t>) -> Vec<String> {
        let rx = self.rx;
        let mut mentions = predicate_mentions(rx, filter);
        let body = match filter.kind_str() {
            "identifier" => match rx.local(filter, rx.text_of(filter)) {
                Local::Let { value, .. } if value.kind_str() == "closure_expression" => Some(value),
                Local::Let { .. } | Local::Param => None,
                Local::None => rx.item(&self.module, rx.text_of(filter)).and_then(|item| item.body),
            },
            "scoped_identifier" => match rx.segments(filter).as_slice() {
                [ty, name] if ty == "Self" => rx
                    .impl_type(filter)
                    .and_then(|ty| rx.associated(&self.module, &ty, name))
                    .and_then(|item| item.body),
                [ty, name] => rx.associated(&self.module, ty, name).and_then(|item| item.body),
                _ => None,
            },
            _ => None,
        };
        if let Some(body) = body {
            mentions.extend(predicate_mentions(rx, body));
        }
        mentions
    }

    /// Whether `node` runs in a `loop { … }` of its function that also sleeps: a polling loop.
    fn in_polling_loop(&self, node: Node<'t>) -> bool {
        let mut current = node;
        for _ in 0..32 {
            let Some(parent) = self.rx.parents.of(current) else {
                return false;
            };
            match parent.kind_str() {
                "function_item" | "closure_expression" => return false,
                "loop_expression" => {
                    let body = self.rx.text_of(parent);
                    return body.contains("sleep(")
                        || body.contains("interval.tick()")
                        || body.contains(".tick().await");
                }
                _ => current = parent,
            }
        }
        false
    }

    /// Whether a `backoff` operation (or a tokio-retry2 action) classifies its errors. `?`
    /// and `From` make every error transient (backoff 0.4.0 src/error.rs, tokio-retry2 0.9.1
    /// src/error.rs), so the operation filters only when it returns
    /// `backoff::Error::permanent(…)` / `Error::Permanent(…)` (`RetryError::permanent`) for
    /// some errors. An operation
    /// passed by name from elsewhere, or one that calls a function of another module of the
    /// crate (`crate::retry::classify`), is unknown: that function may classify.
    pub(super) fn backoff_classifies(&self, op: Node<'t>) -> Option<bool> {
        let rx = self.rx;
        let body = match op.kind_str() {
            "closure_expression" | "async_block" => op,
            // `let send = || async { … }; retry_notify(backoff, send, notify)`: the closure a
            // local is bound to, else a function of the module.
            "identifier" => match rx.local(op, rx.text_of(op)) {
                Local::Let { value, .. } if matches!(value.kind_str(), "closure_expression" | "async_block") => value,
                Local::Let { .. } | Local::Param => return None,
                Local::None => rx.item(&self.module, rx.text_of(op))?.body?,
            },
            _ => return None,
        };
        let mut seen = Vec::new();
        self.body_classifies(body, 0, &mut seen)
    }

    /// [`Self::backoff_classifies`] of an operation's (or a function's) body: it returns
    /// `backoff::Error::permanent(…)` for some errors, or (the operation itself) builds every
    /// error as `transient(…)` with no `?`, or calls a function of the crate that returns a
    /// permanent error — followed by
    /// name up to [`MAX_CLASSIFY_DEPTH`] calls deep (`try_proxy(…)` whose tail is
    /// `handle_response(response)`, which returns `Error::Permanent` for 4xx).
    fn body_classifies(&self, body: Node<'t>, depth: usize, seen: &mut Vec<usize>) -> Option<bool> {
        let rx = self.rx;
        seen.push(body.id());
        if mentions_permanent(rx, body) || ends_on_some_errors(rx, body) {
            return Some(true);
        }
        // An operation that builds each of its errors as `backoff::Error::transient(…)` from a
        // value of its own and has no `?` classifies every error it can return: a wait for a
        // condition ("not there yet") is transient by choice, not by `From`. One that makes a
        // caught error transient (`.map_err(|e| Error::transient(e))`,
        // `.map_err(Error::transient)`) converts it, as `?` does: nothing is classified.
        // Only the operation's own: a function it calls that makes every error transient
        // (`.map_err(to_transient)`) classifies nothing.
        if depth == 0 && !has_try(body) && transient_by_choice(rx, body) {
            return Some(true);
        }
        // Functions of the crate the operation calls may classify for it.
        let mut unknown = false;
        let mut found = false;
        let mut cursor = body.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind_str() == "call_expression" {
                let function = node.field("function");
                // `.map_err(classify)`: a classifier passed by name; `classify(e)`: called.
                let names: Vec<Node> = match function.map(|f| f.kind_str()) {
                    Some("field_expression")
                        if function
                            .and_then(|f| f.field("field"))
                            .is_some_and(|f| rx.text_of(f) == "map_err") =>
                    {
                        rx.args(node)
                    }
                    Some("identifier" | "scoped_identifier") => function.into_iter().collect(),
                    // `self.monitor(generation)`: a method of the impl the operation is in,
                    // which may return `backoff::Error::permanent` for some errors.
                    Some("field_expression")
                        if function
                            .and_then(|f| f.field("value"))
                            .is_some_and(|v| v.kind_str() == "self") =>
                    {
                        let method = function.and_then(|f| f.field("field")).map(|f| rx.text_of(f));
                        let callee = method.and_then(|method| {
                            let ty = rx.impl_type(node)?;
                            rx.associated(&self.module, &ty, method)?.body
                        });
                        match callee {
                            Some(callee) if seen.contains(&callee.id()) => {}
                            Some(callee) if depth < MAX_CLASSIFY_DEPTH => {
                                match self.body_classifies(callee, depth + 1, seen) {
                                    Some(true) => found = true,
                                    Some(false) => {}
                                    None => unknown = true,
                                }
                            }
                            Some(callee) => found |= mentions_permanent(rx, callee),
                            // A trait's method, or one of another impl: it may classify.
                            None => unknown = true,
                        }
                        Vec::new()
                    }
                    _ => Vec::new(),
                };
                for name in names {
                    if !matches!(name.kind_str(), "identifier" | "scoped_identifier") {
                        continue;
                    }
                    let path = rx.expand(rx.segments(name));
                    if path.first().is_some_and(|c| EXTERN_ROOTS.contains(&c.as_str())) {
                        continue;
                    }
                    // `Error::Invalid(…)`, `Ok(…)`: a variant or a tuple struct built, no call.
                    if path
                        .last()
                        .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_uppercase()))
                    {
                        continue;
                    }
                    match rx.item_of_path(&path, &self.module).and_then(|i| i.body) {
                        Some(callee) if seen.contains(&callee.id()) => {}
                        Some(callee) if depth < MAX_CLASSIFY_DEPTH => {
                            match self.body_classifies(callee, depth + 1, seen) {
                                Some(true) => found = true,
                                Some(false) => {}
                                None => unknown = true,
                            }
                        }
                        Some(callee) => found |= mentions_permanent(rx, callee),
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
    pub(super) fn note_error_region(&mut self, node: Node<'t>) {
        // A node of another text (a macro body parsed on its own) is not this file's region.
        let Some(text) = self.rx.text.get(node.byte_range()) else {
            return;
        };
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

/// What a `.retry(…)` receiver is, as far as the file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Receiver {
    /// What backon retries: a closure, a function named by path, a `let` bound to a closure,
    /// a parameter of a generic (`F: FnMut() -> Fut`) or `impl Fn…` type.
    Callable,
    /// A value, whose `.retry` is its type's own method: a parameter of a named type, a `let`
    /// of a struct, a constructor's result or an awaited one, a field, `self`, a literal.
    Value,
    /// Something else: a call's result, a block, a pattern binding.
    Unknown,
}

pub(super) fn receiver_kind<'t>(rx: &Rx<'t>, receiver: Node<'t>) -> Receiver {
    receiver_kind_at(rx, receiver, 0)
}

fn receiver_kind_at<'t>(rx: &Rx<'t>, receiver: Node<'t>, depth: usize) -> Receiver {
    if depth > MAX_DEPTH {
        return Receiver::Unknown;
    }
    match receiver.kind_str() {
        "closure_expression" | "scoped_identifier" => Receiver::Callable,
        "parenthesized_expression" => named_children(receiver)
            .first()
            .map_or(Receiver::Unknown, |inner| receiver_kind_at(rx, *inner, depth + 1)),
        "identifier" => match rx.local(receiver, rx.text_of(receiver)) {
            Local::Let { value, .. } => receiver_kind_at(rx, value, depth + 1),
            Local::Param => {
                let name = rx.text_of(receiver);
                if let Some(ty) = rx.param_type_node(receiver, name) {
                    return param_kind(rx, receiver, ty);
                }
                // `for charge in &charges`: an element of a collection of values is a value.
                match for_collection(rx, receiver, name) {
                    Some(collection) => match receiver_kind_at(rx, collection, depth + 1) {
                        Receiver::Value => Receiver::Value,
                        _ => Receiver::Unknown,
                    },
                    None => Receiver::Unknown,
                }
            }
            Local::None => Receiver::Callable,
        },
        "field_expression" | "self" | "struct_expression" | "await_expression" | "try_expression"
        | "string_literal" | "integer_literal" | "float_literal" | "boolean_literal" | "array_expression"
        | "tuple_expression" => Receiver::Value,
        "reference_expression" => receiver
            .field("value")
            .map_or(Receiver::Unknown, |inner| receiver_kind_at(rx, inner, depth + 1)),
        // `Charge::new(…)`: a type's constructor builds a value of the type (`Box::new(||
        // …)` a boxed closure).
        "call_expression" => {
            if rx
                .args(receiver)
                .iter()
                .any(|a| matches!(a.kind_str(), "closure_expression" | "async_block"))
            {
                return Receiver::Callable;
            }
            let constructor = receiver
                .field("function")
                .filter(|f| f.kind_str() == "scoped_identifier")
                .map(|f| rx.segments(f))
                .is_some_and(|path| {
                    path.len() >= 2 && path[path.len() - 2].starts_with(|c: char| c.is_ascii_uppercase())
                });
            if constructor {
                Receiver::Value
            } else {
                Receiver::Unknown
            }
        }
        _ => Receiver::Unknown,
    }
}

/// The collection a `for` loop around `at` binds `name` from, when the loop is the nearest
/// binding of the name.
fn for_collection<'t>(rx: &Rx<'t>, at: Node<'t>, name: &str) -> Option<Node<'t>> {
    for node in rx.parents.ancestors(at) {
        match node.kind_str() {
            "for_expression"
                if !node
                    .field("body")
                    .is_some_and(|b| b.byte_range().contains(&at.start_byte())) => {}
            "for_expression" | "match_arm" | "let_condition" | "if_let_expression" | "closure_expression" => {
                let mut names = Vec::new();
                if let Some(pattern) = node.field("pattern").or_else(|| node.field("parameters")) {
                    rx.pattern_names(pattern, &mut names);
                }
                if names.iter().any(|n| n == name) {
                    return (node.kind_str() == "for_expression")
                        .then(|| node.field("value"))
                        .flatten();
                }
            }
            "function_item" => return None,
            _ => {}
        }
    }
    None
}

/// A parameter by its declared type: `F` declared as a type parameter, `impl FnMut…`, `&dyn
/// Fn…` are callables; another named type (`&Charge`, `Arc<Client>`) is a value.
fn param_kind<'t>(rx: &Rx<'t>, at: Node<'t>, mut ty: Node<'t>) -> Receiver {
    while matches!(ty.kind_str(), "reference_type" | "parenthesized_type") {
        match ty.field("type").or_else(|| named_children(ty).first().copied()) {
            Some(inner) => ty = inner,
            None => return Receiver::Unknown,
        }
    }
    match ty.kind_str() {
        "abstract_type" | "dynamic_type" | "function_type" => {
            let text = rx.text_of(ty);
            if ["Fn(", "FnMut(", "FnOnce(", "Fn ", "FnMut ", "FnOnce "]
                .iter()
                .any(|f| text.contains(f))
            {
                Receiver::Callable
            } else {
                Receiver::Unknown
            }
        }
        "type_identifier" => {
            let name = rx.text_of(ty);
            if rx.is_type_parameter(at, name) {
                Receiver::Callable
            } else {
                Receiver::Value
            }
        }
        "scoped_type_identifier" | "generic_type" | "primitive_type" => Receiver::Value,
        _ => Receiver::Unknown,
    }
}

/// The argument of the `.when(…)` that follows a backon `.retry(…)` in its method chain.
pub(super) fn backon_when<'t>(rx: &Rx<'t>, retry_call: Node<'t>) -> Option<Node<'t>> {
    let mut current = retry_call;
    while let Some(parent) = rx.parents.of(current) {
        match parent.kind_str() {
            "field_expression" if parent.field("value") == Some(current) => {
                let call = rx.parents.of(parent).filter(|g| g.kind_str() == "call_expression")?;
                if parent.field("field").is_some_and(|f| rx.text_of(f) == "when") {
                    return rx.args(call).first().copied();
                }
                current = call;
            }
            "await_expression" | "try_expression" | "parenthesized_expression" => current = parent,
            _ => return None,
        }
    }
    None
}

/// The names a Rust predicate is written with (`retry::is_contention` → `retry`,
/// `is_contention`; a closure's identifiers and literals; `!` for a negation), so the analysis
/// can tell a contention filter from a connection-loss one.
pub(super) fn predicate_mentions(rx: &Rx, predicate: Node) -> Vec<String> {
    const MAX_MENTIONS: usize = 64;
    let mut out = Vec::new();
    // A closure's parameters: a negation that tests none of them (`!must_exit.load(…) && …`,
    // a shutdown flag) negates no test of the error.
    let params: Vec<&str> = predicate
        .field("parameters")
        .filter(|_| predicate.kind_str() == "closure_expression")
        .map(|parameters| {
            let mut names = Vec::new();
            let mut cursor = parameters.walk();
            'names: loop {
                if cursor.node().kind_str() == "identifier" {
                    names.push(rx.text_of(cursor.node()));
                }
                if cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() || cursor.node() == parameters {
                        break 'names;
                    }
                }
            }
            names
        })
        .unwrap_or_default();
    let tests_a_param = |node: Node| {
        params.is_empty()
            || params.iter().any(|p| {
                let text = rx.text_of(node).as_bytes();
                memchr::memmem::find_iter(text, p.as_bytes()).any(|at| {
                    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
                    !at.checked_sub(1).is_some_and(|i| ident(text[i]))
                        && !text.get(at + p.len()).is_some_and(|b| ident(*b))
                })
            })
    };
    let mut cursor = predicate.walk();
    'walk: loop {
        let node = cursor.node();
        match node.kind_str() {
            "identifier" | "field_identifier" | "type_identifier" | "integer_literal" => {
                out.push(rx.text_of(node).to_string())
            }
            "unary_expression" if rx.text_of(node).starts_with('!') && tests_a_param(node) => out.push("!".into()),
            _ => {}
        }
        if out.len() >= MAX_MENTIONS {
            break;
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == predicate {
                break 'walk;
            }
        }
    }
    out
}

/// What a connection-making method's name ends with: a handle to another service.
const CONNECTION_HANDLES: &[&str] = &[
    "client",
    "connection",
    "conn",
    "session",
    "consumer",
    "channel",
    "pool",
    "reader",
    "subscriber",
    "subscription",
];

/// Whether the call at `span` is the whole value of a `let` (`let x = f(a);`): a value the
/// unit computes, not awaited or `?`-ed.
fn computed_binding(text: &[u8], span: Span) -> bool {
    let (start, end) = (span.start as usize, span.end as usize);
    let (Some(before), Some(after)) = (text.get(..start), text.get(end..)) else {
        return false;
    };
    if after.trim_ascii_start().first() != Some(&b';') {
        return false;
    }
    let statement = before
        .iter()
        .rposition(|b| matches!(b, b';' | b'{' | b'}'))
        .map_or(before, |at| &before[at + 1..]);
    let statement = statement.trim_ascii();
    statement.starts_with(b"let ") && statement.ends_with(b"=") && !statement.ends_with(b"==")
}

/// Calls that shape a result without doing anything of their own.
const NEUTRAL_CALLS: &[&str] = &[
    "map_err",
    "map",
    "context",
    "with_context",
    "wrap_err",
    "clone",
    "to_owned",
    "to_string",
    "into",
    "as_ref",
    "as_str",
    "inspect_err",
    "boxed",
];

/// Whether a retried unit only (re)establishes a connection or a subscription: each of its
/// steps connects (`connect_async(url)`, `TcpStream::connect(addr)`, `client.subscribe(topic)`)
/// claims one from a pool (`pool.claim()`, `pool.acquire()`)
/// or builds a value of a type (`Client::new(&url)`, fallible and awaited), and none sends a
/// request, runs SQL or calls anything else. Such a retry restarts a connection for the
/// work that uses it (a reconnect supervisor), not a request whose replay could apply twice.
pub(super) fn reconnects(rx: &Rx, unit: &Unit) -> bool {
    // `pool.claim()`, `pool.acquire()`: a connection from a pool, whose failures are that no
    // backend is there yet (or the pool is closed).
    let connect_verb = |method: &str| {
        let method = method.to_ascii_lowercase();
        ["connect", "reconnect", "subscribe", "resubscribe"]
            .iter()
            .any(|verb| method.starts_with(verb))
            || matches!(method.as_str(), "claim" | "acquire")
            // `create_table_reader()`, `new_client()`, `open_session()`: a handle that reads or
            // talks to another service, made (not a table, a stream or a writer, which make
            // something there).
            || (["create_", "new_", "open_", "build_", "make_", "get_"].iter().any(|p| method.starts_with(p))
                && CONNECTION_HANDLES.iter().any(|h| method.ends_with(h)))
    };
    let mut connects = false;
    for op in &unit.ops {
        let OpKind::Call { method, .. } = &op.kind else {
            return false;
        };
        // Nor does wrapping the error for the retry (`BackoffError::transient(e)`).
        if NEUTRAL_CALLS.contains(&method.as_str()) || matches!(method.as_str(), "transient" | "permanent") {
            continue;
        }
        // Nor a value computed for the connection and bound to a `let`, neither awaited nor
        // `?`-ed (`let endpoint = Client::addr_to_endpoint(addr);`).
        if computed_binding(rx.text, op.span) {
            continue;
        }
        let text = rx
            .text
            .get(op.span.start as usize..op.span.end as usize)
            .unwrap_or_default();
        let callee = String::from_utf8_lossy(text);
        let callee = callee.split('(').next().unwrap_or_default();
        let path: Vec<&str> = callee.split("::").map(str::trim).collect();
        // `Client::new(…)`, `WsClient::try_new(…)`: a type's constructor.
        let constructor = path.len() >= 2
            && path[path.len() - 2].starts_with(|c: char| c.is_ascii_uppercase())
            && matches!(method.as_str(), "new" | "try_new" | "open" | "dial");
        if !(connect_verb(method) || constructor) {
            return false;
        }
        connects = true;
    }
    connects
}

/// Whether `body` makes an error transient (backoff's `Error::transient(…)` /
/// `Error::Transient { … }`, tokio-retry2's `RetryError::transient(…)`) and every one it makes
/// is of a value of its own (`transient(Error::NotReady)`, `transient("not yet")`), none of an
/// error it caught: a name a closure's parameters or a pattern (`Err(e) =>`, `if let Err(e)`)
/// bind inside `body`, or the constructor handed over by name (`.map_err(Error::transient)`).
fn transient_by_choice<'t>(rx: &Rx<'t>, body: Node<'t>) -> bool {
    let is_transient = |name: &str| matches!(name, "transient" | "Transient" | "to_transient");
    let last = |node: Node| match node.kind_str() {
        "scoped_identifier" | "scoped_type_identifier" => node.field("name").map(|n| rx.text_of(n)),
        "identifier" | "type_identifier" => Some(rx.text_of(node)),
        _ => None,
    };
    let mut any = false;
    let mut cursor = body.walk();
    loop {
        let node = cursor.node();
        match node.kind_str() {
            // `.map_err(Error::transient)`: every error of the call, converted.
            "scoped_identifier" | "identifier"
                if last(node).is_some_and(is_transient)
                    && rx.parents.of(node).is_some_and(|p| p.kind_str() == "arguments") =>
            {
                return false;
            }
            // `.map_transient_err()`: the same, as a method.
            "field_identifier" if rx.text_of(node) == "map_transient_err" => return false,
            "call_expression" | "struct_expression" => {
                let made = match node.kind_str() {
                    "call_expression" => node.field("function"),
                    _ => node.field("name"),
                };
                if made.and_then(last).is_some_and(is_transient) {
                    let value = match node.kind_str() {
                        "call_expression" => node.field("arguments"),
                        _ => node.field("body"),
                    };
                    if value.is_some_and(|v| mentions_caught(rx, v, node, body)) {
                        return false;
                    }
                    any = true;
                }
            }
            _ => {}
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, body) {
            return any;
        }
    }
}

/// Whether `body` tests an error it caught and succeeds on some of them: `Err(e) => { if
/// e.status().is_some() { return Ok(()) } … }` (any answer means the server is up), `Err(e) if
/// e.is_not_found() => Ok(None)`. The errors that end the retry are chosen: a predicate.
fn ends_on_some_errors<'t>(rx: &Rx<'t>, body: Node<'t>) -> bool {
    let succeeds = |node: Option<Node<'t>>| node.is_some_and(|n| rx.text_of(n).contains("Ok("));
    let mut cursor = body.walk();
    loop {
        let node = cursor.node();
        let tested = match node.kind_str() {
            "if_expression" => {
                node.field("condition")
                    .is_some_and(|c| mentions_caught(rx, c, node, body))
                    && (succeeds(node.field("consequence")) || succeeds(node.field("alternative")))
            }
            "match_arm" => {
                let guard = node.field("pattern").and_then(|p| p.field("condition"));
                guard.is_some_and(|g| mentions_caught(rx, g, g, body)) && succeeds(node.field("value"))
            }
            _ => false,
        };
        if tested {
            return true;
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, body) {
            return false;
        }
    }
}

/// Whether `value` (at `at`) names something a closure's parameters or an `Err(…)` pattern
/// bind between `at` and `body`: an error the operation caught.
fn mentions_caught<'t>(rx: &Rx<'t>, value: Node<'t>, at: Node<'t>, body: Node<'t>) -> bool {
    let mut bound = Vec::new();
    for node in rx.parents.ancestors(at) {
        let pattern = match node.kind_str() {
            "closure_expression" => node.field("parameters"),
            // `Err(e) =>`, `if let Err(e) = …`: an error; `Ok(response) =>` is not.
            "match_arm" | "let_condition" | "if_let_expression" => {
                node.field("pattern").filter(|p| rx.text_of(*p).contains("Err"))
            }
            _ => None,
        };
        if let Some(pattern) = pattern {
            rx.pattern_names(pattern, &mut bound);
        }
        if node == body {
            break;
        }
    }
    if bound.is_empty() {
        return false;
    }
    predicate_mentions(rx, value).iter().any(|m| bound.contains(m))
}

/// Whether `node` holds a `?` (a `try_expression`).
fn has_try(node: Node) -> bool {
    let mut cursor = node.walk();
    loop {
        if cursor.node().kind_str() == "try_expression" {
            return true;
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, node) {
            return false;
        }
    }
}

/// The Rust grammar's ids of the node kinds the walk tells apart.
struct Kinds {
    call_expression: u16,
    let_declaration: u16,
    field_initializer: u16,
    for_expression: u16,
    token_tree: u16,
    field_expression: u16,
    /// The field id of `value`.
    value: u16,
    /// The kinds [`is_test_item`] can be true of.
    items: [u16; 5],
}

fn kinds() -> &'static Kinds {
    static KINDS: std::sync::OnceLock<Kinds> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_rust::LANGUAGE.into();
        let id = |kind: &str| language.id_for_node_kind(kind, true);
        Kinds {
            call_expression: id("call_expression"),
            let_declaration: id("let_declaration"),
            field_initializer: id("field_initializer"),
            for_expression: id("for_expression"),
            token_tree: id("token_tree"),
            field_expression: id("field_expression"),
            value: language.field_id_for_name("value").map_or(0, |f| f.get()),
            items: ["function_item", "mod_item", "impl_item", "const_item", "static_item"].map(id),
        }
    })
}

/// Moves the cursor to the node's first named child; `false` (the cursor where it was) when
/// it has none.
fn first_named_child(cursor: &mut tree_sitter::TreeCursor) -> bool {
    if !cursor.goto_first_child() {
        return false;
    }
    loop {
        if cursor.node().is_named() {
            return true;
        }
        if !cursor.goto_next_sibling() {
            cursor.goto_parent();
            return false;
        }
    }
}

/// Moves the cursor to the next named sibling; `false` when there is none (the cursor then on
/// a later sibling, or where it was).
fn next_named_sibling(cursor: &mut tree_sitter::TreeCursor) -> bool {
    while cursor.goto_next_sibling() {
        if cursor.node().is_named() {
            return true;
        }
    }
    false
}
