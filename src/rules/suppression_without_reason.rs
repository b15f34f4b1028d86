//! `suppression-without-reason`: a suppression comment with no `-- reason`.
//! Computed by the pipeline with the suppressions (see `check::apply_suppressions`).

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};

pub const RULE: Rule = Rule {
    name: "suppression-without-reason",
    summary: "a `retrylint-ignore` comment without a `-- reason`",
    decision: "-",
    default_severity: Severity::Warning,
    fix: FixSafety::None,
    triggers: &[Trigger::Suppressions],
    doc: include_str!("../../rules/suppression-without-reason.md"),
    check,
};

fn check(_: &Context, _: &mut Vec<Diagnostic>) {}
