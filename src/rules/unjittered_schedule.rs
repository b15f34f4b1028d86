//! `unjittered-schedule`: a retry policy without jitter.

use super::{policy_name, Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity};
use crate::effect_version::EffectVersion;
use crate::facts::{RustLib, Span};
use crate::schedule::{api, Gap, Jitter};

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
    // The jitter combinator of the file's `effect` version (4.0.0-beta.5 has none).
    let jittered = api::jitter_snippet(EffectVersion::from_code(ctx.project.effect_major(ctx.file)));
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
            None => match jittered {
                Some(combinator) => {
                    format!("pipe the schedule through `{combinator}` (each delay is drawn from 0.8× to 1.2×)")
                }
                None => "this effect version has no `Schedule.jittered`: scale each delay by a random factor in `Schedule.modifyDelay`".into(),
            },
            Some(Some(RustLib::Backon)) => {
                "add `.with_jitter()` to the builder (each delay gets a random 0–100 % more)".into()
            }
            Some(Some(RustLib::TokioRetry)) => {
                "add `.map(jitter)` to the strategy (`tokio_retry::strategy::jitter` scales each delay by a random 0–1)".into()
            }
            Some(Some(RustLib::Backoff)) => {
                "keep a `randomization_factor` above 0 (the default 0.5 draws each delay from 0.5× to 1.5×)".into()
            }
            Some(_) => "use `.jitter(Jitter::Full)` or `.jitter(Jitter::Bounded)` on the builder".into(),
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
        if let (Some(schedule), Some(module), Some(_)) =
            (policy.schedule, ctx.facts.effect_module_local("Schedule"), jittered)
        {
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
