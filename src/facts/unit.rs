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
    /// Locals of the unit bound to a service, `(local, tag)`: `const orders = yield*
    /// OrdersRepository` gives `("orders", "OrdersRepository")`, so `orders.insert(…)` is judged
    /// by what the service's `insert` does.
    #[serde(default)]
    pub services: Vec<(String, String)>,
    /// The operations whose failure the unit handles itself, by span: a failure there does
    /// not fail the attempt, so the retry does not replay what ran before it. Rust: a call
    /// whose result is neither `?`-propagated nor the unit's value (`let _ = tx.send(…)`,
    /// `if let Err(e) = notify().await { … }`). Empty where every step fails the unit (an
    /// Effect's `yield*`).
    #[serde(default)]
    pub handled: Vec<Span>,
}

/// A service defined in the file — `class Orders extends Effect.Service<Orders>()("Orders", {
/// effect: … })`, or `Layer.effect(Orders, make)` for a tag — with the named units of its
/// implementation (the methods its callers reach through `yield* Orders`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServiceDef {
    /// The class or tag name.
    pub name: String,
    pub units: Vec<Unit>,
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
        /// The keys of the call's object-literal arguments: where a client id or an
        /// idempotency key would be (`{ id, … }`, `{ idempotencyKey }`). `None` when no
        /// argument is an object literal (the analysis cannot see what is sent).
        client_id: Option<ArgKeys>,
    },
    /// An SQL statement in a `sql` tagged template.
    Sql(SqlClass),
    /// An HTTP request built with `HttpClientRequest.<method>` or `client.<method>(…)`.
    Http { method: String, idempotency_key: bool },
    /// `….withTransaction(…)`: the span covers what runs inside it.
    Transaction,
    /// A GraphQL document sent through a helper (`executeGraphQL(client, CREATE_ISSUE, vars)`,
    /// the document a literal or a top-level constant): judged by the document, not by how
    /// the helper sends it (every GraphQL request is a POST).
    GraphQl {
        /// A mutation (else a query or a subscription).
        mutation: bool,
        /// The operation name and first field: `CreateIssue`, `issueCreate`.
        names: Vec<String>,
        /// The keys of the variables it is sent with.
        variables: Option<ArgKeys>,
    },
}

/// The keys of a call's object-literal arguments (and of the objects nested in them, such
/// as `headers`), as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ArgKeys {
    pub keys: Vec<ArgKey>,
    /// A spread or a computed key: the object may carry keys that are not written here.
    pub open: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgKey {
    pub name: String,
    /// The value is an id made inside the replayed unit (`randomUUID()`, `yield* newId(…)`,
    /// or a local of the unit bound to one): each replay sends a new one, so it identifies
    /// nothing across replays.
    pub fresh: bool,
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

/// A function handed to something that runs it later — `Outbox.subscribe("X", handler)`,
/// `new Worker(name, processor)`, `task({ run })`, `Activity.make({ execute })`, a `queue(batch,
/// env)` method, `const handler: SQSHandler = …` — with what it does. The analysis asks
/// whether a durable retrier runs it, and which of the file's functions it calls.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Handler {
    /// What registers it, as written: `Outbox.subscribe`, `new Worker`, `task`, `queue` (a
    /// method of that name), or the type it is declared with (`SQSHandler`, `SQSEvent`).
    pub registration: String,
    /// The handler itself (its span) and its operations.
    pub unit: Unit,
}
