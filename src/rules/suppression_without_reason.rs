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

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn suppression_without_reason() {
        let pass = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"

// retrylint-ignore inline-schedule -- the sandbox gateway drops the first call by design
export const charge = (id: string) => Effect.succeed(id).pipe(Effect.retry(Schedule.recurs(1)))
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"

export const charge = (id: string) => Effect.succeed(id)
"#,
            ),
        ];
        let fail = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"

// retrylint-ignore inline-schedule
export const charge = (id: string) => Effect.succeed(id).pipe(Effect.retry(Schedule.recurs(1)))
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"

// retrylint-ignore inline-schedule --
export const charge = (id: string) => Effect.succeed(id).pipe(Effect.retry(Schedule.recurs(2)))
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
