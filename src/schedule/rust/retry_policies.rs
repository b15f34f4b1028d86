//! reqwest-retry's policies (retry-policies 0.5.2): `ExponentialBackoff::builder()` until
//! one of the `build_with_*` methods makes it a policy.

use super::{count, known_if, ms, num};
use super::{Applied, Arg, Backoff, ReqwestJitter};
use crate::schedule::{summarize, Attempts, Sched, Summary};

pub(super) fn constructor(krate: &str, ty: &str, function: &str, args: &[Arg]) -> Option<Backoff> {
    Some(match (krate, ty, function) {
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
        _ => return None,
    })
}

pub(super) fn apply(state: &mut Backoff, method: &str, args: &[Arg]) -> Applied {
    let arg = |i: usize| args.get(i);
    let known = match state {
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
        _ => None,
    };
    known_if(known)
}

pub(super) fn sched(state: &Backoff) -> Sched {
    match *state {
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
        _ => Sched::Unknown,
    }
}

/// retry-policies' timed policy asks "has the total passed?" before each retry, then
/// waits a drawn delay: with jitter, any number of short draws fit, and the last wait
/// starts just before the total and lasts up to the largest gap.
pub(super) fn bound_summary(state: &Backoff, summary: &mut Summary) {
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
}
