//! `poll-without-backoff`: a sub-minute loop whose failing tick is caught and run again at
//! the same interval (decision 6).

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::facts::PollKind;
use crate::schedule::duration::format_ms;

pub const RULE: Rule = Rule {
    name: "poll-without-backoff",
    summary: "a sub-minute poll or restart loop that runs a failing tick again at the same interval",
    decision: "6",
    default_severity: Severity::Warning,
    fix: FixSafety::None,
    triggers: &[Trigger::Polls],
    doc: include_str!("../../rules/poll-without-backoff.md"),
    check,
};

/// Decision 6: the wait doubles from the interval up to this.
const CAP_MS: f64 = 60_000.0;

const HELP: &str = "back off while the tick fails: double the wait from the interval up to 1 minute and reset it on the first success (decision 6), e.g. retry the tick with `Schedule.exponential(interval).pipe(Schedule.either(Schedule.spaced(\"1 minute\")), Schedule.jittered)` inside the loop";

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let analyses = ctx.analysis.polls(ctx.index, ctx.file);
    for (poll, analysis) in ctx.facts.polls.iter().zip(analyses) {
        let Some(every) = analysis.every_ms else { continue };
        // A loop that ends on a failure, or whose tick retries with its own schedule, or that
        // waits a minute or more, is not the hot loop decision 6 is about.
        if !(0.0..CAP_MS).contains(&every) || !poll.caught || poll.retries {
            continue;
        }
        // A supervisor with no delay at all restarts its work in a tight loop.
        if every == 0.0 {
            // Work that waits itself (`Effect.sleep` before each pull) is paced by that wait.
            let waits = ctx
                .facts
                .polls
                .iter()
                .any(|p| p.span == poll.span && matches!(p.kind, PollKind::WaitInRetried(_)));
            if matches!(poll.kind, PollKind::Retry) && !waits {
                let message = format!(
                    "`{}` restarts this long-running work at once, with no delay, forever: through an outage it fails (and logs) as fast as it can, on every replica",
                    poll.call
                );
                out.push(RULE.report(ctx, poll.span, message).with_help(HELP));
            }
            continue;
        }
        let every = format_ms(every);
        let message = match &poll.kind {
            PollKind::WaitInRetried(_) => format!(
                "`{}` has no schedule, so this is a poll: the retried effect waits a fixed {every} itself, and every failure runs it again at that pace, forever, never backing off",
                poll.call
            ),
            PollKind::Retry => format!(
                "`{}` restarts this long-running work every {every}, forever: through an outage it fails (and logs) every {every} on every replica, never backing off",
                poll.call
            ),
            PollKind::SleepAfterFailure(_) => format!(
                "`{}` waits a fixed {every} after a failing tick: through an outage it fails (and logs) every {every} on every replica, never backing off",
                poll.call
            ),
            PollKind::Schedule(_) | PollKind::Every(_) => format!(
                "`{}` every {every} catches a failing tick and runs it again at the same interval: through an outage it fails (and logs) every {every} on every replica",
                poll.call
            ),
        };
        out.push(RULE.report(ctx, poll.span, message).with_help(HELP));
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn poll_without_backoff() {
        let pass = [
            (
                "src/services/sweeper.ts",
                r#"import { Effect, Schedule } from "effect"

declare const carts: { expireAbandoned(): Effect.Effect<number, Error> }

export const sweep = carts.expireAbandoned().pipe(
  Effect.retry(Schedule.exponential("1 second").pipe(Schedule.either(Schedule.spaced("1 minute")), Schedule.jittered)),
  Effect.catchAll((error) => Effect.logError("sweep failed", error)),
  Effect.repeat(Schedule.fixed("10 seconds")),
  Effect.forkDaemon,
)
"#,
            ),
            (
                "src/services/sweeper.ts",
                r#"import { Effect, Schedule } from "effect"

declare const carts: { expireAbandoned(): Effect.Effect<number, Error> }

// A failure ends the loop: nothing is retried at a fixed pace.
export const sweep = carts.expireAbandoned().pipe(Effect.repeat(Schedule.fixed("10 seconds")), Effect.forkDaemon)
"#,
            ),
        ];
        let fail = [
            (
                "src/services/sweeper.ts",
                r#"import { Effect, Schedule } from "effect"

declare const carts: { expireAbandoned(): Effect.Effect<number, Error> }

export const sweep = carts.expireAbandoned().pipe(
  Effect.catchAll((error) => Effect.logError("sweep failed", error)),
  Effect.repeat(Schedule.fixed("10 seconds")),
  Effect.forkDaemon,
)
"#,
            ),
            (
                "src/services/sweeper.ts",
                r#"import { Effect, Schedule } from "effect"

declare const carts: { expireAbandoned(): Effect.Effect<number, Error> }

export const sweep = carts.expireAbandoned().pipe(
  Effect.catchAll(() => Effect.void),
  Effect.repeat(Schedule.spaced("30 seconds")),
  Effect.forkScoped,
)
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
