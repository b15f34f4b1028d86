//! `retrying-client-unsafe-method`: a retrying HTTP client used for POST/PATCH without a key.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::dialect;

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
