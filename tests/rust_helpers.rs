//! Issue 25.3: Rust retries through the project's own helpers, across the crates of a
//! workspace. A helper in one crate (`util::retry::retry_async(strategy, op, should_retry)`
//! over tokio-retry2's `Retry::spawn`) and a factory beside it (`exponential(base, attempts,
//! cap)`) are used from another crate: each call of the helper is a retry, judged with what
//! the call gives; the factory's defect of every argument is reported once, at the factory.
//! `fixtures/rust-service` (retry.rs, oracle.rs) holds the same shapes inside one crate.

mod common;

const CONFIG: &str = "# the project root\n";

const WORKSPACE: &str = "[workspace]\nmembers = [\"crates/*\"]\n";

const RETRY: &str = r#"use std::{future::Future, time::Duration};

use tokio_retry2::{strategy::ExponentialBackoff, Retry, RetryError};

pub fn exponential(base: u64, attempts: usize, cap: Duration) -> impl Iterator<Item = Duration> {
    ExponentialBackoff::from_millis(base).factor(2).max_delay(cap).take(attempts)
}

pub fn steady(attempts: usize) -> impl Iterator<Item = Duration> {
    ExponentialBackoff::from_millis(2).factor(10).max_delay(Duration::from_millis(50)).map(tokio_retry2::strategy::jitter).take(attempts)
}

pub async fn retry_async<F, Fut, T, E, C>(backoff: impl IntoIterator<Item = Duration>, mut op: F, should_retry: C) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    C: Fn(&E) -> bool + Copy,
{
    let action = || {
        let fut = op();
        async move {
            match fut.await {
                Ok(v) => Ok(v),
                Err(e) if should_retry(&e) => Err(RetryError::transient(e)),
                Err(e) => Err(RetryError::permanent(e)),
            }
        }
    };
    Retry::spawn(backoff, action).await
}
"#;

const LIB: &str = "pub mod retry;\n";

const SYNC: &str = r#"use std::time::Duration;

use util::retry::{exponential, retry_async, steady};

pub async fn sync(db: &Db) -> Result<(), Error> {
    retry_async(exponential(50, 6, Duration::from_secs(8)), || apply(db), |_| true).await?;
    retry_async(exponential(2, 3, Duration::from_millis(20)), || apply(db), |e: &Error| e.is_transient()).await?;
    retry_async(steady(3), || apply(db), |e: &Error| e.is_transient()).await?;
    retry_async(steady(40), || apply(db), |e: &Error| e.is_transient()).await?;
    run_twice(|| apply(db), |_| true).await;
    Ok(())
}
"#;

fn report() -> serde_json::Value {
    let dir = common::project(&[
        ("retrylint.toml", CONFIG),
        ("Cargo.toml", WORKSPACE),
        ("crates/util/Cargo.toml", "[package]\nname = \"util\"\n"),
        ("crates/util/src/lib.rs", LIB),
        ("crates/util/src/retry.rs", RETRY),
        ("crates/node/Cargo.toml", "[package]\nname = \"node\"\n"),
        ("crates/node/src/sync.rs", SYNC),
    ]);
    common::check_json(dir.path(), &["."]).1
}

/// (rule, path, line) of every finding.
fn findings(report: &serde_json::Value) -> Vec<(String, String, u64)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn at(found: &[(String, String, u64)], path: &str, line: u64) -> Vec<String> {
    let mut rules: Vec<String> = found
        .iter()
        .filter(|(_, p, l)| p.ends_with(path) && *l == line)
        .map(|(r, _, _)| r.clone())
        .collect();
    rules.sort();
    rules
}

#[test]
fn each_call_of_a_workspace_helper_is_judged_with_its_own_arguments() {
    let found = findings(&report());
    // `|_| true` replays every error; 50^n ms times 2, capped at 8 s, six times: 37.1 s.
    assert_eq!(
        at(&found, "sync.rs", 6),
        ["policy-over-budget", "retry-without-predicate"],
        "{found:?}"
    );
    // A predicate and small numbers: nothing to say at the call.
    assert_eq!(at(&found, "sync.rs", 7), Vec::<String>::new(), "{found:?}");
    assert_eq!(at(&found, "sync.rs", 8), Vec::<String>::new(), "{found:?}");
    // Forty attempts of up to 75 ms: the argument decides, the call is over budget.
    assert_eq!(at(&found, "sync.rs", 9), ["policy-over-budget"], "{found:?}");
    // A function that is no retry helper is not a retry.
    assert_eq!(at(&found, "sync.rs", 10), Vec::<String>::new(), "{found:?}");
}

#[test]
fn a_factory_is_judged_once_for_what_holds_for_every_argument() {
    let found = findings(&report());
    // No call's numbers jitter `exponential`: once, at the factory, not at each call.
    assert_eq!(at(&found, "retry.rs", 5), ["unjittered-schedule"], "{found:?}");
    assert!(
        !found
            .iter()
            .any(|(r, p, _)| r == "unjittered-schedule" && p.ends_with("sync.rs")),
        "{found:?}"
    );
    // `steady` jitters and caps for every argument; the helper's own retry takes its
    // predicate from its caller.
    assert!(
        !found.iter().any(|(_, p, l)| p.ends_with("retry.rs") && *l != 5),
        "{found:?}"
    );
}

/// A helper whose name says nothing of retries (`resilient`), called from files that name no
/// retry library, with every file parsed: read lazily, such a file keeps those calls unread,
/// and is read again in full once the helper is known (issue 27.2). The findings are those of
/// a project whose callers are read in full at once (a comment naming a retry makes the byte
/// test read them).
#[test]
fn calls_kept_unread_are_read_once_their_helper_is_known() {
    calls_of_a_helper_not_named_for_retries(&["--no-prefilter"]);
}

/// The same project with the prefilter on: the callers name no retry library, so the prefilter
/// rules them out, and they are read once the helper is known by its name.
#[test]
fn the_prefilter_keeps_no_caller_of_a_known_helper_from_its_check() {
    calls_of_a_helper_not_named_for_retries(&[]);
}

fn calls_of_a_helper_not_named_for_retries(flags: &[&str]) {
    let project = |eager: bool| {
        let mark = if eager { "// calls a retry helper\n" } else { "" };
        let helper = RETRY.replace("retry_async", "resilient");
        let direct = format!(
            "{mark}use std::time::Duration;\n\nuse util::resilience::{{exponential, resilient}};\n\n\
             pub async fn sync(db: &Db) -> Result<(), Error> {{\n    \
             resilient(exponential(50, 6, Duration::from_secs(8)), || apply(db), |_| true).await?;\n    \
             Ok(())\n}}\n\n\
             pub async fn guarded<F: FnMut() -> Fut, Fut>(op: F) -> Result<(), Error> {{\n    \
             resilient(exponential(2, 40, Duration::from_millis(75)), op, |e: &Error| e.is_transient()).await\n}}\n"
        );
        let derived = format!(
            "{mark}use crate::sync::guarded;\n\npub async fn flush(db: &Db) -> Result<(), Error> {{\n    \
             guarded(|| apply(db)).await\n}}\n"
        );
        let dir = common::project(&[
            ("retrylint.toml", CONFIG),
            ("Cargo.toml", WORKSPACE),
            ("crates/util/Cargo.toml", "[package]\nname = \"util\"\n"),
            ("crates/util/src/lib.rs", "pub mod resilience;\n"),
            ("crates/util/src/resilience.rs", helper.as_str()),
            ("crates/node/Cargo.toml", "[package]\nname = \"node\"\n"),
            ("crates/node/src/lib.rs", "pub mod sync;\npub mod flush;\n"),
            ("crates/node/src/sync.rs", direct.as_str()),
            ("crates/node/src/flush.rs", derived.as_str()),
        ]);
        let args: Vec<&str> = std::iter::once(".").chain(flags.iter().copied()).collect();
        let mut found = findings(&common::check_json(dir.path(), &args).1);
        found.sort();
        found
    };
    let eager = project(true);
    let lazy = project(false);
    // The helper's call over budget and without a predicate is judged at the call, read
    // lazily or not (without the comment, every line of a caller is one earlier).
    assert_eq!(
        at(&eager, "sync.rs", 7),
        ["policy-over-budget", "retry-without-predicate"],
        "{eager:?}"
    );
    assert_eq!(
        at(&lazy, "sync.rs", 6),
        ["policy-over-budget", "retry-without-predicate"],
        "{lazy:?}"
    );
    // So is the call of `guarded`, which hands its operation to the helper: over budget, at
    // the call in `guarded` (its predicate is the helper's own).
    assert_eq!(at(&lazy, "sync.rs", 11), ["policy-over-budget"], "{lazy:?}");
    let shifted: Vec<(String, String, u64)> = {
        let mut out: Vec<_> = eager
            .iter()
            .map(|(r, p, l)| {
                let caller = p.ends_with("sync.rs") || p.ends_with("flush.rs");
                (r.clone(), p.clone(), if caller { *l - 1 } else { *l })
            })
            .collect();
        out.sort();
        out
    };
    assert_eq!(shifted, lazy);
}

/// A crawl helper whose own `RetryIf` classifies (`|e| e == RpcError || …`) and whose
/// operation parameter is called with the item it works on (`f(index)`): the parameter is the
/// operation, not a predicate, so a caller whose closure ignores its argument (`move |_| …`)
/// does not make the call one that replays every error.
#[test]
fn an_operation_given_its_item_is_no_predicate() {
    let helper = r#"use std::future::Future;

use tokio_retry::{strategy::{jitter, FixedInterval}, RetryIf};

#[derive(Debug, PartialEq)]
pub enum MainError { RpcError, Database, Other }

pub async fn crawl<F, Fut>(f: F, first: u32) -> Result<(), MainError>
where
    F: Fn(u32) -> Fut,
    Fut: Future<Output = Result<(), MainError>>,
{
    let strategy = FixedInterval::from_millis(5000).map(jitter);
    let mut index = first;
    loop {
        let _ = RetryIf::spawn(
            strategy.clone(),
            || async {
                f(index).await?;
                Ok(())
            },
            |e: &MainError| e.eq(&MainError::RpcError) || e.eq(&MainError::Database),
        )
        .await;
        index += 1;
    }
}
"#;
    let caller = "use util::crawler::{crawl, MainError};\n\n\
                  pub async fn run() -> Result<(), MainError> {\n    \
                  crawl(move |_| { work() }, 0).await\n}\n\n\
                  async fn work() -> Result<(), MainError> {\n    Ok(())\n}\n";
    let dir = common::project(&[
        ("retrylint.toml", CONFIG),
        ("Cargo.toml", WORKSPACE),
        ("crates/util/Cargo.toml", "[package]\nname = \"util\"\n"),
        ("crates/util/src/lib.rs", "pub mod crawler;\n"),
        ("crates/util/src/crawler.rs", helper),
        ("crates/node/Cargo.toml", "[package]\nname = \"node\"\n"),
        ("crates/node/src/lib.rs", "pub mod run;\n"),
        ("crates/node/src/run.rs", caller),
    ]);
    for flags in [&["."][..], &[".", "--no-prefilter"][..]] {
        let found = findings(&common::check_json(dir.path(), flags).1);
        assert!(
            !found
                .iter()
                .any(|(rule, path, _)| rule == "retry-without-predicate" && path.ends_with("run.rs")),
            "{flags:?}: {found:?}"
        );
    }
}
