//! RS2 runtime configuration as the extractor sees it: the declarative retry policies of a
//! JSON or YAML document (an object under a `retry` key holding a policy key), its calls with
//! their method and effect class, and `$_retry` references (the removed v1 pipeline variable).
//!
//! Nothing here knows where the document is: whether a top-level policy is a mount's or a
//! tenant's, and which policy a call resolves to, is decided by `analysis::rs2`.

use serde::{Deserialize, Serialize};

use crate::source::Span;

/// The keys of an RS2 retry policy (camelCase).
pub const POLICY_KEYS: &[&str] = &[
    "enabled",
    "maxAttempts",
    "baseDelayMs",
    "maxDelayMs",
    "backoffMultiplier",
    "jitter",
    "retryStatuses",
    "retryOnNetworkError",
    "respectRetryAfter",
];

/// Everything RS2 in one document. Empty for JSON/YAML that is not RS2 configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rs2Facts {
    pub policies: Vec<Rs2Policy>,
    pub calls: Vec<Rs2Call>,
    /// Every `$_retry` in a key or a string value, the name itself.
    pub imperative: Vec<Span>,
    /// The document has a top-level `mount` key: its top-level policy is the mount's.
    pub mount_key: bool,
    /// The document has a top-level `tenant` key: its top-level policy is the tenant's.
    pub tenant_key: bool,
}

impl Rs2Facts {
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty() && self.calls.is_empty() && self.imperative.is_empty()
    }

    /// The document's top-level policy (`retry` at its root), if any.
    pub fn top_level(&self) -> Option<usize> {
        self.policies.iter().position(|p| p.place == Place::TopLevel)
    }
}

/// Where a policy sits in its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Place {
    /// `retry` at the root of the document.
    TopLevel,
    /// `retry` in a `call` object, or beside one: the call's own policy (index into `calls`).
    Call(usize),
    /// Anywhere else: a policy no call resolves to.
    Nested,
}

/// A setting of a policy: absent, a value of the type RS2 expects, or something else (a
/// string where a number belongs, a YAML alias that could not be followed, a template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Setting<T> {
    Absent,
    /// The value and where it is written.
    Known(T, Span),
    /// Written, but not a value the model can read.
    Unknown(Span),
}

impl<T> Setting<T> {
    pub fn known(&self) -> Option<&T> {
        match self {
            Setting::Known(value, _) => Some(value),
            _ => None,
        }
    }

    pub fn span(&self) -> Option<Span> {
        match self {
            Setting::Known(_, span) | Setting::Unknown(span) => Some(*span),
            Setting::Absent => None,
        }
    }
}

/// One RS2 retry policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rs2Policy {
    /// The `retry` key: where policy findings point.
    pub retry: Span,
    /// The policy object.
    pub span: Span,
    /// The key path from the document's root, for messages: `retry`, `steps[1].retry`.
    pub path: String,
    pub place: Place,
    pub enabled: Setting<bool>,
    pub max_attempts: Setting<f64>,
    pub base_delay_ms: Setting<f64>,
    pub max_delay_ms: Setting<f64>,
    pub backoff_multiplier: Setting<f64>,
    /// `"full"`, `"none"`, `"equal"`, … as written.
    pub jitter: Setting<String>,
    /// The statuses that are numbers, each where it is written.
    pub retry_statuses: Setting<Vec<(f64, Span)>>,
    pub retry_on_network_error: Setting<bool>,
    pub respect_retry_after: Setting<bool>,
}

/// The effect class of a call: whether the runtime may retry it by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EffectClass {
    /// Retried freely (GET, HEAD, OPTIONS).
    Pure,
    /// Retried freely (PUT, DELETE).
    Idempotent,
    /// Retried with a derived idempotency key.
    Keyed,
    /// Never retried (POST, PATCH).
    Unsafe,
}

impl EffectClass {
    pub fn parse(text: &str) -> Option<EffectClass> {
        Some(match text {
            "pure" => EffectClass::Pure,
            "idempotent" => EffectClass::Idempotent,
            "keyed" => EffectClass::Keyed,
            "unsafe" => EffectClass::Unsafe,
            _ => return None,
        })
    }

    /// The class the runtime infers from an HTTP method.
    pub fn of_method(method: &str) -> Option<EffectClass> {
        Some(match method.to_ascii_uppercase().as_str() {
            "GET" | "HEAD" | "OPTIONS" => EffectClass::Pure,
            "PUT" | "DELETE" => EffectClass::Idempotent,
            "POST" | "PATCH" => EffectClass::Unsafe,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EffectClass::Pure => "pure",
            EffectClass::Idempotent => "idempotent",
            EffectClass::Keyed => "keyed",
            EffectClass::Unsafe => "unsafe",
        }
    }
}

/// One call: an object with a `call` key (the call object itself holds `method`, `effect`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rs2Call {
    /// The `call` key.
    pub span: Span,
    /// `method` as written (a string) and the whole `method: …` entry.
    pub method: Option<(String, Span)>,
    /// `effect` as written (a string) and the whole `effect: …` entry.
    pub effect: Option<(String, Span)>,
    /// The call's own policy (index into `policies`): `retry` in or beside the call object.
    pub policy: Option<usize>,
}

impl Rs2Call {
    /// The call's effect class: its `effect`, else inferred from its method. `None` when
    /// neither says (an unknown method, a misspelt class).
    pub fn class(&self) -> Option<EffectClass> {
        match &self.effect {
            Some((effect, _)) => EffectClass::parse(effect),
            None => EffectClass::of_method(&self.method.as_ref()?.0),
        }
    }

    /// Where a finding about the call's class points: its `effect`, else its `method`.
    pub fn class_span(&self) -> Span {
        self.effect
            .as_ref()
            .or(self.method.as_ref())
            .map_or(self.span, |(_, span)| *span)
    }
}
