//! `retrying-client-unsafe-method`: a retrying HTTP client used for POST/PATCH without a key.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::dialect;
use crate::analysis::Replays;
use crate::facts::Retried;

pub const RULE: Rule = Rule {
    name: "retrying-client-unsafe-method",
    summary: "a client built with `HttpClient.retryTransient` or reqwest-retry's `RetryTransientMiddleware` used for POST/PATCH without an `Idempotency-Key`",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/retrying-client-unsafe-method.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let facts = ctx.facts;
    if facts.retrying_clients.is_empty() {
        return;
    }
    let (label, help) = dialect::retrying_client(facts.language);
    for request in &facts.client_requests {
        let Some((_, client_span)) = facts.retrying_clients.iter().find(|(name, _)| *name == request.client) else {
            continue;
        };
        let Some(method) = request.method.as_deref().filter(|m| matches!(*m, "post" | "patch")) else {
            continue;
        };
        // A retry written in `transformResponse` is judged by what it retries: one that
        // replays only what was never processed (contention) leaves a POST safe.
        let retry = ctx
            .retry_sites()
            .filter(|(site, _)| site.retried == Retried::Client && site.span.start >= client_span.start)
            .min_by_key(|(site, _)| site.span.start);
        let in_transform = retry.is_some_and(|(site, _)| site.callee == "Effect.retry");
        if in_transform && !retry.is_some_and(|(_, analysis)| matches!(analysis.replays, Replays::ConnectionLoss(_))) {
            continue;
        }
        let label = if in_transform {
            "retried in `HttpClient.transformResponse` here"
        } else {
            label
        };
        if request.idempotency_key {
            continue;
        }
        out.push(
            RULE.report(
                ctx,
                request.span,
                format!(
                    "`{}` retries on transient errors, and this {} carries no `Idempotency-Key`: a retry after a lost response sends it twice",
                    request.client,
                    method.to_uppercase()
                ),
            )
            .with_label(ctx.file, *client_span, label)
            .with_help(help),
        );
    }
}
