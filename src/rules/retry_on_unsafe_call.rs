//! `retry-on-unsafe-call`: an enabled RS2 retry policy that a call resolves to, when the call
//! is unsafe (a POST or PATCH, or `"effect": "unsafe"`): the runtime never retries it.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::rs2::Level;
use crate::facts::EffectClass;

pub const RULE: Rule = Rule {
    name: "retry-on-unsafe-call",
    summary: "an enabled RS2 retry policy on an unsafe call, which the runtime never retries",
    decision: "2",
    default_severity: Severity::Warning,
    fix: FixSafety::None,
    triggers: &[Trigger::Rs2],
    doc: include_str!("../../rules/retry-on-unsafe-call.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (call, info) in ctx.facts.rs2.calls.iter().zip(&ctx.rs2().calls) {
        if info.class != Some(EffectClass::Unsafe) {
            continue;
        }
        let Some(effective) = info.effective else { continue };
        if effective.enabled != Some(true) {
            continue;
        }
        let Some(policy) = ctx
            .index
            .loaded(effective.file)
            .and_then(|facts| facts.rs2.policies.get(effective.policy))
        else {
            continue;
        };
        let subject = match (&call.effect, &call.method) {
            (None, Some((method, _))) => format!("`{method}` is an unsafe call"),
            _ => "this call is marked unsafe".to_string(),
        };
        let whose = match effective.level {
            Level::Call => "its own `retry` does nothing".to_string(),
            Level::Mount => "the mount's `retry` does nothing here".to_string(),
            _ => format!(
                "the tenant's `retry` ({}) does nothing here",
                ctx.index.path(effective.file).display()
            ),
        };
        out.push(
            RULE.report(
                ctx,
                call.class_span(),
                format!("{subject}, which the runtime never retries: {whose}, and a transient failure fails the flow"),
            )
            .with_help("if the target accepts an Idempotency-Key, set the call's `effect` to `keyed` (the runtime then sends a stable key and retries it); if not, give the call a `retry` with `enabled: false` so the configuration says it is not retried")
            .with_label(effective.file, policy.retry, "the policy this call resolves to"),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn retry_on_unsafe_call() {
        let pass = [
            (
                "mounts/refunds.json",
                r#"{
  "mount": "/refunds",
  "flows": {
    "lookup": {
      "steps": [
        { "call": { "method": "GET", "url": "https://api.example.com/v1/refunds/{id}" } }
      ]
    }
  }
}
"#,
            ),
            (
                "mounts/refunds.json",
                r#"{
  "mount": "/refunds",
  "flows": {
    "create": {
      "steps": [
        { "call": { "method": "POST", "url": "https://api.example.com/v1/refunds", "effect": "keyed" } }
      ]
    }
  }
}
"#,
            ),
        ];
        let fail = [
            (
                "mounts/refunds.json",
                r#"{
  "mount": "/refunds",
  "flows": {
    "create": {
      "steps": [
        { "call": { "method": "POST", "url": "https://api.example.com/v1/refunds" } }
      ]
    }
  }
}
"#,
            ),
            (
                "mounts/refunds.yaml",
                r#"mount: /refunds
flows:
  amend:
    steps:
      - call:
          method: PATCH
          url: /refunds/{id}
"#,
            ),
        ];
        Tester::new(&super::RULE)
            .with_file(
                "tenant.json",
                r#"{
  "tenant": "globex",
  "retry": { "maxAttempts": 3, "baseDelayMs": 200, "maxDelayMs": 2000, "backoffMultiplier": 2,
             "jitter": "full", "retryStatuses": [429, 502, 503, 504] }
}
"#,
            )
            .pass(&pass)
            .fail(&fail)
            .test();
    }
}
