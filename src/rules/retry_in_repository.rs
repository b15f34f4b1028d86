//! `retry-in-repository`: a repository method never retries.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::dialect;
use crate::facts::{Container, ContainerKind, OpKind};

pub const RULE: Rule = Rule {
    name: "retry-in-repository",
    summary: "a retry inside a repository (path, or a class, service or layer named *Repository/*Repo) that reaches a database",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/retry-in-repository.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    if ctx.is_retry_module() || ctx.facts.retry_sites.is_empty() {
        return;
    }
    // A name or a default path alone is not a repository: the code must touch a database
    // (a `GitRepo` clones, `waitForRepository` polls GitHub). A Rust `impl`/`trait`/`mod`
    // of a repository type is the type itself, and a configured path is the user's word.
    let database = touches_database(ctx.facts);
    let repository_path = ctx.index.is_repository_path(ctx.file) && (ctx.config().repositories_configured || database);
    for site in &ctx.facts.retry_sites {
        let repository =
            site.containers.iter().rev().find(|c| {
                is_repository(c) && (database || matches!(c.kind, ContainerKind::Impl | ContainerKind::Module))
            });
        let place = match (repository, repository_path) {
            (Some(container), _) => format!("repository `{}`", container.name),
            (None, true) => "a repository module".to_string(),
            (None, false) => continue,
        };
        out.push(
            RULE.report(
                ctx,
                site.callee_span,
                format!(
                    "`{}` inside {place}: a repository cannot know whether it runs in a transaction, and a statement retried inside an aborted transaction fails again",
                    site.callee
                ),
            )
            .with_help(dialect::repository_help(site.library)),
        );
    }
}

/// Packages (or the last part of a module path) that reach a database.
const DATABASE_SOURCES: &[&str] = &[
    "@effect/sql",
    "effect/unstable/sql",
    "drizzle-orm",
    "kysely",
    "@prisma/client",
    "prisma",
    "pg",
    "postgres",
    "mysql2",
    "mysql",
    "typeorm",
    "mongodb",
    "mongoose",
    "sequelize",
    "knex",
    "better-sqlite3",
    "@libsql/client",
    "@neondatabase/serverless",
    "@planetscale/database",
    "@vercel/postgres",
    "@supabase/supabase-js",
    "ioredis",
    "redis",
    "@aws-sdk/client-dynamodb",
    "@aws-sdk/lib-dynamodb",
];

/// Whether the file reaches a database: SQL texts, a database package, or a unit running SQL
/// or a transaction.
fn touches_database(facts: &crate::facts::FileFacts) -> bool {
    let source_is_database = |source: &str| {
        let last = source.rsplit('/').next().unwrap_or(source);
        DATABASE_SOURCES
            .iter()
            .any(|d| source == *d || source.strip_prefix(d).is_some_and(|rest| rest.starts_with('/')))
            || source.starts_with("@effect/sql-")
            || matches!(last, "db" | "database" | "sql" | "prisma" | "drizzle")
    };
    let runs_sql = |ops: &[crate::facts::UnitOp]| {
        ops.iter()
            .any(|op| matches!(op.kind, OpKind::Sql(_) | OpKind::Transaction))
    };
    !facts.sql.is_empty()
        || facts.imports.iter().any(|i| source_is_database(&i.source))
        || facts.units.iter().any(|u| runs_sql(&u.ops))
        || facts
            .retry_sites
            .iter()
            .filter_map(|s| s.unit.as_ref())
            .any(|u| runs_sql(&u.ops))
}

/// `UserRepository`, `UserRepo`, `UserRepositoryLive`, `makeUserRepository`, `userRepository`;
/// a Rust `mod repository` / `mod repositories` / `mod order_repository`.
fn is_repository(container: &Container) -> bool {
    if container.kind == ContainerKind::Module {
        let name = container.name.as_str();
        return matches!(name, "repository" | "repositories" | "repo" | "repos")
            || name.ends_with("_repository")
            || name.ends_with("_repo");
    }
    let names: Vec<&str> = match container.kind {
        // `Effect.fn("UserRepository.activate")`: span names lead with the service.
        ContainerKind::EffectFn => container.name.split('.').collect(),
        _ => vec![container.name.as_str()],
    };
    names.into_iter().any(|name| {
        let mut stem = name;
        for suffix in ["Live", "Layer", "Default", "Impl", "Test", "Mock"] {
            if let Some(s) = stem.strip_suffix(suffix) {
                if !s.is_empty() {
                    stem = s;
                    break;
                }
            }
        }
        stem.ends_with("Repository") || stem.ends_with("Repo") || stem == "repository" || stem == "repo"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(kind: ContainerKind, name: &str) -> Container {
        Container {
            kind,
            name: name.into(),
        }
    }

    #[test]
    fn repository_names() {
        for name in [
            "UserRepository",
            "UserRepo",
            "UserRepositoryLive",
            "makeUserRepository",
            "userRepository",
        ] {
            assert!(is_repository(&named(ContainerKind::Class, name)), "{name}");
        }
        for name in ["Tempo", "RepositoryUrl", "repositoryFactory", "Live"] {
            assert!(!is_repository(&named(ContainerKind::Class, name)), "{name}");
        }
        assert!(is_repository(&named(
            ContainerKind::EffectFn,
            "UserRepository.activate"
        )));
        for name in ["PgOrderRepository", "OrderRepo", "Repository"] {
            assert!(is_repository(&named(ContainerKind::Impl, name)), "{name}");
        }
        for name in ["repository", "repositories", "order_repository"] {
            assert!(is_repository(&named(ContainerKind::Module, name)), "{name}");
        }
        for name in ["repository_url", "retry"] {
            assert!(!is_repository(&named(ContainerKind::Module, name)), "{name}");
        }
    }
}
