//! `inline-schedule`: a retry policy built at the call site instead of named in the retry module.

use super::{Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity};
use crate::facts::{Expr, Span};
use crate::policy::Origin;
use crate::project::{FileId, Project, Resolved};
use crate::schedule::Attempts;

pub const RULE: Rule = Rule {
    name: "inline-schedule",
    summary: "a retry policy built from `Schedule.*` (or a bare `times`) outside the retry module",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::Safe,
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
        if let Some(rust) = &site.rust {
            check_rust(ctx, rust, out);
            continue;
        }
        if site.policy.is_none() {
            continue;
        }
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
        let fix = if found.via.is_empty() {
            named_policy_fix(ctx, schedule)
        } else {
            None
        };
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
        let mut diagnostic = diagnostic.with_help(
            "name the policy in the retry module (infra/retry.ts) and reference it here, e.g. `Retry.transient`",
        );
        diagnostic.fix = fix;
        out.push(diagnostic);
    }
}

const RUST_HELP: &str =
    "name the policy in the retry module (src/retry.rs) and reference it here, e.g. `.retry(retry::transient())`";

/// A Rust site: a builder constructed here, bound to a local `let`, built by a function
/// outside the retry module, or a retry-module policy changed with more builder methods.
/// A plain reference to a retry-module policy (`retry::transient()`) is named; a builder
/// the extractor cannot follow (a parameter, an unresolved path) is unknown, so silent.
fn check_rust(ctx: &Context, rust: &crate::facts::RustRetry, out: &mut Vec<Diagnostic>) {
    let Some(chain) = &rust.policy else { return };
    let Some(mut found) = crate::policy::rust::built(ctx.project, ctx.file, chain, 0) else {
        return;
    };
    if let Some((name, def)) = &rust.local {
        found.via.insert(0, (ctx.file, name.clone(), *def));
    }
    let how = match &found.changed {
        Some(methods) => format!("`{}` changed with `{methods}`", found.builder),
        None => format!("`{}`", found.builder),
    };
    let diagnostic = match found.via.first() {
        None if found.changed.is_some() => Diagnostic::new(
            &RULE,
            ctx,
            rust.arg,
            format!("retry policy {how} at the call site: copies of a policy drift from the team's budget"),
        ),
        None => Diagnostic::new(
            &RULE,
            ctx,
            rust.arg,
            format!("retry policy built inline with {how}: copies of a policy drift from the team's budget"),
        ),
        Some((file, name, span)) if *file == ctx.file => Diagnostic::new(
            &RULE,
            ctx,
            rust.arg,
            format!("retry policy `{name}` is built with {how} here instead of in the retry module"),
        )
        .with_label(*file, *span, format!("`{name}` is defined here")),
        Some((file, name, span)) => Diagnostic::new(
            &RULE,
            ctx,
            rust.arg,
            format!(
                "retry policy `{name}` is defined in {}, outside the retry module",
                ctx.project.path(*file).display()
            ),
        )
        .with_label(*file, *span, format!("`{name}` is built with {how} here")),
    };
    out.push(diagnostic.with_help(RUST_HELP));
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

/// When the inline schedule does exactly what a retry-module export does (same attempts, same
/// nominal delays, same jitter), replace it by that export's name, importing the retry module
/// if the file does not yet. Safe: the retry behaves the same.
fn named_policy_fix(ctx: &Context, schedule: &Expr) -> Option<Fix> {
    let project = ctx.project;
    let version = project.effect_major(ctx.file);
    let (sched, problems) = crate::schedule::evaluate_schedule(project, ctx.file, schedule, version);
    if !problems.is_empty() || matches!(sched, crate::schedule::Sched::Unknown) {
        return None;
    }
    let summary = crate::schedule::summarize(&sched);
    let Attempts::Exact(_) = summary.attempts else {
        return None;
    };
    summary.delays.as_ref()?;
    for &module in project.retry_modules() {
        for policy in project.policies(module) {
            let Origin::Export { name, .. } = &policy.origin else {
                continue;
            };
            let same = policy.summary.attempts == summary.attempts
                && policy.summary.delays == summary.delays
                && policy.summary.jitter == summary.jitter
                && policy.summary.worst_total_ms == summary.worst_total_ms;
            if !same {
                continue;
            }
            let (prefix, import) = module_reference(ctx, module)?;
            let mut edits = vec![Edit {
                file: ctx.file,
                span: schedule.span(),
                replacement: format!("{prefix}.{name}"),
            }];
            edits.extend(import);
            return Some(Fix {
                safety: FixSafety::Safe,
                title: format!("use the retry module's `{name}`, which is the same schedule"),
                edits,
            });
        }
    }
    None
}

/// How this file names the retry module: an existing namespace import of it (directly or
/// through a barrel's `export * as`), or a new `import * as Retry from "…"` edit.
fn module_reference(ctx: &Context, module: FileId) -> Option<(String, Option<Edit>)> {
    let facts = ctx.facts;
    for import in &facts.imports {
        if let Resolved::Namespace(target) = ctx.project.resolve_name(ctx.file, &import.local) {
            if target == module {
                return Some((import.local.clone(), None));
            }
        }
    }
    let name = ["Retry", "RetryPolicies", "Retries"]
        .into_iter()
        .find(|n| facts.import(n).is_none() && facts.binding(n).is_none())?;
    let from = ctx.project.sources[ctx.file].absolute.parent()?;
    let to = &ctx.project.sources[module].absolute;
    let mut specifier = relative_specifier(from, to)?;
    // Follow the file's own style: ESM `.js` specifiers or extensionless ones.
    let uses_js = facts
        .imports
        .iter()
        .any(|i| i.source.starts_with('.') && i.source.ends_with(".js"));
    specifier = match specifier.rsplit_once('.') {
        Some((stem, _)) if uses_js => format!("{stem}.js"),
        Some((stem, _)) => stem.to_string(),
        None => specifier,
    };
    // After the last import, or at the top.
    let at = facts.imports.iter().map(|i| i.span.end).max().map(|end| {
        let line = facts.line_of(end);
        facts.line_starts.get(line + 1).copied().unwrap_or(end)
    });
    let insertion = at.unwrap_or(0);
    Some((
        name.to_string(),
        Some(Edit {
            file: ctx.file,
            span: Span {
                start: insertion,
                end: insertion,
            },
            replacement: format!("import * as {name} from \"{specifier}\"\n"),
        }),
    ))
}

/// `../../infra/retry.ts` from `from` (a directory) to `to`.
fn relative_specifier(from: &std::path::Path, to: &std::path::Path) -> Option<String> {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..from.len() {
        parts.push("..".into());
    }
    for part in &to_parts[common..] {
        parts.push(part.as_os_str().to_str()?.to_string());
    }
    let joined = parts.join("/");
    Some(if joined.starts_with("..") {
        joined
    } else {
        format!("./{joined}")
    })
}
