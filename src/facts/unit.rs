//! Units of work: what a retried operation does, in source order — enough to tell whether
//! replaying it can apply something twice, and what runs after its transaction commits.

use serde::{Deserialize, Serialize};

use crate::source::Span;

/// What a unit of work does, in source order: enough to tell whether replaying it can apply
/// something twice, and what runs after its transaction commits.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Unit {
    /// `Effect.fn("ActivateRule.persist")`'s name, or the called unit's name.
    pub name: Option<String>,
    pub span: Span,
    pub ops: Vec<UnitOp>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnitOp {
    pub span: Span,
    pub kind: OpKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum OpKind {
    /// `receiver.method(…)` or `method(…)`: classified by the rules (verbs are configurable).
    Call {
        receiver: Option<String>,
        method: String,
        /// Whether the first argument, an object literal, carries an `id` / `…Id` key (a
        /// client id); `None` when the first argument is not an object literal.
        client_id: Option<bool>,
    },
    /// An SQL statement in a `sql` tagged template.
    Sql(SqlClass),
    /// An HTTP request built with `HttpClientRequest.<method>` or `client.<method>(…)`.
    Http { method: String, idempotency_key: bool },
    /// `….withTransaction(…)`: the span covers what runs inside it.
    Transaction,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientRequest {
    /// The client's local name.
    pub client: String,
    /// `post`, `patch`, `get`, …; `None` when `execute` is given a request the extractor
    /// cannot see.
    pub method: Option<String>,
    /// An `Idempotency-Key` header is set on the request.
    pub idempotency_key: bool,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SqlClass {
    Select,
    /// `INSERT` without `ON CONFLICT` / `OR IGNORE` / `OR REPLACE`.
    Insert,
    /// `INSERT … ON CONFLICT` and friends: a create that a replay cannot duplicate.
    Upsert,
    /// `UPDATE … SET`.
    Update,
    Delete,
    Other,
}
