//! What a retry replays, and under whom: the unit-level questions of decisions 1–3.
//! Reads unit facts (see `facts::Unit`) with the configured vocabulary.

use crate::config::Vocabulary;
use crate::facts::{ContainerKind, FileFacts, OpKind, Predicate, RetrySite, SqlClass, Unit, UnitOp};
use crate::index::{FileId, Index};
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

fn mentions(mentions: &[String], names: &[String]) -> bool {
    mentions.iter().any(|m| names.contains(m))
}

pub fn role(site: &RetrySite, vocabulary: &Vocabulary) -> Role {
    let predicate = match &site.predicate {
        Predicate::Filter { mentions, .. } => Some(mentions.as_slice()),
        _ => None,
    };
    let policy = site.policy_name();
    let transient_schedule = policy.is_some_and(|n| vocabulary.transient_policies.iter().any(|p| p == n));
    let transient_predicate = predicate
        .is_some_and(|p| mentions(p, &vocabulary.transient_predicates) || p.iter().any(|m| m.contains("Connection")));
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

/// A step of a unit that makes a replay unsafe, in the user's words.
#[derive(Debug, Clone)]
pub struct Finding {
    pub span: Span,
    pub what: String,
}

/// The first operation of `unit` (following same-file calls) that appends: replaying it can
/// apply it twice.
pub fn appends(index: &Index, file: FileId, unit: &Unit, vocabulary: &Vocabulary) -> Option<Finding> {
    appends_at(index.facts(file)?, unit, vocabulary, 0)
}

fn appends_at(facts: &FileFacts, unit: &Unit, vocabulary: &Vocabulary, depth: usize) -> Option<Finding> {
    for op in &unit.ops {
        // A call to a unit of this file is judged by what that unit does, not by its name.
        let callee = same_file_unit(facts, op);
        if callee.is_none() {
            if let Some(what) = appending(op, vocabulary) {
                return Some(Finding { span: op.span, what });
            }
        }
        if depth < MAX_CALL_DEPTH {
            if let Some(callee) = callee {
                if let Some(found) = appends_at(facts, callee, vocabulary, depth + 1) {
                    // Point at the call in this unit; name what the callee does.
                    return Some(Finding {
                        span: op.span,
                        what: format!("{} (through `{}`)", found.what, callee.name.as_deref().unwrap_or("?")),
                    });
                }
            }
        }
    }
    None
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
            if vocabulary.append_calls.iter().any(|v| v == method) {
                return Some(format!("`{called}` appends"));
            }
            let creates = vocabulary.create_calls.iter().any(|prefix| {
                method
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_uppercase))
            });
            // Only a create whose argument the analysis can see without a client id.
            (creates && *client_id == Some(false)).then(|| format!("`{called}` creates a row without a client id"))
        }
        OpKind::Sql(SqlClass::Insert) => Some("an `INSERT` without `ON CONFLICT` appends a row".into()),
        OpKind::Http {
            method,
            idempotency_key: false,
        } if method == "post" || method == "patch" => Some(format!(
            "a `{}` request without an `Idempotency-Key` header",
            method.to_uppercase()
        )),
        _ => None,
    }
}

/// The same-file unit an operation calls, by name.
fn same_file_unit<'f>(facts: &'f FileFacts, op: &UnitOp) -> Option<&'f Unit> {
    let OpKind::Call {
        receiver: None, method, ..
    } = &op.kind
    else {
        return None;
    };
    facts.units.iter().find(|u| u.name.as_deref() == Some(method.as_str()))
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
    let later = unit
        .ops
        .iter()
        .find(|op| op.span.start >= end && is_work(facts, op, 0))?;
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
    };
    Some((transaction.span, Finding { span: later.span, what }))
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
                Some(callee) if depth < MAX_CALL_DEPTH => {
                    callee.ops.iter().any(|inner| is_work(facts, inner, depth + 1))
                }
                _ => true,
            }
        }
        OpKind::Sql(class) => *class != SqlClass::Select,
        OpKind::Http { .. } | OpKind::Transaction => true,
    }
}

/// A durable retrier a retry site runs under.
#[derive(Debug, Clone)]
pub struct Durable {
    /// Why, in the user's words: "a handler registered with `Outbox.subscribe`".
    pub why: String,
    /// How often the retrier redelivers, when its configuration says (wrangler `max_retries`).
    pub redeliveries: Option<u64>,
}

/// Why code at a retry site runs under a durable retrier, if it does.
pub fn durable_retrier(index: &Index, file: FileId, site: &RetrySite) -> Option<Durable> {
    let vocabulary = &index.config.vocabulary;
    let registration = site.containers.iter().rev().find(|c| {
        c.kind == ContainerKind::Registration
            && c.name
                .rsplit('.')
                .next()
                .is_some_and(|m| vocabulary.durable_registrations.iter().any(|r| r == m))
    });
    let why = if let Some(registration) = registration {
        format!("a handler registered with `{}`", registration.name)
    } else if site
        .containers
        .iter()
        .any(|c| c.kind == ContainerKind::Function && c.name == "queue")
    {
        "a Workers `queue` handler".into()
    } else if index.is_durable_path(file) {
        format!("{} (a subscriber or consumer)", index.path(file).display())
    } else {
        return None;
    };
    Some(Durable {
        why,
        redeliveries: index.wrangler_max_retries(file),
    })
}
