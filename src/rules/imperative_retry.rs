//! `imperative-retry`: `$_retry`, the v1 pipeline variable RS2 removed. Retry is declared on
//! the step, the mount or the tenant, never set imperatively inside the flow.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};

pub const RULE: Rule = Rule {
    name: "imperative-retry",
    summary: "`$_retry`, the removed v1 pipeline variable: retry set imperatively inside an RS2 flow",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Rs2],
    doc: include_str!("../../rules/imperative-retry.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for span in &ctx.facts.rs2.imperative {
        out.push(
            RULE.report(
                ctx,
                *span,
                "`$_retry` sets retry imperatively inside the flow: the runtime no longer has this v1 pipeline variable, so it retries nothing",
            )
            .with_help("declare a `retry` policy on the step (beside its `call`), its mount or its tenant instead"),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn imperative_retry() {
        let pass = [
            (
                "flows/refund.json",
                r#"{
  "steps": [
    { "call": { "method": "GET", "url": "/refunds/{id}" },
      "retry": { "maxAttempts": 2, "baseDelayMs": 100, "maxDelayMs": 200, "backoffMultiplier": 2, "jitter": "full" } }
  ]
}
"#,
            ),
            (
                "flows/refund.json",
                r#"{
  "steps": [
    { "set": { "$_status": "pending" } },
    { "call": { "method": "GET", "url": "/refunds/{id}" } }
  ]
}
"#,
            ),
        ];
        let fail = [
            (
                "flows/refund.json",
                r#"{
  "steps": [
    { "set": { "$_retry": { "maxAttempts": 2 } } },
    { "call": { "method": "GET", "url": "/refunds/{id}" } }
  ]
}
"#,
            ),
            (
                "flows/refund.yaml",
                r#"steps:
  - set:
      $_retry:
        maxAttempts: 5
  - call:
      method: GET
      url: /refunds/{id}
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
