//! The Rust retry libraries, modelled from their source: each constructor with its defaults,
//! what each builder method changes, and the schedule IR ([`Sched`]) the configured builder
//! runs as. Every default and formula below was read in the crate itself (the version is
//! named where it matters); `rules/*.md` cite the files.
//!
//! The extractor keeps a builder as its configuration ([`Backoff`]) plus the methods
//! applied to it, not as a finished [`Sched`]: a call site may change a named policy from
//! another file (`retry::transient().with_max_times(5)`), and a method such as backon's
//! `with_max_delay` changes the middle of the schedule, not its outside. The schedule is
//! built last, from the final configuration.
//!
//! One module per library ([`backon`], [`tokio_retry`], [`backoff`], [`retry_policies`],
//! [`exponential_backoff`]) owns its constructors, its builder methods and the schedule its
//! configured builder runs; this module holds the configuration types, the argument values and
//! what every library shares, and dispatches to the library a builder belongs to.

mod backoff;
mod backon;
mod exponential_backoff;
mod retry_policies;
#[cfg(test)]
mod tests;
mod tokio_retry;

use std::rc::Rc;

use super::Library;
use super::{summarize, Attempts, Jitter, Summary};
use super::{BinOp, Callback, Lambda, Sched, Term};

/// A builder method's argument value, as far as the extractor can evaluate it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Arg {
    Num(f64),
    /// A `Duration`, in milliseconds.
    Ms(f64),
    Some(Box<Arg>),
    None,
    Bool(bool),
    /// A path such as `Jitter::Full` or `jitter` (`use` declarations applied).
    Path(Vec<String>),
    /// A library function applied to arguments, such as tokio-retry2's `jitter_range(1..3)`
    /// (the path with `use` declarations applied).
    Call(Vec<String>, Vec<Arg>),
    /// `lo..hi` (`inclusive`: `lo..=hi`).
    Range {
        lo: Box<Arg>,
        hi: Box<Arg>,
        inclusive: bool,
    },
    Unknown,
    /// The `n`th parameter of the factory function the value is built in
    /// (`fn exponential_backoff(base: u64, …)`), given at each call.
    Param(usize),
}

/// The configuration a Rust retry library's builder holds: what its methods change, and
/// what the schedule model runs (`schedule::rust`). Durations are milliseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Backoff {
    /// backon's `ExponentialBuilder`, `ConstantBuilder` (`min_delay` is its delay) and
    /// `FibonacciBuilder`.
    Backon {
        shape: BackonShape,
        jitter: bool,
        factor: f64,
        min_delay: f64,
        max_delay: Option<f64>,
        max_times: Option<u64>,
        total_delay: Option<f64>,
    },
    /// tokio-retry's strategies (iterators of delays), with `.map(jitter)` and `.take(n)`;
    /// `retry2`: tokio-retry2's, the same strategies with another jitter, two more strategies
    /// and two more adapters: `.map(jitter_range(a..b))` / `.map(jitter_with_bounds(a, b))`
    /// (`scale`: the factor's range, where the crate's `jitter` has its own) and
    /// `.max_interval(ms)` / `.max_duration(d)` (`max_interval`: stop once that long has
    /// passed since the strategy was made).
    TokioRetry {
        shape: TokioShape,
        factor: f64,
        max_delay: Option<f64>,
        jitter: bool,
        take: Option<u64>,
        retry2: bool,
        #[serde(default)]
        scale: Option<Box<(f64, f64)>>,
        #[serde(default)]
        max_interval: Option<f64>,
    },
    /// backoff's `ExponentialBackoff` (struct or `ExponentialBackoffBuilder`), `Constant`,
    /// `Zero`, `Stop`.
    Backoff {
        shape: BackoffShape,
        initial: f64,
        randomization: f64,
        multiplier: f64,
        max_interval: f64,
        max_elapsed: Option<f64>,
    },
    /// reqwest-retry's (retry-policies') `ExponentialBackoff`: `builder()` until one of the
    /// `build_with_*` methods makes it a policy.
    Reqwest {
        min: f64,
        max: f64,
        jitter: ReqwestJitter,
        base: f64,
        max_retries: Option<u64>,
        total: Option<f64>,
        built: bool,
    },
    /// The exponential-backoff crate's `Backoff` (2.1.1): an iterator of `Option<Duration>`
    /// the code loops over itself (`for d in &backoff`), `None` on the last attempt.
    /// `attempts` counts attempts (the first one too); `max: None` is `Duration::MAX`.
    Exponential {
        attempts: u64,
        min: f64,
        max: Option<f64>,
        jitter: f64,
        factor: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BackonShape {
    Exponential,
    Constant,
    Fibonacci,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum TokioShape {
    /// `ExponentialBackoff::from_millis(base)`: `base^n` milliseconds (times `factor`).
    Exponential {
        base: f64,
    },
    Fibonacci {
        base: f64,
    },
    Fixed {
        ms: f64,
    },
    /// tokio-retry2's `ExponentialFactorBackoff::from_millis(initial, base_factor)`:
    /// `initial × base_factor^n` milliseconds.
    ExponentialFactor {
        initial: f64,
        base_factor: f64,
    },
    /// tokio-retry2's `LinearBackoff::new(initial)`: `initial + increment × n`.
    Linear {
        initial: f64,
        increment: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum BackoffShape {
    Exponential,
    Constant(f64),
    Zero,
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ReqwestJitter {
    None,
    Full,
    Bounded,
}

impl Backoff {
    pub fn lib(&self) -> Library {
        match self {
            Backoff::Backon { .. } => Library::Backon,
            Backoff::TokioRetry { retry2: false, .. } => Library::TokioRetry,
            Backoff::TokioRetry { retry2: true, .. } => Library::TokioRetry2,
            Backoff::Backoff { .. } => Library::Backoff,
            Backoff::Reqwest { .. } => Library::ReqwestRetry,
            Backoff::Exponential { .. } => Library::ExponentialBackoff,
        }
    }
}

/// What applying one builder method did.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    Ok,
    /// A method or argument the model does not know: the policy becomes unknown.
    Unknown,
    /// The call panics or is rejected by the library at run time (the message says why).
    Problem(String),
}

fn num(arg: Option<&Arg>) -> Option<f64> {
    match arg? {
        Arg::Num(n) if n.is_finite() && *n >= 0.0 => Some(*n),
        _ => None,
    }
}

fn ms(arg: Option<&Arg>) -> Option<f64> {
    match arg? {
        Arg::Ms(ms) if ms.is_finite() && *ms >= 0.0 => Some(*ms),
        _ => None,
    }
}

/// `Some(duration)` / `None`.
fn opt_ms(arg: Option<&Arg>) -> Option<Option<f64>> {
    match arg? {
        Arg::None => Some(None),
        Arg::Some(inner) => ms(Some(inner)).map(Some),
        _ => None,
    }
}

fn count(arg: Option<&Arg>) -> Option<u64> {
    num(arg).filter(|n| n.fract() == 0.0).map(|n| n as u64)
}

impl Arg {
    /// A value not known here: unknown, a factory's parameter, or made from one.
    pub fn not_known(&self) -> bool {
        match self {
            Arg::Unknown | Arg::Param(_) => true,
            Arg::Some(inner) => inner.not_known(),
            Arg::Call(_, inner) => inner.iter().any(Arg::not_known),
            Arg::Range { lo, hi, .. } => lo.not_known() || hi.not_known(),
            _ => false,
        }
    }

    /// Whether a factory's parameter is in it.
    pub fn has_param(&self) -> bool {
        match self {
            Arg::Param(_) => true,
            Arg::Some(inner) => inner.has_param(),
            Arg::Call(_, inner) => inner.iter().any(Arg::has_param),
            Arg::Range { lo, hi, .. } => lo.has_param() || hi.has_param(),
            _ => false,
        }
    }

    /// The value with each factory parameter `Param(i)` replaced by `args[i]` (unknown when
    /// not given), and the conversions a parameter was kept in computed once it is known
    /// (`Duration::from_millis(base_ms)`, `max_delay.as_millis()`).
    pub fn given(&self, args: &[Arg]) -> Arg {
        match self {
            Arg::Param(i) => args.get(*i).cloned().unwrap_or(Arg::Unknown),
            Arg::Some(inner) => Arg::Some(Box::new(inner.given(args))),
            Arg::Call(path, inner) => {
                let inner: Vec<Arg> = inner.iter().map(|a| a.given(args)).collect();
                match (
                    path.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
                    inner.as_slice(),
                ) {
                    ([.., "Duration", unit], _) => duration(unit, &inner).map_or(Arg::Unknown, Arg::Ms),
                    (["as_millis"], [Arg::Ms(ms)]) => Arg::Num(ms.floor()),
                    (["as_secs"], [Arg::Ms(ms)]) => Arg::Num((ms / 1000.0).floor()),
                    (["as_millis" | "as_secs"], _) => Arg::Unknown,
                    _ => Arg::Call(path.clone(), inner),
                }
            }
            Arg::Range { lo, hi, inclusive } => Arg::Range {
                lo: Box::new(lo.given(args)),
                hi: Box::new(hi.given(args)),
                inclusive: *inclusive,
            },
            other => other.clone(),
        }
    }
}

/// `Duration::from_millis(50)` and friends, in milliseconds.
pub fn duration(unit: &str, args: &[Arg]) -> Option<f64> {
    let n = |i: usize| match args.get(i) {
        Some(Arg::Num(n)) if n.is_finite() && *n >= 0.0 => Some(*n),
        _ => None,
    };
    Some(match unit {
        "from_millis" => n(0)?,
        "from_secs" | "from_secs_f64" | "from_secs_f32" => n(0)? * 1000.0,
        "from_micros" => n(0)? / 1000.0,
        "from_nanos" => n(0)? / 1_000_000.0,
        "from_mins" => n(0)? * 60_000.0,
        "from_hours" => n(0)? * 3_600_000.0,
        "new" => n(0)? * 1000.0 + n(1)? / 1_000_000.0,
        _ => return None,
    })
}

/// [`constructor`] with each argument not known here (a parameter, an unknown value) given a
/// stand-in (2 as a number, 1 s as a duration): the configuration with what does not depend on
/// them right (jitter, caps set by methods), for a caller that masks the rest.
pub fn constructor_with_placeholders(path: &[String], args: &[Arg]) -> Option<(String, Backoff)> {
    let unknown = |a: &Arg| a.not_known();
    [Arg::Num(2.0), Arg::Ms(1000.0)].into_iter().find_map(|stand_in| {
        let filled: Vec<Arg> = args
            .iter()
            .map(|a| if unknown(a) { stand_in.clone() } else { a.clone() })
            .collect();
        constructor(path, &filled)
    })
}

/// `path` is a constructor call's callee with `use` declarations applied, e.g.
/// `["backon", "ExponentialBuilder", "default"]`. Returns how messages name the constructor
/// and the builder with the library's defaults.
pub fn constructor(path: &[String], args: &[Arg]) -> Option<(String, Backoff)> {
    let [krate, .., ty, function] = path else { return None };
    let name = format!("{ty}::{function}");
    let (krate, ty, function) = (krate.as_str(), ty.as_str(), function.as_str());
    let state = match krate {
        "backon" => backon::constructor(krate, ty, function, args)?,
        "tokio_retry" | "tokio_retry2" => tokio_retry::constructor(krate, ty, function, args)?,
        "backoff" => backoff::constructor(krate, ty, function, args)?,
        "reqwest_retry" | "retry_policies" => retry_policies::constructor(krate, ty, function, args)?,
        "exponential_backoff" => exponential_backoff::constructor(krate, ty, function, args)?,
        _ => return None,
    };
    Some((name, state))
}

pub use self::backoff::struct_literal;

/// A method called on a `let mut` builder as a statement of its own (`b.with_multiplier(2.0);`),
/// prefixed to its name: it changes the builder only where the builder's methods take
/// `&mut self` (backoff's `ExponentialBackoffBuilder`); another library's builder method takes
/// the builder by value and returns a new one, so what such a statement does is not known.
pub const BY_REF: &str = "mut:";

/// A statement the extractor cannot read that may change a `let mut` builder (a call taking
/// `&mut b`, `b = …`): every property is unknown after it.
pub const OPAQUE: &str = "&mut";

/// Methods that leave a builder's configuration as it is (`b.build()` builds a policy and
/// leaves `b` unchanged; stepping a strategy is not configuring it).
pub fn reads(method: &str) -> bool {
    matches!(
        method,
        "clone" | "to_owned" | "build" | "next" | "next_backoff" | "reset" | "get_elapsed_time"
    )
}

/// Applies one builder method (or struct field) to a builder.
pub fn apply(state: &mut Backoff, method: &str, args: &[Arg]) -> Applied {
    if let Some(inner) = method.strip_prefix(BY_REF) {
        if reads(inner) {
            return Applied::Ok;
        }
        return match state {
            Backoff::Backoff { .. } | Backoff::Exponential { .. } => apply(state, inner, args),
            _ => Applied::Unknown,
        };
    }
    // Methods that leave the schedule as it is.
    if matches!(
        method,
        "clone" | "to_owned" | "into" | "with_jitter_seed" | "into_iter" | "with_retry_log_level"
    ) {
        return Applied::Ok;
    }
    match state {
        Backoff::Backon { .. } => backon::apply(state, method, args),
        Backoff::TokioRetry { .. } => tokio_retry::apply(state, method, args),
        Backoff::Backoff { .. } => backoff::apply(state, method, args),
        Backoff::Reqwest { .. } => retry_policies::apply(state, method, args),
        Backoff::Exponential { .. } => exponential_backoff::apply(state, method, args),
    }
}

/// What a library's `apply` found: a method it knows, or one that makes the policy unknown.
fn known_if(known: Option<()>) -> Applied {
    if known.is_some() {
        Applied::Ok
    } else {
        Applied::Unknown
    }
}

/// The same builder without its jitter: what `retrylint policies` shows as the nominal
/// delays. (The simulator reads delays with the jitter at the middle of its range, which is
/// the nominal delay for Effect's symmetric 0.8–1.2; the Rust libraries' ranges are not
/// centred on it — backon adds 0–100 %, tokio-retry and reqwest-retry scale by 0–1,
/// tokio-retry2 by 0.5–1.5.)
pub fn without_jitter(state: &Backoff) -> Backoff {
    let mut plain = state.clone();
    match &mut plain {
        Backoff::Backon { jitter, .. } => *jitter = false,
        // A `jitter_range` scale drawn from one value (`2..3`) is no jitter: it stays.
        Backoff::TokioRetry { jitter, scale, .. } => {
            if *jitter {
                *jitter = false;
                *scale = None;
            }
        }
        Backoff::Backoff { randomization, .. } => *randomization = 0.0,
        Backoff::Reqwest { jitter, .. } => *jitter = ReqwestJitter::None,
        Backoff::Exponential { jitter, .. } => *jitter = 0.0,
    }
    plain
}

/// What a configured builder does, as retrylint reports it (and `tests/rust_oracle.rs`
/// checks against the crates): the attempts, gap and jitter of [`sched`], the nominal delays
/// of the builder without its jitter, and, under a total-time limit with jitter, bounds
/// rather than one draw's count.
pub fn summary(state: &Backoff) -> Summary {
    let mut summary = summarize(&sched(state));
    // Nominal delays are the configured ones, before jitter; the worst case keeps it.
    let plain = summarize(&sched(&without_jitter(state)));
    summary.delays = plain.delays;
    summary.total_ms = plain.total_ms.filter(|_| summary.total_ms.is_some());
    // Under a total-time limit, jitter decides how many delays fit: the run at either end of
    // the jitter range is not the worst case. The wait stays within the limit, and within
    // what the attempt cap allows without it. The attempts likewise: a count taken at one
    // point of the range is no bound.
    if let Some((limit, unlimited)) = time_limit(state) {
        let free = summarize(&sched(&unlimited));
        if summary.jitter == Jitter::Yes {
            summary.attempts = match free.attempts.bound() {
                Some(n) => Attempts::AtMost(n),
                None => Attempts::TimeLimited,
            };
        }
        if summary.worst_total_ms.is_some() {
            summary.worst_total_ms = Some(free.worst_total_ms.map_or(limit, |w| w.min(limit)));
        }
    }
    tokio_retry::bound_summary(state, &mut summary);
    retry_policies::bound_summary(state, &mut summary);
    summary
}

/// The total-time limit a builder stops at (backon's `with_total_delay`, backoff's
/// `max_elapsed_time`), and the same builder without it.
pub fn time_limit(state: &Backoff) -> Option<(f64, Backoff)> {
    let mut unlimited = state.clone();
    let limit = match &mut unlimited {
        Backoff::Backon { total_delay, .. } => total_delay.take()?,
        Backoff::Backoff {
            shape: BackoffShape::Exponential,
            max_elapsed,
            ..
        } => max_elapsed.take()?,
        _ => return None,
    };
    Some((limit, unlimited))
}

/// The integers `lo..hi` (`lo..=hi`) holds, as its lowest and highest: `Some(None)` when it
/// holds none (rand panics on drawing from it), `None` when the bounds are unknown.
fn range_bounds(lo: &Arg, hi: &Arg, inclusive: bool) -> Option<Option<(f64, f64)>> {
    let (lo, hi) = (count(Some(lo))?, count(Some(hi))?);
    // `a..b` draws from a … b − 1.
    let hi = if inclusive { Some(hi) } else { hi.checked_sub(1) };
    Some(hi.filter(|hi| lo <= *hi).map(|hi| (lo as f64, hi as f64)))
}

/// The last segment of a path.
fn path_tail(path: &[String]) -> &str {
    path.last().map_or("", String::as_str)
}

/// `elapsed + duration <= limit`: continue only while the next delay still fits in a total
/// (backon's `with_total_delay`, backoff's `max_elapsed_time`).
fn fits_within(limit: f64) -> Callback {
    Callback::Known(Rc::new(Lambda {
        params: Vec::new(),
        body: Term::Bin(
            BinOp::Le,
            Box::new(Term::Bin(
                BinOp::Add,
                Box::new(Term::Var("elapsed".into())),
                Box::new(Term::Var("duration".into())),
            )),
            Box::new(Term::Num(limit)),
        ),
    }))
}

/// `min(base × factor^n, cap)`, with the first delay uncapped when it is already over the cap
/// (backon and backoff grow only while below the cap, then clamp).
fn capped_exponential(base: f64, factor: f64, cap: Option<f64>) -> Sched {
    let exponential = Sched::Exponential { base, factor };
    match cap {
        None => exponential,
        Some(cap) if base > cap => Sched::Concat(Box::new(Sched::FromDelays(vec![base])), Box::new(Sched::Spaced(cap))),
        Some(cap) => Sched::Min(vec![exponential, Sched::Spaced(cap)]),
    }
}

/// The schedule a configured builder runs, as the retry loop runs it against an operation
/// that fails instantly.
pub fn sched(state: &Backoff) -> Sched {
    match *state {
        Backoff::Backon { .. } => backon::sched(state),
        Backoff::TokioRetry { .. } => tokio_retry::sched(state),
        Backoff::Backoff { .. } => backoff::sched(state),
        Backoff::Reqwest { .. } => retry_policies::sched(state),
        Backoff::Exponential { .. } => exponential_backoff::sched(state),
    }
}
