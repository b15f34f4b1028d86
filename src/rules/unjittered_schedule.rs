//! `unjittered-schedule`: a retry policy without jitter.

use super::{policy_name, with_uses, Context, Diagnostic, Edit, Fix, FixSafety, Rule, Severity, Trigger};
use crate::analysis::dialect;
use crate::schedule::{Gap, Jitter};
use crate::source::Span;

pub const RULE: Rule = Rule {
    name: "unjittered-schedule",
    summary: "a retry policy with no jitter",
    decision: "3",
    default_severity: Severity::Error,
    fix: FixSafety::Unsafe,
    triggers: &[Trigger::Retries, Trigger::Rs2],
    doc: include_str!("../../rules/unjittered-schedule.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for policy in ctx.policies() {
        if policy.summary.jitter != Jitter::No {
            continue;
        }
        // Immediate retries have no delay to spread; other rules speak to them.
        if matches!(policy.summary.gap, Gap::Capped(ms) if ms == 0.0) {
            continue;
        }
        let fix = policy.jitter_fix.first().map(|first| Fix {
            safety: FixSafety::Unsafe,
            title: first.title.clone(),
            edits: policy
                .jitter_fix
                .iter()
                .map(|insertion| Edit {
                    file: ctx.file,
                    span: Span::at(insertion.at),
                    replacement: insertion.text.clone(),
                })
                .collect(),
        });
        out.push(with_uses(
            RULE.report(
                ctx,
                policy.span,
                format!(
                    "retry policy {} has no jitter: replicas that fail together retry together, in lockstep",
                    policy_name(policy)
                ),
            )
            .with_help(dialect::jitter_help(policy.library, policy.effect))
            .with_fix(fix),
            policy,
        ));
    }
}
