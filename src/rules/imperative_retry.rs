//! `imperative-retry`: `$_retry`, the v1 pipeline variable RS2 removed. Retry is declared on
//! the step, the mount or the tenant, never set imperatively inside the flow.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};

pub const RULE: Rule = Rule {
    name: "imperative-retry",
    summary: "`$_retry`, the removed v1 pipeline variable: retry set imperatively inside an RS2 flow",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Rs2],
    doc: include_str!("../../rules/imperative-retry.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for span in &ctx.facts.rs2.imperative {
        out.push(
            RULE.report(
                ctx,
                *span,
                "`$_retry` sets retry imperatively inside the flow: the runtime no longer has this v1 pipeline variable, so it retries nothing",
            )
            .with_help("declare a `retry` policy on the step (beside its `call`), its mount or its tenant instead"),
        );
    }
}
