//! How each retry library spells a remedy: the help lines and fixes of findings, so that a
//! rule says one thing ("cap it") and the user reads it in their library's terms. Data per
//! [`Library`]; the only place rules' words depend on the language.

use super::names::{Names, Role};
use crate::config::Vocabulary;
use crate::diagnostic::{Edit, Fix, FixSafety};
use crate::effect_version::EffectVersion;
use crate::facts::{Expr, FileFacts, RetrySite};
use crate::index::FileId;
use crate::schedule::api;
use crate::schedule::Library;
use crate::source::Span;

/// How to cap a policy, with the combinators of the file's `effect` version (3.x has no
/// `Schedule.max`, the early 4.0 betas have `both`/`either`).
pub fn cap_help(library: Library, effect: EffectVersion) -> String {
    let text = match library {
        Library::Effect => {
            return format!(
                "cap it the way the retry module's policies are capped: {}",
                api::cap_snippet(effect)
            )
        }
        Library::Backon => "cap it with `.with_max_times(n)` and `.with_max_delay(d)` (backon's builders stop after 3 retries and cap the gap at 60 s unless `without_max_times()` or `without_max_delay()` remove it)",
        Library::TokioRetry => "cap it with `.max_delay(d)` on the strategy and `.take(n)` on the iterator: tokio-retry strategies never stop by themselves",
        Library::TokioRetry2 => "cap it with `.max_delay(d)` on the strategy and `.take(n)` on the iterator: tokio-retry2 strategies never stop by themselves",
        Library::Backoff => "use an `ExponentialBackoff` with `max_interval` and `max_elapsed_time: Some(d)`: backoff counts no attempts, the elapsed time is its only stop",
        Library::ReqwestRetry => "build the policy with `build_with_max_retries(n)` and cap its gap with `retry_bounds(min, max)`",
        Library::ExponentialBackoff => "give `Backoff::new(attempts, min, max)` a `max` duration (`None` lets each gap double without end) and a small attempt count",
        Library::Rs2 => "set `maxAttempts` (it counts the first call: 4 attempts are 3 retries) and `maxDelayMs`, the cap of each gap",
    };
    text.to_string()
}

/// How to jitter a policy (4.0.0-beta.5 has no `Schedule.jittered`).
pub fn jitter_help(library: Library, effect: EffectVersion) -> &'static str {
    match library {
        Library::Effect => match api::jitter_snippet(effect) {
            Some(_) => "pipe the schedule through `Schedule.jittered` (each delay is drawn from 0.8× to 1.2×)",
            None => "this effect version has no `Schedule.jittered`: scale each delay by a random factor in `Schedule.modifyDelay`",
        },
        Library::Backon => "add `.with_jitter()` to the builder (each delay gets a random 0–100 % more)",
        Library::TokioRetry => {
            "add `.map(jitter)` to the strategy (`tokio_retry::strategy::jitter` scales each delay by a random 0–1)"
        }
        Library::TokioRetry2 => {
            "add `.map(jitter)` to the strategy (`tokio_retry2::strategy::jitter`, of the crate's `jitter` feature, scales each delay by a random 0.5–1.5)"
        }
        Library::Backoff => {
            "keep a `randomization_factor` above 0 (the default 0.5 draws each delay from 0.5× to 1.5×)"
        }
        Library::ReqwestRetry => "use `.jitter(Jitter::Full)` or `.jitter(Jitter::Bounded)` on the builder",
        Library::ExponentialBackoff => {
            "keep a jitter of 0.02 or more: the crate jitters in whole percents, less one (the default `set_jitter(0.3)` moves each delay by up to 29 %)"
        }
        Library::Rs2 => "set `jitter` to `full` (each delay is then drawn between 0 and its nominal value)",
    }
}

/// How to fix a value the library rejects.
pub fn invalid_value_help(library: Library) -> &'static str {
    match library {
        Library::Effect => "write durations as `<number> <unit>`, e.g. \"100 millis\" or \"2 seconds\"",
        Library::Rs2 => "write `maxAttempts`, `baseDelayMs`, `maxDelayMs` and `backoffMultiplier` as numbers",
        _ => "give the builder values the library accepts",
    }
}

/// How to name a policy in the retry module: the project's retry module (`module`, when it
/// has one) and its transient policy's configured name, in the library's own code.
pub fn name_policy_help(library: Library, vocabulary: &Vocabulary, module: Option<&std::path::Path>) -> String {
    let transient = vocabulary
        .transient_policies
        .first()
        .map_or("transient", String::as_str);
    let module = module.map(|m| m.display().to_string().replace('\\', "/"));
    let module = module.as_deref();
    let (default_module, example) = match library {
        // Spelled in the project's names (`names::spell`).
        Library::Effect | Library::Rs2 => ("infra/retry.ts", format!("`{}`", super::names::EXAMPLE_POLICY)),
        Library::Backon => ("src/retry.rs", format!("`.retry(retry::{transient}())`")),
        Library::TokioRetry => (
            "src/retry.rs",
            format!("`Retry::spawn(retry::{transient}(), action)` (a tokio-retry strategy)"),
        ),
        Library::TokioRetry2 => (
            "src/retry.rs",
            format!("`Retry::spawn(retry::{transient}(), action)` (a tokio-retry2 strategy)"),
        ),
        Library::Backoff => (
            "src/retry.rs",
            format!("`backoff::future::retry(retry::{transient}(), operation)`"),
        ),
        Library::ReqwestRetry => (
            "src/retry.rs",
            format!("`RetryTransientMiddleware::new_with_policy(retry::{transient}())`"),
        ),
        Library::ExponentialBackoff => ("src/retry.rs", format!("`for delay in &retry::{transient}()`")),
    };
    format!(
        "name the policy in the retry module ({}) and reference it here, e.g. {example}",
        module.unwrap_or(default_module)
    )
}

/// Where a retry belongs instead of a repository.
pub fn repository_help(library: Library) -> &'static str {
    match library {
        Library::Effect => {
            "remove the retry here and retry the use case's atomic unit (its `Effect.fn`) with a named policy"
        }
        _ => "remove the retry here and retry the use case's atomic unit (the function that owns the transaction) with a named policy from the retry module",
    }
}

/// A retry with no error filter: the message (what is replayed) and the help (how to say
/// what is safe). `None` when the library filters by itself.
pub fn no_predicate(library: Library, callee: &str) -> Option<(String, &'static str)> {
    Some(match library {
        Library::Effect => (
            format!("`{callee}` without `while` or `until` replays every failure: domain errors, timeouts and auth failures are retried too"),
            "say what is safe to retry: `while: Retry.isContention` (any atomic unit) or `while: Retry.isConnectionLost` (idempotent units only)",
        ),
        Library::Backon => (
            format!("`{callee}` without `.when(…)` replays every error: domain errors, timeouts and auth failures are retried too"),
            "say what is safe to retry: `.when(retry::is_contention)` (any atomic unit) or `.when(retry::is_connection_lost)` (idempotent units only)",
        ),
        Library::TokioRetry => (
            format!("`{callee}` replays every error: domain errors, timeouts and auth failures are retried too"),
            "use `RetryIf::spawn(strategy, action, retry::is_contention)` so only what is safe to replay is retried",
        ),
        Library::Backoff => (
            format!("`{callee}` with an operation that never returns `backoff::Error::permanent`: `?` makes every error transient, so domain errors, timeouts and auth failures are retried too"),
            "return `backoff::Error::permanent(e)` for every error that is not safe to retry, e.g. `.map_err(retry::classify)`",
        ),
        // tokio-retry2's action says which errors are transient (`RetryError::permanent` ends
        // the retry): no predicate only through a project helper given `|_| true`, or an
        // action that makes every error transient.
        Library::TokioRetry2 => (
            format!("`{callee}` replays every error (its predicate accepts all of them, or the action makes each one `RetryError::transient`): domain errors, timeouts and auth failures are retried too"),
            "say what is safe to retry: pass a predicate such as `retry::is_contention`, or return `RetryError::permanent(e)` for every error that is not",
        ),
        // RS2 retries only `retryStatuses` and, if asked, network errors; an exponential-backoff
        // loop is the project's own code, whose error handling no rule reads.
        Library::ReqwestRetry | Library::Rs2 | Library::ExponentialBackoff => return None,
    })
}

/// How a message names a retried unit that has no name of its own.
pub fn unnamed_unit(library: Library) -> &'static str {
    match library {
        Library::Effect => "this effect",
        _ => "this closure",
    }
}

/// How to retry only the transaction.
pub fn after_commit_help(library: Library) -> &'static str {
    match library {
        Library::Effect => "give the transactional part its own `Effect.fn` and retry that; what runs after the commit is not replayed with it",
        _ => "give the transactional part its own function and retry that; what runs after the commit is not replayed with it",
    }
}

/// A retry of contention only, in the library's own code.
fn contention_code(library: Library) -> &'static str {
    match library {
        Library::Effect | Library::Rs2 => "`{ schedule: Retry.contention, while: Retry.isContention }`",
        Library::Backon => "`.retry(retry::contention()).when(retry::is_contention)`",
        Library::TokioRetry => "`RetryIf::spawn(retry::contention(), action, retry::is_contention)`",
        Library::TokioRetry2 => "`RetryIf::spawn(retry::contention(), action, retry::is_contention, notify)`",
        Library::Backoff => {
            "`backoff::future::retry(retry::contention(), operation)` with every error but contention made `backoff::Error::permanent`"
        }
        Library::ReqwestRetry => "a retry policy that retries only contention (`retry::contention()`)",
        Library::ExponentialBackoff => "a `for delay in &retry::contention()` loop that goes on only after a contention error",
    }
}

/// The contention pair, as the policy names it.
pub fn contention_help(library: Library) -> String {
    format!(
        "retry this unit on contention only, {}; connection loss is retried only on idempotent units",
        contention_code(library)
    )
}

/// What to do about a broad retry of a unit that appends.
pub fn unkeyed_append_help(library: Library) -> String {
    let contention = match library {
        Library::Effect | Library::Rs2 => "`while: Retry.isContention`".to_string(),
        other => contention_code(other).to_string(),
    };
    format!(
        "make the write recognisable on replay (an `Idempotency-Key` header, a client-generated id, `ON CONFLICT`) or retry it on contention only ({contention}); a predicate such as `isRetryable` or a 5xx test says whether a later attempt could succeed, not whether a replay is safe"
    )
}

/// What to do about a connection-loss retry of a request to another service (HTTP, GraphQL):
/// contention never reaches it, so a contention-only retry would never fire.
pub fn unkeyed_request_help() -> String {
    "send an `Idempotency-Key` header, the same on every attempt, that the server deduplicates on, or retry only failures from before the request was sent (connection refused, DNS lookup); a contention-only retry would never fire: a request meets no database contention".to_string()
}

/// What a durable retrier leaves to in-process retries.
pub fn durable_help(library: Library) -> String {
    format!(
        "retry only contention here, {}; the durable retrier owns every other failure",
        contention_code(library)
    )
}

/// The module prefix of an Effect policy reference: `Retry.transient` → `Retry`.
fn policy_prefix(site: &RetrySite) -> Option<String> {
    let Some(Expr::Member(prefix, _, _)) = site.schedule() else {
        return None;
    };
    Some(prefix.path()?.join("."))
}

/// How a fix writes `role` at `site`: the retry module's export as the file names it (an
/// export the file would have to import first is not written, nor one of a module the file
/// does not import), or, with no retry module in view, the configured name after the site's
/// own module prefix.
fn fix_reference(site: &RetrySite, names: &Names, role: Role, facts: Option<&FileFacts>) -> Option<String> {
    if !names.sees_a_module() {
        return Some(format!("{}.{}", policy_prefix(site)?, names.name(role)?));
    }
    if !names.imports_its_module() {
        return None;
    }
    let reference = names.reference(role)?;
    (reference.contains('.') || facts?.import(&reference).is_some()).then_some(reference)
}

/// Rewrites a connection-loss policy to the contention pair, in the project's names
/// (`Retry.transient` → `{ schedule: Retry.contention, while: Retry.isContention }`). Unsafe:
/// it changes what is retried. None when the retry module has no contention pair to name.
pub fn contention_fix(file: FileId, site: &RetrySite, names: &Names, facts: Option<&FileFacts>) -> Option<Fix> {
    policy_prefix(site)?;
    let policy = site.policy_span()?;
    let (policy_name, predicate) = (
        fix_reference(site, names, Role::ContentionPolicy, facts)?,
        fix_reference(site, names, Role::ContentionPredicate, facts)?,
    );
    Some(Fix {
        safety: FixSafety::Unsafe,
        title: format!("retry on contention only: `{policy_name}` with `while: {predicate}`"),
        edits: vec![Edit {
            file,
            span: policy,
            replacement: format!("{{ schedule: {policy_name}, while: {predicate} }}"),
        }],
    })
}

/// Adds the contention predicate next to the contention schedule. Unsafe: failures that
/// were retried before (anything but contention) are not retried after.
/// In an options object written one property per line, the new option gets its own line,
/// indented as the schedule's (`text` is the file's).
pub fn predicate_fix(
    file: FileId,
    site: &RetrySite,
    names: &Names,
    facts: Option<&FileFacts>,
    text: Option<&[u8]>,
) -> Option<Fix> {
    let schedule = site.schedule()?;
    let predicate = fix_reference(site, names, Role::ContentionPredicate, facts)?;
    let option = format!("while: {predicate}");
    let edit = match site.options() {
        Some(_) => match text.and_then(|text| own_line(text, schedule.span().end as usize)) {
            Some((at, indent, comma)) => Edit {
                file,
                span: Span::at(at as u32),
                replacement: if comma {
                    format!("{indent}{option},\n")
                } else {
                    format!(",\n{indent}{option}")
                },
            },
            None => Edit {
                file,
                span: Span::at(schedule.span().end),
                replacement: format!(", {option}"),
            },
        },
        None => Edit {
            file,
            span: site.policy_span()?,
            replacement: format!("{{ schedule: {}, {option} }}", schedule.render()),
        },
    };
    Some(Fix {
        safety: FixSafety::Unsafe,
        title: format!("retry contention only: add `{option}`"),
        edits: vec![edit],
    })
}

/// How a retrying HTTP client is built, and how a request through it gets its key, in the
/// file's language: `(label at the client, help)`.
pub fn retrying_client(language: crate::source::Language) -> (&'static str, &'static str) {
    match language {
        crate::source::Language::Rust => (
            "built with `RetryTransientMiddleware` here",
            "send it through a client without the retry middleware, or set an idempotency key: `.header(\"Idempotency-Key\", key)`",
        ),
        _ => (
            "built with `HttpClient.retryTransient` here",
            "send it through the base client, or set an idempotency key: `HttpClientRequest.setHeader(\"Idempotency-Key\", key)`",
        ),
    }
}

/// Where a property after the one ending at `end` goes when the object has one property per
/// line: the offset, the line's indentation, and whether the property ends with a comma (then
/// the new one goes after that line; else it is appended with a comma of its own).
pub(crate) fn own_line(text: &[u8], end: usize) -> Option<(usize, String, bool)> {
    let line_start = text[..end.min(text.len())]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let indent: String = text[line_start..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .map(|b| *b as char)
        .collect();
    let rest = text.get(end..)?;
    let skip = |from: usize| from + rest[from..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    let at = skip(0);
    match rest.get(at) {
        Some(b',') => {
            let after = skip(at + 1);
            (rest.get(after) == Some(&b'\n')).then(|| (end + after + 1, indent, true))
        }
        Some(b'\n') => Some((end, indent, false)),
        _ => None,
    }
}
