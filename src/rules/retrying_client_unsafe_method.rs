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

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn retrying_client_unsafe_method() {
        let pass = [
            (
                "src/http/Catalog.ts",
                r#"import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/unstable/http"
import { Retry } from "../infra/index.js"

export const make = Effect.gen(function* () {
  const base = yield* HttpClient.HttpClient
  const retrying = base.pipe(HttpClient.retryTransient({ schedule: Retry.transient }))
  return {
    product: (sku: string) => retrying.execute(HttpClientRequest.get(`/products/${sku}`)),
  }
})
"#,
            ),
            (
                "src/http/Catalog.ts",
                r#"import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/unstable/http"
import { Retry } from "../infra/index.js"

export const make = Effect.gen(function* () {
  const base = yield* HttpClient.HttpClient
  const retrying = base.pipe(HttpClient.retryTransient({ schedule: Retry.transient }))
  return {
    product: (sku: string) => retrying.execute(HttpClientRequest.get(`/products/${sku}`)),
    create: (sku: string) => base.execute(HttpClientRequest.post("/products").pipe(HttpClientRequest.bodyUnsafeJson({ sku }))),
  }
})
"#,
            ),
        ];
        let fail = [
            (
                "src/http/Catalog.ts",
                r#"import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/unstable/http"
import { Retry } from "../infra/index.js"

export const make = Effect.gen(function* () {
  const base = yield* HttpClient.HttpClient
  const retrying = base.pipe(HttpClient.retryTransient({ schedule: Retry.transient }))
  return {
    create: (sku: string) => retrying.execute(HttpClientRequest.post("/products").pipe(HttpClientRequest.bodyUnsafeJson({ sku }))),
  }
})
"#,
            ),
            (
                "src/http/Catalog.ts",
                r#"import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/unstable/http"
import { Retry } from "../infra/index.js"

export const make = Effect.gen(function* () {
  const base = yield* HttpClient.HttpClient
  const retrying = base.pipe(HttpClient.retryTransient({ schedule: Retry.transient }))
  return {
    reprice: (sku: string, price: number) =>
      retrying.execute(HttpClientRequest.patch(`/products/${sku}`).pipe(HttpClientRequest.bodyUnsafeJson({ price }))),
  }
})
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
