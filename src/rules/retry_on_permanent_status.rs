//! `retry-on-permanent-status`: an enabled RS2 retry policy whose `retryStatuses` holds a 4xx
//! other than 408, 425 and 429 — a status that answers the same on every attempt.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::rs2::policy_label;
use crate::facts::rs2::Setting;

pub const RULE: Rule = Rule {
    name: "retry-on-permanent-status",
    summary: "an RS2 retry policy whose `retryStatuses` holds a 4xx other than 408, 425 and 429",
    decision: "2",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Rs2],
    doc: include_str!("../../rules/retry-on-permanent-status.md"),
    check,
};

/// The 4xx statuses a later attempt can change: timeout, too early, too many requests.
const TRANSIENT_4XX: &[f64] = &[408.0, 425.0, 429.0];

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (policy, info) in ctx.facts.rs2.policies.iter().zip(&ctx.rs2().policies) {
        if info.enabled != Some(true) {
            continue;
        }
        let Setting::Known(statuses, _) = &policy.retry_statuses else {
            continue;
        };
        let permanent: Vec<_> = statuses
            .iter()
            .filter(|(status, _)| (400.0..500.0).contains(status) && !TRANSIENT_4XX.contains(status))
            .collect();
        if permanent.is_empty() {
            continue;
        }
        let listed = list(permanent.iter().map(|(status, _)| status.to_string()).collect());
        let mut diagnostic = RULE
            .report(
                ctx,
                policy.retry,
                format!(
                    "retry policy {} retries {listed}: a client error answers the same on every attempt, so each retry repeats the request for nothing",
                    policy_label(policy, info.level)
                ),
            )
            .with_help(format!(
                "remove {listed} from `retryStatuses`; of the 4xx, only 408, 425 and 429 can succeed on a later attempt"
            ));
        for (status, span) in permanent {
            diagnostic = diagnostic.with_label(ctx.file, *span, format!("{status} is permanent"));
        }
        out.push(diagnostic);
    }
}

/// `400`, `400 and 404`, `400, 401 and 404`.
fn list(mut items: Vec<String>) -> String {
    let last = items.pop().unwrap_or_default();
    if items.is_empty() {
        last
    } else {
        format!("{} and {last}", items.join(", "))
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn retry_on_permanent_status() {
        let pass = [
            (
                "tenant.json",
                r#"{
  "tenant": "globex",
  "retry": { "maxAttempts": 3, "baseDelayMs": 200, "maxDelayMs": 2000, "backoffMultiplier": 2,
             "jitter": "full", "retryStatuses": [429, 502, 503, 504] }
}
"#,
            ),
            (
                "mounts/search.yaml",
                r#"mount: /search
retry:
  maxAttempts: 3
  baseDelayMs: 100
  maxDelayMs: 800
  backoffMultiplier: 2
  jitter: full
  retryStatuses: [429, 503]
"#,
            ),
        ];
        let fail = [
            (
                "tenant.json",
                r#"{
  "tenant": "globex",
  "retry": { "maxAttempts": 3, "baseDelayMs": 200, "maxDelayMs": 2000, "backoffMultiplier": 2,
             "jitter": "full", "retryStatuses": [401, 429, 503] }
}
"#,
            ),
            (
                "mounts/search.yaml",
                r#"mount: /search
retry:
  maxAttempts: 3
  baseDelayMs: 100
  maxDelayMs: 800
  backoffMultiplier: 2
  jitter: full
  retryStatuses: [422, 503]
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
