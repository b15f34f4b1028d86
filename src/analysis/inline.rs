//! Where a retry site's policy is built when it is not named in the retry module: inline at
//! the site, in a local binding, in a helper or another module — followed through bindings
//! and helpers, never into the retry module (its policies are named). Effect schedules and
//! Rust builder chains give the same answer, [`Inline`].

use super::{imports, rust, Analysis};
use crate::diagnostic::{Edit, Fix, FixSafety};
use crate::facts::{Expr, PolicyArg, RetrySite};
use crate::index::{FileId, Index, Resolved};
use crate::schedule::{self, Attempts, Sched};
use crate::source::Span;

/// How many bindings and helper calls are followed looking for a builder.
const MAX_FOLLOW: usize = 8;

/// A binding followed from a site to where its policy is built.
#[derive(Debug, Clone)]
pub struct Followed {
    pub file: FileId,
    pub name: String,
    pub span: Span,
}

/// A retry site whose policy is not a retry-module name.
#[derive(Debug, Clone)]
pub struct Inline {
    /// Where the finding points: the schedule, the bare `times`, the builder argument.
    pub span: Span,
    pub how: How,
    /// A safe fix: the inline policy does exactly what a retry-module policy does.
    pub fix: Option<Fix>,
}

#[derive(Debug, Clone)]
pub enum How {
    /// An attempt cap with no schedule (`{ times: 3 }`): `text` as written.
    BareTimes { text: String },
    /// Built with `builder` (`Schedule.exponential`, `ExponentialBuilder::default`, a
    /// helper), through `via` bindings (nearest first); `changed` lists the builder methods
    /// that change a retry-module policy at the site (`.with_max_times(…)`).
    Built {
        builder: String,
        changed: Option<String>,
        via: Vec<Followed>,
    },
}

pub(super) fn find(analysis: &Analysis, index: &Index, file: FileId, site: &RetrySite) -> Option<Inline> {
    if index.is_retry_module(file) {
        return None;
    }
    // A site naming a binding as its whole policy: reported once, at the binding.
    if super::policy::site_binding(index, file, site).is_some() {
        return None;
    }
    // A call of a factory outside the retry module: reported once, at the factory.
    if super::policy::local_factory(index, file, site).is_some() {
        return None;
    }
    match &site.policy {
        PolicyArg::Effect(_) => effect(analysis, index, file, site),
        PolicyArg::Rust(arg) => {
            let chain = arg.chain.as_ref()?;
            let mut found = rust::built(index, file, chain, 0)?;
            if let Some((name, def)) = &arg.local {
                found.via.insert(0, (file, name.clone(), *def));
            }
            Some(Inline {
                span: arg.arg,
                how: How::Built {
                    builder: found.builder,
                    changed: found.changed,
                    via: found
                        .via
                        .into_iter()
                        .map(|(file, name, span)| Followed { file, name, span })
                        .collect(),
                },
                fix: None,
            })
        }
        PolicyArg::Default | PolicyArg::Unknown => None,
    }
}

fn effect(analysis: &Analysis, index: &Index, file: FileId, site: &RetrySite) -> Option<Inline> {
    if let Some(times) = bare_times(site) {
        return Some(Inline {
            span: times.span(),
            how: How::BareTimes {
                text: format!("{}: {}", site.times_key(), times.render()),
            },
            fix: None,
        });
    }
    let schedule = site.schedule()?;
    let (builder, via) = find_builder(index, file, schedule, 0)?;
    let fix = if via.is_empty() {
        named_policy_fix(analysis, index, file, schedule)
    } else {
        None
    };
    Some(Inline {
        span: schedule.span(),
        how: How::Built {
            builder,
            changed: None,
            via,
        },
        fix,
    })
}

/// The `Schedule.*` builder a named policy's value is built with (through helpers and
/// bindings outside the retry module), for messages.
pub(super) fn builder(index: &Index, file: FileId, value: &Expr) -> Option<String> {
    find_builder(index, file, value, 0).map(|(builder, _)| builder)
}

/// `{ times: n }` with no schedule: an unnamed policy.
fn bare_times(site: &RetrySite) -> Option<&Expr> {
    let Some(Expr::Object(props, _)) = site.options() else {
        return None;
    };
    // A spread may carry the schedule: unknown, so silent.
    if props.iter().any(|p| p.key == "...") || site.schedule().is_some() {
        return None;
    }
    site.times()
}

/// Looks for an Effect `Schedule` builder in `expr`, following same-file and imported
/// bindings and helper functions, but never into the retry module (its policies are named).
fn find_builder(index: &Index, file: FileId, expr: &Expr, depth: usize) -> Option<(String, Vec<Followed>)> {
    if depth > MAX_FOLLOW {
        return None;
    }
    let facts = index.facts(file)?;
    if let Some(("Schedule", member)) = facts.effect_member(expr) {
        return Some((format!("Schedule.{member}"), Vec::new()));
    }
    if facts.effect_module(expr) == Some("Schedule") {
        return Some(("Schedule".into(), Vec::new()));
    }
    let nested = |e: &Expr| find_builder(index, file, e, depth + 1);
    match expr {
        Expr::Ident(..) | Expr::Member(..) => {
            if let Resolved::Value {
                file: target,
                name,
                span,
                value,
            } = index.resolve_path(file, expr)
            {
                if index.is_retry_module(target) {
                    return None;
                }
                let (builder, mut via) = find_builder(index, target, value, depth + 1)?;
                via.insert(
                    0,
                    Followed {
                        file: target,
                        name: name.to_string(),
                        span,
                    },
                );
                return Some((builder, via));
            }
            match expr {
                // A name an Effect module does not have (a project's addition) is unknown.
                Expr::Member(object, _, _) if facts.effect_module(object).is_some() => None,
                Expr::Member(object, _, _) => nested(object),
                _ => None,
            }
        }
        Expr::Local { name, def, value, .. } => {
            let (builder, mut via) = nested(value)?;
            via.insert(
                0,
                Followed {
                    file,
                    name: name.clone(),
                    span: *def,
                },
            );
            Some((builder, via))
        }
        Expr::Call { callee, args, .. } => nested(callee).or_else(|| args.iter().find_map(nested)),
        Expr::Function { body: Some(body), .. } => nested(body),
        Expr::Array(items, _) => items.iter().find_map(nested),
        Expr::Object(props, _) => props.iter().find_map(|p| nested(&p.value)),
        Expr::Binary { left, right, .. } => nested(left).or_else(|| nested(right)),
        Expr::Cond { then, otherwise, .. } => nested(then).or_else(|| nested(otherwise)),
        _ => None,
    }
}

/// When the inline schedule does exactly what a retry-module export does (same attempts, same
/// nominal delays, same jitter), replace it by that export's name, importing the retry module
/// if the file does not yet. Safe: the retry behaves the same.
fn named_policy_fix(analysis: &Analysis, index: &Index, file: FileId, schedule: &Expr) -> Option<Fix> {
    let version = index.effect_major(file);
    let (sched, problems) = super::effect::evaluate_schedule(index, file, schedule, version);
    if !problems.is_empty() || matches!(sched, Sched::Unknown) {
        return None;
    }
    let summary = schedule::summarize(&sched);
    let Attempts::Exact(_) = summary.attempts else {
        return None;
    };
    summary.delays.as_ref()?;
    for &module in index.retry_modules() {
        for policy in analysis.policies(index, module) {
            let super::model::Origin::Export { name, .. } = &policy.origin else {
                continue;
            };
            let same = policy.summary.attempts == summary.attempts
                && policy.summary.delays == summary.delays
                && policy.summary.jitter == summary.jitter
                && policy.summary.worst_total_ms == summary.worst_total_ms;
            if !same {
                continue;
            }
            let (prefix, import) = imports::module_reference(index, file, module)?;
            let mut edits = vec![Edit {
                file,
                span: schedule.span(),
                replacement: format!("{prefix}.{name}"),
            }];
            edits.extend(import);
            edits.extend(unused_imports(index, file, schedule.span()));
            return Some(Fix {
                safety: FixSafety::Safe,
                title: format!("use the retry module's `{name}`, which is the same schedule"),
                edits,
            });
        }
    }
    None
}

/// The edits that remove the Effect imports (`Schedule`) that only the replaced `span` used,
/// so a fix leaves no import unused: the specifier, or the whole import line when it was the
/// only one.
fn unused_imports(index: &Index, file: FileId, span: crate::source::Span) -> Vec<Edit> {
    let (Some(facts), Some(text)) = (index.loaded(file), index.text(file)) else {
        return Vec::new();
    };
    let mut edits = Vec::new();
    for import in facts
        .imports
        .iter()
        .filter(|i| i.written_source() == "effect" || i.source == "effect")
    {
        let local = import.local.as_bytes();
        let inside = |at: usize| {
            (span.start as usize..span.end as usize).contains(&at)
                || (import.span.start as usize..import.span.end as usize).contains(&at)
        };
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        let used_in_span = memchr::memmem::find_iter(&text[span.start as usize..span.end as usize], local)
            .next()
            .is_some();
        let used_elsewhere = memchr::memmem::find_iter(text, local).any(|at| {
            let before = at.checked_sub(1).map(|i| text[i]);
            let after = text.get(at + local.len()).copied();
            !inside(at) && !before.is_some_and(|b| ident(b) || b == b'.') && !after.is_some_and(ident)
        });
        if !used_in_span || used_elsewhere {
            continue;
        }
        if let Some(span) = specifier_removal(text, import.span) {
            edits.push(Edit {
                file,
                span,
                replacement: String::new(),
            });
        }
    }
    edits
}

/// What to delete to drop the import specifier at `spec`: it with its comma, or the whole
/// `import { … } from "…"` line when it is the only specifier.
fn specifier_removal(text: &[u8], spec: crate::source::Span) -> Option<crate::source::Span> {
    let (start, end) = (spec.start as usize, spec.end as usize);
    let blank = |b: &u8| *b == b' ' || *b == b'\t' || *b == b'\n' || *b == b'\r';
    let mut before = start;
    while before > 0 && blank(&text[before - 1]) {
        before -= 1;
    }
    let mut after = end;
    while after < text.len() && blank(&text[after]) {
        after += 1;
    }
    let (previous, next) = (text.get(before.wrapping_sub(1)).copied(), text.get(after).copied());
    match (previous, next) {
        // `{ A, Schedule }` → `{ A }`.
        (Some(b','), _) => Some(crate::source::Span::new(before - 1, end)),
        // `{ Schedule, B }` → `{ B }`.
        (_, Some(b',')) => {
            let mut to = after + 1;
            while to < text.len() && (text[to] == b' ' || text[to] == b'\t') {
                to += 1;
            }
            Some(crate::source::Span::new(start, to))
        }
        // `import { Schedule } from "effect"`: the whole line.
        (Some(b'{'), Some(b'}')) => {
            let line_start = text[..start].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let line_end = text[end..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(text.len(), |i| end + i + 1);
            let line = std::str::from_utf8(&text[line_start..line_end]).ok()?;
            (line.trim_start().starts_with("import ") && line.contains(" from "))
                .then(|| crate::source::Span::new(line_start, line_end))
        }
        _ => None,
    }
}
