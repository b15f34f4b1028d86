//! `stacked-retry`: an in-process retry under a durable retrier, other than contention.

use super::{Context, Diagnostic, FixSafety, Rule, Severity};
use crate::replay::{durable_retrier, role, Role};

pub const RULE: Rule = Rule {
    name: "stacked-retry",
    summary: "an in-process retry other than contention inside a durable retrier (queue consumer, outbox subscriber)",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    doc: include_str!("../../rules/stacked-retry.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for site in &ctx.facts.retry_sites {
        if role(site, &ctx.project.config.vocabulary) == Role::Contention {
            continue;
        }
        let Some(why) = durable_retrier(ctx.project, ctx.file, site) else {
            continue;
        };
        let queue = match ctx.project.wrangler_max_retries(ctx.file) {
            Some(n) => format!(", which redelivers up to {n} times (queue consumer `max_retries`)"),
            None => String::new(),
        };
        out.push(
            Diagnostic::new(
                &RULE,
                ctx,
                site.callee_span,
                format!(
                    "in-process retry under a durable retrier ({why}{queue}): every delivery retries again, so attempts multiply"
                ),
            )
            .with_help("retry only contention here, `{ schedule: Retry.contention, while: Retry.isContention }`; the durable retrier owns every other failure"),
        );
    }
}
