//! backon 1.6.0: `ExponentialBuilder`, `ConstantBuilder` and `FibonacciBuilder`.

use super::{capped_exponential, count, fits_within, known_if, ms, num, opt_ms};
use super::{Applied, Arg, Backoff, BackonShape};
use crate::schedule::Sched;

pub(super) fn constructor(krate: &str, ty: &str, function: &str, args: &[Arg]) -> Option<Backoff> {
    Some(match (krate, ty, function) {
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
        _ => return None,
    })
}

pub(super) fn apply(state: &mut Backoff, method: &str, args: &[Arg]) -> Applied {
    let arg = |i: usize| args.get(i);
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
        _ => None,
    };
    known_if(known)
}

pub(super) fn sched(state: &Backoff) -> Sched {
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
        _ => Sched::Unknown,
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
