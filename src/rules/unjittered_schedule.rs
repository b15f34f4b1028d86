//! `unjittered-schedule`: a retry policy without jitter.

use super::{policy_name, with_uses, Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Origin};
use crate::schedule::{api, Attempts, Gap, Jitter, Library};
use crate::source::Span;

pub const RULE: Rule = Rule {
    name: "unjittered-schedule",
    summary: "a retry policy with no jitter",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    triggers: &[Trigger::Retries, Trigger::Rs2],
    doc: include_str!("../../rules/unjittered-schedule.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for policy in ctx.policies() {
        if policy.summary.jitter != Jitter::No {
            continue;
        }
        // Immediate retries have no delay to spread, but two or more of them are a burst
        // (one replay, a re-auth step say, is not).
        if matches!(policy.summary.gap, Gap::Capped(ms) if ms == 0.0) {
            if let Some(burst) = burst(ctx, policy) {
                out.push(with_uses(burst, policy));
            }
            continue;
        }
        let fix = policy.jitter_fix.first().map(|first| Fix {
            safety: FixSafety::Unsafe,
            title: first.title.clone(),
            edits: policy
                .jitter_fix
                .iter()
                .map(|insertion| Edit {
                    file: ctx.file,
                    span: Span::at(insertion.at),
                    replacement: insertion.text.clone(),
                })
                .collect(),
        });
        out.push(with_uses(
            RULE.report(
                ctx,
                policy.span,
                format!(
                    "retry policy {} has no jitter: replicas that fail together retry together, in lockstep",
                    policy_name(policy)
                ),
            )
            .with_help(dialect::jitter_help(policy.library, policy.effect))
            .with_fix(fix),
            policy,
        ));
    }
}

/// An Effect policy that retries two or more times at once (`{ times: 10 }` with no schedule,
/// `Schedule.recurs(3)`): decision 3 asks for a capped, jittered backoff.
fn burst(ctx: &Context, policy: &crate::analysis::Policy) -> Option<Diagnostic> {
    // A bare `times`: a schedule that retries at once (`Schedule.recurs(n)`) is at least
    // written as one, and `inline-schedule` names it.
    let bare = matches!(policy.origin, Origin::Site { .. }) && policy.schedule.is_none();
    if policy.library != Library::Effect || !bare || ctx.is_supervisor_policy(policy) {
        return None;
    }
    let retries = match policy.summary.attempts {
        Attempts::Exact(n) => n.to_string(),
        Attempts::AtMost(n) => format!("up to {n}"),
        _ => return None,
    };
    let n = policy.summary.attempts.bound()?;
    if n < 2 {
        return None;
    }
    let name = policy_name(policy);
    let message = format!(
        "retry policy {name} retries {retries} times at once, with no delay: a burst of {} attempts into the dependency that just failed, sent together by every replica that failed together",
        if retries.starts_with("up to") { format!("up to {}", n + 1) } else { (n + 1).to_string() }
    );
    // On 4.x `Activity.retry` takes `times`, `while` and `until` but no `schedule`: no backoff
    // can be written in its options, so the help says where one can be.
    let activity_v4 = matches!(&policy.origin, Origin::Site { callee } if callee == "Activity.retry")
        && matches!(
            policy.effect,
            crate::effect_version::EffectVersion::V4Beta(_) | crate::effect_version::EffectVersion::V4 { .. }
        );
    let help = if activity_v4 {
        format!(
            "`Activity.retry` takes no `schedule` in effect 4 (only `times`, `while`, `until`), so no backoff can be named here: retry inside the activity's `execute` with `Effect.retry` and a capped, jittered schedule from the retry module (decision 3), e.g. {}",
            api::cap_snippet(policy.effect)
        )
    } else {
        format!(
            "wait between attempts with a capped, jittered backoff (decision 3), named in the retry module: {}",
            api::cap_snippet(policy.effect)
        )
    };
    Some(RULE.report(ctx, policy.span, message).with_help(help))
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn unjittered_schedule() {
        let pass = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const transient = Schedule.max([
  Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")]),
  Schedule.recurs(4),
]).pipe(Schedule.jittered)
"#,
            ),
            (
                "src/retry.rs",
                r#"use backon::ExponentialBuilder;

pub fn transient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_max_times(3).with_jitter()
}
"#,
            ),
        ];
        let fail = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const transient = Schedule.max([
  Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")]),
  Schedule.recurs(4),
])
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.intersect(Schedule.recurs(3)))))
"#,
            ),
            (
                "src/retry.rs",
                r#"use backon::ExponentialBuilder;

pub fn transient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_max_times(3)
}
"#,
            ),
        ];
        let fix = [
            (
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const transient = Schedule.max([
  Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")]),
  Schedule.recurs(4),
])
"#,
                r#"import { Schedule } from "effect"

export const transient = Schedule.max([
  Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")]),
  Schedule.recurs(4),
]).pipe(Schedule.jittered)
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.intersect(Schedule.recurs(3)))))
"#,
                r#"import { Effect, Schedule } from "effect"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.intersect(Schedule.recurs(3)), Schedule.jittered)))
"#,
            ),
            (
                "src/retry.rs",
                r#"use backon::ExponentialBuilder;

pub fn transient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_max_times(3)
}
"#,
                r#"use backon::ExponentialBuilder;

pub fn transient() -> ExponentialBuilder {
    ExponentialBuilder::default().with_max_times(3).with_jitter()
}
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).fix(&fix).test();
    }
}
