//! `policy-over-budget`: an in-process policy that can wait longer in total than the budget.

use super::{policy_name, with_uses, Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::schedule::duration::format_ms;

pub const RULE: Rule = Rule {
    name: "policy-over-budget",
    summary: "an in-process retry policy whose worst-case total wait exceeds the budget",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries, Trigger::Rs2],
    doc: include_str!("../../rules/policy-over-budget.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let budget = ctx.config().budget_ms;
    for policy in ctx.policies() {
        let Some(worst) = policy.summary.worst_total_ms else {
            continue;
        };
        // A supervisor restarts long-running work: no caller waits on it (decision 6).
        if ctx.is_supervisor_policy(policy) {
            continue;
        }
        if worst <= budget {
            continue;
        }
        let delays = policy.summary.delays.as_deref().unwrap_or_default();
        let shown: Vec<String> = delays.iter().take(6).map(|d| format_ms(*d)).collect();
        // No delays shown: how many retries there are depends on which failures pass the
        // policy's test of the failure; the worst case is every one passing.
        let listed = if shown.is_empty() {
            "when every failure passes its test".to_string()
        } else {
            let more = if delays.len() > 6 { ", …" } else { "" };
            format!("({}{more})", shown.join(", "))
        };
        out.push(with_uses(
            RULE.report(
                ctx,
                policy.span,
                format!(
                    "retry policy {} can wait {} in total {listed}, over the {} budget: the caller waits that long while the dependency is down",
                    policy_name(policy),
                    format_ms(worst),
                    format_ms(budget)
                ),
            )
            .with_help("retry fewer times or cap the gap lower; recovery that takes longer is the durable retrier's or the next job slot's job"),
            policy,
        ));
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn policy_over_budget() {
        let pass = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const transient = Schedule.max([
  Schedule.min([Schedule.exponential("200 millis"), Schedule.spaced("2 seconds")]),
  Schedule.recurs(3),
]).pipe(Schedule.jittered)

export const contention = Schedule.max([
  Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]),
  Schedule.recurs(3),
]).pipe(Schedule.jittered)

export const isContention = (e: { readonly _tag: string }) => e._tag === "SerializationFailure"
export const isConnectionLost = (e: { readonly _tag: string }) => e._tag === "ConnectionLost"
"#,
            ),
            (
                "src/infra/retry.ts effect=4.1.0",
                r#"import { Schedule } from "effect"

// On 4.1 fibonacci waits 300, 300, 600 ms: 1.44 s with jitter.
export const slowLookup = Schedule.min([Schedule.fibonacci("300 millis"), Schedule.spaced("1 second")]).pipe(
  Schedule.upTo({ times: 3 }),
  Schedule.jittered,
)
"#,
            ),
            (
                "src/retry.rs",
                r#"use std::time::Duration;

use backon::ExponentialBuilder;

pub fn contention() -> ExponentialBuilder {
    ExponentialBuilder::default().with_min_delay(Duration::from_millis(50)).with_max_times(3).with_jitter()
}
"#,
            ),
        ];
        let fail = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const patient = Schedule.max([
  Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("5 seconds")]),
  Schedule.recurs(6),
]).pipe(Schedule.jittered)
"#,
            ),
            (
                "src/retry.rs",
                r#"use std::time::Duration;

use backon::ExponentialBuilder;

pub fn patient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_min_delay(Duration::from_secs(1)).with_max_times(6).with_jitter()
}
"#,
            ),
            (
                "src/infra/retry.ts effect=4.0.0-beta.66",
                r#"import { Schedule } from "effect"

// On a 4.0 beta fibonacci waits 300, 600, 900 ms: 1.8 s, 2.16 s with jitter.
export const slowLookup = Schedule.fibonacci("300 millis").pipe(
  Schedule.either(Schedule.spaced("1 second")),
  Schedule.take(3),
  Schedule.jittered,
)
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
