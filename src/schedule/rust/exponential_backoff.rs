//! The exponential-backoff crate (2.1.1): a `Backoff` iterated by the code itself.

use super::{count, known_if, ms, num, opt_ms};
use super::{Applied, Arg, Backoff};
use crate::schedule::Sched;

pub(super) fn constructor(krate: &str, ty: &str, function: &str, args: &[Arg]) -> Option<Backoff> {
    Some(match (krate, ty, function) {
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
    })
}

pub(super) fn apply(state: &mut Backoff, method: &str, args: &[Arg]) -> Applied {
    let arg = |i: usize| args.get(i);
    let known = match state {
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
        _ => None,
    };
    known_if(known)
}

pub(super) fn sched(state: &Backoff) -> Sched {
    match *state {
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
        _ => Sched::Unknown,
    }
}

/// exponential-backoff's jitter in whole percents, as the crate computes it (in `f32`).
fn jitter_percent(jitter: f64) -> u32 {
    (jitter as f32 * 100f32) as u32
}
