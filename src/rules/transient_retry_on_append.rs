//! `transient-retry-on-append`: connection-loss retries on a unit that appends.

use super::{Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity};
use crate::facts::{Expr, RetryKind};
use crate::replay::{appends, role, Role};

pub const RULE: Rule = Rule {
    name: "transient-retry-on-append",
    summary: "the transient (connection-loss) policy on a unit that appends",
    decision: "2",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    doc: include_str!("../../rules/transient-retry-on-append.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let vocabulary = &ctx.project.config.vocabulary;
    for site in &ctx.facts.retry_sites {
        // A retrying HTTP client is judged per request (`retrying-client-unsafe-method`).
        if site.kind == RetryKind::HttpRetryTransient || role(site, vocabulary) != Role::Transient {
            continue;
        }
        let Some(unit) = &site.target else { continue };
        let Some(found) = appends(ctx.facts, unit, vocabulary) else {
            continue;
        };
        let Some(policy) = &site.policy else { continue };
        let unit_name = unit
            .name
            .as_deref()
            .map(|n| format!("`{n}`"))
            .unwrap_or_else(|| "this effect".into());
        let mut diagnostic = Diagnostic::new(
            &RULE,
            ctx,
            policy.span(),
            format!(
                "connection-loss retry of {unit_name}, where {}: after a lost COMMIT acknowledgement the write may already be applied, and the replay applies it again",
                found.what
            ),
        )
        .with_label(ctx.file, found.span, "appends here")
        .with_help("retry this unit on contention only, `{ schedule: Retry.contention, while: Retry.isContention }`; connection loss is retried only on idempotent units");
        diagnostic.fix = contention_fix(ctx, site.schedule(), policy);
        out.push(diagnostic);
    }
}

/// Rewrites the policy to the contention pair, keeping the module prefix the site uses
/// (`Retry.transient` → `Retry.contention`). Unsafe: it changes what is retried.
fn contention_fix(ctx: &Context, schedule: Option<&Expr>, policy: &Expr) -> Option<Fix> {
    let Some(Expr::Member(prefix, _, _)) = schedule else {
        return None;
    };
    let prefix = prefix.path()?.join(".");
    let vocabulary = &ctx.project.config.vocabulary;
    let (policy_name, predicate) = (
        vocabulary.contention_policies.first()?,
        vocabulary.contention_predicates.first()?,
    );
    Some(Fix {
        safety: FixSafety::Unsafe,
        title: format!("retry on contention only: `{prefix}.{policy_name}` with `while: {prefix}.{predicate}`"),
        edits: vec![Edit {
            file: ctx.file,
            span: policy.span(),
            replacement: format!("{{ schedule: {prefix}.{policy_name}, while: {prefix}.{predicate} }}"),
        }],
    })
}
