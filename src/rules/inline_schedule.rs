//! `inline-schedule`: a retry policy built at the call site instead of named in the retry module.

use super::{Context, Diagnostic, FixSafety, Rule, Severity};
use crate::facts::{Expr, Span};
use crate::project::{FileId, Project, Resolved};

pub const RULE: Rule = Rule {
    name: "inline-schedule",
    summary: "a retry policy built from `Schedule.*` (or a bare `times`) outside the retry module",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    doc: include_str!("../../rules/inline-schedule.md"),
    check,
};

/// How many bindings and helper calls are followed looking for a `Schedule` builder.
const MAX_FOLLOW: usize = 8;

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    if ctx.project.is_retry_module(ctx.file) {
        return;
    }
    for site in &ctx.facts.retry_sites {
        let Some(policy) = &site.policy else { continue };
        if let Some(times) = bare_times(site.options(), site.schedule(), site.times()) {
            out.push(
                Diagnostic::new(&RULE, ctx, times.span(), format!("attempt cap `times: {}` set at the call site instead of a named policy", times.render()))
                    .with_help("use a named policy from the retry module, e.g. `{ schedule: Retry.contention, while: Retry.isContention }`"),
            );
            continue;
        }
        let Some(schedule) = site.schedule() else { continue };
        let Some(found) = find_builder(ctx.project, ctx.file, schedule, 0) else {
            continue;
        };
        let builder = found.builder.clone();
        let diagnostic = match found.via.first() {
            None => Diagnostic::new(
                &RULE,
                ctx,
                schedule.span(),
                format!("retry policy built inline with `{builder}`: copies of a policy drift from the team's budget"),
            ),
            Some(binding) if binding.file == ctx.file => Diagnostic::new(
                &RULE,
                ctx,
                schedule.span(),
                format!(
                    "retry policy `{}` is built with `{builder}` here instead of in the retry module",
                    binding.name
                ),
            )
            .with_label(
                binding.file,
                binding.span,
                format!("`{}` is defined here", binding.name),
            ),
            Some(binding) => Diagnostic::new(
                &RULE,
                ctx,
                schedule.span(),
                format!(
                    "retry policy `{}` is defined in {}, outside the retry module",
                    binding.name,
                    ctx.project.path(binding.file).display()
                ),
            )
            .with_label(
                binding.file,
                binding.span,
                format!("`{}` is built with `{builder}` here", binding.name),
            ),
        };
        let _ = policy;
        out.push(diagnostic.with_help(
            "name the policy in the retry module (infra/retry.ts) and reference it here, e.g. `Retry.transient`",
        ));
    }
}

/// `{ times: n }` with no schedule: an unnamed policy.
fn bare_times<'e>(options: Option<&'e Expr>, schedule: Option<&'e Expr>, times: Option<&'e Expr>) -> Option<&'e Expr> {
    let Some(Expr::Object(props, _)) = options else {
        return None;
    };
    // A spread may carry the schedule: unknown, so silent.
    if props.iter().any(|p| p.key == "...") || schedule.is_some() {
        return None;
    }
    times
}

struct FollowedBinding {
    file: FileId,
    name: String,
    span: Span,
}

struct Found {
    /// The `Schedule.*` builder, rendered for the message.
    builder: String,
    /// Bindings followed from the call site to the builder, nearest first.
    via: Vec<FollowedBinding>,
}

/// Looks for an Effect `Schedule` builder in `expr`, following same-file and imported
/// bindings and helper functions, but never into the retry module (its policies are named).
fn find_builder(project: &Project, file: FileId, expr: &Expr, depth: usize) -> Option<Found> {
    if depth > MAX_FOLLOW {
        return None;
    }
    let facts = project.facts(file);
    if let Some(("Schedule", member)) = facts.effect_member(expr) {
        return Some(Found {
            builder: format!("Schedule.{member}"),
            via: Vec::new(),
        });
    }
    if facts.effect_module(expr) == Some("Schedule") {
        return Some(Found {
            builder: "Schedule".into(),
            via: Vec::new(),
        });
    }
    match expr {
        Expr::Ident(..) | Expr::Member(..) => {
            if let Resolved::Value {
                file: target,
                name,
                span,
                value,
            } = project.resolve_path(file, expr)
            {
                if project.is_retry_module(target) {
                    return None;
                }
                let mut found = find_builder(project, target, value, depth + 1)?;
                found.via.insert(
                    0,
                    FollowedBinding {
                        file: target,
                        name: name.to_string(),
                        span,
                    },
                );
                return Some(found);
            }
            match expr {
                Expr::Member(object, _, _) => find_builder(project, file, object, depth + 1),
                _ => None,
            }
        }
        Expr::Local { name, def, value, .. } => {
            let mut found = find_builder(project, file, value, depth + 1)?;
            found.via.insert(
                0,
                FollowedBinding {
                    file,
                    name: name.clone(),
                    span: *def,
                },
            );
            Some(found)
        }
        Expr::Call { callee, args, .. } => find_builder(project, file, callee, depth + 1)
            .or_else(|| args.iter().find_map(|a| find_builder(project, file, a, depth + 1))),
        Expr::Function { body: Some(body), .. } => find_builder(project, file, body, depth + 1),
        Expr::Array(items, _) => items.iter().find_map(|a| find_builder(project, file, a, depth + 1)),
        Expr::Object(props, _) => props
            .iter()
            .find_map(|p| find_builder(project, file, &p.value, depth + 1)),
        Expr::Binary { left, right, .. } => {
            find_builder(project, file, left, depth + 1).or_else(|| find_builder(project, file, right, depth + 1))
        }
        _ => None,
    }
}
