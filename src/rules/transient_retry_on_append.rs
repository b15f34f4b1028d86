//! `transient-retry-on-append`: a retry that replays connection loss on a unit that appends.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, Replays, Role};
use crate::facts::Retried;

pub const RULE: Rule = Rule {
    name: "transient-retry-on-append",
    summary: "a retry that replays connection loss (the transient policy, no predicate, `isRetryable`, 5xx) on a unit that appends",
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
        if site.retried == Retried::Client {
            continue;
        }
        let Replays::ConnectionLoss(why) = &analysis.replays else {
            continue;
        };
        let (Some(unit), Some(found)) = (&site.unit, &analysis.appends) else {
            continue;
        };
        let unit_name = unit
            .name
            .as_deref()
            .map(|n| format!("`{n}`"))
            .unwrap_or_else(|| dialect::unnamed_unit(site.library).into());
        let named = analysis.role == Role::Transient;
        // A request to another service loses its response, not a COMMIT acknowledgement, and
        // never meets contention: no contention fix for it.
        let lost = if found.remote {
            "a lost response the request may already have been applied, and the replay sends it again"
        } else if named {
            "a lost COMMIT acknowledgement the write may already be applied, and the replay applies it again"
        } else {
            "a lost acknowledgement the write may already be applied, and the replay applies it again"
        };
        let message = if named {
            format!(
                "connection-loss retry of {unit_name}, where {}: after {lost}",
                found.what
            )
        } else {
            format!(
                "retry of {unit_name} replays connection loss ({why}), where {}: after {lost}",
                found.what
            )
        };
        let help = if found.remote {
            dialect::unkeyed_request_help()
        } else if named {
            dialect::contention_help(site.library)
        } else {
            dialect::unkeyed_append_help(site.library)
        };
        let fix = (named && !found.remote)
            .then(|| {
                let names = ctx.analysis.names(ctx.index, ctx.file);
                dialect::contention_fix(ctx.file, site, names, ctx.index.loaded(ctx.file))
            })
            .flatten();
        out.push(
            RULE.report(ctx, site.policy_span().unwrap_or(site.callee_span), message)
                .with_label(ctx.file, found.span, "appends here")
                .with_help(help)
                .with_fix(fix),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn transient_retry_on_append() {
        let pass = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"

export const charge = (orderId: string, amount: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO payments (order_id, amount) VALUES (${orderId}, ${amount}) ON CONFLICT (order_id) DO NOTHING`
  }).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"

export const charge = (orderId: string, amount: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO payments (order_id, amount) VALUES (${orderId}, ${amount})`
  }).pipe(Effect.retry({ schedule: Retry.contention, while: Retry.isContention }))
"#,
            ),
        ];
        let fail = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"

export const charge = (orderId: string, amount: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO payments (order_id, amount) VALUES (${orderId}, ${amount})`
  }).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#,
            ),
            (
                "src/features/audit/Record.ts",
                r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"

export const record = Effect.fn("Record.run")(
  function* (actor: string, action: string) {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO audit_log (actor, action) VALUES (${actor}, ${action})`
  },
  Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),
)
"#,
            ),
        ];
        let fix = [(
            "src/features/billing/Charge.ts",
            r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"

export const charge = (orderId: string, amount: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO payments (order_id, amount) VALUES (${orderId}, ${amount})`
  }).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#,
            r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"

export const charge = (orderId: string, amount: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO payments (order_id, amount) VALUES (${orderId}, ${amount})`
  }).pipe(Effect.retry({ schedule: Retry.contention, while: Retry.isContention }))
"#,
        )];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).fix(&fix).test();
    }
}
