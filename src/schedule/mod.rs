//! The schedule model: a small IR of retry schedules ([`Sched`]) and its semantics, with no
//! knowledge of source code. Effect `Schedule` expressions are evaluated into it by
//! `analysis::effect`, the Rust libraries' builders by [`rust`]. The IR is run on a virtual
//! clock by [`sim`], which is how Effect itself runs a schedule: each combinator is a step
//! function.
//! That gives exact nominal delays; a separate structural pass answers what a bounded run
//! cannot (is the attempt count unbounded? does the gap grow without a cap?).
//!
//! What the model cannot see — a parameter, an opaque callback, an unresolved import — is
//! `Unknown`, and the rules stay silent on unknown.

pub mod api;
pub mod duration;
pub mod rust;
pub mod sim;

pub use sim::{summarize, summarize_for_all, Attempts, Gap, Jitter, Summary};

/// The retry library whose semantics a policy has: how its builders default, and how a
/// finding names its remedies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Library {
    /// Effect's `Schedule` (`Effect.retry`, `Stream.retry`, `HttpClient.retryTransient`).
    Effect,
    /// `backon`: `.retry(builder)` on a closure or future, `.when(…)` filters.
    Backon,
    /// `tokio-retry`: `Retry::spawn(strategy, action)`, `RetryIf::spawn(…, condition)`.
    TokioRetry,
    /// `tokio-retry2`: tokio-retry's strategies and calls, its own jitter, and an action that
    /// classifies its errors (`RetryError::transient`/`permanent`).
    TokioRetry2,
    /// `backoff`: `backoff::retry(policy, op)`, `backoff::future::retry(policy, op)`.
    Backoff,
    /// `reqwest-retry`: `RetryTransientMiddleware::new_with_policy(policy)`.
    ReqwestRetry,
    /// `exponential-backoff`: a `Backoff` iterated by the code's own loop (`for d in &backoff`).
    ExponentialBackoff,
    /// The RS2 runtime's declarative policies (JSON, YAML): `maxAttempts`, `baseDelayMs`, …
    Rs2,
}

/// A delay function or predicate the model can interpret: `({ duration }) => Duration.min(…)`.
#[derive(Debug, Clone)]
pub enum Callback {
    /// A pure function of the schedule's metadata, compiled to a tiny expression language.
    Known(Rc<Lambda>),
    /// A predicate over the input (the error: `whileInput(isRetryable)`): it decides which
    /// failures are retried, never how long a gap is.
    OnInput,
    Unknown,
}

use std::rc::Rc;

/// A compiled callback: named parameters (positional or destructured from the metadata
/// object) and a body in [`Term`]s.
#[derive(Debug)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Term,
}

#[derive(Debug, Clone)]
pub enum Param {
    /// `(d) =>`: the argument at this position.
    Positional(String),
    /// `({ duration, attempt }) =>`: fields of the metadata object.
    Fields(Vec<String>),
    Ignored,
}

/// The expression language of callbacks, over numbers (durations are milliseconds).
#[derive(Debug, Clone)]
pub enum Term {
    Num(f64),
    Var(String),
    Bin(BinOp, Box<Term>, Box<Term>),
    Min(Box<Term>, Box<Term>),
    Max(Box<Term>, Box<Term>),
    /// `delays[n]`: one of a list of known values (a factory's array of delays), picked by
    /// the index; unknown out of range.
    Index(Vec<f64>, Box<Term>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&` and `||` over truth values (non-zero is true).
    And,
    Or,
}

/// The schedule IR: Effect's combinators, v4 and v3 mapped onto one vocabulary.
/// Durations are milliseconds.
#[derive(Debug, Clone)]
pub enum Sched {
    Exponential {
        base: f64,
        factor: f64,
    },
    /// One, one, two, three, five… × `base`; `skip_first`: one, two, three… (the 4.0 betas
    /// and 4.0.x releases).
    Fibonacci {
        base: f64,
        skip_first: bool,
    },
    Spaced(f64),
    /// `fixed` waits until the next multiple of the interval: with an instant effect, the interval.
    Fixed(f64),
    /// `windowed` likewise.
    Windowed(f64),
    /// v3 `linear`: base × attempt.
    Linear(f64),
    Recurs(u64),
    /// `recurs(config.retries)`: a count the model cannot read. The schedule stops (when is
    /// unknown); its gaps and jitter are still judged.
    RecursSome,
    /// `spaced(opts.interval)`, `fixed(…)`, `windowed(…)` with an interval the model cannot
    /// read: never stops, every gap the same unknown length, no jitter.
    SpacedSome,
    /// `exponential(opts.base)`, `fibonacci(…)`, `linear(…)` with a base the model cannot
    /// read: never stops, each gap longer than the last, no jitter.
    GrowingSome,
    /// `during(timeout)`, v3 `upTo(timeout)`, `upTo({ duration })` with a limit the model
    /// cannot read: stops on elapsed time (when is unknown), with no delay of its own.
    DuringSome,
    /// `forever`, `spaced(0)`.
    Forever,
    /// v3 `fromDelays`.
    FromDelays(Vec<f64>),
    /// `during(d)`: zero delay while elapsed ≤ d (v4) or < d (strict, v3 `upTo`).
    During {
        limit: f64,
        strict: bool,
    },
    /// `cron`: a wall-clock schedule; delays depend on the start time.
    Cron,
    /// Continue while every child continues, with the largest delay (v4 `max`, v3 `intersect`).
    Max(Vec<Sched>),
    /// Continue while any child continues, with the smallest delay of those still running
    /// (v4 `min`, v3 `union`). Every child steps every time.
    Min(Vec<Sched>),
    /// Run the first to completion, then the second (v4 `concat`, v3 `andThen`).
    Concat(Box<Sched>, Box<Sched>),
    /// `upTo({ times })`, `Effect.retry({ times })`: at most `times` recurrences.
    Times(Box<Sched>, u64),
    /// A predicate over metadata (`while`, `whileOutput`, …).
    While(Box<Sched>, Callback),
    /// `jittered`: the delay scaled by a factor drawn from [min, max].
    Jittered {
        inner: Box<Sched>,
        min: f64,
        max: f64,
    },
    /// Additive jitter: a random share of `max` added to each delay (backon's Fibonacci
    /// builder adds `min_delay × rand[0, 1)`).
    JitteredAdd {
        inner: Box<Sched>,
        max: f64,
    },
    /// Replace the delay by `f(metadata)` (v4 `modifyDelay`, v3 `modifyDelay`/`delayed`).
    ModifyDelay(Box<Sched>, Callback),
    /// Add `f(metadata)` to the delay.
    AddDelay(Box<Sched>, Callback),
    /// The same timing with the output replaced by `f(metadata)` (`map`, `passthrough`,
    /// `delays`, …); an unknown callback makes the output unknown.
    Output(Box<Sched>, Callback),
    /// One of several schedules, picked at run time (`cond ? a : b`): each is judged, and a
    /// defect of any is the policy's.
    Choice(Vec<Sched>),
    /// Something the model does not know.
    Unknown,
}
