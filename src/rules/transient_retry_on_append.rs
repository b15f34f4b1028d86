//! `transient-retry-on-append`: connection-loss retries on a unit that appends.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Role};
use crate::facts::Retried;

pub const RULE: Rule = Rule {
    name: "transient-retry-on-append",
    summary: "the transient (connection-loss) policy on a unit that appends",
    decision: "2",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/transient-retry-on-append.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (site, analysis) in ctx.retry_sites() {
        // A retrying client is judged per request (`retrying-client-unsafe-method`).
        if site.retried == Retried::Client || analysis.role != Role::Transient {
            continue;
        }
        let (Some(unit), Some(found), Some(policy)) = (&site.unit, &analysis.appends, site.policy_span()) else {
            continue;
        };
        let unit_name = unit
            .name
            .as_deref()
            .map(|n| format!("`{n}`"))
            .unwrap_or_else(|| dialect::unnamed_unit(site.library).into());
        out.push(
            RULE.report(
                ctx,
                policy,
                format!(
                    "connection-loss retry of {unit_name}, where {}: after a lost COMMIT acknowledgement the write may already be applied, and the replay applies it again",
                    found.what
                ),
            )
            .with_label(ctx.file, found.span, "appends here")
            .with_help(dialect::contention_help(site.library))
            .with_fix(dialect::contention_fix(ctx.file, site, &ctx.config().vocabulary)),
        );
    }
}
