//! `retry-in-repository`: a repository method never retries.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::dialect;
use crate::analysis::store::{self, StoreKind};
use crate::facts::ContainerKind;

pub const RULE: Rule = Rule {
    name: "retry-in-repository",
    summary: "a retry inside a repository (path, or a class, service or layer named *Repository/*Repo) that reaches a database or a key-value store",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/retry-in-repository.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    if !store::may_hold_repository_retry(ctx.index, ctx.file, ctx.facts) {
        return;
    }
    // A name or a default path alone is not a repository: the code must reach a store — a
    // database, or a key-value store such as Redis — itself or through a project module that
    // wraps the client (a `GitRepo` clones, `waitForRepository` polls GitHub). A Rust
    // `impl`/`trait`/`mod` of a repository type is the type itself, and a configured path is
    // the user's word.
    let reached = ctx.analysis.store(ctx.index, ctx.file);
    let repository_path =
        ctx.index.is_repository_path(ctx.file) && (ctx.config().repositories_configured || reached.is_some());
    for site in &ctx.facts.retry_sites {
        let repository = site.containers.iter().rev().find(|c| {
            store::is_repository(c)
                && (reached.is_some() || matches!(c.kind, ContainerKind::Impl | ContainerKind::Module))
        });
        let place = match (repository, repository_path) {
            (Some(container), _) => format!("repository `{}`", container.name),
            (None, true) => "a repository module".to_string(),
            (None, false) => continue,
        };
        let message = match reached {
            Some(reached) if reached.kind == StoreKind::KeyValue => format!(
                "`{}` inside {place}, {}: a repository cannot know the unit it runs in, and a caller that retries the same failures multiplies its attempts",
                site.callee,
                reached.describe()
            ),
            _ => format!(
                "`{}` inside {place}: a repository cannot know whether it runs in a transaction, and a statement retried inside an aborted transaction fails again",
                site.callee
            ),
        };
        out.push(
            RULE.report(ctx, site.callee_span, message)
                .with_help(dialect::repository_help(site.library)),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn retry_in_repository() {
        let pass = [
            (
                "src/features/invoices/Issue.ts",
                r#"import { Effect } from "effect"
import { Retry } from "../../infra/index.js"
import { InvoicesRepository } from "./InvoicesRepository.js"

export const issue = Effect.fn("Issue.run")(
  function* (invoiceId: string) {
    const invoices = yield* InvoicesRepository
    yield* invoices.issue(invoiceId)
  },
  Effect.retry({ schedule: Retry.contention, while: Retry.isContention }),
)
"#,
            ),
            (
                "src/features/invoices/InvoicesRepository.ts",
                r#"import { Effect, Layer } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { InvoicesRepository } from "./tags.js"

export const InvoicesRepositoryLive = Layer.effect(InvoicesRepository, Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    issue: (id: string) => sql`UPDATE invoices SET issued_at = now() WHERE id = ${id}`,
  }
}))
"#,
            ),
        ];
        let fail = [
            (
                "src/features/invoices/InvoicesRepository.ts",
                r#"import { Effect, Layer } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../../infra/index.js"
import { InvoicesRepository } from "./tags.js"

export const InvoicesRepositoryLive = Layer.effect(InvoicesRepository, Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    issue: (id: string) =>
      sql`UPDATE invoices SET issued_at = now() WHERE id = ${id}`.pipe(
        Effect.retry({ schedule: Retry.contention, while: Retry.isContention }),
      ),
  }
}))
"#,
            ),
            (
                "src/orders/repository.rs",
                r#"use backon::Retryable;

use crate::retry;

pub struct OrderRepository {
    pool: sqlx::PgPool,
}

impl OrderRepository {
    pub async fn cancel(&self, id: i64) -> Result<(), sqlx::Error> {
        (|| async { sqlx::query("UPDATE orders SET cancelled = true WHERE id = $1").bind(id).execute(&self.pool).await })
            .retry(retry::contention())
            .when(retry::is_contention)
            .await?;
        Ok(())
    }
}
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
