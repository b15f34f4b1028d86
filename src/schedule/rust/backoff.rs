//! backoff 0.4.0: `ExponentialBackoff` (a struct literal or `ExponentialBackoffBuilder`),
//! `Constant`, `Zero` and `Stop`.

use super::{capped_exponential, fits_within, known_if, ms, num, opt_ms};
use super::{Applied, Arg, Backoff, BackoffShape};
use crate::schedule::Sched;

pub(super) fn constructor(krate: &str, ty: &str, function: &str, args: &[Arg]) -> Option<Backoff> {
    Some(match (krate, ty, function) {
        ("backoff", "ExponentialBackoff" | "ExponentialBackoffBuilder", "default" | "new") if args.is_empty() => {
            backoff_default(BackoffShape::Exponential)
        }
        ("backoff", "Constant", "new") => backoff_default(BackoffShape::Constant(ms(args.first())?)),
        _ => return None,
    })
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

pub(super) fn apply(state: &mut Backoff, method: &str, args: &[Arg]) -> Applied {
    let arg = |i: usize| args.get(i);
    let known = match state {
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
        _ => None,
    };
    known_if(known)
}

pub(super) fn sched(state: &Backoff) -> Sched {
    match *state {
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
        _ => Sched::Unknown,
    }
}
