//! What makes a unit a repository: its name (a class, service, layer or span named
//! `*Repository`/`*Repo`) or its path, and what it wraps — a store. A store is a database (SQL,
//! a document or wide-column database) or a key-value store (Redis, Upstash, Effect's
//! persistence), reached directly or through a project module that wraps the client
//! (`yield* RedisClient` of a workspace package that imports `@upstash/redis`).

use crate::facts::{Container, ContainerKind, FileFacts, Import, ImportKind, OpKind};
use crate::index::{FileId, Index};

/// What kind of store a repository reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Database,
    KeyValue,
}

/// The store a file reaches, and through what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    pub kind: StoreKind,
    /// The package that names the store (`ioredis`, `drizzle-orm`); `None` for SQL text or a
    /// unit that runs SQL.
    pub package: Option<String>,
    /// The project module the file imports that wraps the client (`@blikka/redis`), when the
    /// store is reached through one.
    pub through: Option<String>,
}

impl Store {
    /// How a message names it: "a Redis store, through `@blikka/redis`".
    pub fn describe(&self) -> String {
        let what = match (self.kind, self.package.as_deref()) {
            (StoreKind::KeyValue, Some(p)) if p.contains("redis") => "a Redis store".to_string(),
            (StoreKind::KeyValue, Some(p)) => format!("a key-value store (`{p}`)"),
            (StoreKind::KeyValue, None) => "a key-value store".to_string(),
            (StoreKind::Database, Some(p)) => format!("a database (`{p}`)"),
            (StoreKind::Database, None) => "a database".to_string(),
        };
        match &self.through {
            Some(module) => format!("{what}, through `{module}`"),
            None => what,
        }
    }
}

/// Packages (or the first segments of a module path) that reach a database.
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
    "@aws-sdk/client-dynamodb",
    "@aws-sdk/lib-dynamodb",
];

/// Packages that reach a key-value store: Redis clients (ioredis, node-redis, Upstash's REST
/// client), Vercel KV, Keyv, memcached.
const KEY_VALUE_SOURCES: &[&str] = &[
    "ioredis",
    "redis",
    "@redis/client",
    "@upstash/redis",
    "@vercel/kv",
    "keyv",
    "memjs",
    "memcached",
];

/// Effect's persistence modules: `@effect/experimental`'s `Persistence` (and its Redis and
/// LMDB stores), `@effect/platform`'s `KeyValueStore`, and in 4.x `effect/unstable/persistence`
/// (`effect/persistence` from 4.1): a store only through the names that are one.
fn effect_key_value(import: &Import) -> bool {
    let source = import.source.as_str();
    let module_store = |module: &str| {
        matches!(
            module,
            "Persistence" | "KeyValueStore" | "Redis" | "PersistedCache" | "Lmdb"
        )
    };
    let last = source.rsplit('/').next().unwrap_or(source);
    let family = [
        "@effect/experimental",
        "@effect/platform",
        "effect/unstable/persistence",
        "effect/persistence",
    ];
    let Some(rest) = family
        .iter()
        .find_map(|f| source.strip_prefix(f).filter(|r| r.is_empty() || r.starts_with('/')))
    else {
        return source.starts_with("@effect/platform-") && last.contains("KeyValueStore");
    };
    if rest.split('/').any(module_store) {
        return true;
    }
    // `import { KeyValueStore } from "@effect/platform"`, `{ Persistence } from
    // "effect/unstable/persistence"`.
    match &import.kind {
        ImportKind::Named(name) => module_store(name),
        _ => rest.is_empty() && source.contains("persistence"),
    }
}

/// The store an import names, if any.
fn import_store(import: &Import) -> Option<Store> {
    let source = import.source.as_str();
    let listed = |list: &[&str]| {
        list.iter()
            .any(|d| source == *d || source.strip_prefix(d).is_some_and(|rest| rest.starts_with('/')))
    };
    let last = source.rsplit('/').next().unwrap_or(source);
    let kind = if listed(KEY_VALUE_SOURCES) || effect_key_value(import) {
        StoreKind::KeyValue
    } else if listed(DATABASE_SOURCES)
        || source.starts_with("@effect/sql-")
        || matches!(last, "db" | "database" | "sql" | "prisma" | "drizzle")
    {
        StoreKind::Database
    } else {
        return None;
    };
    Some(Store {
        kind,
        package: Some(source.to_string()),
        through: None,
    })
}

/// The store `facts` reach by themselves: SQL texts, a store package, or a unit running SQL or
/// a transaction.
fn direct_store(facts: &FileFacts) -> Option<Store> {
    let runs_sql = |ops: &[crate::facts::UnitOp]| {
        ops.iter()
            .any(|op| matches!(op.kind, OpKind::Sql(_) | OpKind::Transaction))
    };
    if let Some(store) = facts.imports.iter().find_map(import_store) {
        return Some(store);
    }
    let sql = !facts.sql.is_empty()
        || facts.units.iter().any(|u| runs_sql(&u.ops))
        || facts
            .retry_sites
            .iter()
            .filter_map(|s| s.unit.as_ref())
            .any(|u| runs_sql(&u.ops));
    sql.then_some(Store {
        kind: StoreKind::Database,
        package: None,
        through: None,
    })
}

/// How many re-exports of a barrel are followed to the module that wraps the client.
const MAX_WRAPPER_DEPTH: usize = 3;
/// How many project modules one file's imports lead to at most (hostile input: a file with
/// thousands of imports).
const MAX_WRAPPERS: usize = 64;

/// The store a project module reaches itself, or through the modules it re-exports.
fn module_store(index: &Index, module: FileId, depth: usize, seen: &mut Vec<FileId>) -> Option<Store> {
    if depth > MAX_WRAPPER_DEPTH || seen.contains(&module) || seen.len() >= MAX_WRAPPERS {
        return None;
    }
    seen.push(module);
    let facts = index.facts(module)?;
    if let Some(store) = facts.imports.iter().find_map(import_store) {
        return Some(store);
    }
    facts.exports.iter().find_map(|export| {
        let source = match export {
            crate::facts::Export::Named { source, .. }
            | crate::facts::Export::Namespace { source, .. }
            | crate::facts::Export::Star { source } => source,
            crate::facts::Export::Local { .. } => return None,
        };
        let target = index.resolve_module(module, source)?;
        module_store(index, target, depth + 1, seen)
    })
}

/// The store `file` reaches: directly, or through a project module it imports that wraps the
/// client (one module away, through barrels).
pub fn reached_store(index: &Index, file: FileId) -> Option<Store> {
    let facts = index.facts(file)?;
    if let Some(store) = direct_store(facts) {
        return Some(store);
    }
    let mut seen = vec![file];
    let mut sources: Vec<&str> = facts
        .imports
        .iter()
        .map(|i| i.written_source())
        .filter(|s| !crate::facts::is_effect_source(s))
        .collect();
    sources.dedup();
    sources.into_iter().find_map(|source| {
        let target = index.resolve_module(file, source)?;
        module_store(index, target, 0, &mut seen).map(|store| Store {
            through: Some(source.to_string()),
            ..store
        })
    })
}

/// Whether `file` may hold a repository's retry: a retry site inside a repository-named
/// container, or a repository path. Only then is the store looked for across files.
pub fn may_hold_repository_retry(index: &Index, file: FileId, facts: &FileFacts) -> bool {
    !facts.retry_sites.is_empty()
        && !index.is_retry_module(file)
        && (index.is_repository_path(file)
            || facts
                .retry_sites
                .iter()
                .any(|site| site.containers.iter().any(is_repository)))
}

/// `UserRepository`, `UserRepo`, `UserRepositoryLive`, `makeUserRepository`, `userRepository`;
/// a Rust `mod repository` / `mod repositories` / `mod order_repository`.
pub fn is_repository(container: &Container) -> bool {
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
    use crate::source::Span;

    fn named(kind: ContainerKind, name: &str) -> Container {
        Container {
            kind,
            name: name.into(),
        }
    }

    fn import(source: &str, kind: ImportKind) -> Import {
        Import {
            local: "x".into(),
            kind,
            source: source.into(),
            type_only: false,
            span: Span::default(),
            via: None,
            via_kind: None,
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

    #[test]
    fn store_packages() {
        let namespace = || ImportKind::Namespace;
        let kind = |source: &str, k: ImportKind| import_store(&import(source, k)).map(|s| s.kind);
        for source in ["ioredis", "redis", "@upstash/redis", "@redis/client", "@vercel/kv"] {
            assert_eq!(kind(source, namespace()), Some(StoreKind::KeyValue), "{source}");
        }
        for source in [
            "@effect/experimental/Persistence",
            "@effect/experimental/Persistence/Redis",
            "@effect/platform/KeyValueStore",
            "effect/unstable/persistence/KeyValueStore",
        ] {
            assert_eq!(kind(source, namespace()), Some(StoreKind::KeyValue), "{source}");
        }
        assert_eq!(
            kind("effect/unstable/persistence", ImportKind::Named("KeyValueStore".into())),
            Some(StoreKind::KeyValue)
        );
        assert_eq!(
            kind("@effect/platform", ImportKind::Named("KeyValueStore".into())),
            Some(StoreKind::KeyValue)
        );
        // Platform modules that are no store, and a rate limiter's module, are not.
        assert_eq!(kind("@effect/platform", ImportKind::Named("HttpClient".into())), None);
        assert_eq!(kind("@effect/platform/HttpClient", namespace()), None);
        assert_eq!(kind("@effect/experimental/RateLimiter", namespace()), None);
        assert_eq!(kind("redis-semaphore-ui", namespace()), None);
        assert_eq!(kind("drizzle-orm/pg-core", namespace()), Some(StoreKind::Database));
        assert_eq!(kind("@effect/sql-pg", namespace()), Some(StoreKind::Database));
        assert_eq!(kind("./db", namespace()), Some(StoreKind::Database));
    }
}
