//! `retry-without-predicate`: a retry that replays every failure.

use super::{Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity};
use crate::facts::{Expr, RetryKind, RetrySite, RustLib, RustRetry, Span};
use crate::replay::{role, Role};

pub const RULE: Rule = Rule {
    name: "retry-without-predicate",
    summary: "a retry with no `while`/`until`: domain errors and timeouts get replayed",
    decision: "2",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    doc: include_str!("../../rules/retry-without-predicate.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    // The retry module's helpers are where predicates are attached.
    if ctx.project.is_retry_module(ctx.file) {
        return;
    }
    for site in &ctx.facts.retry_sites {
        if let Some(rust) = &site.rust {
            check_rust(ctx, site, rust, out);
            continue;
        }
        // `retryTransient` filters transient errors itself; `Stream.retry` takes no predicate.
        if matches!(site.kind, RetryKind::HttpRetryTransient | RetryKind::StreamRetry) {
            continue;
        }
        let Some(policy) = &site.policy else { continue };
        if has_predicate(ctx, site) {
            continue;
        }
        // A bare schedule the model cannot see (a parameter) may filter its input: unknown.
        // The retry module's named policies are known not to: predicates are named apart.
        let named_policy = role(site, &ctx.project.config.vocabulary) != Role::Other;
        if site.options().is_none() && !named_policy {
            let version = ctx.project.effect_major(ctx.file);
            let (sched, _) = crate::schedule::evaluate_schedule(ctx.project, ctx.file, policy, version);
            if matches!(sched, crate::schedule::Sched::Unknown) {
                continue;
            }
        }
        let mut diagnostic = Diagnostic::new(
            &RULE,
            ctx,
            site.callee_span,
            format!(
                "`{}` without `while` or `until` replays every failure: domain errors, timeouts and auth failures are retried too",
                site.kind.callee()
            ),
        )
        .with_help("say what is safe to retry: `while: Retry.isContention` (any atomic unit) or `while: Retry.isConnectionLost` (idempotent units only)");
        if role(site, &ctx.project.config.vocabulary) == Role::Contention {
            diagnostic.fix = predicate_fix(ctx, site.schedule(), policy);
        }
        out.push(diagnostic);
    }
}

/// A Rust retry whose predicate is known to be missing. Unlike an Effect schedule, a Rust
/// builder never filters errors, so the builder being unknown does not matter here.
fn check_rust(ctx: &Context, site: &RetrySite, rust: &RustRetry, out: &mut Vec<Diagnostic>) {
    if rust.has_predicate != Some(false) {
        return;
    }
    let (message, help) = match rust.lib {
        RustLib::Backon => (
            format!("`{}` without `.when(…)` replays every error: domain errors, timeouts and auth failures are retried too", rust.callee),
            "say what is safe to retry: `.when(retry::is_contention)` (any atomic unit) or `.when(retry::is_connection_lost)` (idempotent units only)",
        ),
        RustLib::TokioRetry => (
            format!("`{}` replays every error: domain errors, timeouts and auth failures are retried too", rust.callee),
            "use `RetryIf::spawn(strategy, action, retry::is_contention)` so only what is safe to replay is retried",
        ),
        RustLib::Backoff => (
            format!("`{}` with an operation that never returns `backoff::Error::permanent`: `?` makes every error transient, so domain errors, timeouts and auth failures are retried too", rust.callee),
            "return `backoff::Error::permanent(e)` for every error that is not safe to retry, e.g. `.map_err(retry::classify)`",
        ),
        RustLib::ReqwestRetry => return,
    };
    out.push(Diagnostic::new(&RULE, ctx, site.callee_span, message).with_help(help));
}

fn has_predicate(ctx: &Context, site: &RetrySite) -> bool {
    if let Some(Expr::Object(props, _)) = site.options() {
        // A spread may carry the predicate: unknown, so silent.
        return props
            .iter()
            .any(|p| matches!(p.key.as_str(), "while" | "until" | "..."));
    }
    // A bare schedule may filter its input itself (`Schedule.whileInput(isContention)`).
    let mut filtered = false;
    if let Some(schedule) = site.schedule() {
        schedule.walk(&mut |e| {
            if let Some(("Schedule", member)) = ctx.facts.effect_member(e) {
                filtered |= member.contains("Input") || member == "check" || member == "checkEffect";
            }
        });
    }
    filtered
}

/// Adds the contention predicate next to the contention schedule. Unsafe: failures that
/// were retried before (anything but contention) are not retried after.
fn predicate_fix(ctx: &Context, schedule: Option<&Expr>, policy: &Expr) -> Option<Fix> {
    let schedule @ Expr::Member(prefix, _, _) = schedule? else {
        return None;
    };
    let prefix = prefix.path()?.join(".");
    let predicate = ctx.project.config.vocabulary.contention_predicates.first()?;
    let edit = match policy {
        Expr::Object(..) => Edit {
            file: ctx.file,
            span: Span {
                start: schedule.span().end,
                end: schedule.span().end,
            },
            replacement: format!(", while: {prefix}.{predicate}"),
        },
        _ => Edit {
            file: ctx.file,
            span: policy.span(),
            replacement: format!("{{ schedule: {}, while: {prefix}.{predicate} }}", schedule.render()),
        },
    };
    Some(Fix {
        safety: FixSafety::Unsafe,
        title: format!("retry contention only: add `while: {prefix}.{predicate}`"),
        edits: vec![edit],
    })
}
