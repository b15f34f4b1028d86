//! `stacked-retry`: an in-process retry under a durable retrier, other than contention.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Role};

pub const RULE: Rule = Rule {
    name: "stacked-retry",
    summary: "an in-process retry other than contention inside a durable retrier (queue consumer, outbox subscriber)",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/stacked-retry.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (site, analysis) in ctx.retry_sites() {
        if analysis.role == Role::Contention {
            continue;
        }
        let Some(durable) = &analysis.durable else {
            continue;
        };
        let queue = match durable.redeliveries {
            Some(n) => format!(", which redelivers up to {n} times (queue consumer `max_retries`)"),
            None => String::new(),
        };
        out.push(
            RULE.report(
                ctx,
                site.callee_span,
                format!(
                    "in-process retry under a durable retrier ({}{queue}): every delivery retries again, so attempts multiply",
                    durable.why
                ),
            )
            .with_help(dialect::durable_help(site.library)),
        );
    }
}
