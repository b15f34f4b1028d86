//! `unjittered-schedule`: a retry policy without jitter.

use super::{policy_name, Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity};
use crate::facts::{RustLib, Span};
use crate::schedule::{Gap, Jitter};

pub const RULE: Rule = Rule {
    name: "unjittered-schedule",
    summary: "a retry policy with no jitter",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    doc: include_str!("../../rules/unjittered-schedule.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for policy in ctx.project.policies(ctx.file) {
        if policy.summary.jitter != Jitter::No {
            continue;
        }
        // Immediate retries have no delay to spread; other rules speak to them.
        if matches!(policy.summary.gap, Gap::Capped(ms) if ms == 0.0) {
            continue;
        }
        let mut diagnostic = Diagnostic::new(
            &RULE,
            ctx,
            policy.span,
            format!(
                "retry policy {} has no jitter: replicas that fail together retry together, in lockstep",
                policy_name(policy)
            ),
        )
        .with_help(match policy.rust.as_ref().map(|r| r.lib) {
            None => "pipe the schedule through `Schedule.jittered` (each delay is drawn from 0.8× to 1.2×)",
            Some(Some(RustLib::Backon)) => {
                "add `.with_jitter()` to the builder (each delay gets a random 0–100 % more)"
            }
            Some(Some(RustLib::TokioRetry)) => {
                "add `.map(jitter)` to the strategy (`tokio_retry::strategy::jitter` scales each delay by a random 0–1)"
            }
            Some(Some(RustLib::Backoff)) => {
                "keep a `randomization_factor` above 0 (the default 0.5 draws each delay from 0.5× to 1.5×)"
            }
            Some(_) => "use `.jitter(Jitter::Full)` or `.jitter(Jitter::Bounded)` on the builder",
        });
        // backon: append `.with_jitter()` to the builder.
        if let Some(at) = policy.rust.as_ref().and_then(|r| r.jitter_fix) {
            diagnostic.fix = Some(Fix {
                safety: FixSafety::Unsafe,
                title: "add `.with_jitter()` to the builder".into(),
                edits: vec![Edit {
                    file: ctx.file,
                    span: Span { start: at, end: at },
                    replacement: ".with_jitter()".into(),
                }],
            });
        }
        // The fix appends `.pipe(Schedule.jittered)`, using the file's own name for Schedule.
        if let (Some(schedule), Some(module)) = (policy.schedule, ctx.facts.effect_module_local("Schedule")) {
            diagnostic.fix = Some(Fix {
                safety: FixSafety::Unsafe,
                title: "pipe the schedule through `Schedule.jittered`".into(),
                edits: vec![Edit {
                    file: ctx.file,
                    span: Span {
                        start: schedule.end,
                        end: schedule.end,
                    },
                    replacement: format!(".pipe({module}.jittered)"),
                }],
            });
        }
        out.push(diagnostic);
    }
}
