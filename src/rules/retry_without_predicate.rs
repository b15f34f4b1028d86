//! `retry-without-predicate`: a retry that replays every failure.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Role};
use crate::facts::{Predicate, Retried};

pub const RULE: Rule = Rule {
    name: "retry-without-predicate",
    summary: "a retry with no `while`/`until`: domain errors and timeouts get replayed",
    decision: "2",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/retry-without-predicate.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    // The retry module's helpers are where predicates are attached.
    if ctx.is_retry_module() {
        return;
    }
    for (site, analysis) in ctx.retry_sites() {
        // A stream is resubscribed whole; it takes no error filter. A supervisor restarts
        // long-running work whatever stopped it (decision 6 judges its pace).
        if site.retried == Retried::Stream || analysis.predicate != Predicate::None {
            continue;
        }
        if analysis.supervisor && !bounded_rust_wait(ctx, site) {
            continue;
        }
        let Some((message, help)) = dialect::no_predicate(site.library, &site.callee) else {
            continue;
        };
        // Options bound to a name are not a schedule to wrap in new options.
        let bound = site.options().is_none() && crate::analysis::bound_options(ctx.index, ctx.file, site).is_some();
        // `Effect.retryOrElse` takes a schedule, not options: `{ schedule, while }` there does
        // not type-check (TS2353), so no fix is offered.
        let takes_options = !site.callee.ends_with("retryOrElse");
        let fix = (analysis.role == Role::Contention && !bound && takes_options)
            .then(|| {
                let names = ctx.analysis.names(ctx.index, ctx.file);
                dialect::predicate_fix(ctx.file, site, names, ctx.index.loaded(ctx.file), ctx.text())
            })
            .flatten();
        out.push(
            RULE.report(ctx, site.callee_span, message)
                .with_help(help)
                .with_fix(fix),
        );
    }
}

/// A Rust retry read as a supervisor (it only connects) whose policy gives up after a few
/// attempts (`FixedInterval::from_millis(500).take(10)` while a server starts): a bounded wait
/// for a connection, not a supervisor that reconnects for as long as the service lives, so the
/// errors it replays (permission denied as well as connection refused) still need a test.
fn bounded_rust_wait(ctx: &Context, site: &crate::facts::RetrySite) -> bool {
    use crate::schedule::Attempts;
    let crate::facts::PolicyArg::Rust(arg) = &site.policy else {
        return false;
    };
    let bounded =
        |policy: &crate::analysis::Policy| matches!(policy.summary.attempts, Attempts::Exact(_) | Attempts::AtMost(_));
    // A policy named unchanged is judged where it is defined: the retry module's
    // (`.retry(retry::transient())`), or a function's of another file.
    if let Some(chain) = &arg.chain {
        use crate::analysis::Origin;
        let named = crate::analysis::rust::named_policy(ctx.index, ctx.file, chain)
            .map(|(file, item)| (file, item, true))
            .or_else(|| {
                crate::analysis::rust::site_binding(ctx.index, ctx.file, arg).map(|(file, name, _)| (file, name, false))
            });
        if let Some((file, at, export)) = named {
            return ctx.analysis.policies(ctx.index, file).iter().any(|policy| {
                let defined = match &policy.origin {
                    Origin::Export { binding, .. } => export && *binding == at,
                    Origin::Named { binding, .. } => !export && *binding == at,
                    _ => false,
                };
                defined && bounded(policy)
            });
        }
    }
    ctx.policies().iter().any(|policy| {
        let here = policy.span == arg.arg
            || policy
                .uses
                .iter()
                .any(|(file, span)| *file == ctx.file && *span == arg.arg);
        here && bounded(policy)
    })
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn retry_without_predicate() {
        let pass = [
            (
                "src/features/billing/Refund.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"

export const refund = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#,
            ),
            (
                "src/bot/Presence.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../infra/index.js"

declare const presence: { heartbeat: Effect.Effect<never, Error> }

export const beat = presence.heartbeat.pipe(Effect.retry(Retry.reconnect), Effect.forkScoped)
"#,
            ),
        ];
        let fail = [
            (
                "src/features/billing/Refund.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"

export const refund = (id: string) => Effect.succeed(id).pipe(Effect.retry({ schedule: Retry.contention }))
"#,
            ),
            (
                "src/features/billing/Refund.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"

export const refund = (id: string) => Effect.succeed(id).pipe(Effect.retry(Retry.contention))
"#,
            ),
            (
                "src/invoices.rs",
                r#"use backon::Retryable;

use crate::retry;

// Every error is retried: a malformed invoice too.
pub async fn fetch(client: &reqwest::Client, id: u64) -> Result<String, reqwest::Error> {
    (|| async { client.get(format!("https://billing.internal/invoices/{id}")).send().await?.text().await })
        .retry(retry::transient())
        .await
}
"#,
            ),
        ];
        let fix = [(
            "src/features/billing/Refund.ts",
            r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"

export const refund = (id: string) => Effect.succeed(id).pipe(Effect.retry({ schedule: Retry.contention }))
"#,
            r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"

export const refund = (id: string) => Effect.succeed(id).pipe(Effect.retry({ schedule: Retry.contention, while: Retry.isContention }))
"#,
        )];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).fix(&fix).test();
    }
}
