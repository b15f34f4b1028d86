//! Retry sites, the same from every language: where the retry is, which library runs it,
//! what it retries, which failures it filters, and the unit of work it replays. The policy
//! argument is the one part kept in its language's terms ([`PolicyArg`]); `analysis`
//! evaluates it into the schedule model.

use serde::{Deserialize, Serialize};

use super::rust::RustPolicyArg;
use super::{Container, Expr, Unit};
use crate::schedule::Library;
use crate::source::Span;

/// One call that retries: `Effect.retry(…)`, `(|| …).retry(builder)`, `Retry::spawn(…)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RetrySite {
    /// The whole call.
    pub span: Span,
    /// The callee, e.g. `Effect.retry`.
    pub callee_span: Span,
    /// How messages name the call: `Effect.retry`, `.retry`, `Retry::spawn`.
    pub callee: String,
    pub library: Library,
    pub retried: Retried,
    pub policy: PolicyArg,
    pub predicate: Predicate,
    /// Enclosing named scopes, outermost first.
    pub containers: Vec<Container>,
    /// What the retry replays, when the extractor can see it: the generator of the
    /// `Effect.fn` it is a pipeable of, the receiver of `.pipe(…)`, the first argument of
    /// `pipe(…)` or of data-first `Effect.retry(effect, …)`, the closure a Rust retry runs.
    pub unit: Option<Unit>,
}

/// A call of a function that passes a policy in an options object
/// (`retryTransientErrors(effect, { schedule: backoff })`, `makeClient({ retryTransientErrors:
/// schedule })`): when the function is a project helper whose retry takes its schedule from that
/// option, the passed schedule is judged here, at the call, as a direct `Effect.retry(schedule)`
/// would be. Recorded for options whose key names a policy (`schedule`, or a key with `retry` or
/// `schedule` in it) and whose value can be one (a name, a member, a call).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassedPolicy {
    /// The whole call.
    pub span: Span,
    /// The callee as written: `retryTransientErrors`, `Http.withRetries`.
    pub callee: Expr,
    /// Every argument of the call: the helper's parameters are bound to them.
    pub args: Vec<Expr>,
    /// The argument that is the options object, and the key of the policy in it.
    pub arg: usize,
    pub key: String,
}

impl PassedPolicy {
    /// The passed policy: the option's value.
    pub fn value(&self) -> Option<&Expr> {
        self.args.get(self.arg)?.property(&self.key)
    }
}

/// What a retry replays on failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Retried {
    /// An operation (an effect, a closure, a future): run again whole.
    Operation,
    /// A stream, resubscribed (`Stream.retry`); it takes no error filter.
    Stream,
    /// Each request sent through a client (`HttpClient.retryTransient`, reqwest-retry's
    /// middleware): judged per request.
    Client,
}

/// The policy argument, in its language's terms.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum PolicyArg {
    /// No policy argument: the library's default (`retryTransient()` retries forever).
    Default,
    /// Effect: retry options (`{ schedule, times, while }`) or a bare schedule.
    Effect(Expr),
    /// Rust: boxed, the largest by far.
    Rust(Box<RustPolicyArg>),
    /// An argument the extractor cannot read (wrong arity, a spread).
    Unknown,
}

/// Which failures a retry replays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Predicate {
    /// No filter: every failure is replayed.
    None,
    /// A filter written at the site (`while`, `until`, `.when(…)`, `RetryIf`, a schedule that
    /// reads its input): the names and strings it mentions, in order.
    Filter {
        span: Span,
        mentions: Vec<String>,
        /// Always yes: `() => true`.
        always: bool,
    },
    /// The library filters transient failures itself (`retryTransient`, reqwest-retry).
    Transient,
    /// Not visible: a spread of options, an operation passed by name.
    Unknown,
}

impl RetrySite {
    /// The Effect options object, when the policy is one.
    pub fn options(&self) -> Option<&Expr> {
        match &self.policy {
            PolicyArg::Effect(e @ Expr::Object(..)) => Some(e),
            _ => None,
        }
    }

    /// The Effect schedule: the `schedule` option, or the bare policy argument.
    pub fn schedule(&self) -> Option<&Expr> {
        match &self.policy {
            PolicyArg::Effect(Expr::Object(..)) => self.options()?.property("schedule"),
            PolicyArg::Effect(other) => Some(other),
            _ => None,
        }
    }

    /// The Effect `times` option, or an `ExecutionPlan` step's `attempts` (its tries, the
    /// first included).
    pub fn times(&self) -> Option<&Expr> {
        let options = self.options()?;
        options.property("times").or_else(|| options.property("attempts"))
    }

    /// How the site spells its attempt cap: `times`, or `attempts` in an `ExecutionPlan` step.
    pub fn times_key(&self) -> &'static str {
        match self.options() {
            Some(options) if options.property("times").is_none() && options.property("attempts").is_some() => {
                "attempts"
            }
            _ => "times",
        }
    }

    /// Whether the site gives a schedule (an Effect schedule, a Rust builder).
    pub fn has_schedule(&self) -> bool {
        match &self.policy {
            PolicyArg::Effect(_) => self.schedule().is_some(),
            PolicyArg::Rust(arg) => arg.chain.is_some(),
            PolicyArg::Default | PolicyArg::Unknown => false,
        }
    }

    /// The last name of the policy the site names: `Retry.transient` → `transient`,
    /// `retry::transient()` → `transient`.
    pub fn policy_name(&self) -> Option<&str> {
        match &self.policy {
            PolicyArg::Effect(_) => self.schedule()?.last_name(),
            PolicyArg::Rust(arg) => match &arg.chain.as_ref()?.base {
                super::RustBase::Named(path) => path.segments.last().map(String::as_str),
                _ => None,
            },
            PolicyArg::Default | PolicyArg::Unknown => None,
        }
    }

    /// The policy argument's span, when there is one.
    pub fn policy_span(&self) -> Option<Span> {
        match &self.policy {
            PolicyArg::Effect(e) => Some(e.span()),
            PolicyArg::Rust(r) => Some(r.arg),
            PolicyArg::Default | PolicyArg::Unknown => None,
        }
    }
}
