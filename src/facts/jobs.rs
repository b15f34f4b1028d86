//! Recurring work (decisions 4 and 6): `Jobs.make` definitions, cron repeats outside a job,
//! in-memory "since the last run" cursors, wall-clock reads, and loops that poll or restart
//! on an interval. Language-neutral: spans and small [`Expr`] values, extracted once per file.

use serde::{Deserialize, Serialize};

use super::{Container, Expr};
use crate::source::Span;

/// `Jobs.make({ name, cron, exclusive, timeout, run })`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobDef {
    /// The whole call.
    pub span: Span,
    /// The `name` property, when it is a string.
    pub name: Option<String>,
    pub cron: Option<Expr>,
    /// A `timezone` / `timeZone` / `tz` property: the job asks for a zone other than UTC.
    pub timezone: Option<Expr>,
    pub exclusive: Option<Expr>,
    pub timeout: Option<Expr>,
    pub run: Option<JobRun>,
}

impl JobDef {
    /// How messages name the job: `` `billing.close-expired-trials` `` or "this job".
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(name) => format!("job `{name}`"),
            None => "this job".to_string(),
        }
    }
}

/// The job's `run` function.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRun {
    pub span: Span,
    /// The function's span, when `run` is written in place (its body holds the job's code).
    pub body: Option<Span>,
    pub slot: SlotUse,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SlotUse {
    /// The slot parameter is read in the body.
    Used,
    /// No parameter, or one the body never reads (`_slot`).
    Ignored { param: Option<String> },
    /// A function defined elsewhere, a destructured parameter: not visible.
    Unknown,
}

/// A project function that runs a cron job (its body calls `ClusterCron.make` or
/// `Schedule.cron`) and hands a handler it is given the fire's slot: `(name, cron, run) =>
/// ClusterCron.make({ …, execute: Effect.flatMap(ClusterCron.CurrentScheduledTime, run) })`.
/// The jobs that pass it their handler are written elsewhere ([`SinceFromNow`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CronWrapper {
    /// The function (its value's span: an arrow's, a declaration's).
    pub span: Span,
    /// The binding's name, for messages.
    pub name: String,
    /// The handlers it calls with an argument (or passes on to a call), by parameter.
    pub handlers: Vec<CronHandler>,
}

/// A handler a cron wrapper calls with the slot: parameter `param` itself, or its property
/// `key` (`options.run`, `{ run }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CronHandler {
    pub param: usize,
    pub key: Option<String>,
    /// Where the handler is called or handed on.
    pub span: Span,
}

/// A window's start computed from the wall clock minus an interval (`Date.now() - 3_600_000`,
/// `DateTime.subtract(now, { hours: 1 })`) in a callback passed to a call: when the call is
/// of a cron wrapper that hands that callback its slot, the job reads the clock instead of its
/// slot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SinceFromNow {
    /// The subtraction.
    pub span: Span,
    /// As written, shortened: `Date.now() - 3_600_000`.
    pub text: String,
    /// The call the callback is passed to, and its callee as written.
    pub call: Span,
    pub callee: Expr,
    /// The callback's argument position, and its key when it is a property of an object
    /// argument (`{ run: (slot) => … }`).
    pub arg: usize,
    pub key: Option<String>,
    /// Whether the callback reads its first parameter (the slot).
    pub slot: SlotUse,
}

/// An Effect `Schedule.cron(…)`: outside the jobs runtime, a recurring job that is not a
/// `Jobs.make` value.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CronRepeat {
    /// The `Schedule.cron(…)` call.
    pub span: Span,
    /// `Schedule.cron("0 3 * * *")`, rendered for messages.
    pub schedule: String,
    /// The call that repeats with it: `Effect.repeat`, `Effect.schedule`, `Stream.schedule`, ….
    pub driver: Option<String>,
    /// The `Layer.*` call it sits in, by the layer's tag or the constructor's name.
    pub layer: Option<String>,
    /// Forked (`Effect.fork*`) in the same pipe or around it: it runs in the background.
    pub forked: bool,
    pub containers: Vec<Container>,
}

/// Evidence of an in-memory "since the last run" cursor: a `Ref` read for the last run's
/// time, or written with the current time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CursorAccess {
    pub kind: CursorKind,
    /// The `Ref.*` call.
    pub span: Span,
    /// The ref as written: `lastRun`, `this.lastRun`.
    pub reference: String,
    /// The local the read value is bound to (`const since = yield* Ref.get(lastRun)`).
    pub binding: Option<String>,
    /// The value read is passed on: a call argument (not a log), an SQL hole.
    pub passed_on: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CursorKind {
    /// `Ref.getAndSet(ref, now)`: reads the previous time and stores the current one.
    GetAndSetNow,
    /// `Ref.get(ref)`.
    Get,
    /// `Ref.set(ref, now)`, `Ref.update(ref, () => now)`.
    SetNow,
}

/// `Date.now()` or `new Date()`: the wall clock, read directly.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClockRead {
    pub span: Span,
    /// As written: `Date.now()`, `new Date()`.
    pub call: String,
}

/// A loop that runs something again and again on an interval (decision 6): `Effect.repeat`
/// of a schedule, `Effect.forever` with a wait, `setInterval`, `Stream.tick`, or a retry that
/// restarts long-running work (a supervisor).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PollLoop {
    /// The looping call's callee (`Effect.repeat`, `setInterval`, a supervisor's `Effect.retry`).
    pub span: Span,
    /// How messages name the call: `Effect.repeat`, `Effect.forever`, `setInterval`.
    pub call: String,
    pub kind: PollKind,
    /// A failing tick is caught and the loop goes on: a catch in the repeated effect, a
    /// try/catch or `.catch` in the callback. A supervisor's retry catches by itself.
    pub caught: bool,
    /// The tick retries on its own (an `Effect.retry` inside): it may back off, unknown.
    pub retries: bool,
    /// The loop is forked (`Effect.fork*` in its pipe or around it) or runs in a layer.
    pub forked: bool,
    /// What runs never ends by itself: `Effect.forever`, `while (true)`, `Effect.never`,
    /// `Stream.run*`.
    pub endless: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum PollKind {
    /// The interval is a schedule: `Effect.repeat(Schedule.fixed("5 seconds"))`.
    Schedule(Expr),
    /// A wait after a caught failure: `Effect.forever(tick.pipe(Effect.catch(() =>
    /// Effect.sleep("1 second"))))`.
    SleepAfterFailure(Expr),
    /// A retried effect that waits itself: `check.pipe(Effect.zipRight(Effect.sleep("1
    /// second")), Effect.retry({ while: isPending }))`. With a policy that adds no delay (no
    /// schedule), it polls at that wait.
    WaitInRetried(Expr),
    /// A duration: `setInterval(tick, 5000)`, `Stream.tick("1 second")`.
    Every(Expr),
    /// A retry of long-running work (the retry site at the same span): its policy is the
    /// interval.
    Retry,
}
