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
