//! Job facts (decision 4): `Jobs.make` definitions, cron repeats outside a job, in-memory
//! "since the last run" cursors and wall-clock reads. Language-neutral: spans and small
//! [`Expr`] values, extracted once per file.

use crate::facts::{Container, Expr, Span};

/// `Jobs.make({ name, cron, exclusive, timeout, run })`.
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
pub struct JobRun {
    pub span: Span,
    /// The function's span, when `run` is written in place (its body holds the job's code).
    pub body: Option<Span>,
    pub slot: SlotUse,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotUse {
    /// The slot parameter is read in the body.
    Used,
    /// No parameter, or one the body never reads (`_slot`).
    Ignored { param: Option<String> },
    /// A function defined elsewhere, a destructured parameter: not visible.
    Unknown,
}

/// An Effect `Schedule.cron(…)`: outside the jobs runtime, a recurring job that is not a
/// `Jobs.make` value.
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorKind {
    /// `Ref.getAndSet(ref, now)`: reads the previous time and stores the current one.
    GetAndSetNow,
    /// `Ref.get(ref)`.
    Get,
    /// `Ref.set(ref, now)`, `Ref.update(ref, () => now)`.
    SetNow,
}

/// `Date.now()` or `new Date()`: the wall clock, read directly.
#[derive(Debug, Clone)]
pub struct ClockRead {
    pub span: Span,
    /// As written: `Date.now()`, `new Date()`.
    pub call: &'static str,
}

/// Evaluates a job timeout to milliseconds: Effect duration strings (`"5 minutes"`),
/// `Duration.minutes(5)`-style calls, and numbers (milliseconds). `None` when not visible.
pub fn duration_millis(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Str(text, _) => crate::schedule::parse_duration(text),
        Expr::Num(n, _) => Some(*n),
        Expr::Local { value, .. } => duration_millis(value),
        Expr::Call { callee, args, .. } => {
            let path = callee.path()?;
            let [module, unit] = path.as_slice() else {
                return None;
            };
            if *module != "Duration" {
                return None;
            }
            let [arg] = args.as_slice() else { return None };
            let n = match arg {
                Expr::Num(n, _) => *n,
                Expr::Local { value, .. } => match value.as_ref() {
                    Expr::Num(n, _) => *n,
                    _ => return None,
                },
                _ => return None,
            };
            let unit = match *unit {
                "millis" => 1.0,
                "seconds" => 1_000.0,
                "minutes" => 60_000.0,
                "hours" => 3_600_000.0,
                "days" => 86_400_000.0,
                "weeks" => 604_800_000.0,
                _ => return None,
            };
            Some(n * unit)
        }
        _ => None,
    }
}

/// The string a cron property holds, following local constants.
pub fn string_value(expr: &Expr) -> Option<(&str, Span)> {
    match expr {
        Expr::Str(text, span) => Some((text, *span)),
        Expr::Local { value, .. } => string_value(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(module: &str, unit: &str, n: f64) -> Expr {
        let s = Span::default();
        Expr::Call {
            callee: Box::new(Expr::Member(Box::new(Expr::Ident(module.into(), s)), unit.into(), s)),
            args: vec![Expr::Num(n, s)],
            span: s,
        }
    }

    #[test]
    fn timeouts_in_every_form() {
        let s = Span::default();
        assert_eq!(duration_millis(&Expr::Str("20 minutes".into(), s)), Some(1_200_000.0));
        assert_eq!(duration_millis(&Expr::Num(5000.0, s)), Some(5000.0));
        assert_eq!(duration_millis(&call("Duration", "minutes", 16.0)), Some(960_000.0));
        assert_eq!(duration_millis(&call("Other", "minutes", 16.0)), None);
        assert_eq!(duration_millis(&Expr::Opaque(s)), None);
    }
}
