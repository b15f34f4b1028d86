//! `uncapped-schedule`: a retry policy with no attempt cap, or whose gap grows without a cap.

use super::{policy_name, Context, Diagnostic, FixSafety, Rule, Severity};
use crate::effect_version::EffectVersion;
use crate::facts::RustLib;
use crate::policy::{format_ms, Origin, Policy};
use crate::schedule::{api, Attempts, Gap};

pub const RULE: Rule = Rule {
    name: "uncapped-schedule",
    summary: "a retry policy with no attempt cap, or a growing gap with no per-gap cap",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    doc: include_str!("../../rules/uncapped-schedule.md"),
    check,
};

/// How to cap a policy in its own library's terms, with the combinators of the file's
/// `effect` version (3.x has no `Schedule.max`, the early 4.0 betas have `both`/`either`).
fn help(policy: &Policy, effect: EffectVersion) -> String {
    let text = match policy.rust.as_ref().map(|r| r.lib) {
        None => {
            return format!(
                "cap it the way the retry module's policies are capped: {}",
                api::cap_snippet(effect)
            )
        }
        Some(Some(RustLib::Backon)) => "cap it with `.with_max_times(n)` and `.with_max_delay(d)` (backon's builders stop after 3 retries and cap the gap at 60 s unless `without_max_times()` or `without_max_delay()` remove it)",
        Some(Some(RustLib::TokioRetry)) => "cap it with `.max_delay(d)` on the strategy and `.take(n)` on the iterator: tokio-retry strategies never stop by themselves",
        Some(Some(RustLib::Backoff)) => "use an `ExponentialBackoff` with `max_interval` and `max_elapsed_time: Some(d)`: backoff counts no attempts, the elapsed time is its only stop",
        Some(_) => "build the policy with `build_with_max_retries(n)` and cap its gap with `retry_bounds(min, max)`",
    };
    text.to_string()
}

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let effect = EffectVersion::from_code(ctx.project.effect_major(ctx.file));
    for policy in ctx.project.policies(ctx.file) {
        // A duration Effect cannot decode makes the schedule throw when it is built.
        for problem in policy.problems.iter().filter(|p| p.file == ctx.file) {
            let fix = if policy.rust.is_some() {
                "give the builder values the library accepts"
            } else {
                "write durations as `<number> <unit>`, e.g. \"100 millis\" or \"2 seconds\""
            };
            out.push(Diagnostic::new(&RULE, ctx, problem.span, problem.message.clone()).with_help(fix));
        }
        let summary = &policy.summary;
        let unbounded = summary.attempts == Attempts::Unbounded;
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
        out.push(Diagnostic::new(&RULE, ctx, policy.span, message).with_help(help(policy, effect)));
    }
}
