//! A file's retry policies, as the schedule rules and `retrylint policies` see them: the
//! schedules the retry module exports, and every policy a retry site builds or changes
//! itself. A site that names a retry-module policy unchanged is not a policy of its own: its
//! findings belong to the export it names.

use crate::facts::{Export, Expr, Language, RetryKind, RustLib, Span};
use crate::project::{FileId, Project, Resolved};
use crate::schedule::{self, Problem, Sched, Summary};

pub mod rust;

#[derive(Debug, Clone)]
pub enum Origin {
    /// `export const transient = …` in the retry module.
    Export { name: String, binding: Span },
    /// A retry site's own policy (inline, bound to a local name, or imported from elsewhere).
    Site { kind: RetryKind },
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub origin: Origin,
    /// Where a finding about the policy points: the export's name or the site's policy.
    pub span: Span,
    /// The schedule expression itself, when there is one (where a fix would edit).
    pub schedule: Option<Span>,
    /// The expression, rendered for messages.
    pub text: String,
    pub summary: Summary,
    pub problems: Vec<Problem>,
    /// A Rust policy's library and fix point; `None` for TypeScript.
    pub rust: Option<RustInfo>,
}

/// What the rules need to know about a Rust policy beyond its summary.
#[derive(Debug, Clone)]
pub struct RustInfo {
    /// The library whose builder it is (for help texts), when known.
    pub lib: Option<RustLib>,
    /// Where `.with_jitter()` can be appended (a backon builder, not yet `.build()`).
    pub jitter_fix: Option<u32>,
}

pub fn collect(project: &Project, file: FileId) -> Vec<Policy> {
    if project.facts(file).language == Language::Rust {
        return rust::collect(project, file);
    }
    let version = project.effect_major(file);
    let facts = project.facts(file);
    let mut out = Vec::new();
    if project.is_retry_module(file) {
        for export in &facts.exports {
            let Export::Local { name, local } = export else {
                continue;
            };
            let Some(binding) = facts.binding(local) else { continue };
            // Helpers (`capped`) and predicates (`isContention`) are functions, not policies.
            if matches!(binding.value, Expr::Function { .. } | Expr::Opaque(_)) {
                continue;
            }
            let (sched, problems) = schedule::evaluate_schedule(project, file, &binding.value, version);
            if matches!(sched, Sched::Unknown) {
                continue;
            }
            out.push(Policy {
                origin: Origin::Export {
                    name: name.clone(),
                    binding: binding.span,
                },
                span: Span {
                    start: binding.span.start,
                    end: binding.span.start + local.len() as u32,
                },
                schedule: Some(binding.value.span()),
                text: binding.value.render(),
                summary: schedule::summarize(&sched),
                problems,
                rust: None,
            });
        }
        return out;
    }
    for site in &facts.retry_sites {
        if site.times().is_none() && names_retry_module_policy(project, file, site.schedule()) {
            continue;
        }
        let Some(span) = site.policy.as_ref().map(Expr::span).or_else(|| {
            // `retryTransient()` with no options still retries: point at the call.
            (site.kind == RetryKind::HttpRetryTransient).then_some(site.span)
        }) else {
            continue;
        };
        let (sched, problems) = schedule::evaluate_policy(project, file, site, version);
        if matches!(sched, Sched::Unknown) && problems.is_empty() {
            continue;
        }
        // Point at the schedule when there is one: that is what a fix edits.
        let schedule = site.schedule();
        out.push(Policy {
            origin: Origin::Site { kind: site.kind },
            span: schedule.map(Expr::span).unwrap_or(span),
            schedule: schedule.map(Expr::span),
            text: schedule
                .or(site.policy.as_ref())
                .map(Expr::render)
                .unwrap_or_else(|| "()".into()),
            summary: schedule::summarize(&sched),
            problems,
            rust: None,
        });
    }
    out
}

/// Whether `schedule` is a plain reference to a policy exported by a retry module.
fn names_retry_module_policy(project: &Project, file: FileId, schedule: Option<&Expr>) -> bool {
    let Some(schedule) = schedule else { return false };
    matches!(project.resolve_path(file, schedule), Resolved::Value { file: target, .. } if project.is_retry_module(target))
}

/// `1.4 s`, `350 ms`, `2 min`.
pub fn format_ms(ms: f64) -> String {
    if !ms.is_finite() {
        "∞".into()
    } else if ms < 1000.0 {
        format!("{} ms", crate::facts::format_number((ms * 100.0).round() / 100.0))
    } else if ms < 120_000.0 {
        format!("{} s", crate::facts::format_number((ms / 10.0).round() / 100.0))
    } else {
        format!("{} min", crate::facts::format_number((ms / 600.0).round() / 100.0))
    }
}

/// One line of `retrylint policies`.
#[derive(Debug, serde::Serialize)]
pub struct PolicyRow {
    pub name: String,
    pub path: String,
    pub line: usize,
    /// `exact`, `at-most`, `time-limited`, `unbounded` or `unknown`.
    pub attempts: String,
    pub retries: Option<u64>,
    pub gap_cap_ms: Option<f64>,
    pub gap_grows: bool,
    pub jitter: Option<bool>,
    pub delays_ms: Option<Vec<f64>>,
    pub total_ms: Option<f64>,
    pub worst_total_ms: Option<f64>,
    /// Retry sites that name this policy (exports), or 1 for a site's own policy.
    pub sites: usize,
}

/// Every policy in the checked files: the retry modules' exports with how many retry sites
/// name each, then the policies sites build themselves.
pub fn rows(project: &Project) -> Vec<PolicyRow> {
    use crate::schedule::{Attempts, Gap, Jitter};
    use std::collections::HashMap;

    let files: Vec<FileId> = project.checked_files().collect();
    // Which export each site's schedule names.
    let mut uses: HashMap<(FileId, Span), usize> = HashMap::new();
    for &file in &files {
        for site in &project.facts(file).retry_sites {
            if site.rust.is_some() {
                if let Some(named) = rust::named_policy(project, file, site) {
                    *uses.entry(named).or_default() += 1;
                }
                continue;
            }
            let Some(schedule) = site.schedule() else { continue };
            if let Resolved::Value { file: target, span, .. } = project.resolve_path(file, schedule) {
                *uses.entry((target, span)).or_default() += 1;
            }
        }
    }
    let mut rows = Vec::new();
    // The retry modules' named policies first: they are what a reviewer of the module reads.
    let (modules, others): (Vec<FileId>, Vec<FileId>) = files.iter().partition(|&&f| project.is_retry_module(f));
    for file in modules.into_iter().chain(others) {
        let facts = project.facts(file);
        for policy in project.policies(file) {
            let (name, sites) = match &policy.origin {
                Origin::Export { name, binding } => (name.clone(), uses.get(&(file, *binding)).copied().unwrap_or(0)),
                Origin::Site { .. } => (format!("(inline) {}", crate::rules::snippet(&policy.text, 48)), 1),
            };
            let s = &policy.summary;
            let (attempts, retries) = match s.attempts {
                Attempts::Exact(n) => ("exact", Some(n)),
                Attempts::AtMost(n) => ("at-most", Some(n)),
                Attempts::TimeLimited => ("time-limited", None),
                Attempts::Unbounded => ("unbounded", None),
                Attempts::Unknown => ("unknown", None),
            };
            rows.push(PolicyRow {
                name,
                path: project.path(file).display().to_string(),
                line: facts.position(policy.span.start).0,
                attempts: attempts.into(),
                retries,
                gap_cap_ms: match s.gap {
                    Gap::Capped(ms) => Some(ms),
                    _ => None,
                },
                gap_grows: s.gap == Gap::Growing,
                jitter: match s.jitter {
                    Jitter::Yes => Some(true),
                    Jitter::No => Some(false),
                    Jitter::Unknown => None,
                },
                delays_ms: s.delays.clone(),
                total_ms: s.total_ms,
                worst_total_ms: s.worst_total_ms,
                sites,
            });
        }
    }
    rows
}

/// The human table of `retrylint policies`.
pub fn table(rows: &[PolicyRow]) -> String {
    let header = [
        "policy",
        "defined at",
        "attempts",
        "gap cap",
        "jitter",
        "nominal delays",
        "total",
        "worst",
        "sites",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for row in rows {
        let attempts = match (row.attempts.as_str(), row.retries) {
            ("exact", Some(n)) => n.to_string(),
            ("at-most", Some(n)) => format!("≤ {n}"),
            ("time-limited", _) => "time-limited".into(),
            ("unbounded", _) => "unbounded".into(),
            _ => "?".into(),
        };
        let gap = match (row.gap_cap_ms, row.gap_grows) {
            (Some(ms), _) => format_ms(ms),
            (None, true) => "none (grows)".into(),
            _ => "?".into(),
        };
        let jitter = match row.jitter {
            Some(true) => "yes",
            Some(false) => "no",
            None => "?",
        };
        let delays = match &row.delays_ms {
            Some(d) if d.is_empty() => "none".into(),
            Some(d) => {
                let shown: Vec<String> = d.iter().take(5).map(|x| format_ms(*x)).collect();
                format!("{}{}", shown.join(", "), if d.len() > 5 { ", …" } else { "" })
            }
            None => "?".into(),
        };
        let total = row.total_ms.map(format_ms).unwrap_or_else(|| "-".into());
        let worst = row.worst_total_ms.map(format_ms).unwrap_or_else(|| "-".into());
        cells.push(vec![
            row.name.clone(),
            format!("{}:{}", row.path, row.line),
            attempts,
            gap,
            jitter.into(),
            delays,
            total,
            worst,
            row.sites.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell}{}", " ".repeat(width - cell.chars().count())))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
