//! `unused-suppression`: a suppression comment that suppresses nothing, or names no rule.
//! Computed by the pipeline after every other rule has run (see `check::apply_suppressions`).

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};

pub const RULE: Rule = Rule {
    name: "unused-suppression",
    summary: "a `retrylint-ignore` comment that suppresses nothing, or names an unknown rule",
    decision: "-",
    default_severity: Severity::Warning,
    fix: FixSafety::None,
    triggers: &[Trigger::Suppressions],
    doc: include_str!("../../rules/unused-suppression.md"),
    check,
};

/// Nothing per file: whether a suppression was used is known only after all rules ran.
fn check(_: &Context, _: &mut Vec<Diagnostic>) {}
