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

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn unused_suppression() {
        let pass = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"

export const charge = (id: string) => Effect.succeed(id)
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"

// A comment that mentions retrylint is not a suppression.
export const charge = (id: string) => Effect.succeed(id)
"#,
            ),
        ];
        let fail = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"

// retrylint-ignore inline-schedul -- the typo means this suppresses nothing
export const charge = (id: string) => Effect.succeed(id)
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"

// retrylint-ignore no-such-rule -- no rule has this name
export const charge = (id: string) => Effect.succeed(id)
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
