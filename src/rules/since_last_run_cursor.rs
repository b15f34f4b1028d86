//! `since-last-run-cursor`: recurring work that is not keyed by its slot — an in-memory "since
//! the last run" cursor, a cron repeat outside `Jobs.make`, a job whose `run` ignores its
//! slot, a wall-clock read inside a job.

use std::sync::OnceLock;

use globset::GlobSet;

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::facts::{CursorKind, SlotUse};

pub const RULE: Rule = Rule {
    name: "since-last-run-cursor",
    summary: "recurring work driven by an in-memory \"since the last run\" cursor, a cron repeat that every replica runs, a job that ignores its slot",
    decision: "4",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Jobs],
    doc: include_str!("../../rules/since-last-run-cursor.md"),
    check,
};

/// The jobs runtime (`Jobs.layer`, the loop, the Worker registration) repeats on cron by design.
const JOBS_RUNTIME: &[&str] = &["**/infra/jobs/**", "**/infra/jobs.ts", "**/infra/jobs.mts"];

/// The remedy in a project that defines its jobs with `Jobs.make` (the seed's codebase).
const JOB_HELP: &str = "define it once in its slice as `Jobs.make({ name, cron, exclusive, timeout, run: (slot) => … })`, processing what is due as of the slot (`WHERE due_at <= ${slot}`)";

/// The remedy anywhere else, in Effect's terms.
const SLOT_HELP: &str = "run it once per fire for the whole deployment, not per replica (a cluster cron such as `ClusterCron.make`, or a lease that claims each slot), and key the work by its slot: process what is due as of the fire's scheduled time (`WHERE due_at <= ${slot}`), not since the last run";

/// Whether the project defines its recurring work with `Jobs.make` (a job is defined, or a
/// jobs runtime is there): its messages may speak of jobs, slices and the Worker profile.
fn project_has_jobs(ctx: &Context) -> bool {
    static GLOBS: OnceLock<GlobSet> = OnceLock::new();
    let globs = GLOBS.get_or_init(|| crate::config::globs_of(JOBS_RUNTIME));
    (0..ctx.index.len()).any(|file| {
        ctx.index.loaded(file).is_some_and(|facts| !facts.jobs.is_empty())
            || globs.is_match(ctx.config().relative(&ctx.index.files[file].absolute))
    })
}

fn in_jobs_runtime(ctx: &Context) -> bool {
    static GLOBS: OnceLock<GlobSet> = OnceLock::new();
    let globs = GLOBS.get_or_init(|| crate::config::globs_of(JOBS_RUNTIME));
    let absolute = &ctx.index.files[ctx.file].absolute;
    globs.is_match(ctx.config().relative(absolute))
}

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let facts = ctx.facts;
    // An in-memory cursor: the last run's time read from a `Ref` and passed on as a bound.
    for read in facts.cursors.iter().filter(|c| c.passed_on) {
        let stored_now = match read.kind {
            CursorKind::GetAndSetNow => Some(None),
            CursorKind::Get => facts
                .cursors
                .iter()
                .find(|w| w.kind == CursorKind::SetNow && w.reference == read.reference)
                .map(|w| Some(w.span)),
            CursorKind::SetNow => None,
        };
        let Some(set_at) = stored_now else { continue };
        let value = read
            .binding
            .as_deref()
            .map_or("the last run's time".to_string(), |b| format!("`{b}`"));
        let mut diagnostic = RULE.report(ctx, read.span,
            format!(
                "in-memory \"since the last run\" cursor: {value} comes from `{}`, which a restart resets and every replica keeps for itself, so work is skipped or done twice",
                read.reference
            ),
        )
        .with_help(if project_has_jobs(ctx) { JOB_HELP } else { SLOT_HELP });
        if let Some(span) = set_at {
            diagnostic = diagnostic.with_label(ctx.file, span, "the current time is stored here");
        }
        out.push(diagnostic);
    }

    // A cron repeat outside the jobs runtime.
    if !in_jobs_runtime(ctx) {
        // A cron schedule that is only a value (built, passed to a function the analysis cannot
        // see) is not a repeat: report it only when something repeats with it, forks it or
        // sits it in a layer.
        let repeats = facts
            .cron_repeats
            .iter()
            .filter(|r| r.driver.is_some() || r.layer.is_some() || r.forked);
        for repeat in repeats {
            let what = match &repeat.driver {
                Some(driver) => format!("`{driver}({})`", repeat.schedule),
                None => format!("`{}`", repeat.schedule),
            };
            let jobs = project_has_jobs(ctx);
            let worker = if jobs { ", never on the Worker profile," } else { "," };
            let message = match &repeat.layer {
                Some(layer) => format!(
                    "cron repeat {what} is buried in layer `{layer}`: it runs on every replica{worker} and a missed fire is lost"
                ),
                None if jobs => format!(
                    "cron repeat {what} outside a job: it runs on every replica that starts it{worker} and a missed fire is lost"
                ),
                None => format!(
                    "cron repeat {what}: it runs on every replica that starts it{worker} and a missed fire is lost"
                ),
            };
            out.push(
                RULE.report(ctx, repeat.span, message)
                    .with_help(if jobs { JOB_HELP } else { SLOT_HELP }),
            );
        }
    }

    // A job of the project's own cron wrapper that starts its window from the wall clock
    // instead of the slot the wrapper hands it.
    for since in &facts.since_from_now {
        let SlotUse::Ignored { param } = &since.slot else {
            continue;
        };
        let Some((wrapper_file, wrapper, handler)) = crate::analysis::cron_wrapper_of(ctx.index, ctx.file, since)
        else {
            continue;
        };
        let slot = match param {
            Some(param) => format!("never reads the slot `{param}` it is given"),
            None => "takes no slot".to_string(),
        };
        out.push(
            RULE.report(
                ctx,
                since.span,
                format!(
                    "this job of `{}` computes its window from the wall clock (`{}`) and {slot}: a late or retried fire processes a different window than the slot it stands for",
                    wrapper.name, since.text
                ),
            )
            .with_label(wrapper_file, handler.span, format!("`{}` hands the job its slot here", wrapper.name))
            .with_help("take the slot the wrapper passes and compute the window from it (`(slot) => … DateTime.subtract(slot, { hours: 1 })`), so each fire processes what was due as of its slot"),
        );
    }

    for job in &facts.jobs {
        let name = job.display_name();
        let Some(run) = &job.run else { continue };
        if let SlotUse::Ignored { param } = &run.slot {
            let what = match param {
                Some(param) => format!("never reads its slot `{param}`"),
                None => "ignores its slot".to_string(),
            };
            out.push(
                RULE.report(
                    ctx,
                    run.span,
                    format!(
                        "{name} {what}: a late or retried fire processes what is due now, not what was due at its slot"
                    ),
                )
                .with_help(
                    "take the slot and process what is due as of it, e.g. `run: (slot) => trials.closeDueAt(slot)`",
                ),
            );
        }
        let Some(body) = run.body else { continue };
        for read in facts
            .clock_reads
            .iter()
            .filter(|r| r.span.start >= body.start && r.span.end <= body.end)
        {
            out.push(
                RULE.report(ctx, read.span,
                    format!(
                        "`{}` in {name} reads the wall clock: a late or retried fire sees a later time than its slot",
                        read.call
                    ),
                )
                .with_help("use the slot for what is due (`WHERE due_at <= ${slot}`), and `Clock` where the current time is needed"),
            );
        }
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn since_last_run_cursor() {
        let pass = [
            (
                "src/jobs/invoices.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const issueInvoices = Jobs.make({
  name: "billing.issue-invoices",
  cron: "0 1 * * *",
  exclusive: true,
  timeout: "10 minutes",
  run: (slot) => invoices.issueDueAt(slot),
})
"#,
            ),
            (
                "src/jobs/invoices.ts",
                r#"import { Effect } from "effect"

// A counter, not a cursor: nothing is read "since" it.
let runs = 0

export const countRuns = Effect.sync(() => {
  runs += 1
  return runs
})
"#,
            ),
        ];
        let fail = [
            (
                "src/jobs/invoices.ts",
                r#"import { Effect } from "effect"

let lastIssued = 0

export const issueInvoices = Effect.gen(function* () {
  yield* invoices.issueSince(lastIssued)
  lastIssued = Date.now()
})
"#,
            ),
            (
                "src/jobs/invoices.ts",
                r#"import { Clock, Effect, Ref } from "effect"

export const issueInvoices = (lastRun: Ref.Ref<number>) =>
  Effect.gen(function* () {
    const since = yield* Ref.getAndSet(lastRun, yield* Clock.currentTimeMillis)
    yield* invoices.issueSince(since)
  })
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
