//! `uncapped-schedule`: a retry policy with no attempt cap, or whose gap grows without a cap.

use super::{policy_name, with_uses, Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Origin};
use crate::schedule::duration::format_ms;
use crate::schedule::{Attempts, Gap};

pub const RULE: Rule = Rule {
    name: "uncapped-schedule",
    summary: "a retry policy with no attempt cap, or a growing gap with no per-gap cap",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries, Trigger::Rs2],
    doc: include_str!("../../rules/uncapped-schedule.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for policy in ctx.policies() {
        // A duration Effect cannot decode makes the schedule throw when it is built.
        for problem in policy.problems.iter().filter(|p| p.file == ctx.file) {
            let diagnostic = RULE
                .report(ctx, problem.span, problem.message.clone())
                .with_help(dialect::invalid_value_help(policy.library));
            out.push(with_uses(diagnostic, policy));
        }
        let summary = &policy.summary;
        // A supervisor restarts long-running work forever by design (decision 6 judges its
        // pace); a gap that grows without a cap is still reported.
        let unbounded = summary.attempts == Attempts::Unbounded
            && !ctx.is_supervisor_policy(policy)
            && !waits_in_retried(ctx, policy);
        let growing = summary.gap == Gap::Growing;
        let name = policy_name(policy);
        let message = match (unbounded, growing) {
            (true, true) => format!("retry policy {name} never stops, and its gap grows without a cap: a dependency that stays down is retried forever, ever further apart"),
            (true, false) => {
                let gap = match summary.gap {
                    Gap::Capped(0.0) => "with no delay".to_string(),
                    Gap::Capped(ms) => format!("every {}", format_ms(ms)),
                    _ => "at an unknown pace".to_string(),
                };
                match &policy.origin {
                    Origin::Site { .. } if policy.schedule.is_none() => format!(
                        "retry {name} has no `times` and no schedule: it retries forever {gap}"
                    ),
                    _ => format!("retry policy {name} never stops: a failure that persists is retried forever {gap}"),
                }
            }
            (false, true) => {
                let delays = summary.delays.as_deref().unwrap_or_default();
                let shown: Vec<String> = delays.iter().take(4).map(|d| format_ms(*d)).collect();
                let suffix = if shown.is_empty() { String::new() } else { format!(" ({}, …)", shown.join(", ")) };
                format!("retry policy {name} has no per-gap cap: each gap grows{suffix}")
            }
            (false, false) => continue,
        };
        let diagnostic = RULE
            .report(ctx, policy.span, message)
            .with_help(dialect::cap_help(policy.library, policy.effect));
        out.push(with_uses(diagnostic, policy));
    }
}

/// A retry with no schedule whose retried effect waits itself is a poll, not a retry "with no
/// delay": decision 6 judges its pace (`poll-without-backoff`).
fn waits_in_retried(ctx: &Context, policy: &crate::analysis::Policy) -> bool {
    if !matches!(policy.origin, Origin::Site { .. }) || policy.schedule.is_some() {
        return false;
    }
    ctx.facts
        .retry_sites
        .iter()
        .filter(|site| site.span.start <= policy.span.start && policy.span.end <= site.span.end)
        .any(|site| {
            ctx.facts.polls.iter().any(|poll| {
                poll.span == site.callee_span && matches!(poll.kind, crate::facts::PollKind::WaitInRetried(_))
            })
        })
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn uncapped_schedule() {
        let pass = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const transient = Schedule.exponential("100 millis").pipe(
  Schedule.jittered,
  Schedule.either(Schedule.spaced("5 seconds")),
  Schedule.intersect(Schedule.recurs(5)),
)
"#,
            ),
            (
                "src/features/orders/ShipOrder.ts",
                r#"import { Effect, Schedule } from "effect"

export const ship = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry({ schedule: Schedule.spaced("1 second").pipe(Schedule.jittered), times: 3 }))
"#,
            ),
            (
                "src/retry.rs",
                r#"use std::time::Duration;

use backon::ExponentialBuilder;

pub fn transient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_max_times(4).with_max_delay(Duration::from_secs(2)).with_jitter()
}
"#,
            ),
        ];
        let fail = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const patient = Schedule.spaced("2 seconds").pipe(Schedule.jittered)
"#,
            ),
            (
                "src/features/orders/ShipOrder.ts",
                r#"import { Effect, Schedule } from "effect"

export const ship = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry({ schedule: Schedule.exponential("200 millis").pipe(Schedule.jittered), times: 5 }))
"#,
            ),
            (
                "src/retry.rs",
                r#"use backon::ExponentialBuilder;

pub fn patient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_jitter().without_max_times()
}
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
