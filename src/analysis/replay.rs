//! What a retry replays, and under whom: the unit-level questions of decisions 1–3.
//! Reads unit facts (see `facts::Unit`) with the configured vocabulary.

use crate::config::Vocabulary;
use crate::facts::{ArgKeys, Expr, FileFacts, ImportKind, OpKind, Predicate, RetrySite, SqlClass, Unit, UnitOp};
use crate::index::{FileId, Index, Resolved};
use crate::source::Span;

/// How deep calls to same-file units are followed.
const MAX_CALL_DEPTH: usize = 4;

/// What a retry's policy retries, by the names it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The contention policy (with the contention predicate, or none).
    Contention,
    /// The transient policy, or any policy filtered on connection loss.
    Transient,
    Other,
}

/// Whether a predicate mentions one of `names`, in either case convention: Rust's
/// `is_contention` is the vocabulary's `isContention`.
fn mentions(mentions: &[String], names: &[String]) -> bool {
    let key = |name: &str| name.replace('_', "").to_ascii_lowercase();
    mentions
        .iter()
        .any(|m| names.contains(m) || names.iter().any(|n| key(n) == key(m)))
}

pub fn role(site: &RetrySite, vocabulary: &Vocabulary) -> Role {
    let predicate = match &site.predicate {
        Predicate::Filter { mentions, .. } => Some(mentions.as_slice()),
        _ => None,
    };
    let policy = site.policy_name();
    let transient_schedule = policy.is_some_and(|n| vocabulary.transient_policies.iter().any(|p| p == n));
    let transient_predicate = predicate.is_some_and(|p| {
        mentions(p, &vocabulary.transient_predicates)
            || p.iter()
                .any(|m| m.contains("Connection") || m.starts_with("is_connection"))
    });
    if transient_schedule || transient_predicate {
        return Role::Transient;
    }
    let contention_schedule = policy.is_some_and(|n| vocabulary.contention_policies.iter().any(|p| p == n));
    let contention_predicate = predicate.is_some_and(|p| mentions(p, &vocabulary.contention_predicates));
    if (contention_schedule && (predicate.is_none() || contention_predicate))
        || (contention_predicate && site.has_schedule())
    {
        Role::Contention
    } else {
        Role::Other
    }
}

/// Whether a retry replays connection loss, by what its predicate says (decision 2): only a
/// contention predicate is narrow. No predicate, `() => true`, `isRetryable…`, a 429/5xx
/// status test, a negated test (`!isPermanent(e)`) or a timeout/network tag all replay a
/// lost connection too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replays {
    /// Only contention: the database rolled the attempt back.
    Contention,
    /// Connection loss among other failures; why, in the user's words.
    ConnectionLoss(String),
    /// A predicate the analysis cannot read.
    Unknown,
}

/// Words of a predicate that test contention errors.
const CONTENTION_WORDS: &[&str] = &[
    "Deadlock",
    "Serialization",
    "LockTimeout",
    "SQLITE_BUSY",
    "40001",
    "40P01",
];
/// Words of a predicate that test timeouts and network failures.
const NETWORK_WORDS: &[&str] = &[
    "Timeout",
    "Network",
    "Transport",
    "Socket",
    "ECONNRESET",
    "ECONNREFUSED",
    "ETIMEDOUT",
    "EPIPE",
    "Unavailable",
    "RequestError",
    // Rust: reqwest's `is_timeout()`/`is_connect()`, `io::ErrorKind`'s connection kinds.
    "is_timeout",
    "is_connect",
    "TimedOut",
    "ConnectionReset",
    "ConnectionRefused",
    "ConnectionAborted",
    "BrokenPipe",
];
/// Statuses a retry of an HTTP call tests for: rate limits, timeouts and server errors.
const RETRIED_STATUSES: &[&str] = &[
    "429",
    "408",
    "500",
    "502",
    "503",
    "504",
    // Rust: `http::StatusCode`'s `is_server_error()` and constants.
    "is_server_error",
    "TOO_MANY_REQUESTS",
    "INTERNAL_SERVER_ERROR",
    "BAD_GATEWAY",
    "SERVICE_UNAVAILABLE",
];

/// What a site's failures filter lets through: its role by name first, then its predicate.
pub fn replays(role: Role, predicate: &Predicate, vocabulary: &Vocabulary) -> Replays {
    match role {
        Role::Transient => return Replays::ConnectionLoss("the connection-loss policy".into()),
        Role::Contention => return Replays::Contention,
        Role::Other => {}
    }
    let mentions = match predicate {
        Predicate::None => return Replays::ConnectionLoss("it has no predicate, so every failure is replayed".into()),
        Predicate::Transient => {
            return Replays::ConnectionLoss("it retries transient failures, connection loss among them".into())
        }
        Predicate::Unknown => return Replays::Unknown,
        Predicate::Filter { always: true, .. } => {
            return Replays::ConnectionLoss("its predicate is always true, so every failure is replayed".into())
        }
        Predicate::Filter { mentions, .. } => mentions,
    };
    if let Some(name) = mentions.iter().find(|m| is_retryable_name(m)) {
        return Replays::ConnectionLoss(format!(
            "`{name}` answers whether a later attempt could succeed, not whether a replay is safe"
        ));
    }
    if mentions.iter().any(|m| RETRIED_STATUSES.contains(&m.as_str())) {
        return Replays::ConnectionLoss(
            "it retries 429/5xx responses, and a lost or failed response may follow an applied write".into(),
        );
    }
    if let Some(tag) = mentions.iter().find(|m| NETWORK_WORDS.iter().any(|w| m.contains(w))) {
        return Replays::ConnectionLoss(format!("it retries `{tag}`, a timeout or network failure"));
    }
    if mentions.iter().any(|m| m == "!") {
        return Replays::ConnectionLoss(
            "its predicate is a negated test, which replays every failure it does not name".into(),
        );
    }
    let contention = mentions
        .iter()
        .any(|m| vocabulary.contention_predicates.contains(m) || CONTENTION_WORDS.iter().any(|w| m.contains(w)));
    if contention {
        Replays::Contention
    } else {
        Replays::Unknown
    }
}

/// `isRetryable`, `isRetryableError`, `retryable`, but not `isNonRetryable`.
fn is_retryable_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("retryable")
        && !["nonretryable", "notretryable", "unretryable"]
            .iter()
            .any(|n| lower.contains(n))
}

/// A step of a unit that makes a replay unsafe, in the user's words.
#[derive(Debug, Clone)]
pub struct Finding {
    pub span: Span,
    pub what: String,
    /// The step is a request to another service (HTTP, GraphQL), not a database write: what
    /// is lost is the response, and no contention reaches it.
    pub remote: bool,
}

/// The first operation of `unit` that appends: replaying it can apply it twice. Calls to
/// units of the same file are followed, and calls to units imported from another file one
/// level across.
pub fn appends(index: &Index, file: FileId, unit: &Unit, vocabulary: &Vocabulary) -> Option<Finding> {
    appends_at(index, file, unit, vocabulary, 0, true)
}

fn appends_at(
    index: &Index,
    file: FileId,
    unit: &Unit,
    vocabulary: &Vocabulary,
    depth: usize,
    cross: bool,
) -> Option<Finding> {
    let facts = index.facts(file)?;
    for op in &unit.ops {
        // A call to a unit the analysis can see is judged by what that unit does, not by its name.
        match called_unit(index, file, facts, unit, op, cross) {
            None => {
                if let Some(what) = appending(op, vocabulary) {
                    return Some(Finding {
                        span: op.span,
                        what,
                        remote: is_remote(op),
                    });
                }
            }
            // A call that carries its own key (`orders.insert({ id: orderId, … })`) is a
            // keyed create however the callee writes it: a replay is recognised.
            Some(_) if call_is_keyed(op, vocabulary) => {}
            Some((target, callee)) if depth < MAX_CALL_DEPTH => {
                let still_cross = cross && target == file;
                if let Some(found) = appends_at(index, target, callee, vocabulary, depth + 1, still_cross) {
                    // Point at the call in this unit; name what the callee does.
                    return Some(Finding {
                        span: op.span,
                        what: format!("{} (through `{}`)", found.what, callee.name.as_deref().unwrap_or("?")),
                        remote: found.remote,
                    });
                }
                // A service method whose writes the analysis cannot read (an ORM it does not
                // model, another service) is judged by its name, as an unresolved call is.
                if through_service(unit, op) && !writes_visibly(callee) {
                    if let Some(what) = appending(op, vocabulary) {
                        return Some(Finding {
                            span: op.span,
                            what,
                            remote: false,
                        });
                    }
                }
            }
            Some(_) => {}
        }
    }
    None
}

/// An HTTP request or a GraphQL operation: a call to another service.
fn is_remote(op: &UnitOp) -> bool {
    matches!(op.kind, OpKind::Http { .. } | OpKind::GraphQl { .. })
}

/// `orders.insert(…)` where the unit bound `orders = yield* Orders`.
fn through_service(unit: &Unit, op: &UnitOp) -> bool {
    matches!(&op.kind, OpKind::Call { receiver: Some(r), .. } if unit.services.iter().any(|(local, _)| local == r))
}

/// A unit with a write the analysis can read: SQL other than a `SELECT`, an HTTP request, a
/// GraphQL document.
fn writes_visibly(unit: &Unit) -> bool {
    unit.ops.iter().any(|op| match &op.kind {
        OpKind::Sql(class) => *class != SqlClass::Select,
        OpKind::Http { .. } | OpKind::GraphQl { .. } => true,
        _ => false,
    })
}

/// How a call's arguments identify what it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Identity {
    /// An idempotency key, or the row's own id made before the unit: a replay is recognised.
    Keyed,
    /// The object sent is visible and carries neither.
    Unkeyed,
    /// Nothing visible.
    Unknown,
}

/// Lowercase without `-`, `_`: `Idempotency-Key` and `idempotency_key` read alike.
fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `videos` → `video`, `entries` → `entry`.
fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if word.ends_with("ss") {
        word.to_string()
    } else {
        word.strip_suffix('s').unwrap_or(word).to_string()
    }
}

fn identity(keys: Option<&ArgKeys>, entity: Option<&str>, vocabulary: &Vocabulary) -> Identity {
    let Some(keys) = keys else {
        return Identity::Unknown;
    };
    let unseen = if keys.open {
        Identity::Unknown
    } else {
        Identity::Unkeyed
    };
    let idempotency: Vec<String> = vocabulary.idempotency_keys.iter().map(|k| normalized(k)).collect();
    let own = entity.map(|e| format!("{}id", normalized(&singular(e))));
    let keyed = keys.keys.iter().any(|key| {
        let name = normalized(&key.name);
        // A key made inside the replayed unit is new on every replay: it identifies nothing.
        !key.fresh
            && (idempotency.iter().any(|k| name.ends_with(k.as_str()))
                || name == "id"
                || own.as_deref() == Some(name.as_str()))
    });
    if keyed {
        Identity::Keyed
    } else {
        unseen
    }
}

/// Effect's in-process structures (`PubSub.publish(hub, x)`, `Queue.offer`, `Mailbox`): what
/// they hold lives in this process and dies with it, so a replay that publishes again
/// duplicates nothing stored. A project's own `events.publish` is still an append.
fn in_memory(receiver: &str) -> bool {
    const MODULES: &[&str] = &[
        "PubSub",
        "Queue",
        "Mailbox",
        "TPubSub",
        "TQueue",
        "Deferred",
        "Ref",
        "SynchronizedRef",
        "SubscriptionRef",
    ];
    MODULES.contains(&receiver)
}

/// The verb prefix of `method` among `verbs` (`sendEmail` → `send`), at a word boundary; and
/// what follows it (`Email`).
fn verb<'m>(method: &'m str, verbs: &[String]) -> Option<&'m str> {
    verbs.iter().find_map(|v| {
        method
            .strip_prefix(v.as_str())
            .filter(|rest| rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_uppercase() || c == '_'))
    })
}

/// `rest.createMessage` is about a message; `videos.create` (and `orders.insert`) about a
/// video (an order): the entity whose own id a call may carry.
fn call_entity(receiver: Option<&str>, rest: &str) -> Option<String> {
    let rest = rest.trim_start_matches('_');
    if rest.is_empty() {
        receiver.map(|r| r.rsplit('.').next().unwrap_or(r).to_string())
    } else {
        Some(rest.to_string())
    }
}

/// A call whose object argument carries an idempotency key or the entity's own id.
fn call_is_keyed(op: &UnitOp, vocabulary: &Vocabulary) -> bool {
    let OpKind::Call {
        receiver,
        method,
        client_id: Some(keys),
    } = &op.kind
    else {
        return false;
    };
    let rest = verb(method, &vocabulary.create_calls)
        .or_else(|| verb(method, &vocabulary.append_calls))
        .unwrap_or("");
    identity(
        Some(keys),
        call_entity(receiver.as_deref(), rest).as_deref(),
        vocabulary,
    ) == Identity::Keyed
}

fn appending(op: &UnitOp, vocabulary: &Vocabulary) -> Option<String> {
    match &op.kind {
        OpKind::Call {
            receiver,
            method,
            client_id,
        } => {
            let called = match receiver {
                Some(r) => format!("{r}.{method}"),
                None => method.clone(),
            };
            let entity = |rest: &str| call_entity(receiver.as_deref(), rest);
            if receiver.as_deref().is_some_and(in_memory) {
                return None;
            }
            if let Some(rest) = verb(method, &vocabulary.append_calls) {
                // An object built from a spread may carry a key the analysis cannot see.
                let open = client_id.as_ref().is_some_and(|k| k.open);
                return match identity(client_id.as_ref(), entity(rest).as_deref(), vocabulary) {
                    Identity::Keyed => None,
                    Identity::Unknown if open => None,
                    _ => Some(format!("`{called}` appends")),
                };
            }
            let rest = verb(method, &vocabulary.create_calls)?;
            // Only a create whose argument the analysis can see without a client id.
            (identity(client_id.as_ref(), entity(rest).as_deref(), vocabulary) == Identity::Unkeyed)
                .then(|| format!("`{called}` creates without a client id or an idempotency key"))
        }
        OpKind::Sql(SqlClass::Insert) => Some("an `INSERT` without `ON CONFLICT` appends a row".into()),
        OpKind::Http {
            method,
            idempotency_key: false,
        } if method == "post" || method == "patch" => Some(format!(
            "a `{}` request without an `Idempotency-Key` header",
            method.to_uppercase()
        )),
        OpKind::GraphQl {
            mutation: true,
            names,
            variables,
        } => {
            // `CreateIssue` or `issueCreate`: a verb at a word boundary of either name.
            let verbs: Vec<&String> = vocabulary.append_calls.iter().chain(&vocabulary.create_calls).collect();
            let named = names.iter().find(|name| {
                camel_words(name)
                    .iter()
                    .any(|word| verbs.iter().any(|v| v.eq_ignore_ascii_case(word)))
            })?;
            (identity(variables.as_ref(), None, vocabulary) == Identity::Unkeyed || variables.is_none())
                .then(|| format!("the GraphQL mutation `{named}` creates without an idempotency key"))
        }
        _ => None,
    }
}

/// `issueCreate` → `["issue", "Create"]`, `CreateIssue` → `["Create", "Issue"]`.
fn camel_words(name: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = 0;
    for (i, c) in name.char_indices() {
        if i > start && (c.is_ascii_uppercase() || c == '_') {
            words.push(&name[start..i]);
            start = if c == '_' { i + 1 } else { i };
        }
    }
    if start < name.len() {
        words.push(&name[start..]);
    }
    words
}

/// The unit an operation calls, by name: one of this file, or — when `cross` — one another
/// file exports (`import { createInvoice } from "./invoices.js"`, `Invoices.create` through a
/// namespace import).
fn called_unit<'i>(
    index: &'i Index,
    file: FileId,
    facts: &'i FileFacts,
    caller: &Unit,
    op: &UnitOp,
    cross: bool,
) -> Option<(FileId, &'i Unit)> {
    if let Some(unit) = same_file_unit(facts, op) {
        return Some((file, unit));
    }
    let OpKind::Call { receiver, method, .. } = &op.kind else {
        return None;
    };
    // `orders.insert(…)` where the unit has `orders = yield* OrdersRepository`: the service's
    // own `insert`, when the analysis can see where the service is defined.
    if let Some((_, tag)) = receiver
        .as_deref()
        .and_then(|r| caller.services.iter().find(|(local, _)| local == r))
    {
        return service_method(index, file, facts, tag, method, cross);
    }
    if !cross || facts.language != crate::source::Language::TypeScript && facts.language != crate::source::Language::Tsx
    {
        return None;
    }
    let resolved = match receiver.as_deref() {
        None => {
            facts.import(method)?;
            index.resolve_name(file, method)
        }
        Some(r) if !r.contains(['.', '(', ' ']) => {
            let import = facts.import(r)?;
            if import.kind != ImportKind::Namespace {
                return None;
            }
            let expr = Expr::Member(Box::new(Expr::Ident(r.to_string(), op.span)), method.clone(), op.span);
            index.resolve_path(file, &expr)
        }
        Some(_) => return None,
    };
    let Resolved::Value { file: target, name, .. } = resolved else {
        return None;
    };
    if target == file {
        return None;
    }
    let unit = index.facts_with_units(target)?.unit_named(name)?;
    Some((target, unit))
}

/// The method `method` of the service `tag`, defined in this file or — when `cross` — in
/// the file `tag` is imported from.
fn service_method<'i>(
    index: &'i Index,
    file: FileId,
    facts: &'i FileFacts,
    tag: &str,
    method: &str,
    cross: bool,
) -> Option<(FileId, &'i Unit)> {
    let method_of = |facts: &'i FileFacts, name: &str| {
        facts
            .services
            .iter()
            .find(|s| s.name == name)?
            .units
            .iter()
            .find(|u| u.name.as_deref() == Some(method))
    };
    if let Some(unit) = method_of(facts, tag) {
        return Some((file, unit));
    }
    let import = facts.import(tag).filter(|_| cross)?;
    let ImportKind::Named(imported) = &import.kind else {
        return None;
    };
    let target = index.resolve_module(file, &import.source)?;
    let unit = method_of(index.facts_with_units(target)?, imported)?;
    Some((target, unit))
}

/// The same-file unit an operation calls, by name.
fn same_file_unit<'f>(facts: &'f FileFacts, op: &UnitOp) -> Option<&'f Unit> {
    match &op.kind {
        OpKind::Call {
            receiver: None, method, ..
        } => facts.unit_named(method),
        // Rust: `self.name(…)`, a method of the file (`extract::rust::units`).
        OpKind::Call {
            receiver: Some(r),
            method,
            ..
        } if r == "self" && facts.language == crate::source::Language::Rust => {
            facts.unit_named(&format!("self.{method}"))
        }
        _ => None,
    }
}

/// A retry inside what another retry replays, retrying the same failures.
#[derive(Debug, Clone)]
pub struct Stacked {
    /// The inner retry: its file and call.
    pub file: FileId,
    pub span: Span,
    /// How the inner retry is reached: `` `fetchUser` `` (a function the unit calls), a
    /// retrying client, or directly.
    pub through: Option<String>,
    /// Attempts of the outer and of the inner retry, when both are bounded and known.
    pub attempts: Option<(u64, u64)>,
}

/// What a retry site replays and how many attempts it makes, asked of the sites a unit reaches.
pub type Judge<'a> = dyn Fn(FileId, &RetrySite) -> (Replays, Option<u64>) + 'a;
/// A retry the unit reaches, kept when it retries the same failures.
type Found<'a> = dyn Fn(FileId, &RetrySite, Option<String>) -> Option<Stacked> + 'a;

/// The first retry that `unit` (what `site` replays) runs itself — written inside it, in a
/// function it calls (same file, or imported one level across), or a request through a
/// retrying client — and that retries the same failures as `site`.
pub fn stacked(
    index: &Index,
    file: FileId,
    site: &RetrySite,
    unit: &Unit,
    outer: &Replays,
    judge: &Judge,
) -> Option<Stacked> {
    let same = |inner: &Replays| {
        matches!(
            (outer, inner),
            (Replays::ConnectionLoss(_), Replays::ConnectionLoss(_)) | (Replays::Contention, Replays::Contention)
        )
    };
    let outer_attempts = judge(file, site).1;
    let found = |target: FileId, inner: &RetrySite, through: Option<String>| -> Option<Stacked> {
        let (replays, attempts) = judge(target, inner);
        same(&replays).then(|| Stacked {
            file: target,
            span: inner.callee_span,
            through,
            attempts: outer_attempts.zip(attempts),
        })
    };
    let facts = index.facts(file)?;
    // A retry written inside the unit.
    let written = facts.retry_sites_within(unit.span).iter().find(|t| {
        t.span != site.span && unit.span.start <= t.span.start && t.span.end <= unit.span.end && t.span != unit.span
    });
    if let Some(inner) = written.and_then(|t| found(file, t, None)) {
        return Some(inner);
    }
    // A request through a retrying client of this file.
    for request in facts.client_requests_within(unit.span) {
        if !(unit.span.start <= request.span.start && request.span.end <= unit.span.end) {
            continue;
        }
        let Some((name, binding)) = facts.retrying_clients.iter().find(|(name, _)| *name == request.client) else {
            continue;
        };
        let client = facts
            .retry_sites
            .iter()
            .filter(|t| t.retried == crate::facts::Retried::Client && t.span.start >= binding.start)
            .min_by_key(|t| t.span.start);
        if let Some(inner) = client.and_then(|t| found(file, t, Some(format!("the retrying client `{name}`")))) {
            return Some(inner);
        }
    }
    // A retry in a function the unit calls.
    called_retry(index, file, facts, unit, 0, true, &found)
}

fn called_retry(
    index: &Index,
    file: FileId,
    facts: &FileFacts,
    unit: &Unit,
    depth: usize,
    cross: bool,
    found: &Found,
) -> Option<Stacked> {
    if depth >= MAX_CALL_DEPTH {
        return None;
    }
    for op in &unit.ops {
        let Some((target, callee)) = called_unit(index, file, facts, unit, op, cross) else {
            continue;
        };
        let target_facts = index.facts(target)?;
        let name = callee.name.clone().unwrap_or_default();
        let inner = target_facts
            .retry_sites_within(callee.span)
            .iter()
            .find(|t| callee.span.start <= t.span.start && t.span.end <= callee.span.end);
        if let Some(stacked) = inner.and_then(|t| found(target, t, Some(format!("`{name}`")))) {
            return Some(stacked);
        }
        let still_cross = cross && target == file;
        if let Some(stacked) = called_retry(index, target, target_facts, callee, depth + 1, still_cross, found) {
            return Some(stacked);
        }
    }
    None
}

/// Receivers whose calls are bookkeeping, not work: logging, tracing, metrics, combinators.
const NOT_WORK: &[&str] = &[
    "Effect", "Console", "Metric", "Stream", "Schedule", "Layer", "Option", "Either", "Schema", "Duration", "Clock",
    "Match", "Array", "Chunk", "Data", "Cause", "Exit",
];

/// The first step that runs after the unit's transaction commits, when the unit has one.
pub fn after_commit(index: &Index, file: FileId, unit: &Unit) -> Option<(Span, Finding)> {
    let facts = index.facts(file)?;
    let transaction = unit.ops.iter().find(|op| op.kind == OpKind::Transaction)?;
    let end = transaction.span.end;
    // Only a step whose failure fails the unit makes the retry replay the commit.
    let later = unit
        .ops
        .iter()
        .find(|op| op.span.start >= end && !unit.handled.contains(&op.span) && is_work(facts, op, 0))?;
    let what = match &later.kind {
        OpKind::Call {
            receiver: Some(r),
            method,
            ..
        } => format!("`{r}.{method}`"),
        OpKind::Call { method, .. } => format!("`{method}`"),
        OpKind::Sql(_) => "an SQL statement".into(),
        OpKind::Http { method, .. } => format!("a `{}` request", method.to_uppercase()),
        OpKind::Transaction => "a second transaction".into(),
        OpKind::GraphQl { names, .. } => format!("the GraphQL operation `{}`", names.first().map_or("?", |n| n)),
    };
    Some((
        transaction.span,
        Finding {
            span: later.span,
            what,
            remote: is_remote(later),
        },
    ))
}

/// Whether replaying `op` repeats work: a write, a request, a service call — not logging,
/// tracing or combinators. A call to a unit of this file is work if that unit does work; a
/// call the analysis cannot see into is taken as work.
fn is_work(facts: &FileFacts, op: &UnitOp, depth: usize) -> bool {
    match &op.kind {
        OpKind::Call { receiver, method, .. } => {
            let bookkeeping = receiver.as_deref().is_some_and(|r| {
                let root = r.split('.').next().unwrap_or(r);
                NOT_WORK.contains(&root) || r.ends_with(".pipe")
            });
            let combinator = matches!(
                method.as_str(),
                "pipe" | "map" | "flatMap" | "tap" | "as" | "asVoid" | "orDie"
                    // Rust: conversions and error plumbing, not work.
                    | "map_err" | "context" | "with_context" | "unwrap" | "expect" | "clone" | "to_string"
                    | "to_owned" | "into" | "ok" | "ok_or" | "ok_or_else" | "unwrap_or" | "unwrap_or_default"
                    | "iter" | "collect" | "len" | "is_empty" | "as_str" | "as_ref" | "json" | "bind"
            );
            if bookkeeping || combinator || method.starts_with("log") {
                return false;
            }
            match same_file_unit(facts, op) {
                Some(callee) if depth < MAX_CALL_DEPTH => callee
                    .ops
                    .iter()
                    .any(|inner| !callee.handled.contains(&inner.span) && is_work(facts, inner, depth + 1)),
                _ => true,
            }
        }
        OpKind::Sql(class) => *class != SqlClass::Select,
        OpKind::Http { .. } | OpKind::Transaction | OpKind::GraphQl { .. } => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(mentions: &[&str]) -> Predicate {
        Predicate::Filter {
            span: Span::default(),
            mentions: mentions.iter().map(|m| m.to_string()).collect(),
            always: false,
        }
    }

    #[test]
    fn only_a_contention_predicate_is_narrow() {
        let vocabulary = Vocabulary::default();
        let replays = |p: &Predicate| replays(Role::Other, p, &vocabulary);
        assert_eq!(replays(&filter(&["Retry", "isContention"])), Replays::Contention);
        assert_eq!(replays(&filter(&["e", "_tag", "DeadlockError"])), Replays::Contention);
        assert_eq!(replays(&filter(&["isPending"])), Replays::Unknown);
        assert_eq!(replays(&Predicate::Unknown), Replays::Unknown);
        for broad in [
            filter(&["isRetryableError"]),
            filter(&["e", "status", "429"]),
            filter(&["!", "isPermanentError", "e"]),
            filter(&["e", "_tag", "TimeoutException"]),
            Predicate::None,
        ] {
            assert!(matches!(replays(&broad), Replays::ConnectionLoss(_)), "{broad:?}");
        }
        assert_eq!(replays(&filter(&["isNonRetryable"])), Replays::Unknown);
    }

    #[test]
    fn verbs_are_prefixes_at_a_word_boundary() {
        let verbs = Vocabulary::default().append_calls;
        assert_eq!(verb("sendEmail", &verbs), Some("Email"));
        assert_eq!(verb("send", &verbs), Some(""));
        assert_eq!(verb("sender", &verbs), None);
        assert_eq!(camel_words("issueCreate"), ["issue", "Create"]);
        assert_eq!(singular("entries"), "entry");
        assert_eq!(singular("videos"), "video");
    }

    #[test]
    fn a_foreign_key_is_not_a_client_id() {
        let vocabulary = Vocabulary::default();
        let keys = |names: &[(&str, bool)]| ArgKeys {
            keys: names
                .iter()
                .map(|(name, fresh)| crate::facts::ArgKey {
                    name: name.to_string(),
                    fresh: *fresh,
                })
                .collect(),
            open: false,
        };
        let of = |k: &ArgKeys, entity: &str| identity(Some(k), Some(entity), &vocabulary);
        assert_eq!(
            of(&keys(&[("ownerId", false), ("orgId", false)]), "videos"),
            Identity::Unkeyed
        );
        assert_eq!(of(&keys(&[("videoId", false)]), "videos"), Identity::Keyed);
        assert_eq!(
            of(&keys(&[("id", true)]), "videos"),
            Identity::Unkeyed,
            "made inside the unit"
        );
        assert_eq!(
            of(&keys(&[("MessageDeduplicationId", false)]), "message"),
            Identity::Keyed
        );
    }
}
