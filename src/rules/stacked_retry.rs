//! `stacked-retry`: an in-process retry under a durable retrier, other than contention.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Replays, Role};

pub const RULE: Rule = Rule {
    name: "stacked-retry",
    summary: "a retry around work that already retries the same failures: under a durable retrier (queue consumer, job runner, outbox), or around a call that retries itself",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/stacked-retry.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (site, analysis) in ctx.retry_sites() {
        let contention = analysis.role == Role::Contention || analysis.replays == Replays::Contention;
        match &analysis.durable {
            Some(durable) if !contention => {
                let queue = match durable.redeliveries {
                    Some(n) => format!(", which redelivers up to {n} times (queue consumer `max_retries`)"),
                    None => String::new(),
                };
                let diagnostic = match &durable.caller {
                    None => RULE.report(
                        ctx,
                        site.callee_span,
                        format!(
                            "in-process retry under a durable retrier ({}{queue}): every delivery retries again, so attempts multiply",
                            durable.why
                        ),
                    ),
                    Some((function, handler)) => RULE
                        .report(
                            ctx,
                            site.callee_span,
                            format!(
                                "in-process retry in `{function}`, called from {}{queue}: every delivery retries again, so attempts multiply",
                                durable.why
                            ),
                        )
                        .with_label(ctx.file, *handler, format!("this handler calls `{function}`")),
                };
                out.push(diagnostic.with_help(dialect::durable_help(site.library)));
                continue;
            }
            _ => {}
        }
        let Some(inner) = &analysis.stacked else {
            continue;
        };
        let around = inner.through.as_deref().unwrap_or("an effect");
        let multiply = match inner.attempts {
            Some((outer, inner)) => format!(
                "{outer} attempts of {inner} each, up to {} calls for one failure",
                outer.saturating_mul(inner)
            ),
            None => "each outer attempt runs the inner retry again, so attempts multiply".to_string(),
        };
        out.push(
            RULE.report(
                ctx,
                site.callee_span,
                format!(
                    "`{}` around {around}, which already retries the same failures itself: {multiply}",
                    site.callee
                ),
            )
            .with_label(inner.file, inner.span, "the inner retry")
            .with_help("keep one retry layer per failure: remove this retry, or the inner one, and let the remaining one own the budget"),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn stacked_retry() {
        let pass = [
            (
                "src/subscribers/OrderShipped.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../infra/index.js"

export const onOrderShipped = Effect.fn("OrderShipped.handle")(
  function* (orderId: string) {
    yield* Effect.log(`shipped ${orderId}`)
  },
  Effect.retry({ schedule: Retry.contention, while: Retry.isContention }),
)
"#,
            ),
            (
                "src/features/orders/Ship.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"

export const ship = Effect.fn("Ship.run")(
  function* (orderId: string) {
    yield* Effect.log(`ship ${orderId}`)
  },
  Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),
)
"#,
            ),
        ];
        let fail = [
            (
                "src/subscribers/OrderShipped.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../infra/index.js"

export const onOrderShipped = Effect.fn("OrderShipped.handle")(
  function* (orderId: string) {
    yield* Effect.log(`shipped ${orderId}`)
  },
  Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),
)
"#,
            ),
            (
                "src/features/Invoices.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../infra/index.js"

declare const api: { invoice(id: string): Effect.Effect<unknown> }

const fetchInvoice = (id: string) =>
  api.invoice(id).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))

export const loadInvoice = (id: string) =>
  fetchInvoice(id).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
