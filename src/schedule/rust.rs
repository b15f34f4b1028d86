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

/// A tokio-retry strategy as constructed: factor 1, no max delay, no jitter, never stops until
/// `.take(n)` (tokio-retry 0.3.2 src/strategy.rs; tokio-retry2 0.9.1 src/strategy/*.rs, the
/// same constructors and fields).
fn tokio_retry(shape: TokioShape, retry2: bool) -> Backoff {
    Backoff::TokioRetry {
        shape,
        factor: 1.0,
        max_delay: None,
        jitter: false,
        take: None,
        retry2,
        scale: None,
        max_interval: None,
    }
}

/// `path` is a constructor call's callee with `use` declarations applied, e.g.
/// `["backon", "ExponentialBuilder", "default"]`. Returns how messages name the constructor
/// and the builder with the library's defaults.
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

pub fn constructor(path: &[String], args: &[Arg]) -> Option<(String, Backoff)> {
    let [krate, .., ty, function] = path else { return None };
    let name = format!("{ty}::{function}");
    let state = match (krate.as_str(), ty.as_str(), function.as_str()) {
        // backon 1.6.0 src/backoff/exponential.rs `ExponentialBuilder::new`: jitter false,
        // factor 2.0, min_delay 1 s, max_delay Some(60 s), max_times Some(3), total_delay None.
        ("backon", "ExponentialBuilder", "new" | "default") if args.is_empty() => Backoff::Backon {
            shape: BackonShape::Exponential,
            jitter: false,
            factor: 2.0,
            min_delay: 1000.0,
            max_delay: Some(60_000.0),
            max_times: Some(3),
            total_delay: None,
        },
        // backon 1.6.0 src/backoff/constant.rs: delay 1 s, max_times Some(3), jitter false.
        ("backon", "ConstantBuilder", "new" | "default") if args.is_empty() => Backoff::Backon {
            shape: BackonShape::Constant,
            jitter: false,
            factor: 1.0,
            min_delay: 1000.0,
            max_delay: None,
            max_times: Some(3),
            total_delay: None,
        },
        // backon 1.6.0 src/backoff/fibonacci.rs: min_delay 1 s, max_delay Some(60 s),
        // max_times Some(3), jitter false.
        ("backon", "FibonacciBuilder", "new" | "default") if args.is_empty() => Backoff::Backon {
            shape: BackonShape::Fibonacci,
            jitter: false,
            factor: 1.0,
            min_delay: 1000.0,
            max_delay: Some(60_000.0),
            max_times: Some(3),
            total_delay: None,
        },
        // tokio-retry 0.3.2 src/strategy.rs: `from_millis(base)` yields base^1, base^2, …
        // milliseconds, times `factor` (default 1); no max_delay, never stops. tokio-retry2
        // 0.9.1 src/strategy/{exponential_backoff,fibonacci_backoff,fixed_interval}.rs: the
        // same (its other strategies below).
        (krate @ ("tokio_retry" | "tokio_retry2"), "ExponentialBackoff", "from_millis") => tokio_retry(
            TokioShape::Exponential {
                base: num(args.first())?,
            },
            krate == "tokio_retry2",
        ),
        (krate @ ("tokio_retry" | "tokio_retry2"), "FibonacciBackoff", "from_millis") => tokio_retry(
            TokioShape::Fibonacci {
                base: num(args.first())?,
            },
            krate == "tokio_retry2",
        ),
        (krate @ ("tokio_retry" | "tokio_retry2"), "FixedInterval", "from_millis") => {
            tokio_retry(TokioShape::Fixed { ms: num(args.first())? }, krate == "tokio_retry2")
        }
        (krate @ ("tokio_retry" | "tokio_retry2"), "FixedInterval", "new") => {
            tokio_retry(TokioShape::Fixed { ms: ms(args.first())? }, krate == "tokio_retry2")
        }
        // tokio-retry2 0.9.1 src/strategy/exponential_factor_backoff.rs: `from_millis(initial,
        // base_factor)`, `from_factor(base_factor)` (initial 500 ms); each delay
        // `initial × base_factor^n` truncated to whole milliseconds (at most u32::MAX ms).
        ("tokio_retry2", "ExponentialFactorBackoff", "from_millis") => tokio_retry(
            TokioShape::ExponentialFactor {
                initial: num(args.first())?,
                base_factor: num(args.get(1))?,
            },
            true,
        ),
        ("tokio_retry2", "ExponentialFactorBackoff", "from_factor") => tokio_retry(
            TokioShape::ExponentialFactor {
                initial: 500.0,
                base_factor: num(args.first())?,
            },
            true,
        ),
        // tokio-retry2 0.9.1 src/strategy/linear_backoff.rs: `new(initial)`,
        // `from_millis(ms)`, `from_secs(s)`; the increment starts as the initial delay.
        ("tokio_retry2", "LinearBackoff", constructor @ ("new" | "from_millis" | "from_secs")) => {
            let initial = match constructor {
                "new" => ms(args.first())?,
                "from_millis" => num(args.first())?,
                _ => num(args.first())? * 1000.0,
            };
            tokio_retry(
                TokioShape::Linear {
                    initial,
                    increment: initial,
                },
                true,
            )
        }
        ("backoff", "ExponentialBackoff" | "ExponentialBackoffBuilder", "default" | "new") if args.is_empty() => {
            backoff_default(BackoffShape::Exponential)
        }
        ("backoff", "Constant", "new") => backoff_default(BackoffShape::Constant(ms(args.first())?)),
        // retry-policies 0.5.2 src/policies/exponential_backoff.rs `ExponentialBackoffBuilder`
        // default: retry bounds 1 s … 30 min, `Jitter::Full`, base 2; no policy until built.
        ("reqwest_retry" | "retry_policies", "ExponentialBackoff", "builder") if args.is_empty() => Backoff::Reqwest {
            min: 1000.0,
            max: 30.0 * 60_000.0,
            jitter: ReqwestJitter::Full,
            base: 2.0,
            max_retries: None,
            total: None,
            built: false,
        },
        // exponential-backoff 2.1.1 src/lib.rs: `new(max_attempts, min, max)` (`max` a
        // `Duration`, `Some(d)` or `None`), jitter 0.3, factor 2; `default()`: 3 attempts,
        // 100 ms … 10 s.
        ("exponential_backoff", "Backoff", "new") => Backoff::Exponential {
            attempts: count(args.first())?,
            min: ms(args.get(1))?,
            max: ms(args.get(2)).map(Some).or_else(|| opt_ms(args.get(2)))?,
            jitter: 0.3,
            factor: 2.0,
        },
        ("exponential_backoff", "Backoff", "default") if args.is_empty() => Backoff::Exponential {
            attempts: 3,
            min: 100.0,
            max: Some(10_000.0),
            jitter: 0.3,
            factor: 2.0,
        },
        _ => return None,
    };
    Some((name, state))
}

/// backoff 0.4.0 src/default.rs: initial interval 500 ms, randomization factor 0.5,
/// multiplier 1.5, max interval 60 s, max elapsed time Some(15 min).
fn backoff_default(shape: BackoffShape) -> Backoff {
    Backoff::Backoff {
        shape,
        initial: 500.0,
        randomization: 0.5,
        multiplier: 1.5,
        max_interval: 60_000.0,
        max_elapsed: Some(900_000.0),
    }
}

/// A struct literal of a backoff type: `backoff::ExponentialBackoff { … }`, `Zero {}`.
/// Fields become `=field` operations on the defaults.
pub fn struct_literal(path: &[String]) -> Option<(String, Backoff)> {
    let [krate, .., ty] = path else { return None };
    if krate != "backoff" {
        return None;
    }
    let shape = match ty.as_str() {
        "ExponentialBackoff" => BackoffShape::Exponential,
        "Zero" => BackoffShape::Zero,
        "Stop" => BackoffShape::Stop,
        _ => return None,
    };
    Some((format!("{ty} {{ .. }}"), backoff_default(shape)))
}

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
    let arg = |i: usize| args.get(i);
    // Methods that leave the schedule as it is.
    if matches!(
        method,
        "clone" | "to_owned" | "into" | "with_jitter_seed" | "into_iter" | "with_retry_log_level"
    ) {
        return Applied::Ok;
    }
    let known = match state {
        Backoff::Backon {
            shape,
            jitter,
            factor,
            min_delay,
            max_delay,
            max_times,
            total_delay,
        } => {
            let exponential = *shape == BackonShape::Exponential;
            let constant = *shape == BackonShape::Constant;
            match method {
                "with_jitter" => {
                    *jitter = true;
                    Some(())
                }
                "with_factor" if exponential => num(arg(0)).map(|n| *factor = n),
                "with_min_delay" if !constant => ms(arg(0)).map(|d| *min_delay = d),
                "with_delay" if constant => ms(arg(0)).map(|d| *min_delay = d),
                "with_max_delay" if !constant => ms(arg(0)).map(|d| *max_delay = Some(d)),
                "without_max_delay" if !constant => {
                    *max_delay = None;
                    Some(())
                }
                "with_max_times" => count(arg(0)).map(|n| *max_times = Some(n)),
                "without_max_times" => {
                    *max_times = None;
                    Some(())
                }
                "with_total_delay" if exponential => opt_ms(arg(0)).map(|d| *total_delay = d),
                // `build()` turns the builder into its iterator: the same schedule.
                "build" => Some(()),
                _ => None,
            }
        }
        Backoff::TokioRetry {
            shape,
            factor,
            max_delay,
            jitter,
            take,
            retry2,
            scale,
            max_interval,
        } => {
            // `factor` and `max_delay` are the strategy's own; after an iterator adapter
            // (`map`, `take`, `max_interval`) they no longer exist.
            let own =
                !*jitter && take.is_none() && max_interval.is_none() && !matches!(shape, TokioShape::Fixed { .. });
            let multiplied = matches!(shape, TokioShape::Exponential { .. } | TokioShape::Fibonacci { .. });
            match method {
                "factor" if own && multiplied => num(arg(0)).map(|n| *factor = n),
                "max_delay" if own => ms(arg(0)).map(|d| *max_delay = Some(d)),
                // tokio-retry2's `max_delay_millis(ms)`: `max_delay(Duration::from_millis(ms))`.
                "max_delay_millis" if own && *retry2 => count(arg(0)).map(|n| *max_delay = Some(n as f64)),
                // ExponentialFactorBackoff's `initial_delay(ms)`.
                "initial_delay" if own => match shape {
                    TokioShape::ExponentialFactor { initial, .. } => count(arg(0)).map(|n| *initial = n as f64),
                    _ => None,
                },
                // LinearBackoff's `increment(d)`, `increment_millis(ms)`, `increment_secs(s)`.
                "increment" | "increment_millis" | "increment_secs" if own => match shape {
                    TokioShape::Linear { increment, .. } => match method {
                        "increment" => ms(arg(0)),
                        "increment_millis" => count(arg(0)).map(|n| n as f64),
                        _ => count(arg(0)).map(|n| n as f64 * 1000.0),
                    }
                    .map(|d| *increment = d),
                    _ => None,
                },
                // `.map(jitter)`: tokio_retry::strategy::jitter, `d * rand::random::<f64>()`;
                // tokio_retry2::strategy::jitter, `d * (rand::random::<f64>() + 0.5)`;
                // tokio-retry2's `jitter_with_bounds(min, max)`, `d * rand[min, max)`, and
                // `jitter_range(a..b)`, one integer drawn from the range when the strategy is
                // made and every delay multiplied by it. Jitter over jitter is unknown.
                "map" if !*jitter => match arg(0) {
                    Some(Arg::Path(path)) if path.last().is_some_and(|p| p == "jitter") => {
                        *jitter = true;
                        Some(())
                    }
                    Some(Arg::Call(path, args)) if *retry2 => match (path_tail(path), args.as_slice()) {
                        ("jitter_with_bounds", [lo, hi]) => match (num(Some(lo)), num(Some(hi))) {
                            (Some(lo), Some(hi)) if lo <= hi => {
                                *jitter = lo < hi;
                                *scale = Some(Box::new((lo, hi)));
                                Some(())
                            }
                            _ => None,
                        },
                        ("jitter_range", [Arg::Range { lo, hi, inclusive }]) => {
                            match range_bounds(lo, hi, *inclusive) {
                                Some(Some((lo, hi))) => {
                                    *jitter = lo < hi;
                                    *scale = Some(Box::new((lo, hi)));
                                    Some(())
                                }
                                Some(None) => {
                                    return Applied::Problem(
                                        "`jitter_range` over an empty range panics when the strategy is made".into(),
                                    )
                                }
                                None => None,
                            }
                        }
                        _ => None,
                    },
                    _ => None,
                },
                "take" => count(arg(0)).map(|n| *take = Some(take.map_or(n, |t| t.min(n)))),
                // tokio-retry2 0.9.1 src/strategy/max_interval.rs: `max_interval(ms)` and
                // `max_duration(d)` stop once that long has passed since the adapter was made
                // (the operation's own time counts too).
                "max_interval" if *retry2 => count(arg(0)).map(|n| {
                    *max_interval = Some(max_interval.map_or(n as f64, |m| m.min(n as f64)));
                }),
                "max_duration" if *retry2 => {
                    ms(arg(0)).map(|d| *max_interval = Some(max_interval.map_or(d, |m| m.min(d))))
                }
                _ => None,
            }
        }
        Backoff::Backoff {
            shape,
            initial,
            randomization,
            multiplier,
            max_interval,
            max_elapsed,
        } => {
            let exponential = *shape == BackoffShape::Exponential;
            match method {
                "with_initial_interval" | "=initial_interval" if exponential => ms(arg(0)).map(|d| *initial = d),
                "with_randomization_factor" | "=randomization_factor" if exponential => {
                    num(arg(0)).map(|n| *randomization = n)
                }
                "with_multiplier" | "=multiplier" if exponential => num(arg(0)).map(|n| *multiplier = n),
                "with_max_interval" | "=max_interval" if exponential => ms(arg(0)).map(|d| *max_interval = d),
                "with_max_elapsed_time" | "=max_elapsed_time" if exponential => {
                    opt_ms(arg(0)).map(|d| *max_elapsed = d)
                }
                // `retry` resets the backoff before its first use: the current interval and
                // the start time a literal sets are overwritten.
                "=current_interval" | "=start_time" | "=clock" if exponential => Some(()),
                "build" => Some(()),
                _ => None,
            }
        }
        Backoff::Reqwest {
            min,
            max,
            jitter,
            base,
            max_retries,
            total,
            built,
        } => {
            let building = !*built;
            match method {
                "retry_bounds" if building => match (ms(arg(0)), ms(arg(1))) {
                    (Some(lo), Some(hi)) if lo > hi => {
                        return Applied::Problem(
                            "`retry_bounds` panics when the minimum interval is larger than the maximum".into(),
                        )
                    }
                    (Some(lo), Some(hi)) => Some((*min, *max) = (lo, hi)),
                    _ => None,
                },
                "jitter" if building => match arg(0) {
                    Some(Arg::Path(path)) => match path.last().map(String::as_str) {
                        Some("None") => {
                            *jitter = ReqwestJitter::None;
                            Some(())
                        }
                        Some("Full") => {
                            *jitter = ReqwestJitter::Full;
                            Some(())
                        }
                        Some("Bounded") => {
                            *jitter = ReqwestJitter::Bounded;
                            Some(())
                        }
                        _ => None,
                    },
                    _ => None,
                },
                "base" if building => num(arg(0)).map(|n| *base = n),
                "build_with_max_retries" if building => count(arg(0)).map(|n| {
                    *max_retries = Some(n);
                    *built = true;
                }),
                "build_with_total_retry_duration" if building => ms(arg(0)).map(|d| {
                    *total = Some(d);
                    *built = true;
                }),
                "build_with_total_retry_duration_and_max_retries" if building => {
                    ms(arg(0)).zip(count(arg(1))).map(|(d, n)| {
                        *total = Some(d);
                        *max_retries = Some(n);
                        *built = true;
                    })
                }
                // The retries whose nominal delays fit in the total, computed at build time.
                "build_with_total_retry_duration_and_limit_retries" if building => ms(arg(0)).map(|d| {
                    let mut sum = 0.0;
                    let mut n = 0u64;
                    loop {
                        sum += (*min * base.powi(n.min(i32::MAX as u64) as i32)).min(*max);
                        if sum >= d || n > 10_000 {
                            break;
                        }
                        n += 1;
                    }
                    *total = Some(d);
                    *max_retries = Some(n);
                    *built = true;
                }),
                _ => None,
            }
        }
        // exponential-backoff 2.1.1: setters on `&mut self`; `set_jitter` panics outside 0…1.
        Backoff::Exponential {
            attempts,
            min,
            max,
            jitter,
            factor,
        } => match method {
            "set_max_attempts" => count(arg(0)).map(|n| *attempts = n),
            "set_min" => ms(arg(0)).map(|d| *min = d),
            "set_max" => ms(arg(0)).map(|d| *max = Some(d)),
            "set_factor" => count(arg(0)).map(|n| *factor = n as f64),
            "set_jitter" => match arg(0) {
                Some(Arg::Num(j)) if !(0.0..=1.0).contains(j) => {
                    return Applied::Problem("`set_jitter` panics unless the jitter is between 0 and 1".into())
                }
                // `rng.u32(0..0)`: a jitter under 1 % that is not zero panics at the first delay.
                Some(Arg::Num(j)) if *j > 0.0 && jitter_percent(*j) == 0 => return Applied::Problem(
                    "a jitter above 0 but under 0.01 panics at the first delay (the crate draws from an empty range)"
                        .into(),
                ),
                _ => num(arg(0)).map(|j| *jitter = j),
            },
            "iter" => Some(()),
            _ => None,
        },
    };
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
    // tokio-retry2's `max_interval` counts the operation's time too: the delays that fit when
    // it takes none are the most there can be. With jitter, the count depends on the draws;
    // the wait stops within one gap (at its largest draw) of the limit.
    if let Backoff::TokioRetry {
        max_interval: Some(limit),
        jitter,
        scale,
        retry2,
        ..
    } = state
    {
        let mut unlimited = state.clone();
        if let Backoff::TokioRetry { max_interval, .. } = &mut unlimited {
            *max_interval = None;
        }
        let free = summarize(&sched(&unlimited));
        let bound = if *jitter {
            free.attempts.bound()
        } else {
            summary.attempts.bound()
        };
        summary.attempts = bound.map_or(Attempts::TimeLimited, Attempts::AtMost);
        if *jitter {
            let top = scale.as_deref().map_or(if *retry2 { 1.5 } else { 1.0 }, |(_, hi)| *hi);
            summary.worst_total_ms = match (free.gap, free.worst_total_ms) {
                (super::Gap::Capped(cap), worst) => {
                    let over = limit + cap * top;
                    Some(worst.map_or(over, |w| w.min(over)))
                }
                (_, worst) => worst,
            };
        }
    }
    // retry-policies' timed policy asks "has the total passed?" before each retry, then
    // waits a drawn delay: with jitter, any number of short draws fit, and the last wait
    // starts just before the total and lasts up to the largest gap.
    if let Backoff::Reqwest {
        total: Some(limit),
        max,
        jitter,
        ..
    } = state
    {
        if *jitter != ReqwestJitter::None {
            let mut unlimited = state.clone();
            if let Backoff::Reqwest { total, .. } = &mut unlimited {
                *total = None;
            }
            let free = summarize(&sched(&unlimited));
            summary.attempts = match free.attempts.bound() {
                Some(n) => Attempts::AtMost(n),
                None => Attempts::TimeLimited,
            };
            let over = limit + max;
            summary.worst_total_ms = Some(free.worst_total_ms.map_or(over, |w| w.min(over)));
        }
    }
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

/// u32::MAX milliseconds, where tokio-retry2's ExponentialFactorBackoff saturates.
const U32_MAX_MS: f64 = 4_294_967_295.0;

/// How many delays of a LinearBackoff are listed before its growth is only "growing".
const LINEAR_LISTED: u64 = 1000;

/// tokio-retry2's LinearBackoff: `initial + increment × n`, at most `max_delay`. The IR's
/// `Linear` is `base × (n + 1)`: it is that when the increment is the initial delay, a
/// constant when the increment is zero; otherwise the delays are listed up to the cap (or
/// the first thousand, then growing without a known formula).
fn linear(initial: f64, increment: f64, max_delay: Option<f64>) -> Sched {
    if increment == 0.0 {
        return Sched::Spaced(initial);
    }
    if increment == initial {
        return Sched::Linear(initial);
    }
    let mut delays = Vec::new();
    for n in 0..LINEAR_LISTED {
        let delay = initial + increment * n as f64;
        if max_delay.is_some_and(|cap| delay >= cap) {
            return Sched::Concat(
                Box::new(Sched::FromDelays(delays)),
                Box::new(Sched::Spaced(max_delay.unwrap_or(delay))),
            );
        }
        delays.push(delay);
    }
    Sched::Concat(Box::new(Sched::FromDelays(delays)), Box::new(Sched::GrowingSome))
}

/// `elapsed <= limit`: continue while no more than `limit` has passed before the next delay
/// (tokio-retry2's `max_interval`, counting the delays only: the operation's time makes it
/// stop sooner).
fn elapsed_within(limit: f64) -> Callback {
    Callback::Known(Rc::new(Lambda {
        params: Vec::new(),
        body: Term::Bin(
            BinOp::Le,
            Box::new(Term::Var("elapsed".into())),
            Box::new(Term::Num(limit)),
        ),
    }))
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

/// backon's Fibonacci: each delay is the sum of the two before while the current one is
/// below `max_delay`, then stays — so the last step can overshoot the maximum (1 s … 34 s,
/// 55 s, 89 s, 89 s, … with the defaults).
fn backon_fibonacci(min: f64, max: Option<f64>) -> Sched {
    let Some(max) = max else {
        return Sched::Fibonacci {
            base: min,
            skip_first: false,
        };
    };
    if min <= 0.0 {
        return Sched::Spaced(0.0);
    }
    let mut delays = vec![min];
    let (mut current, mut previous) = (min, None::<f64>);
    while current < max {
        if delays.len() > 200 {
            return Sched::Unknown;
        }
        if let Some(p) = previous {
            let next = current + p;
            previous = Some(current);
            current = next;
        } else {
            previous = Some(current);
        }
        delays.push(current);
    }
    let last = delays.pop().unwrap_or(min);
    if delays.is_empty() {
        Sched::Spaced(last)
    } else {
        Sched::Concat(Box::new(Sched::FromDelays(delays)), Box::new(Sched::Spaced(last)))
    }
}

/// The schedule a configured builder runs, as the retry loop runs it against an operation
/// that fails instantly.
pub fn sched(state: &Backoff) -> Sched {
    match *state {
        // backon 1.6.0: jitter adds `delay × rand[0, 1)` (exponential, constant) or
        // `min_delay × rand[0, 1)` (fibonacci); `max_times` counts retries; `total_delay`
        // stops before a delay that would take the sum of the delays past it.
        Backoff::Backon {
            shape,
            jitter,
            factor,
            min_delay,
            max_delay,
            max_times,
            total_delay,
        } => {
            let mut s = match shape {
                BackonShape::Exponential => capped_exponential(min_delay, factor, max_delay),
                BackonShape::Constant => Sched::Spaced(min_delay),
                BackonShape::Fibonacci => backon_fibonacci(min_delay, max_delay),
            };
            if jitter {
                s = match shape {
                    BackonShape::Fibonacci => Sched::JitteredAdd {
                        inner: Box::new(s),
                        max: min_delay,
                    },
                    _ => Sched::Jittered {
                        inner: Box::new(s),
                        min: 1.0,
                        max: 2.0,
                    },
                };
            }
            if let Some(total) = total_delay {
                s = Sched::While(Box::new(s), fits_within(total));
            }
            match max_times {
                Some(n) => Sched::Times(Box::new(s), n),
                None => s,
            }
        }
        // tokio-retry 0.3.2: exponential is base^(n+1) × factor ms, fibonacci base, base, 2×base
        // … × factor, both clamped to max_delay; `jitter` scales by rand[0, 1) (tokio-retry2
        // 0.9.1 src/strategy/jitter.rs: by rand[0.5, 1.5)); never stops without `.take(n)`.
        Backoff::TokioRetry {
            shape,
            factor,
            max_delay,
            jitter,
            take,
            retry2,
            ref scale,
            max_interval,
        } => {
            let scale = scale.as_deref().copied();
            // A constant scale (`jitter_range(2..3)`, `jitter_with_bounds(2.0, 2.0)`)
            // multiplies every delay, the cap's included.
            let k = match (jitter, scale) {
                (false, Some((k, _))) => k,
                _ => 1.0,
            };
            let max_delay = max_delay.map(|cap| cap * k);
            let mut s = match shape {
                TokioShape::Exponential { base } => Sched::Exponential {
                    base: base * factor * k,
                    factor: base,
                },
                TokioShape::Fibonacci { base } => Sched::Fibonacci {
                    base: base * factor * k,
                    skip_first: false,
                },
                TokioShape::Fixed { ms } => Sched::Spaced(ms * k),
                TokioShape::ExponentialFactor { initial, base_factor } => Sched::Exponential {
                    base: initial.min(U32_MAX_MS) * k,
                    factor: base_factor,
                },
                TokioShape::Linear { initial, increment } => linear(initial * k, increment * k, max_delay),
            };
            if let Some(cap) = max_delay {
                s = Sched::Min(vec![s, Sched::Spaced(cap)]);
            }
            if let TokioShape::ExponentialFactor { .. } = shape {
                // Saturated at u32::MAX milliseconds (about 50 days).
                s = Sched::Min(vec![s, Sched::Spaced(U32_MAX_MS * k)]);
            }
            match (jitter, scale) {
                (true, Some((min, max))) => {
                    s = Sched::Jittered {
                        inner: Box::new(s),
                        min,
                        max,
                    }
                }
                (true, None) => {
                    let (min, max) = if retry2 { (0.5, 1.5) } else { (0.0, 1.0) };
                    s = Sched::Jittered {
                        inner: Box::new(s),
                        min,
                        max,
                    };
                }
                (false, _) => {}
            }
            if let Some(limit) = max_interval {
                s = Sched::While(Box::new(s), elapsed_within(limit));
            }
            match take {
                Some(n) => Sched::Times(Box::new(s), n),
                None => s,
            }
        }
        // backoff 0.4.0 src/exponential.rs: interval × multiplier up to max_interval, each
        // delay drawn from interval × [1 − r, 1 + r]; stops when the elapsed time plus the
        // next delay would pass max_elapsed_time (`None`: never).
        Backoff::Backoff {
            shape,
            initial,
            randomization,
            multiplier,
            max_interval,
            max_elapsed,
        } => match shape {
            BackoffShape::Constant(d) => Sched::Spaced(d),
            BackoffShape::Zero => Sched::Forever,
            BackoffShape::Stop => Sched::Recurs(0),
            BackoffShape::Exponential => {
                let mut s = capped_exponential(initial, multiplier, Some(max_interval));
                if randomization > 0.0 {
                    s = Sched::Jittered {
                        inner: Box::new(s),
                        min: (1.0 - randomization).max(0.0),
                        max: 1.0 + randomization,
                    };
                }
                match max_elapsed {
                    Some(limit) => Sched::While(Box::new(s), fits_within(limit)),
                    None => s,
                }
            }
        },
        // retry-policies 0.5.2: min(max, min × base^n); `Jitter::Full` scales by rand[0, 1),
        // `Bounded` draws from [min/2, delay] (modelled as delay × [0.5, 1]: exact at the
        // first retry and at the top of the range, which is what totals need); the timed
        // policy stops once the elapsed time reaches the total.
        Backoff::Reqwest {
            min,
            max,
            jitter,
            base,
            max_retries,
            total,
            built,
        } => {
            if !built {
                return Sched::Unknown;
            }
            let mut s = Sched::Min(vec![
                Sched::Exponential {
                    base: min,
                    factor: base,
                },
                Sched::Spaced(max),
            ]);
            s = match jitter {
                ReqwestJitter::None => s,
                ReqwestJitter::Full => Sched::Jittered {
                    inner: Box::new(s),
                    min: 0.0,
                    max: 1.0,
                },
                ReqwestJitter::Bounded => Sched::Jittered {
                    inner: Box::new(s),
                    min: 0.5,
                    max: 1.0,
                },
            };
            if let Some(limit) = total {
                s = Sched::Max(vec![s, Sched::During { limit, strict: true }]);
            }
            match max_retries {
                Some(n) => Sched::Times(Box::new(s), n),
                None => s,
            }
        }
        // exponential-backoff 2.1.1 src/into_iter.rs: delay n is `min × factor^n`, jittered
        // in whole percents (`j = (jitter × 100) as u32`: down by up to j − 1 %, or up by
        // j/2 to j − 1 %), then clamped to `min ..= max`: past the cap the jitter is clamped
        // away. `attempts` attempts have `attempts − 1` delays between them.
        Backoff::Exponential {
            attempts,
            min,
            max,
            jitter,
            factor,
        } => {
            let mut s = Sched::Exponential { base: min, factor };
            let percent = f64::from(jitter_percent(jitter));
            if percent > 1.0 {
                s = Sched::Jittered {
                    inner: Box::new(s),
                    min: 1.0 - (percent - 1.0) / 100.0,
                    max: 1.0 + (percent - 1.0) / 100.0,
                };
            }
            s = Sched::Max(vec![s, Sched::Spaced(min)]);
            if let Some(max) = max {
                s = Sched::Min(vec![s, Sched::Spaced(max)]);
            }
            Sched::Times(Box::new(s), attempts.saturating_sub(1))
        }
    }
}

/// exponential-backoff's jitter in whole percents, as the crate computes it (in `f32`).
fn jitter_percent(jitter: f64) -> u32 {
    (jitter as f32 * 100f32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{summarize, Attempts, Gap, Jitter};

    fn path(text: &str) -> Vec<String> {
        text.split("::").map(String::from).collect()
    }

    fn op(method: &str, args: Vec<Arg>) -> (String, Vec<Arg>) {
        (method.into(), args)
    }

    fn built(ctor: &str, args: &[Arg], ops: Vec<(String, Vec<Arg>)>) -> Backoff {
        let (_, mut state) = constructor(&path(ctor), args).expect("known constructor");
        for op in &ops {
            assert_eq!(apply(&mut state, &op.0, &op.1), Applied::Ok, "{op:?}");
        }
        state
    }

    #[test]
    fn backon_exponential_defaults() {
        let s = summarize(&sched(&built("backon::ExponentialBuilder::default", &[], vec![])));
        assert_eq!(s.attempts, Attempts::Exact(3));
        assert_eq!(s.delays.as_deref(), Some(&[1000.0, 2000.0, 4000.0][..]));
        assert_eq!(s.gap, Gap::Capped(60_000.0));
        assert_eq!(s.jitter, Jitter::No);
    }

    #[test]
    fn backon_total_delay_stops_before_the_total() {
        let state = built(
            "backon::ExponentialBuilder::default",
            &[],
            vec![
                op("with_factor", vec![Arg::Num(1.0)]),
                op("with_total_delay", vec![Arg::Some(Box::new(Arg::Ms(3000.0)))]),
                op("with_max_times", vec![Arg::Num(5.0)]),
            ],
        );
        // backon's own test: three 1 s delays, then None.
        let s = summarize(&sched(&state));
        assert_eq!(s.delays.as_deref(), Some(&[1000.0, 1000.0, 1000.0][..]));
    }

    #[test]
    fn backon_fibonacci_overshoots_its_max_delay() {
        let s = summarize(&sched(&built(
            "backon::FibonacciBuilder::default",
            &[],
            vec![op("without_max_times", vec![])],
        )));
        assert_eq!(s.gap, Gap::Capped(89_000.0));
        assert_eq!(s.attempts, Attempts::Unbounded);
        let first: Vec<f64> = s.delays.unwrap().into_iter().take(12).collect();
        assert_eq!(
            first,
            [1.0, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0, 89.0].map(|x| x * 1000.0)
        );
    }

    #[test]
    fn tokio_retry_exponential_is_a_power_of_its_base() {
        let s = summarize(&sched(&built(
            "tokio_retry::ExponentialBackoff::from_millis",
            &[Arg::Num(10.0)],
            vec![op("take", vec![Arg::Num(3.0)])],
        )));
        assert_eq!(s.delays.as_deref(), Some(&[10.0, 100.0, 1000.0][..]));
        let s = summarize(&sched(&built(
            "tokio_retry::ExponentialBackoff::from_millis",
            &[Arg::Num(2.0)],
            vec![
                op("factor", vec![Arg::Num(1000.0)]),
                op("max_delay", vec![Arg::Ms(4000.0)]),
                op("take", vec![Arg::Num(4.0)]),
            ],
        )));
        assert_eq!(s.delays.as_deref(), Some(&[2000.0, 4000.0, 4000.0, 4000.0][..]));
    }

    #[test]
    fn tokio_retry2_has_the_same_strategies_and_its_own_jitter() {
        let ops = || {
            vec![
                op("max_delay_millis", vec![Arg::Num(25.0)]),
                op("map", vec![Arg::Path(path("tokio_retry2::strategy::jitter"))]),
                op("take", vec![Arg::Num(5.0)]),
            ]
        };
        let state = built(
            "tokio_retry2::strategy::FibonacciBackoff::from_millis",
            &[Arg::Num(10.0)],
            ops(),
        );
        assert_eq!(state.lib(), Library::TokioRetry2);
        let s = summary(&state);
        assert_eq!(s.attempts, Attempts::Exact(5));
        assert_eq!(s.delays.as_deref(), Some(&[10.0, 10.0, 20.0, 25.0, 25.0][..]));
        assert_eq!(s.jitter, Jitter::Yes);
        // `jitter` draws from 0.5–1.5 times the delay (tokio-retry's from 0–1).
        let Sched::Times(jittered, 5) = sched(&state) else {
            panic!()
        };
        assert!(
            matches!(*jittered, Sched::Jittered { min: 0.5, max: 1.5, .. }),
            "{jittered:?}"
        );
        // tokio-retry 0.3 has no `max_delay_millis`.
        let (_, mut old) = constructor(
            &path("tokio_retry::strategy::FibonacciBackoff::from_millis"),
            &[Arg::Num(10.0)],
        )
        .unwrap();
        assert_eq!(apply(&mut old, "max_delay_millis", &[Arg::Num(25.0)]), Applied::Unknown);
    }

    #[test]
    fn backoff_defaults_stop_after_fifteen_minutes() {
        let s = summarize(&sched(&built("backoff::ExponentialBackoff::default", &[], vec![])));
        assert!(matches!(s.attempts, Attempts::AtMost(_)), "{:?}", s.attempts);
        assert_eq!(s.gap, Gap::Capped(60_000.0));
        assert_eq!(s.jitter, Jitter::Yes);
        let worst = s.worst_total_ms.unwrap();
        assert!(worst <= 900_000.0 && worst > 800_000.0, "{worst}");
        let unbounded = built(
            "backoff::ExponentialBackoff::default",
            &[],
            vec![op("=max_elapsed_time", vec![Arg::None])],
        );
        assert_eq!(summarize(&sched(&unbounded)).attempts, Attempts::Unbounded);
    }

    #[test]
    fn reqwest_retry_needs_a_build() {
        let (_, mut state) = constructor(&path("reqwest_retry::policies::ExponentialBackoff::builder"), &[]).unwrap();
        assert!(matches!(sched(&state), Sched::Unknown));
        assert_eq!(
            apply(&mut state, "build_with_max_retries", &[Arg::Num(3.0)]),
            Applied::Ok
        );
        let s = summarize(&sched(&state));
        assert_eq!(s.attempts, Attempts::Exact(3));
        assert_eq!(s.worst_total_ms, Some(7000.0));
        let mut bad = constructor(&path("retry_policies::ExponentialBackoff::builder"), &[])
            .unwrap()
            .1;
        assert!(matches!(
            apply(&mut bad, "retry_bounds", &[Arg::Ms(3000.0), Arg::Ms(2000.0)]),
            Applied::Problem(_)
        ));
    }

    #[test]
    fn exponential_backoff_counts_attempts_and_jitters_in_whole_percents() {
        // `default()`: 3 attempts are 2 gaps, 100 and 200 ms, jittered by up to 29 %.
        let s = summary(&built("exponential_backoff::Backoff::default", &[], vec![]));
        assert_eq!(s.attempts, Attempts::Exact(2));
        assert_eq!(s.delays.as_deref(), Some(&[100.0, 200.0][..]));
        assert_eq!(s.jitter, Jitter::Yes);
        // `None` as the maximum: the gap grows without a cap.
        let args = [Arg::Num(6.0), Arg::Ms(50.0), Arg::None];
        let s = summary(&built("exponential_backoff::Backoff::new", &args, vec![]));
        assert_eq!((s.attempts, s.gap), (Attempts::Exact(5), Gap::Growing));
        // 0.01 is one percent: `rng.u32(0..2)` moves no delay; 0.005 draws from an empty range.
        let one = built(
            "exponential_backoff::Backoff::new",
            &[Arg::Num(4.0), Arg::Ms(50.0), Arg::Ms(1000.0)],
            vec![op("mut:set_jitter", vec![Arg::Num(0.01)])],
        );
        assert_eq!(summary(&one).jitter, Jitter::No);
        let mut tiny = one.clone();
        assert!(matches!(
            apply(&mut tiny, "mut:set_jitter", &[Arg::Num(0.005)]),
            Applied::Problem(_)
        ));
        // A setter as a statement changes the `let mut`; a by-value chain method is unknown.
        assert_eq!(apply(&mut tiny, "with_max_times", &[Arg::Num(3.0)]), Applied::Unknown);
    }
}
