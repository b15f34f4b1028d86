//! tokio-retry 0.3.2 and tokio-retry2 0.9.1: strategies as iterators of delays, with
//! `.map(jitter)`, `.take(n)` and tokio-retry2's adapters.

use std::rc::Rc;

use super::{count, known_if, ms, num, path_tail, range_bounds};
use super::{Applied, Arg, Backoff, TokioShape};
use crate::schedule::{summarize, Attempts, BinOp, Callback, Gap, Lambda, Sched, Summary, Term};

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

pub(super) fn constructor(krate: &str, ty: &str, function: &str, args: &[Arg]) -> Option<Backoff> {
    Some(match (krate, ty, function) {
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
        _ => return None,
    })
}

pub(super) fn apply(state: &mut Backoff, method: &str, args: &[Arg]) -> Applied {
    let arg = |i: usize| args.get(i);
    let known = match state {
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
        _ => None,
    };
    known_if(known)
}

pub(super) fn sched(state: &Backoff) -> Sched {
    match *state {
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
        _ => Sched::Unknown,
    }
}

/// tokio-retry2's `max_interval` counts the operation's time too: the delays that fit when
/// it takes none are the most there can be. With jitter, the count depends on the draws;
/// the wait stops within one gap (at its largest draw) of the limit.
pub(super) fn bound_summary(state: &Backoff, summary: &mut Summary) {
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
                (Gap::Capped(cap), worst) => {
                    let over = limit + cap * top;
                    Some(worst.map_or(over, |w| w.min(over)))
                }
                (_, worst) => worst,
            };
        }
    }
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
