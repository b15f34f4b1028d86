//! `unjittered-schedule`: a retry policy without jitter.

use super::{policy_name, Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity};
use crate::facts::Span;
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
        .with_help("pipe the schedule through `Schedule.jittered` (each delay is drawn from 0.8× to 1.2×)");
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
