//! `retry-after-commit`: a retry that wraps more than the atomic unit.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::dialect;

pub const RULE: Rule = Rule {
    name: "retry-after-commit",
    summary: "a retry wrapping more than the transaction: steps after the commit get replayed",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/retry-after-commit.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (site, analysis) in ctx.retry_sites() {
        let (Some(unit), Some((transaction, later))) = (&site.unit, &analysis.after_commit) else {
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
                site.callee_span,
                format!(
                    "the retry wraps more than {unit_name}'s transaction: when {} fails after the commit, the committed transaction runs again",
                    later.what
                ),
            )
            .with_label(ctx.file, *transaction, "the transaction commits here")
            .with_label(ctx.file, later.span, "this runs after the commit")
            .with_help(dialect::after_commit_help(site.library)),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn retry_after_commit() {
        let pass = [
            (
                "src/features/billing/Settle.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"
import { Invoices, Transactions } from "../../services.js"

export const settle = Effect.fn("Settle.run")(
  function* (invoiceId: string) {
    const transactions = yield* Transactions
    const invoices = yield* Invoices
    yield* transactions.withTransaction(invoices.markPaid(invoiceId))
  },
  Effect.retry({ schedule: Retry.contention, while: Retry.isContention }),
)
"#,
            ),
            (
                "src/billing.rs",
                r#"use backon::Retryable;

use crate::retry;

pub async fn settle(pool: &sqlx::PgPool, invoice: i64) -> Result<(), Error> {
    (|| async {
        let mut tx = pool.begin().await?;
        sqlx::query("UPDATE invoices SET paid = true WHERE id = $1").bind(invoice).execute(&mut *tx).await?;
        tx.commit().await
    })
    .retry(retry::contention())
    .when(retry::is_contention)
    .await?;
    notify_paid(invoice).await
}
"#,
            ),
        ];
        let fail = [
            (
                "src/features/billing/Settle.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"
import { Invoices, Mailer, Transactions } from "../../services.js"

export const settle = Effect.fn("Settle.run")(
  function* (invoiceId: string) {
    const transactions = yield* Transactions
    const invoices = yield* Invoices
    const mailer = yield* Mailer
    yield* transactions.withTransaction(invoices.markPaid(invoiceId))
    yield* mailer.sendReceipt(invoiceId)
  },
  Effect.retry({ schedule: Retry.contention, while: Retry.isContention }),
)
"#,
            ),
            (
                "src/billing.rs",
                r#"use backon::Retryable;

use crate::retry;

pub async fn settle(pool: &sqlx::PgPool, invoice: i64) -> Result<(), Error> {
    (|| async {
        let mut tx = pool.begin().await?;
        sqlx::query("UPDATE invoices SET paid = true WHERE id = $1").bind(invoice).execute(&mut *tx).await?;
        tx.commit().await?;
        notify_paid(invoice).await
    })
    .retry(retry::contention())
    .when(retry::is_contention)
    .await
}
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
