//! Running the IR on a virtual clock, as `Effect.retry` runs a schedule against an effect that
//! fails instantly: each step gets `now` (the sum of the delays so far) and returns the next
//! delay or stops. Plus the structural facts a bounded run cannot settle.

use super::{BinOp, Callback, Lambda, Param, Sched, Term};

/// Steps simulated before deciding a schedule does not stop by itself.
const SIM_LIMIT: usize = 10_000;
/// Nominal delays kept for display and for differential tests.
pub const SHOWN_DELAYS: usize = 20;
/// Steps run of a schedule whose structure has no cap: enough for the delays shown and for
/// the jitter comparison.
const UNCAPPED_LIMIT: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Attempts {
    /// Exactly this many retries (when every attempt fails).
    Exact(u64),
    /// At most this many: a predicate may stop earlier.
    AtMost(u64),
    /// Bounded by elapsed time only (`during`, `upTo({ duration })`).
    TimeLimited,
    /// Never stops by itself.
    Unbounded,
    Unknown,
}

impl Attempts {
    /// An upper bound on retries, when there is one.
    pub fn bound(self) -> Option<u64> {
        match self {
            Attempts::Exact(n) | Attempts::AtMost(n) => Some(n),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gap {
    /// No gap ever exceeds this many milliseconds (nominal, before jitter).
    Capped(f64),
    /// Gaps grow without a per-gap cap.
    Growing,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Jitter {
    Yes,
    No,
    Unknown,
}

/// What a retry policy does, as far as the model can tell.
#[derive(Debug, Clone)]
pub struct Summary {
    pub attempts: Attempts,
    pub gap: Gap,
    pub jitter: Jitter,
    /// The first nominal delays (jitter at its midpoint), when all are known.
    pub delays: Option<Vec<f64>>,
    /// Sum of all nominal delays, when the schedule stops and every delay is known.
    pub total_ms: Option<f64>,
    /// The longest the retries can wait in total, with jitter at its extremes.
    pub worst_total_ms: Option<f64>,
}

pub fn summarize(sched: &Sched) -> Summary {
    if !has_choice(sched) {
        return summarize_one(sched);
    }
    match branches(sched) {
        Some(branches) => merge(branches.iter().map(summarize_one).collect()),
        None => summarize_one(&Sched::Unknown),
    }
}

/// What holds for every way a schedule can run (each branch of each [`Sched::Choice`]):
/// how a factory evaluated with arguments it does not know is judged, a defect being the
/// factory's only when no argument avoids it. Never stopping, a gap growing without a cap and
/// no jitter are kept when every branch has them; everything else is unknown.
pub fn summarize_for_all(sched: &Sched) -> Summary {
    let all = match branches(sched) {
        Some(all) if !all.is_empty() => all,
        _ => vec![Sched::Unknown],
    };
    let summaries: Vec<Summary> = all.iter().map(summarize_one).collect();
    let every = |f: &dyn Fn(&Summary) -> bool| summaries.iter().all(f);
    Summary {
        attempts: if every(&|s| s.attempts == Attempts::Unbounded) {
            Attempts::Unbounded
        } else {
            Attempts::Unknown
        },
        gap: if every(&|s| s.gap == Gap::Growing) {
            Gap::Growing
        } else {
            Gap::Unknown
        },
        // A branch that waits nothing has no delay to spread (as in a merged summary).
        jitter: if every(&|s| s.jitter == Jitter::No && !matches!(s.gap, Gap::Capped(ms) if ms == 0.0)) {
            Jitter::No
        } else if every(&|s| s.jitter == Jitter::Yes) {
            Jitter::Yes
        } else {
            Jitter::Unknown
        },
        delays: None,
        total_ms: None,
        worst_total_ms: None,
    }
}

/// Branches followed before a policy is called unknown.
const MAX_BRANCHES: usize = 16;

fn has_choice(sched: &Sched) -> bool {
    let mut found = false;
    visit(sched, &mut |s| found |= matches!(s, Sched::Choice(_)));
    found
}

/// Calls `f` on `sched` and every schedule inside it.
pub fn visit_all(sched: &Sched, f: &mut dyn FnMut(&Sched)) {
    visit(sched, f)
}

fn visit(sched: &Sched, f: &mut dyn FnMut(&Sched)) {
    f(sched);
    match sched {
        Sched::Max(children) | Sched::Min(children) | Sched::Choice(children) => {
            children.iter().for_each(|c| visit(c, f))
        }
        Sched::Concat(a, b) => {
            visit(a, f);
            visit(b, f);
        }
        Sched::Times(inner, _)
        | Sched::While(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::ModifyDelay(inner, _)
        | Sched::AddDelay(inner, _)
        | Sched::Output(inner, _) => visit(inner, f),
        _ => {}
    }
}

/// The schedules a [`Sched::Choice`] anywhere inside stands for, each without a choice:
/// `(c ? a : b).pipe(jittered)` is `jittered(a)` or `jittered(b)`. `None` past
/// [`MAX_BRANCHES`].
fn branches(sched: &Sched) -> Option<Vec<Sched>> {
    let product = |children: &[Sched]| -> Option<Vec<Vec<Sched>>> {
        let mut out: Vec<Vec<Sched>> = vec![Vec::new()];
        for child in children {
            let options = branches(child)?;
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    options.iter().map(move |option| {
                        let mut next = prefix.clone();
                        next.push(option.clone());
                        next
                    })
                })
                .collect();
            if out.len() > MAX_BRANCHES {
                return None;
            }
        }
        Some(out)
    };
    let wrap = |inner: &Sched, rebuild: &dyn Fn(Box<Sched>) -> Sched| -> Option<Vec<Sched>> {
        Some(branches(inner)?.into_iter().map(|b| rebuild(Box::new(b))).collect())
    };
    let out = match sched {
        Sched::Choice(children) => {
            let mut out = Vec::new();
            for child in children {
                out.extend(branches(child)?);
            }
            out
        }
        Sched::Max(children) => product(children)?.into_iter().map(Sched::Max).collect(),
        Sched::Min(children) => product(children)?.into_iter().map(Sched::Min).collect(),
        Sched::Concat(a, b) => product(&[(**a).clone(), (**b).clone()])?
            .into_iter()
            .map(|mut pair| {
                let b = pair.pop().unwrap_or(Sched::Unknown);
                let a = pair.pop().unwrap_or(Sched::Unknown);
                Sched::Concat(Box::new(a), Box::new(b))
            })
            .collect(),
        Sched::Times(inner, n) => wrap(inner, &|i| Sched::Times(i, *n))?,
        Sched::While(inner, cb) => wrap(inner, &|i| Sched::While(i, cb.clone()))?,
        Sched::Jittered { inner, min, max } => wrap(inner, &|i| Sched::Jittered {
            inner: i,
            min: *min,
            max: *max,
        })?,
        Sched::JitteredAdd { inner, max } => wrap(inner, &|i| Sched::JitteredAdd { inner: i, max: *max })?,
        Sched::ModifyDelay(inner, cb) => wrap(inner, &|i| Sched::ModifyDelay(i, cb.clone()))?,
        Sched::AddDelay(inner, cb) => wrap(inner, &|i| Sched::AddDelay(i, cb.clone()))?,
        Sched::Output(inner, cb) => wrap(inner, &|i| Sched::Output(i, cb.clone()))?,
        leaf => vec![leaf.clone()],
    };
    (out.len() <= MAX_BRANCHES).then_some(out)
}

/// One summary for several branches, each judged: a defect of any branch is the policy's
/// (the branch runs when its condition holds), and what is unknown of any stays unknown.
fn merge(summaries: Vec<Summary>) -> Summary {
    let attempts = summaries.iter().map(|s| s.attempts).reduce(|a, b| match (a, b) {
        (Attempts::Unbounded, _) | (_, Attempts::Unbounded) => Attempts::Unbounded,
        (Attempts::Unknown, _) | (_, Attempts::Unknown) => Attempts::Unknown,
        (Attempts::TimeLimited, _) | (_, Attempts::TimeLimited) => Attempts::TimeLimited,
        (Attempts::Exact(x), Attempts::Exact(y)) if x == y => Attempts::Exact(x),
        (x, y) => Attempts::AtMost(x.bound().unwrap_or(0).max(y.bound().unwrap_or(0))),
    });
    let mut gap = summaries.iter().map(|s| s.gap).reduce(larger);
    if gap == Some(Gap::Unknown) && attempts == Some(Attempts::Unbounded) {
        // The branch that never stops is the finding; its pace is known even when another
        // branch's is not.
        gap = summaries
            .iter()
            .filter(|s| s.attempts == Attempts::Unbounded)
            .map(|s| s.gap)
            .reduce(larger);
    }
    // A branch that retries at once has no delay to spread, as an immediate policy has none
    // (`unjittered-schedule` says nothing of one): its jitter is not the policy's. Else
    // `e.status >= 500 ? 1 s : zero`, jittered, would still read as unjittered.
    let immediate = |s: &&Summary| matches!(s.gap, Gap::Capped(ms) if ms == 0.0);
    let delayed = summaries.iter().filter(|s| !immediate(s)).count();
    let jitter = summaries
        .iter()
        .filter(|s| delayed == 0 || !immediate(s))
        .map(|s| s.jitter)
        .reduce(|a, b| match (a, b) {
            (Jitter::No, _) | (_, Jitter::No) => Jitter::No,
            (Jitter::Unknown, _) | (_, Jitter::Unknown) => Jitter::Unknown,
            _ => Jitter::Yes,
        });
    // The totals of the branch that can wait longest, among those that stop.
    let longest = summaries.iter().filter(|s| s.worst_total_ms.is_some()).max_by(|a, b| {
        a.worst_total_ms
            .partial_cmp(&b.worst_total_ms)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Summary {
        attempts: attempts.unwrap_or(Attempts::Unknown),
        gap: gap.unwrap_or(Gap::Unknown),
        jitter: jitter.unwrap_or(Jitter::Unknown),
        delays: longest.and_then(|s| s.delays.clone()),
        total_ms: longest.and_then(|s| s.total_ms),
        worst_total_ms: longest.and_then(|s| s.worst_total_ms),
    }
}

fn summarize_one(sched: &Sched) -> Summary {
    let structural = cap(sched);
    // A schedule with no cap anywhere in its structure never stops: what the run adds after
    // the delays shown is thousands of steps that change no answer.
    let limit = if matches!(structural, Cap::Infinite) {
        UNCAPPED_LIMIT
    } else {
        SIM_LIMIT
    };
    let nominal = run(sched, limit, 0.5);
    let attempts = match nominal.end {
        End::Terminated => {
            let retries = nominal.delays.len() as u64;
            if has_predicate(sched) {
                Attempts::AtMost(retries)
            } else {
                Attempts::Exact(retries)
            }
        }
        End::Continues | End::Unknown => match structural {
            Cap::Finite(n) => Attempts::AtMost(n),
            Cap::Time => Attempts::TimeLimited,
            Cap::Infinite if nominal.end == End::Continues => Attempts::Unbounded,
            _ => Attempts::Unknown,
        },
    };
    let all_known = nominal.delays.iter().all(Option::is_some);
    let delays = (all_known && nominal.end != End::Unknown).then(|| {
        nominal
            .delays
            .iter()
            .take(SHOWN_DELAYS)
            .map(|d| d.unwrap_or(f64::NAN))
            .collect()
    });
    let total_ms = match (attempts, all_known) {
        (Attempts::Exact(_) | Attempts::AtMost(_), true) if nominal.end == End::Terminated => {
            Some(nominal.delays.iter().map(|d| d.unwrap_or(0.0)).sum())
        }
        _ => None,
    };
    let worst_total_ms = match total_ms {
        Some(_) => worst_total(sched),
        // A test of the failure (`whileInput(isRetryable)`) decides which failures are
        // retried, never how long a gap is: at worst every failure passes it, and the rest of
        // the schedule still bounds the wait. Only the worst case is claimed (the delays and
        // the count depend on the failures).
        None if nominal.end == End::Unknown => retrying_every_failure(sched)
            .filter(|all| run(all, SIM_LIMIT, 0.5).end == End::Terminated)
            .and_then(|all| worst_total(&all)),
        None => None,
    };
    Summary {
        attempts,
        gap: growth(sched),
        jitter: match effective_jitter(sched, &nominal) {
            // Which failures pass a test of the failure changes no delay's spread.
            Jitter::Unknown if nominal.end == End::Unknown => retrying_every_failure(sched)
                .map(|all| {
                    let run_all = run(&all, limit, 0.5);
                    effective_jitter(&all, &run_all)
                })
                .unwrap_or(Jitter::Unknown),
            known => known,
        },
        delays,
        total_ms,
        worst_total_ms,
    }
}

// ------------------------------------------------------------------ simulation

#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    Terminated,
    /// Still going after the step limit.
    Continues,
    /// A step the model cannot decide (an opaque predicate, an unknown combinator).
    Unknown,
}

struct Run {
    delays: Vec<Option<f64>>,
    end: End,
}

/// Metadata a step sees, as Effect passes it to callbacks.
#[derive(Clone, Copy)]
struct Meta {
    /// 1-based count of steps so far, this one included.
    attempt: f64,
    /// Milliseconds since the first step.
    elapsed: f64,
}

#[derive(Clone, Copy)]
enum Step {
    Done,
    /// The next delay (unknown when a callback is opaque) and the schedule's output.
    Next {
        delay: Option<f64>,
        output: Option<f64>,
    },
    Unknown,
}

fn run(sched: &Sched, limit: usize, random: f64) -> Run {
    let mut state = State::new(sched);
    let mut delays = Vec::new();
    let mut now = 0.0;
    for attempt in 1..=limit {
        let meta = Meta {
            attempt: attempt as f64,
            elapsed: now,
        };
        match state.step(sched, meta, random) {
            Step::Done => {
                return Run {
                    delays,
                    end: End::Terminated,
                }
            }
            Step::Unknown => {
                return Run {
                    delays,
                    end: End::Unknown,
                }
            }
            Step::Next { delay, .. } => {
                delays.push(delay);
                match delay {
                    Some(d) => now += d,
                    // Time-based limits cannot be followed past an unknown delay.
                    None if has_time_limit(sched) => {
                        return Run {
                            delays,
                            end: End::Unknown,
                        }
                    }
                    None => {}
                }
            }
        }
    }
    Run {
        delays,
        end: End::Continues,
    }
}

/// Per-node mutable state, shaped like the [`Sched`] it runs.
enum State {
    Counter(u64),
    Fib(f64, f64),
    Fixed {
        start: f64,
        last_run: f64,
    },
    Children(Vec<State>, Vec<bool>),
    /// The first part's state, the second's, and the metadata at which the second started
    /// (each schedule counts its own attempts and elapsed time).
    Concat(Box<State>, Box<State>, Option<Meta>),
    Wrap(Box<State>),
    None,
}

impl State {
    fn new(sched: &Sched) -> State {
        match sched {
            Sched::Fibonacci {
                base,
                skip_first: false,
            } => State::Fib(*base, *base),
            Sched::Fibonacci { base, skip_first: true } => State::Fib(*base, 2.0 * base),
            Sched::Fixed(_) => State::Fixed {
                start: 0.0,
                last_run: 0.0,
            },
            Sched::Max(children) | Sched::Min(children) => {
                State::Children(children.iter().map(State::new).collect(), vec![false; children.len()])
            }
            Sched::Concat(a, b) => State::Concat(Box::new(State::new(a)), Box::new(State::new(b)), None),
            Sched::Times(inner, _)
            | Sched::While(inner, _)
            | Sched::Jittered { inner, .. }
            | Sched::JitteredAdd { inner, .. }
            | Sched::ModifyDelay(inner, _)
            | Sched::AddDelay(inner, _)
            | Sched::Output(inner, _) => State::Wrap(Box::new(State::new(inner))),
            Sched::Exponential { .. } | Sched::Linear(_) | Sched::Recurs(_) | Sched::FromDelays(_) => State::Counter(0),
            _ => State::None,
        }
    }

    fn step(&mut self, sched: &Sched, meta: Meta, random: f64) -> Step {
        let next = |delay: f64, output: f64| Step::Next {
            delay: Some(delay),
            output: Some(output),
        };
        let count = meta.attempt - 1.0;
        match (sched, self) {
            (Sched::Exponential { base, factor }, State::Counter(n)) => {
                let delay = base * factor.powi((*n).min(i32::MAX as u64) as i32);
                *n += 1;
                next(delay, delay)
            }
            (Sched::Fibonacci { .. }, State::Fib(a, b)) => {
                let delay = *a;
                (*a, *b) = (*b, *a + *b);
                next(delay, delay)
            }
            (Sched::Spaced(d), _) => next(*d, count),
            // `fixed` waits for the next multiple of its interval since its first step, or not
            // at all when running behind (Effect's `fixed`).
            (Sched::Fixed(window), State::Fixed { start, last_run }) => {
                let window = *window;
                if window == 0.0 {
                    return next(0.0, count);
                }
                if meta.attempt == 1.0 {
                    *start = meta.elapsed;
                    *last_run = meta.elapsed + window;
                    return next(window, 0.0);
                }
                let running_behind = meta.elapsed > *last_run + window;
                let boundary = window - ((meta.elapsed - *start) % window);
                let delay = if running_behind {
                    0.0
                } else if boundary == 0.0 {
                    window
                } else {
                    boundary
                };
                *last_run = if running_behind {
                    meta.elapsed
                } else {
                    meta.elapsed + delay
                };
                next(delay, count)
            }
            (Sched::Windowed(window), _) => {
                let delay = if *window == 0.0 {
                    0.0
                } else {
                    window - (meta.elapsed % window)
                };
                next(delay, count)
            }
            (Sched::Linear(base), State::Counter(n)) => {
                *n += 1;
                let delay = base * *n as f64;
                next(delay, delay)
            }
            (Sched::Recurs(times), State::Counter(n)) => {
                if *n >= *times {
                    return Step::Done;
                }
                *n += 1;
                next(0.0, count)
            }
            (Sched::Forever, _) => next(0.0, count),
            // A gap of a length the model cannot read: the run goes on, that delay unknown.
            (Sched::SpacedSome | Sched::GrowingSome, _) => Step::Next {
                delay: None,
                output: None,
            },
            (Sched::FromDelays(delays), State::Counter(n)) => match delays.get(*n as usize) {
                Some(delay) => {
                    *n += 1;
                    next(*delay, *delay)
                }
                None => Step::Done,
            },
            (Sched::During { limit, strict }, _) => {
                let within = if *strict {
                    meta.elapsed < *limit
                } else {
                    meta.elapsed <= *limit
                };
                if within {
                    next(0.0, meta.elapsed)
                } else {
                    Step::Done
                }
            }
            (Sched::Max(children), State::Children(states, _)) => {
                let mut delay: Option<f64> = Some(0.0);
                let mut done = false;
                for (child, state) in children.iter().zip(states.iter_mut()) {
                    match state.step(child, meta, random) {
                        Step::Done => done = true,
                        Step::Unknown => return Step::Unknown,
                        Step::Next { delay: d, .. } => delay = delay.zip(d).map(|(a, b)| a.max(b)),
                    }
                }
                if done {
                    Step::Done
                } else {
                    Step::Next { delay, output: None }
                }
            }
            (Sched::Min(children), State::Children(states, finished)) => {
                let mut delay: Option<Option<f64>> = None; // None: no child continued yet
                for ((child, state), finished) in children.iter().zip(states.iter_mut()).zip(finished.iter_mut()) {
                    if *finished {
                        continue;
                    }
                    match state.step(child, meta, random) {
                        Step::Done => *finished = true,
                        Step::Unknown => return Step::Unknown,
                        Step::Next { delay: d, .. } => {
                            delay = Some(match delay {
                                None => d,
                                Some(current) => current.zip(d).map(|(a, b)| a.min(b)),
                            })
                        }
                    }
                }
                match delay {
                    None => Step::Done,
                    Some(delay) => Step::Next { delay, output: None },
                }
            }
            (Sched::Concat(a, b), State::Concat(first, second, started)) => {
                if started.is_none() {
                    match first.step(a, meta, random) {
                        Step::Done => *started = Some(meta),
                        other => return other,
                    }
                }
                let start = started.expect("set above");
                let own = Meta {
                    attempt: meta.attempt - start.attempt + 1.0,
                    elapsed: meta.elapsed - start.elapsed,
                };
                second.step(b, own, random)
            }
            (Sched::Times(inner, times), State::Wrap(state)) => {
                let step = state.step(inner, meta, random);
                if meta.attempt > *times as f64 {
                    return Step::Done;
                }
                step
            }
            (Sched::While(inner, callback), State::Wrap(state)) => match state.step(inner, meta, random) {
                Step::Next { delay, output } => {
                    let truth = apply(callback, meta, delay, output);
                    match truth {
                        Some(t) if t != 0.0 => Step::Next { delay, output },
                        Some(_) => Step::Done,
                        None => Step::Unknown,
                    }
                }
                other => other,
            },
            (Sched::Jittered { inner, min, max }, State::Wrap(state)) => match state.step(inner, meta, random) {
                Step::Next { delay, output } => Step::Next {
                    delay: delay.map(|d| d * min * (1.0 - random) + d * max * random),
                    output,
                },
                other => other,
            },
            (Sched::JitteredAdd { inner, max }, State::Wrap(state)) => match state.step(inner, meta, random) {
                Step::Next { delay, output } => Step::Next {
                    delay: delay.map(|d| d + max * random),
                    output,
                },
                other => other,
            },
            (Sched::ModifyDelay(inner, callback), State::Wrap(state)) => match state.step(inner, meta, random) {
                Step::Next { delay, output } => Step::Next {
                    delay: apply(callback, meta, delay, output),
                    output,
                },
                other => other,
            },
            (Sched::AddDelay(inner, callback), State::Wrap(state)) => match state.step(inner, meta, random) {
                Step::Next { delay, output } => Step::Next {
                    delay: delay.zip(apply(callback, meta, delay, output)).map(|(a, b)| a + b),
                    output,
                },
                other => other,
            },
            (Sched::Output(inner, callback), State::Wrap(state)) => match state.step(inner, meta, random) {
                Step::Next { delay, output } => Step::Next {
                    delay,
                    output: apply(callback, meta, delay, output),
                },
                other => other,
            },
            _ => Step::Unknown,
        }
    }
}

/// Applies a callback to a step's metadata; `None` when the callback or an input is unknown.
fn apply(callback: &Callback, meta: Meta, duration: Option<f64>, output: Option<f64>) -> Option<f64> {
    let Callback::Known(lambda) = callback else { return None };
    let lookup = |name: &str| -> Option<f64> {
        match name {
            "duration" => duration,
            "output" => output,
            "attempt" => Some(meta.attempt),
            "elapsed" => Some(meta.elapsed),
            _ => None,
        }
    };
    eval_term(&lambda.body, &lookup)
}

fn eval_term(term: &Term, lookup: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
    Some(match term {
        Term::Num(n) => *n,
        Term::Var(name) => lookup(name)?,
        Term::Min(a, b) => eval_term(a, lookup)?.min(eval_term(b, lookup)?),
        Term::Max(a, b) => eval_term(a, lookup)?.max(eval_term(b, lookup)?),
        Term::Index(values, index) => {
            let i = eval_term(index, lookup)?;
            if i < 0.0 || i.fract() != 0.0 {
                return None;
            }
            *values.get(i as usize)?
        }
        Term::Bin(op, a, b) => {
            let (a, b) = (eval_term(a, lookup)?, eval_term(b, lookup)?);
            let truth = |t: bool| if t { 1.0 } else { 0.0 };
            match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::Div => a / b,
                BinOp::Lt => truth(a < b),
                BinOp::Le => truth(a <= b),
                BinOp::Gt => truth(a > b),
                BinOp::Ge => truth(a >= b),
                BinOp::And => truth(a != 0.0 && b != 0.0),
                BinOp::Or => truth(a != 0.0 || b != 0.0),
            }
        }
    })
}

// ------------------------------------------------------------------ structure

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cap {
    Finite(u64),
    Time,
    Infinite,
    Unknown,
}

/// Whether the schedule stops by itself, from its structure.
fn cap(sched: &Sched) -> Cap {
    match sched {
        Sched::Recurs(n) => Cap::Finite(*n),
        Sched::RecursSome => Cap::Unknown,
        Sched::SpacedSome | Sched::GrowingSome => Cap::Infinite,
        Sched::DuringSome => Cap::Time,
        Sched::FromDelays(delays) => Cap::Finite(delays.len() as u64),
        Sched::During { .. } => Cap::Time,
        Sched::Exponential { .. }
        | Sched::Fibonacci { .. }
        | Sched::Spaced(_)
        | Sched::Fixed(_)
        | Sched::Windowed(_)
        | Sched::Linear(_)
        | Sched::Forever
        | Sched::Cron => Cap::Infinite,
        Sched::Max(children) => children.iter().map(cap).fold(Cap::Infinite, both),
        Sched::Min(children) => children.iter().map(cap).reduce(either).unwrap_or(Cap::Finite(0)),
        Sched::Concat(a, b) => match (cap(a), cap(b)) {
            (Cap::Finite(x), Cap::Finite(y)) => Cap::Finite(x.saturating_add(y)),
            (Cap::Infinite, _) | (_, Cap::Infinite) => Cap::Infinite,
            (Cap::Unknown, _) | (_, Cap::Unknown) => Cap::Unknown,
            _ => Cap::Time,
        },
        Sched::Times(inner, n) => both(cap(inner), Cap::Finite(*n)),
        Sched::While(inner, _) => match cap(inner) {
            finite @ Cap::Finite(_) => finite,
            _ => Cap::Unknown,
        },
        Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::ModifyDelay(inner, _)
        | Sched::AddDelay(inner, _)
        | Sched::Output(inner, _) => cap(inner),
        // Summaries judge each branch apart; structurally, the loosest bound holds.
        Sched::Choice(children) => children.iter().map(cap).reduce(either).unwrap_or(Cap::Unknown),
        Sched::Unknown => Cap::Unknown,
    }
}

/// Both must continue: the tighter bound wins.
fn both(a: Cap, b: Cap) -> Cap {
    match (a, b) {
        (Cap::Finite(x), Cap::Finite(y)) => Cap::Finite(x.min(y)),
        (Cap::Finite(x), _) | (_, Cap::Finite(x)) => Cap::Finite(x),
        (Cap::Time, _) | (_, Cap::Time) => Cap::Time,
        (Cap::Unknown, _) | (_, Cap::Unknown) => Cap::Unknown,
        _ => Cap::Infinite,
    }
}

/// Either may continue: the looser bound wins.
fn either(a: Cap, b: Cap) -> Cap {
    match (a, b) {
        (Cap::Infinite, _) | (_, Cap::Infinite) => Cap::Infinite,
        (Cap::Unknown, _) | (_, Cap::Unknown) => Cap::Unknown,
        (Cap::Time, _) | (_, Cap::Time) => Cap::Time,
        (Cap::Finite(x), Cap::Finite(y)) => Cap::Finite(x.max(y)),
    }
}

/// The largest gap the structure allows (nominal, before jitter).
fn growth(sched: &Sched) -> Gap {
    match sched {
        Sched::Exponential { base, factor } => {
            if *factor > 1.0 && *base > 0.0 {
                Gap::Growing
            } else {
                Gap::Capped(*base)
            }
        }
        Sched::Fibonacci { base, .. } | Sched::Linear(base) => {
            if *base > 0.0 {
                Gap::Growing
            } else {
                Gap::Capped(0.0)
            }
        }
        Sched::Spaced(d) | Sched::Fixed(d) | Sched::Windowed(d) => Gap::Capped(*d),
        Sched::GrowingSome => Gap::Growing,
        // Constant, but of a length the model cannot read.
        Sched::SpacedSome => Gap::Unknown,
        Sched::DuringSome => Gap::Capped(0.0),
        Sched::Recurs(_) | Sched::RecursSome | Sched::Forever | Sched::During { .. } => Gap::Capped(0.0),
        Sched::FromDelays(delays) => Gap::Capped(delays.iter().copied().fold(0.0, f64::max)),
        Sched::Cron | Sched::Unknown => Gap::Unknown,
        Sched::Choice(children) => children.iter().map(growth).reduce(larger).unwrap_or(Gap::Unknown),
        Sched::Max(children) => children.iter().map(growth).fold(Gap::Capped(0.0), larger),
        Sched::Min(children) => {
            // A child that never stops bounds every gap by its own cap.
            let bounding = children
                .iter()
                .filter(|c| cap(c) == Cap::Infinite)
                .filter_map(|c| match growth(c) {
                    Gap::Capped(x) => Some(x),
                    _ => None,
                })
                .reduce(f64::min);
            // A child that may never stop, at a pace the model cannot read (`spaced(cap)` with
            // an unknown cap, an imported schedule), may bound every gap too: unknown.
            let may_bound = children
                .iter()
                .any(|c| matches!(cap(c), Cap::Infinite | Cap::Unknown) && growth(c) == Gap::Unknown);
            match bounding {
                Some(x) => Gap::Capped(x),
                None if may_bound => Gap::Unknown,
                None => children.iter().map(growth).fold(Gap::Capped(0.0), larger),
            }
        }
        Sched::Concat(a, b) => larger(growth(a), growth(b)),
        // `while(({ output }) => output <= 30 s)` on a growing delay: it stops before a gap
        // passes the bound, which caps the gap as surely as `min` with `spaced` does.
        Sched::While(inner, callback) => match (growth(inner), delay_bound(callback, inner)) {
            (Gap::Growing, Some(bound)) => Gap::Capped(bound),
            // A predicate over the metadata the model cannot read may stop the growth: unknown.
            (Gap::Growing, None) if matches!(callback, Callback::Unknown) => Gap::Unknown,
            (gap, _) => gap,
        },
        Sched::Times(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::Output(inner, _) => growth(inner),
        Sched::ModifyDelay(inner, callback) => match bound_of(callback, growth(inner)) {
            Some(bound) if bound.is_finite() => Gap::Capped(bound),
            Some(_) => Gap::Growing,
            None => Gap::Unknown,
        },
        Sched::AddDelay(inner, callback) => match (growth(inner), bound_of(callback, growth(inner))) {
            (Gap::Capped(x), Some(add)) if add.is_finite() => Gap::Capped(x + add),
            (Gap::Growing, _) => Gap::Growing,
            (_, Some(_)) => Gap::Growing,
            _ => Gap::Unknown,
        },
    }
}

/// A callback's value when the delay and output are as large as `inner` allows (infinite
/// when growing): finite means the callback caps the gap.
fn bound_of(callback: &Callback, inner: Gap) -> Option<f64> {
    let Callback::Known(lambda) = callback else { return None };
    let largest = match inner {
        Gap::Capped(x) => x,
        Gap::Growing => f64::INFINITY,
        Gap::Unknown => return None,
    };
    let lookup = |name: &str| match name {
        "duration" | "output" => Some(largest),
        _ => None,
    };
    let _: &Lambda = lambda;
    let _ = Param::Ignored;
    eval_term(&widest(&lambda.body), &lookup)
}

/// `term` with each list lookup (`delays[n]`) read as the list's largest value: how large a
/// callback can make a delay, whatever index it reads.
fn widest(term: &Term) -> Term {
    let wide = |t: &Term| Box::new(widest(t));
    match term {
        Term::Index(values, _) if !values.is_empty() => Term::Num(values.iter().copied().fold(f64::MIN, f64::max)),
        Term::Min(a, b) => Term::Min(wide(a), wide(b)),
        Term::Max(a, b) => Term::Max(wide(a), wide(b)),
        Term::Bin(op, a, b) => Term::Bin(*op, wide(a), wide(b)),
        other => other.clone(),
    }
}

/// The largest delay a `while` predicate lets through, when it tests the delay alone (its
/// `duration`, or the output of a schedule whose output is its delay) and stops every delay
/// past some bound: found by bisection, the predicate being true at zero and false at infinity.
fn delay_bound(callback: &Callback, inner: &Sched) -> Option<f64> {
    let Callback::Known(lambda) = callback else { return None };
    let output_is_delay = output_is_delay(inner);
    let holds = |delay: f64| -> Option<bool> {
        let lookup = |name: &str| match name {
            "duration" => Some(delay),
            "output" if output_is_delay => Some(delay),
            _ => None,
        };
        eval_term(&lambda.body, &lookup).map(|t| t != 0.0)
    };
    if !holds(0.0)? || holds(f64::INFINITY)? || holds(1e15)? {
        return None;
    }
    let (mut low, mut high) = (0.0_f64, 1e15_f64);
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if holds(mid)? {
            low = mid;
        } else {
            high = mid;
        }
        if high - low < 0.5 {
            break;
        }
    }
    Some(low.round())
}

/// Whether the schedule's output is the delay it waits: Effect's growing schedules output
/// it (`spaced` and `fixed` output a count).
fn output_is_delay(sched: &Sched) -> bool {
    match sched {
        Sched::Exponential { .. } | Sched::Fibonacci { .. } | Sched::Linear(_) | Sched::GrowingSome => true,
        Sched::Times(inner, _)
        | Sched::While(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. } => output_is_delay(inner),
        _ => false,
    }
}

fn larger(a: Gap, b: Gap) -> Gap {
    match (a, b) {
        (Gap::Growing, _) | (_, Gap::Growing) => Gap::Growing,
        (Gap::Unknown, _) | (_, Gap::Unknown) => Gap::Unknown,
        (Gap::Capped(x), Gap::Capped(y)) => Gap::Capped(x.max(y)),
    }
}

/// Whether the random draw changes what happens: the delays or when the schedule stops, over
/// the first steps. A jittered branch that never decides a delay does not count (the oracle
/// agrees). Falls back to the structure when a run cannot be followed.
fn effective_jitter(sched: &Sched, nominal: &Run) -> Jitter {
    const STEPS: usize = 64;
    let structural = jitter(sched);
    if structural != Jitter::Yes {
        return structural;
    }
    // A jitter combinator whose effect cannot be followed: it may or may not matter.
    if nominal.end == End::Unknown {
        return Jitter::Unknown;
    }
    let (low, high) = (run(sched, STEPS, 0.0), run(sched, STEPS, 1.0));
    if low.end == End::Unknown || high.end == End::Unknown {
        return Jitter::Unknown;
    }
    if !low.delays.iter().chain(&high.delays).all(Option::is_some) {
        return Jitter::Unknown;
    }
    let differs = low.end != high.end
        || low.delays.len() != high.delays.len()
        || low.delays.iter().zip(&high.delays).any(|(a, b)| a != b);
    if differs {
        Jitter::Yes
    } else {
        Jitter::No
    }
}

fn jitter(sched: &Sched) -> Jitter {
    match sched {
        Sched::Jittered { .. } => Jitter::Yes,
        Sched::JitteredAdd { inner, max } => {
            if *max > 0.0 {
                Jitter::Yes
            } else {
                jitter(inner)
            }
        }
        Sched::Unknown => Jitter::Unknown,
        Sched::Max(children) | Sched::Min(children) => {
            children.iter().map(jitter).fold(Jitter::No, |a, b| match (a, b) {
                (Jitter::Yes, _) | (_, Jitter::Yes) => Jitter::Yes,
                (Jitter::Unknown, _) | (_, Jitter::Unknown) => Jitter::Unknown,
                _ => Jitter::No,
            })
        }
        Sched::Concat(a, b) => match (jitter(a), jitter(b)) {
            (Jitter::Yes, _) | (_, Jitter::Yes) => Jitter::Yes,
            (Jitter::Unknown, _) | (_, Jitter::Unknown) => Jitter::Unknown,
            _ => Jitter::No,
        },
        Sched::Times(inner, _) | Sched::While(inner, _) | Sched::Output(inner, _) => jitter(inner),
        // A delay function replaces the delay: jitter inside it may be undone.
        Sched::ModifyDelay(inner, Callback::Known(_)) | Sched::AddDelay(inner, Callback::Known(_)) => jitter(inner),
        Sched::ModifyDelay(..) | Sched::AddDelay(..) => Jitter::Unknown,
        _ => Jitter::No,
    }
}

/// The longest total wait of a schedule that stops, with jitter at both extremes.
fn worst_total(sched: &Sched) -> Option<f64> {
    let extremes = [run(sched, SIM_LIMIT, 0.0), run(sched, SIM_LIMIT, 1.0)];
    let mut worst: f64 = 0.0;
    for extreme in extremes {
        if extreme.end != End::Terminated || !extreme.delays.iter().all(Option::is_some) {
            return None;
        }
        worst = worst.max(extreme.delays.iter().map(|d| d.unwrap_or(0.0)).sum());
    }
    Some(worst)
}

/// `sched` with every test of the failure passing (`whileInput(p)` as if `p` held for each),
/// when it has such a test.
fn retrying_every_failure(sched: &Sched) -> Option<Sched> {
    fn strip(sched: &Sched, found: &mut bool) -> Sched {
        let mut inner = |s: &Sched| Box::new(strip(s, found));
        match sched {
            Sched::While(body, Callback::OnInput) => {
                *found = true;
                strip(body, found)
            }
            Sched::While(body, cb) => Sched::While(inner(body), cb.clone()),
            Sched::Max(children) => Sched::Max(children.iter().map(|c| strip(c, found)).collect()),
            Sched::Min(children) => Sched::Min(children.iter().map(|c| strip(c, found)).collect()),
            Sched::Choice(children) => Sched::Choice(children.iter().map(|c| strip(c, found)).collect()),
            Sched::Concat(a, b) => {
                let a = strip(a, found);
                Sched::Concat(Box::new(a), Box::new(strip(b, found)))
            }
            Sched::Times(body, n) => Sched::Times(inner(body), *n),
            Sched::Jittered { inner: body, min, max } => Sched::Jittered {
                inner: inner(body),
                min: *min,
                max: *max,
            },
            Sched::JitteredAdd { inner: body, max } => Sched::JitteredAdd {
                inner: inner(body),
                max: *max,
            },
            Sched::ModifyDelay(body, cb) => Sched::ModifyDelay(inner(body), cb.clone()),
            Sched::AddDelay(body, cb) => Sched::AddDelay(inner(body), cb.clone()),
            Sched::Output(body, cb) => Sched::Output(inner(body), cb.clone()),
            leaf => leaf.clone(),
        }
    }
    let mut found = false;
    let stripped = strip(sched, &mut found);
    found.then_some(stripped)
}

fn has_predicate(sched: &Sched) -> bool {
    match sched {
        Sched::While(..) => true,
        Sched::Max(children) | Sched::Min(children) => children.iter().any(has_predicate),
        Sched::Concat(a, b) => has_predicate(a) || has_predicate(b),
        Sched::Times(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::ModifyDelay(inner, _)
        | Sched::AddDelay(inner, _)
        | Sched::Output(inner, _) => has_predicate(inner),
        _ => false,
    }
}

fn has_time_limit(sched: &Sched) -> bool {
    match sched {
        Sched::During { .. } | Sched::DuringSome => true,
        Sched::Max(children) | Sched::Min(children) => children.iter().any(has_time_limit),
        Sched::Concat(a, b) => has_time_limit(a) || has_time_limit(b),
        Sched::Times(inner, _)
        | Sched::While(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::ModifyDelay(inner, _)
        | Sched::AddDelay(inner, _)
        | Sched::Output(inner, _) => has_time_limit(inner),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped(base: f64, cap_ms: f64, retries: u64) -> Sched {
        Sched::Jittered {
            inner: Box::new(Sched::Max(vec![
                Sched::Min(vec![Sched::Exponential { base, factor: 2.0 }, Sched::Spaced(cap_ms)]),
                Sched::Recurs(retries),
            ])),
            min: 0.8,
            max: 1.2,
        }
    }

    #[test]
    fn the_seed_policies() {
        let contention = summarize(&capped(50.0, 200.0, 3));
        assert_eq!(contention.attempts, Attempts::Exact(3));
        assert_eq!(contention.delays.as_deref(), Some(&[50.0, 100.0, 200.0][..]));
        assert_eq!(contention.total_ms, Some(350.0));
        assert_eq!(contention.worst_total_ms, Some(420.0));
        assert_eq!(contention.gap, Gap::Capped(200.0));
        assert_eq!(contention.jitter, Jitter::Yes);
        let transient = summarize(&capped(200.0, 2000.0, 3));
        assert_eq!(transient.delays.as_deref(), Some(&[200.0, 400.0, 800.0][..]));
        assert_eq!(transient.total_ms, Some(1400.0));
    }

    #[test]
    fn min_steps_every_child() {
        let s = summarize(&Sched::Min(vec![
            Sched::Exponential {
                base: 100.0,
                factor: 2.0,
            },
            Sched::Recurs(3),
        ]));
        assert_eq!(s.attempts, Attempts::Unbounded);
        assert_eq!(s.delays.unwrap()[..5], [0.0, 0.0, 0.0, 800.0, 1600.0]);
    }

    #[test]
    fn exponential_with_times_is_capped_in_attempts_but_not_in_gap() {
        let s = summarize(&Sched::Times(
            Box::new(Sched::Exponential {
                base: 100.0,
                factor: 2.0,
            }),
            2,
        ));
        assert_eq!(s.attempts, Attempts::Exact(2));
        assert_eq!(s.gap, Gap::Growing);
        assert_eq!(s.jitter, Jitter::No);
    }

    #[test]
    fn during_counts_only_delays() {
        let s = summarize(&Sched::Max(vec![
            Sched::During {
                limit: 1000.0,
                strict: false,
            },
            Sched::Spaced(300.0),
        ]));
        assert_eq!(s.attempts, Attempts::Exact(4));
        let alone = summarize(&Sched::During {
            limit: 1000.0,
            strict: false,
        });
        assert_eq!(alone.attempts, Attempts::TimeLimited);
    }
}
