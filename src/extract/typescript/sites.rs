//! Effect retry sites: `Effect.retry`, `Effect.retryOrElse`, `Stream.retry`,
//! `HttpClient.retry`, `HttpClient.retryTransient`, with their policy, predicate and retried
//! unit.

use super::*;

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
    /// `HttpClient.retry(schedule | options)`: every request of the client, replayed as
    /// `Effect.retry` replays an effect.
    HttpRetry,
    /// `Activity.retry(activity, options)` (`@effect/workflow` on 3.x, where it is typed as
    /// `Effect.retry`; `effect/unstable/workflow` on 4.x, whose options have no `schedule`):
    /// the activity's effect, replayed as `Effect.retry` replays it, each attempt numbered.
    ActivityRetry,
}

impl RetryKind {
    fn callee(self) -> &'static str {
        match self {
            RetryKind::EffectRetry => "Effect.retry",
            RetryKind::EffectRetryOrElse => "Effect.retryOrElse",
            RetryKind::StreamRetry => "Stream.retry",
            RetryKind::HttpRetryTransient => "HttpClient.retryTransient",
            RetryKind::HttpRetry => "HttpClient.retry",
            RetryKind::ActivityRetry => "Activity.retry",
        }
    }
}

/// Callee paths that are job facts by their names alone.
const JOB_PATHS: &[&[&str]] = &[&["Jobs", "make"], &["Date", "now"]];

/// An Effect module member extraction reads, with the module's name kept static; `None` for
/// every other member (most calls), so nothing is allocated for them.
fn interesting(module: &str, member: &str) -> Option<(&'static str, String)> {
    let module: &'static str = match (module, member) {
        (
            "Effect",
            "retry" | "retryOrElse" | "fn" | "fnUntraced" | "repeat" | "repeatOrElse" | "schedule" | "forever",
        ) => "Effect",
        ("Stream", "retry" | "tick") => "Stream",
        ("HttpClient", "retryTransient" | "retry") => "HttpClient",
        ("Activity", "retry") => "Activity",
        ("ExecutionPlan", "make") => "ExecutionPlan",
        ("Schedule", "cron") => "Schedule",
        ("ClusterCron", "make") => "ClusterCron",
        ("Layer", "effect" | "succeed" | "scoped" | "sync" | "function") => "Layer",
        ("Ref", _) => "Ref",
        ("SynchronizedRef", _) => "SynchronizedRef",
        ("SubscriptionRef", _) => "SubscriptionRef",
        _ => return None,
    };
    Some((module, member.to_string()))
}

/// Words kept of one predicate's body.
const MAX_PREDICATE_TOKENS: usize = 256;

/// The methods a request is sent with through a named client.
const CLIENT_METHODS: &[&str] = &[
    "get", "post", "put", "patch", "del", "delete", "head", "options", "execute",
];

impl<'t> Extractor<'t, '_> {
    /// Everything a call can be, decided once per call from its callee's names: the scope it
    /// opens (returned: an `Effect.fn`, a layer, a handler registration), a request through a
    /// named client, a retry, a job fact. Most calls are none of these, and cost a name path.
    pub(super) fn call(&mut self, node: Node<'t>) -> Option<Scope<'t>> {
        let callee = node.field("function")?;
        let arguments = node.field("arguments")?;
        // The callee's names as written; whether the first is a local (which shadows any
        // import) is asked only of the few callees that can matter.
        let written = self.written_path(callee);
        let effect_pair = written
            .as_deref()
            .and_then(|p| self.facts.effect_member_path(p))
            .and_then(|(module, member)| interesting(module, member));
        let path = match &written {
            Some(p) if effect_pair.is_some() || JOB_PATHS.iter().any(|j| p.ends_with(j)) => {
                self.lookup_local(p[0]).is_none().then(|| p.clone())
            }
            _ => None,
        };
        let effect_call = effect_pair.is_some();
        let (module, member) = match (&path, effect_pair) {
            (Some(_), Some((module, member))) => (Some(module), Some(member)),
            _ => (None, None),
        };
        let effect = module.zip(member.as_deref());
        let container = self.call_container(callee, arguments, effect);
        // A client is usually a local (`const client = yield* HttpClient.HttpClient`).
        let method = (callee.kind_str() == "member_expression")
            .then(|| callee.field("property"))
            .flatten()
            .map(|p| self.text_of(p));
        if method.is_some_and(|m| CLIENT_METHODS.contains(&m)) {
            if let Some(request) = clients::client_request(self.text, node, &self.lineage) {
                self.facts.client_requests.push(request);
            }
        }
        if written.as_deref() == Some(&["pipe"][..]) {
            let requests = clients::piped_client_requests(self.text, arguments);
            self.facts.client_requests.extend(requests);
        }
        let retry = match effect {
            Some(("Effect", "retry")) => Some(RetryKind::EffectRetry),
            Some(("Effect", "retryOrElse")) => Some(RetryKind::EffectRetryOrElse),
            Some(("Stream", "retry")) => Some(RetryKind::StreamRetry),
            Some(("HttpClient", "retryTransient")) => Some(RetryKind::HttpRetryTransient),
            Some(("HttpClient", "retry")) => Some(RetryKind::HttpRetry),
            Some(("Activity", "retry")) => Some(RetryKind::ActivityRetry),
            _ => None,
        };
        if let Some(kind) = retry {
            self.retry_site(node, callee, kind);
        }
        if effect == Some(("ExecutionPlan", "make")) {
            self.execution_plan(node, callee, arguments);
        }
        if !effect_call && written.is_some() {
            self.passed_policy(node, callee, arguments);
        }
        if let Some(path) = &path {
            self.job_call(node, arguments, path, effect);
        }
        if method.is_some_and(|m| m == "get" || m == "set") {
            self.map_cursor(node, callee, arguments);
        }
        // `setInterval` in a service that uses Effect; a `.tsx` component's timers are UI.
        let interval = written.as_deref() == Some(&["setInterval"][..])
            && self.lookup_local("setInterval").is_none()
            && self.facts.uses_effect
            && self.facts.language != crate::source::Language::Tsx;
        if interval
            || matches!(
                effect,
                Some(("Effect", "repeat" | "repeatOrElse" | "schedule" | "forever") | ("Stream", "tick"))
            )
        {
            self.poll_call(node, callee, effect, interval);
        }
        container
    }

    fn retry_site(&mut self, node: Node<'t>, callee: Node<'t>, kind: RetryKind) {
        if node.has_error() {
            // A retry whose own arguments did not parse: say so rather than guess its policy.
            self.note_unanalysed(node, &format!("a call of `{}`", kind.callee()));
            return;
        }
        let Some(arguments) = node.field("arguments").filter(|a| a.kind_str() == "arguments") else {
            return;
        };
        let mut cursor = arguments.walk();
        let args: Vec<Node> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
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
        self.truncated.set(false);
        let policy = policy_index.map(|i| self.expr(args[i], 0));
        if self.truncated.get() {
            // A policy nested deeper than the conversion follows is unknown: never silently.
            let (line, column) = self.facts.position(Self::span(node).start);
            self.facts.note(
                Some(line),
                format!(
                    "not analysed: the policy of the retry at {line}:{column} nests deeper than retrylint follows ({MAX_EXPR_DEPTH} levels)"
                ),
            );
        }
        let target = units::retried_target(self.text, node, &args, policy_index, &self.lineage);
        if kind == RetryKind::EffectRetry {
            self.supervisor(node, callee, target.as_ref().map_or(&[][..], |(roots, _)| roots));
        }
        let target = target.map(|(roots, name)| {
            let enclosing = roots.first().map(|first| self.blocks.around(self.text, *first));
            units::unit(
                self.text,
                &roots,
                name,
                &self.bindings,
                self.lineage.path(),
                enclosing.as_deref().map(Vec::as_slice),
            )
        });
        // `HttpClient.transformResponse(Effect.retry(…))` makes every request of the client
        // it builds retry, as `HttpClient.retryTransient` does.
        let transform = (kind == RetryKind::EffectRetry)
            .then(|| self.enclosing_transform_response(node))
            .flatten();
        if kind == RetryKind::HttpRetryTransient || transform.is_some() {
            if let Some(client) = clients::bound_client_name(self.text, transform.unwrap_or(node), &self.lineage) {
                self.facts.retrying_clients.push(client);
            }
        }
        let mut predicate = match (&policy, kind) {
            (_, RetryKind::HttpRetryTransient) => Predicate::Transient,
            (None, _) => Predicate::Unknown,
            (Some(policy), _) => self.predicate(policy),
        };
        // What a predicate function of this file tests: its body's names, strings, numbers
        // and negations (`(e) => e.status >= 500`, a local `isRetryable` with a block body).
        if let (Predicate::Filter { mentions, .. }, Some(index)) = (&mut predicate, policy_index) {
            if let Some(filter) = self.filter_node(args[index]) {
                mentions.extend(self.predicate_tokens(filter));
            }
        }
        let retried = match kind {
            RetryKind::StreamRetry => Retried::Stream,
            RetryKind::HttpRetryTransient | RetryKind::HttpRetry => Retried::Client,
            RetryKind::EffectRetry if transform.is_some() => Retried::Client,
            RetryKind::EffectRetry | RetryKind::EffectRetryOrElse | RetryKind::ActivityRetry => Retried::Operation,
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
            containers: self.containers(),
            unit: target,
        });
    }

    /// A call that passes a policy in an options object (`retryTransientErrors(effect, {
    /// schedule: backoff })`): recorded for analysis to judge at the call when the callee is
    /// a project helper that retries with that option. Only a key that names a policy
    /// (`schedule`, or one with `retry` or `schedule` in it) and a value that can be one (a
    /// name, a member, a call) are read: flags and numbers are not policies.
    fn passed_policy(&mut self, node: Node<'t>, callee: Node<'t>, arguments: Node<'t>) {
        if arguments.kind_str() != "arguments" || node.has_error() {
            return;
        }
        let mut cursor = arguments.walk();
        let args: Vec<Node<'t>> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
            .collect();
        let found = args.iter().enumerate().find_map(|(position, arg)| {
            if arg.kind_str() != "object" {
                return None;
            }
            let mut inner = arg.walk();
            let pairs: Vec<Node<'t>> = arg.named_children(&mut inner).collect();
            pairs.into_iter().find_map(|pair| {
                let key = match pair.kind_str() {
                    "pair" => super::string_value(self.text_of(pair.field("key")?)),
                    "shorthand_property_identifier" => self.text_of(pair).to_string(),
                    _ => return None,
                };
                let lower = key.to_ascii_lowercase();
                if !(lower.contains("schedule") || lower.contains("retry")) {
                    return None;
                }
                let value = pair.field("value").unwrap_or(pair);
                matches!(
                    value.kind_str(),
                    "identifier" | "shorthand_property_identifier" | "member_expression" | "call_expression"
                )
                .then_some((position, key))
            })
        });
        let Some((arg, key)) = found else { return };
        let callee = self.expr(callee, 0);
        if !matches!(callee, Expr::Ident(..) | Expr::Member(..) | Expr::Local { .. }) {
            return;
        }
        let args = args.iter().map(|a| self.expr(*a, 0)).collect();
        self.facts.passed_policies.push(crate::facts::PassedPolicy {
            span: Self::span(node),
            callee,
            args,
            arg,
            key,
        });
    }

    /// `ExecutionPlan.make(step, …)`: each step that gives `attempts` or a `schedule` retries
    /// its `provide` that way before the plan falls back to the next step (as
    /// `Effect.retry({ schedule, times: attempts - 1, while })`, the first try included in
    /// `attempts`). One retry site per such step, its options the step object; a step with
    /// neither is tried once. What a plan replays is the effect `Effect.withExecutionPlan` is
    /// given elsewhere, so a step without `while` says nothing of its predicate (unknown).
    fn execution_plan(&mut self, node: Node<'t>, callee: Node<'t>, arguments: Node<'t>) {
        if node.has_error() || arguments.kind_str() != "arguments" {
            return;
        }
        let mut cursor = arguments.walk();
        let steps: Vec<Node<'t>> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() == "object")
            .collect();
        for step in steps {
            let options = self.expr(step, 0);
            let Expr::Object(props, _) = &options else { continue };
            if props.iter().any(|p| p.key == "...") || !props.iter().any(|p| p.key == "attempts" || p.key == "schedule")
            {
                continue;
            }
            let predicate = match self.predicate(&options) {
                Predicate::None => Predicate::Unknown,
                other => other,
            };
            self.facts.retry_sites.push(RetrySite {
                span: Self::span(step),
                callee_span: Self::span(callee),
                callee: "ExecutionPlan.make".to_string(),
                library: Library::Effect,
                retried: Retried::Operation,
                policy: PolicyArg::Effect(options),
                predicate,
                containers: self.containers(),
                unit: None,
            });
        }
    }

    /// Which failures an Effect retry replays: its `while`/`until` option, or a bare schedule
    /// that reads its input (`Schedule.whileInput(isContention)`). A spread of options may
    /// carry a predicate: unknown.
    pub(super) fn predicate(&self, policy: &Expr) -> Predicate {
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

    /// The `while` / `until` value of an options object.
    fn filter_node(&self, options: Node<'t>) -> Option<Node<'t>> {
        if options.kind_str() != "object" {
            return None;
        }
        let mut cursor = options.walk();
        let pairs: Vec<Node<'t>> = options.named_children(&mut cursor).collect();
        pairs.into_iter().rev().find_map(|pair| {
            let key = pair.field("key")?;
            matches!(self.text_of(key), "while" | "until")
                .then(|| pair.field("value"))
                .flatten()
        })
    }

    /// The words a predicate tests: for a function written here or bound in this file (a
    /// local, a top-level `const` or `function`), the names, strings and numbers of its body,
    /// and `!` for a negation (`!isPermanent(e)`, `e._tag !== "NotFound"`).
    fn predicate_tokens(&self, filter: Node<'t>) -> Vec<String> {
        let function = match filter.kind_str() {
            "identifier" => {
                let name = self.text_of(filter);
                match self.lookup_local(name) {
                    Some((_, Some(value))) => Some(value),
                    Some((_, None)) => None,
                    None => self.top_level_value(name),
                }
            }
            "member_expression" => None,
            _ => Some(filter),
        };
        let Some(function) = function else {
            return Vec::new();
        };
        let body = match function.kind_str() {
            "arrow_function" | "function_expression" | "function" | "function_declaration" => {
                function.field("body").unwrap_or(function)
            }
            _ => function,
        };
        let mut out = Vec::new();
        let mut cursor = body.walk();
        loop {
            let node = cursor.node();
            match node.kind_str() {
                "identifier" | "property_identifier" | "shorthand_property_identifier" | "number" => {
                    out.push(self.text_of(node).to_string())
                }
                "string" => out.push(string_value(self.text_of(node))),
                "unary_expression" if node.field("operator").is_some_and(|o| o.kind_str() == "!") => {
                    out.push("!".into())
                }
                "binary_expression"
                    if node
                        .field("operator")
                        .is_some_and(|o| matches!(o.kind_str(), "!==" | "!=")) =>
                {
                    out.push("!".into())
                }
                _ => {}
            }
            if out.len() >= MAX_PREDICATE_TOKENS {
                break;
            }
            if !matches!(node.kind_str(), "string" | "comment") && cursor.goto_first_child() {
                continue;
            }
            if !super::step_past(&mut cursor, body) {
                break;
            }
        }
        out
    }

    /// The value of a top-level `const NAME = …` or `function NAME`.
    pub(super) fn top_level_value(&self, name: &str) -> Option<Node<'t>> {
        let root = self.lineage.root_node()?;
        self.top_level(root).value(name)
    }

    /// Notes an error region when a token the rules care about is among the pieces the
    /// parser could not place (its direct leaf children).
    pub(super) fn note_error_region(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let unplaced = node
            .children(&mut cursor)
            .filter(|c| c.child_count() == 0 && c.kind_str() != "comment")
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

    pub(super) fn note_unanalysed(&mut self, node: Node<'t>, what: &str) {
        let (line, column) = self.facts.position(node.start_byte() as u32);
        self.facts.note(
            Some(line),
            format!("not analysed: parse error at {line}:{column} in {what}"),
        );
    }
}

impl<'t> Extractor<'t, '_> {
    /// The `HttpClient.transformResponse(…)` call a retry is written in (directly, or in the
    /// callback it is given), when there is one.
    fn enclosing_transform_response(&self, retry: Node<'t>) -> Option<Node<'t>> {
        let mut current = retry;
        for _ in 0..12 {
            let parent = self.parent(current)?;
            if parent.kind_str() == "call_expression" {
                let callee = parent.field("function").map(|c| self.text_of(c)).unwrap_or("");
                if callee.ends_with("transformResponse") {
                    return Some(parent);
                }
            }
            current = parent;
        }
        None
    }
}
